//! Step 4's estimator. The excitation is recorded in closed loop: the controller answers the
//! encoders' noise, so the efforts and the regressor share it and least squares is biased.
//! IDIM-IV (Janot, Vandanjon and Gautier, IEEE TCST 2014) takes as instruments the regressor
//! of the same run simulated on the previous estimate (same controller, same trajectory, no
//! noise), a few times over; weighted least squares is kept for comparison, and is the
//! estimate when the simulated run cannot be made (said so).

use anyhow::Result;
use armctl_ident::{identify_with_instruments, Identification, IdentifyOptions, JointLog};
use armctl_sim::SimConfig;

use super::arm::SimulatedArm;
use super::drive::drive;
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

impl Steps<'_> {
    /// `least_squares` refined by instrumental variables on `log`, the excitation `plan`
    /// drove: the estimate and which it is.
    pub(crate) fn instrumental(
        &self,
        least_squares: Identification,
        log: &JointLog,
        plan: &Plan,
        options: &IdentifyOptions,
    ) -> (Identification, EstimatorUsed) {
        let mut found = least_squares.clone();
        for _ in 0..IV_ITERATIONS {
            let next = self.simulated_excitation(&found, log, plan).and_then(|i| {
                // Kept, so that `armctl identify --instruments` redoes the step offline.
                i.write_csv(&self.out.join(INSTRUMENTS_FILE))?;
                Ok(identify_with_instruments(self.robot, log, &i, options)?)
            });
            match next {
                Ok(next) => found = next,
                Err(e) => {
                    let name = format!("weighted least squares (IDIM-IV not used: {e:#})");
                    println!("   estimator: {name}");
                    return (least_squares, EstimatorUsed { name, change: None });
                }
            }
        }
        let change = largest_change(&found, &least_squares);
        let name = format!("IDIM-IV ({IV_ITERATIONS} iterations)");
        println!(
            "   estimator: {name}; largest change from weighted least squares {:.2} sigma ({})",
            change.0, change.1
        );
        let change = Some(change);
        (found, EstimatorUsed { name, change })
    }

    /// The excitation run simulated on `estimate` (its friction too) from where `log` starts,
    /// under the excitation's controller: the instruments' states.
    fn simulated_excitation(
        &self,
        estimate: &Identification,
        log: &JointLog,
        plan: &Plan,
    ) -> Result<JointLog> {
        let model = estimate.model().apply(self.robot)?;
        let span = log.time[log.len() - 1] - log.time[0];
        let config = SimConfig {
            dt: span / (log.len() - 1).max(1) as f64,
            friction: true,
            ..SimConfig::default()
        };
        let label = "the estimate, simulated".to_string();
        let mut simulated = SimulatedArm::new(&model, &log.position[0], config, label)?;
        let mut runtime = self.settings.excitation_controller(self.robot, plan)?;
        let follow = Box::new(plan.excitation.trajectory.clone());
        let recording = drive(
            &mut simulated,
            &mut runtime,
            Some(follow),
            span,
            self.settings.guard(),
            "simulating",
        )?;
        if let Some(stop) = recording.stop {
            anyhow::bail!("the excitation simulated on the estimate stopped: {stop}");
        }
        Ok(recording.log)
    }
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
