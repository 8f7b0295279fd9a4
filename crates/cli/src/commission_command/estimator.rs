//! Step 4's estimator. The excitation is recorded in closed loop: the controller answers the
//! encoders' noise, so the efforts and the regressor share it and least squares is biased.
//! IDIM-IV (Janot, Vandanjon and Gautier, IEEE TCST 2014) takes as instruments the regressor
//! of the same run simulated on the previous estimate (same controller, same trajectory, no
//! noise, the reference the arm had), a few times over; weighted least squares is kept for
//! comparison, and is the estimate when the simulated run or its fit cannot be made (said so).

use anyhow::Result;
use armctl_control::reference::{MultiPoint, TrajectoryPoint};
use armctl_ident::{identify_with_instruments, Identification, IdentifyOptions, JointLog};
use armctl_sim::SimConfig;

use super::arm::SimulatedArm;
use super::drive::{drive, Recording};
use super::model_steps::Steps;
use super::plan::Plan;

/// How step 4 estimates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Estimator {
    /// Instrumental variables: the run simulated on the previous estimate as instruments.
    IdimIv,
    /// Weighted least squares on the measured regressor.
    Wls,
}

/// Simulations of the run, each on the estimate the last one gave: the estimate settles in
/// one or two.
pub(crate) const IV_ITERATIONS: usize = 2;

/// The last simulated run, the instruments of the estimate (`armctl identify --instruments`).
pub(crate) const INSTRUMENTS_FILE: &str = "excite.instruments.csv";

/// Which estimate step 4 gave, and how far it is from weighted least squares.
#[derive(Debug, Clone)]
pub(crate) struct EstimatorUsed {
    /// What to call it in the report.
    pub(crate) name: String,
    /// The largest change from weighted least squares, in its standard deviations, and the
    /// parameter (none when it is weighted least squares).
    pub(crate) change: Option<(f64, String)>,
}

impl EstimatorUsed {
    /// Its name, and its largest change from weighted least squares.
    pub(crate) fn describe(&self) -> String {
        match &self.change {
            Some((sigmas, parameter)) => format!(
                "{}; largest change from weighted least squares {sigmas:.2} sigma ({parameter})",
                self.name
            ),
            None => self.name.clone(),
        }
    }
}

impl Steps<'_> {
    /// `least_squares` refined by instrumental variables on the excitation `recording`
    /// (`plan`'s, on an arm stepped every `period` s): the estimate and which it is. When the
    /// first simulated run or fit fails, weighted least squares, and the instruments file is
    /// removed; when a later one fails, the last estimate, said so.
    pub(crate) fn instrumental(
        &self,
        least_squares: Identification,
        recording: &Recording,
        plan: &Plan,
        (options, period): (&IdentifyOptions, f64),
    ) -> (Identification, EstimatorUsed) {
        let file = self.out.join(INSTRUMENTS_FILE);
        // A previous commissioning's would not be this estimate's.
        let _ = std::fs::remove_file(&file);
        let (mut found, mut done, mut failed) = (least_squares.clone(), 0, None);
        for _ in 0..IV_ITERATIONS {
            let next = self
                .simulated_excitation(&found, recording, plan, period)
                .and_then(|instruments| {
                    let log = &recording.log;
                    let next = identify_with_instruments(self.robot, log, &instruments, options)?;
                    // Kept, so that `armctl identify --instruments` redoes the step offline.
                    instruments.write_csv(&file)?;
                    Ok(next)
                });
            match next {
                Ok(next) => (found, done) = (next, done + 1),
                Err(e) => {
                    failed = Some(format!("{e:#}"));
                    break;
                }
            }
        }
        let name = match (done, failed) {
            (0, Some(why)) => {
                let _ = std::fs::remove_file(&file);
                let name = format!("weighted least squares (IDIM-IV not used: {why})");
                return (least_squares, EstimatorUsed { name, change: None });
            }
            (done, None) => format!("IDIM-IV ({done} iterations)"),
            (done, Some(why)) => format!("IDIM-IV ({done} of {IV_ITERATIONS} iterations: {why})"),
        };
        let change = Some(largest_change(&found, &least_squares));
        (found, EstimatorUsed { name, change })
    }

    /// The excitation run simulated on `estimate` (its friction too) from where the
    /// recording starts, under the excitation's controller, following the reference the arm
    /// had (slowed down as it was), then held at its end for as long as the recording's brake:
    /// the instruments' states.
    fn simulated_excitation(
        &self,
        estimate: &Identification,
        recording: &Recording,
        plan: &Plan,
        period: f64,
    ) -> Result<JointLog> {
        let model = estimate.model().apply(self.robot)?;
        let log = &recording.log;
        let reference = recorded_reference(recording)?;
        let config = SimConfig {
            dt: period,
            friction: true,
            ..SimConfig::default()
        };
        let label = "the estimate, simulated".to_string();
        let mut simulated = SimulatedArm::new(&model, &log.position[0], config, label)?;
        let mut runtime = self.settings.excitation_controller(self.robot, plan)?;
        let span = log.time[log.len() - 1] - log.time[0];
        let recording = drive(
            &mut simulated,
            &mut runtime,
            Some(Box::new(reference)),
            span,
            self.settings.verify_guard(),
            "simulating",
        )?;
        if let Some(stop) = recording.stop {
            anyhow::bail!("the excitation simulated on the estimate stopped: {stop}");
        }
        Ok(recording.log)
    }
}

