//! The plan: the exciting trajectory (condition number of the base regressor minimised within
//! the margins the user sets), a second one held out for validation, and what they need of
//! the arm. The efforts are predicted with the URDF's model and enlarged by the model error
//! the commissioning allows: a plan that needs more than the user's share of an effort limit
//! is refused, naming the joint, as is one whose regressor is too poorly conditioned to tell
//! the parameters apart.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use armctl_control::default_gains::stiffest_gains;
use armctl_control::reference::{Fourier, Trajectory};
use armctl_control::JointReference;
use armctl_dynamics::{friction_torques, rnea, CoulombSign, DynamicsWorkspace};
use armctl_ident::{excitation, Excitation, ExcitationLimits};
use armctl_model::Robot;

use super::{Gate, Settings};

/// Samples per second at which the plan's peaks are taken.
const PLAN_RATE: f64 = 200.0;

/// Seed offset of the validation trajectory: another series the fit never sees.
const VALIDATION_SEED: u64 = 1000;

/// What one joint's part of the plan needs.
#[derive(Debug, Clone, Default)]
pub(crate) struct JointNeeds {
    pub(crate) lowest: f64,
    pub(crate) highest: f64,
    pub(crate) speed: f64,
    pub(crate) acceleration: f64,
    /// The URDF model's peak effort, before the model error's allowance.
    pub(crate) effort: f64,
}

impl JointNeeds {
    /// What either of two trajectories needs.
    fn or(&self, other: &JointNeeds) -> JointNeeds {
        JointNeeds {
            lowest: self.lowest.min(other.lowest),
            highest: self.highest.max(other.highest),
            speed: self.speed.max(other.speed),
            acceleration: self.acceleration.max(other.acceleration),
            effort: self.effort.max(other.effort),
        }
    }
}

/// The commissioning's trajectories and what they need.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) excitation: Excitation,
    pub(crate) validation: Excitation,
    pub(crate) condition_number: f64,
    pub(crate) needs: Vec<JointNeeds>,
    /// The PD gains the runs on the URDF's model use ([`stiffest_gains`]).
    pub(crate) hold_gains: (Vec<f64>, Vec<f64>),
}

/// The Coulomb friction the collision check allows for while the URDF's model runs the arm,
/// as a share of each effort limit: geared joints have a few per cent, which a vendor's URDF
/// leaves out (the Panda's, Gaz et al. 2019: 0.3 to 3.5 %).
pub(crate) const FRICTION_ALLOWANCE: f64 = 0.05;

/// The collision thresholds' floor while commissioning, as a share of each joint's effort
/// limit: what a tool the URDF lacks may load a joint with, whatever the joint's own torque.
const THRESHOLD_FLOOR: f64 = 0.25;

impl Plan {
    /// Fixed joint collision thresholds for the runs on the URDF's model: the model error's
    /// share of the plan's peak effort, at least [`THRESHOLD_FLOOR`] of the effort limit (the
    /// model_error share of the applied torque alone reads a missing tool's weight at a joint
    /// that carries little as a contact).
    pub(crate) fn collision_thresholds(&self, robot: &Robot, settings: &Settings) -> Vec<f64> {
        robot
            .joints()
            .iter()
            .zip(&self.needs)
            .map(|(joint, need)| {
                (settings.model_error * need.effort).max(THRESHOLD_FLOOR * joint.limits.effort)
            })
            .collect()
    }
}

impl Plan {
    /// Writes the two trajectories as `armctl excite` does (`excitation.yaml`,
    /// `validation.yaml` in `dir`): `armctl sim --trajectory file:` replays them.
    pub(crate) fn write(
        &self,
        robot: &Robot,
        settings: &Settings,
        dir: &Path,
    ) -> Result<Vec<PathBuf>> {
        let mut files = vec![];
        for (name, found, seconds) in [
            ("excitation", &self.excitation, settings.duration),
            ("validation", &self.validation, settings.validation_duration),
        ] {
            let path = dir.join(format!("{name}.yaml"));
            std::fs::write(&path, found.to_yaml(robot, seconds)?)
                .with_context(|| format!("writing {}", path.display()))?;
            files.push(path);
        }
        Ok(files)
    }
}

