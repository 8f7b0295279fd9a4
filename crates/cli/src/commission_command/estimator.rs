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
/// positions as recorded, velocities by central differences (at most [`REFERENCE_POINTS`]
/// points). After it the reference stays at its end, as the brake held the arm where it was.
fn recorded_reference(recording: &Recording) -> Result<MultiPoint> {
    let time = &recording.log.time;
    let samples = recording.tracked.min(recording.reference.len());
    anyhow::ensure!(samples >= 2, "the recording has {samples} samples");
    let stride = samples.div_ceil(REFERENCE_POINTS).max(1);
    let mut picked: Vec<usize> = (0..samples).step_by(stride).collect();
    if picked.last() != Some(&(samples - 1)) {
        picked.push(samples - 1);
    }
    let points: Vec<TrajectoryPoint> = (0..picked.len())
        .map(|k| {
            let (a, b) = (
                picked[k.saturating_sub(1)],
                picked[(k + 1).min(picked.len() - 1)],
            );
            let (qa, qb) = (&recording.reference[a], &recording.reference[b]);
            let velocities = qa
                .iter()
                .zip(qb)
                .map(|(x, y)| (y - x) / (time[b] - time[a]))
                .collect();
            TrajectoryPoint {
                time: time[picked[k]] - time[0],
                positions: recording.reference[picked[k]].clone(),
                velocities: Some(velocities),
                accelerations: None,
            }
        })
        .collect();
    let dof = recording.reference[0].len();
    Ok(MultiPoint::new(dof, &points)?)
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