/// At most this many points of a recorded reference are kept to follow it again: within
/// what the controller takes (its `max_reference_points` default), the last point added.
const REFERENCE_POINTS: usize = armctl_runtime::controller_core::DEFAULT_MAX_POINTS - 1;

/// The reference a recorded run followed until its brake, timed from its first sample:
/// positions as recorded, velocities by central differences between neighbouring samples
/// (at most [`REFERENCE_POINTS`] points). After it the reference stays at its end, as the brake held the arm where it was.
fn recorded_reference(recording: &Recording) -> Result<MultiPoint> {
    let time = &recording.log.time;
    let samples = recording.tracked.min(recording.reference.len());
    anyhow::ensure!(samples >= 2, "the recording has {samples} samples");
    let stride = samples.div_ceil(REFERENCE_POINTS).max(1);
    let mut picked: Vec<usize> = (0..samples).step_by(stride).collect();
    if picked.last() != Some(&(samples - 1)) {
        picked.push(samples - 1);
    }
    // Velocities and accelerations from each point's own neighbours in the recording, not
    // from the points kept: the pieces between the points then have the recorded reference's
    // motion, however short (the last one may be one sample long).
    let reference = &recording.reference;
    let points: Vec<TrajectoryPoint> = picked
        .iter()
        .map(|&k| {
            let (velocities, accelerations) = derivatives(reference, time, k, samples);
            TrajectoryPoint {
                time: time[k] - time[0],
                positions: reference[k].clone(),
                velocities: Some(velocities),
                accelerations,
            }
        })
        .collect();
    let dof = recording.reference[0].len();
    Ok(MultiPoint::new(dof, &points)?)
}

/// Velocity and acceleration of `reference` at sample `k` of the first `samples`: those of
/// the parabola through it and its neighbours (the nearest three at the ends); with two
/// samples, the slope between them and none.
fn derivatives(
    reference: &[Vec<f64>],
    time: &[f64],
    k: usize,
    samples: usize,
) -> (Vec<f64>, Option<Vec<f64>>) {
    let slope = |i: usize, j: usize, joint: usize| {
        (reference[j][joint] - reference[i][joint]) / (time[j] - time[i])
    };
    let joints = 0..reference[k].len();
    if samples < 3 {
        return (joints.map(|j| slope(0, 1, j)).collect(), None);
    }
    let c = k.clamp(1, samples - 2);
    let span = time[c + 1] - time[c - 1];
    let middle = 0.5 * (time[c - 1] + time[c]);
    let (velocities, accelerations) = joints
        .map(|j| {
            let acceleration = 2.0 * (slope(c, c + 1, j) - slope(c - 1, c, j)) / span;
            let velocity = slope(c - 1, c, j) + acceleration * (time[k] - middle);
            (velocity, acceleration)
        })
        .unzip();
    (velocities, Some(accelerations))
}

/// The largest `|found - least_squares|` over the base parameters, in least squares' standard
/// deviations, and its name.
fn largest_change(found: &Identification, least_squares: &Identification) -> (f64, String) {
    let mut largest = (0.0, String::new());
    for (k, name) in least_squares.base_names.iter().enumerate() {
        let std = least_squares.base_std[k].max(f64::MIN_POSITIVE);
        let sigmas = (found.base_values[k] - least_squares.base_values[k]).abs() / std;
        if sigmas > largest.0 || largest.1.is_empty() {
            largest = (sigmas, name.clone());
        }
    }
    largest
}

#[cfg(test)]
mod tests {
    use super::*;
    use armctl_control::reference::Trajectory;
    use armctl_control::JointReference;

    /// A recording of `samples` at 1 kHz whose reference is `sin(2 t)`.
    fn recording(samples: usize) -> Recording {
        let time: Vec<f64> = (0..samples).map(|k| 5.0 + k as f64 * 1e-3).collect();
        let reference: Vec<Vec<f64>> = time.iter().map(|t| vec![(2.0 * (t - 5.0)).sin()]).collect();
        Recording {
            log: JointLog {
                joint_names: vec!["a".into()],
                position: reference.clone(),
                velocity: None,
                acceleration: None,
                effort: vec![vec![0.0]; samples],
                time,
            },
            tracked: samples,
            reference,
            stop: None,
            braked: None,
            events: vec![],
            slowest: None,
        }
    }

    #[test]
    fn a_recorded_reference_is_followed_again_with_its_own_accelerations() {
        // One sample more than a whole number of strides: the last piece is 1 ms long.
        let samples = 7 * REFERENCE_POINTS + 2;
        let followed = recorded_reference(&recording(samples)).unwrap();
        let mut out = JointReference::hold(&[0.0]);
        let end = (samples - 1) as f64 * 1e-3;
        // At its end the reference holds (at rest): checked up to just before.
        for t in [0.0, 1.0, end - 0.004, end - 0.0005, end - 1e-6] {
            followed.sample(t, &mut out);
            let (q, qdd) = ((2.0 * t).sin(), -4.0 * (2.0 * t).sin());
            assert!((out.q[0] - q).abs() < 1e-6, "t = {t}: q {}", out.q[0]);
            assert!(
                (out.qdd[0] - qdd).abs() < 0.05,
                "t = {t}: qdd {}",
                out.qdd[0]
            );
        }
    }
}