/// Plans the excitation and the validation, refusing what the limits do not allow.
pub(crate) fn plan(robot: &Robot, settings: &Settings) -> Result<Plan> {
    let limits = ExcitationLimits {
        range: settings.range,
        velocity: settings.velocity,
        acceleration: settings.acceleration,
    };
    let search = |seed, seconds| -> Result<Excitation, Gate> {
        excitation(
            robot,
            1.0 / settings.period,
            settings.harmonics,
            limits.clone(),
            seed,
        )
        .and_then(|whole| whole.cut_to(robot, seconds))
        .map_err(|e| {
            Gate::plan(format!(
                "no exciting trajectory of {} harmonics of a {} s period within the limits (--range, --velocity, --acceleration): {e}; the arm was not moved",
                settings.harmonics, settings.period
            ))
        })
    };
    let excitation = search(settings.seed, settings.duration)?;
    let condition_number = excitation.condition_number;
    if condition_number.is_nan() || condition_number > settings.max_condition {
        return Err(Gate::plan(format!(
            "the limits are too tight to excite the arm: the best trajectory within them conditions the base regressor at {condition_number:.1}, above {} ({}; widen --range, --velocity or --acceleration, lengthen --period or --duration); the arm was not moved",
            settings.max_condition,
            least_moving(robot, &excitation.trajectory, settings.duration)?
        ))
        .into());
    }
    let validation = search(
        settings.seed.wrapping_add(VALIDATION_SEED),
        settings.validation_duration,
    )?;
    // The validation runs on the arm too (and again under the commissioned controller): its
    // needs are checked and bound the thresholds alike.
    let excited = needs(robot, &excitation.trajectory, settings.duration)?;
    let validated = needs(robot, &validation.trajectory, settings.validation_duration)?;
    let needs: Vec<JointNeeds> = excited
        .iter()
        .zip(&validated)
        .map(|(a, b)| a.or(b))
        .collect();
    check_efforts(robot, &needs, settings)?;
    Ok(Plan {
        excitation,
        validation,
        condition_number,
        needs,
        hold_gains: stiffest_gains(robot)?,
    })
}

/// The joint the excitation moves least, as a share of its range.
fn least_moving(robot: &Robot, trajectory: &Fourier, seconds: f64) -> Result<String> {
    let needs = needs(robot, trajectory, seconds)?;
    let share = |(joint, need): (&armctl_model::Joint, &JointNeeds)| {
        let range = joint.limits.upper - joint.limits.lower;
        (need.highest - need.lowest)
            / if range.is_finite() {
                range
            } else {
                std::f64::consts::TAU
            }
    };
    let (joint, least) = robot
        .joints()
        .iter()
        .zip(&needs)
        .map(|pair| (pair.0, share(pair)))
        .fold((None, f64::INFINITY), |w, (j, s)| {
            if s < w.1 {
                (Some(j), s)
            } else {
                w
            }
        });
    Ok(match joint {
        Some(joint) => format!(
            "joint '{}' sweeps {:.1} % of its range",
            joint.name,
            100.0 * least
        ),
        None => "no joint moves".into(),
    })
}

/// Each joint's range, peak speed, acceleration and URDF-model effort over `seconds`.
fn needs(robot: &Robot, trajectory: &Fourier, seconds: f64) -> Result<Vec<JointNeeds>> {
    let n = robot.dof();
    let mut ws = DynamicsWorkspace::new(robot);
    let mut sample = JointReference::hold(&vec![0.0; n]);
    let (mut tau, mut friction) = (vec![0.0; n], vec![0.0; n]);
    let mut needs = vec![
        JointNeeds {
            lowest: f64::INFINITY,
            highest: f64::NEG_INFINITY,
            ..JointNeeds::default()
        };
        n
    ];
    for k in 0..=(seconds * PLAN_RATE).ceil() as usize {
        trajectory.sample(k as f64 / PLAN_RATE, &mut sample);
        rnea(robot, &mut ws, &sample.q, &sample.qd, &sample.qdd, &mut tau)?;
        friction_torques(
            robot,
            &sample.q,
            &sample.qd,
            CoulombSign::Exact,
            &mut friction,
        )?;
        for (j, need) in needs.iter_mut().enumerate() {
            need.lowest = need.lowest.min(sample.q[j]);
            need.highest = need.highest.max(sample.q[j]);
            need.speed = need.speed.max(sample.qd[j].abs());
            need.acceleration = need.acceleration.max(sample.qdd[j].abs());
            need.effort = need.effort.max((tau[j] + friction[j]).abs());
        }
    }
    Ok(needs)
}

/// Refuses a plan whose efforts, with the model error's allowance, exceed the user's share of
/// an effort limit.
fn check_efforts(robot: &Robot, needs: &[JointNeeds], settings: &Settings) -> Result<(), Gate> {
    for (joint, need) in robot.joints().iter().zip(needs) {
        let allowed = settings.effort * joint.limits.effort;
        let wanted = need.effort * (1.0 + settings.model_error);
        if wanted > allowed {
            return Err(Gate::plan(format!(
                "the limits are too tight to excite joint '{}': it needs up to {:.2} with the URDF's model, {wanted:.2} with the model {:.0} % off, above {:.0} % of its effort limit {} (lower --acceleration or --velocity, or allow more with --effort); the arm was not moved",
                joint.name,
                need.effort,
                100.0 * settings.model_error,
                100.0 * settings.effort,
                joint.limits.effort
            )));
        }
    }
    Ok(())
}

/// The plan as `--dry-run` prints it: per joint what it needs against its limits, then the
/// steps' durations.
pub(crate) fn render(robot: &Robot, plan: &Plan, settings: &Settings) -> String {
    let mut text = format!(
        "plan: excitation of {} s ({} harmonics, period {} s), condition number of the base regressor {:.1}\n",
        settings.duration, settings.harmonics, settings.period, plan.condition_number
    );
    text += "  joint                      range used                 speed (limit)       accel    effort +model error (limit)\n";
    for (joint, need) in robot.joints().iter().zip(&plan.needs) {
        let limits = &joint.limits;
        text += &format!(
            "  {:<24} [{:>7.3}, {:>7.3}] of [{:.3}, {:.3}]  {:>6.3} ({:.3})  {:>8.3}  {:>7.2} {:>7.2} ({})\n",
            joint.name,
            need.lowest,
            need.highest,
            limits.lower,
            limits.upper,
            need.speed,
            limits.velocity,
            need.acceleration,
            need.effort,
            need.effort * (1.0 + settings.model_error),
            limits.effort
        );
    }
    let total = settings.hold_seconds + settings.duration + 2.0 * settings.validation_duration;
    text += &format!(
        "  steps: check (hold {} s) -> excite and record {} s -> identify -> validate on {} s held out -> size the gains -> verify {} s -> deploy; about {total:.0} s on the arm plus the approaches\n",
        settings.hold_seconds, settings.duration, settings.validation_duration, settings.validation_duration
    );
    let thresholds = plan.collision_thresholds(robot, settings);
    text += &format!(
        "  protections on, relaxed for a model {:.0} % off: collision thresholds per joint {} (the model error's share of the plan's peak effort, at least {:.0} % of the effort limit), joint friction up to {:.0} % of the effort limits allowed for, over-speed at 1.5x the velocity limits, tracking limit {}; a stop brakes the arm to rest and keeps what was recorded\n",
        100.0 * settings.model_error,
        super::model_steps::list_short(&thresholds),
        100.0 * THRESHOLD_FLOOR,
        100.0 * FRICTION_ALLOWANCE,
        settings.tracking_limit
    );
    text
}
