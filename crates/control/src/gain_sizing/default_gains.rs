//! How default gains are derived, so that they are stable on an arm nobody tuned them for
//! (docs/theory.md section 6).
//!
//! The joint inertias are sampled over configurations: the middle of each joint's range, the
//! zero configuration (clamped into the limits; axes often line up there, as the Panda's joints
//! 1 and 3 at joint 2 = 0) and seeded random ones. Per joint:
//! - `M_ii` and the row sum `R_i = sum_j |M_ij|` at mid-range: `R_i` is what the joint holds
//!   when the others accelerate (a light wrist on a heavy arm is pushed by the arm's motion
//!   through `M_ij`, far more than by its own inertia);
//! - the effective inertia `I_eff = 1 / (M^-1)_ii`, the inertia the joint sees when the others
//!   move freely, which sets the discrete-time limit: its median over the samples sizes the
//!   defaults, its smallest is where the run-time bound acts;
//! - the largest `M_ii`, and the largest row sum: what a step in the reference has to
//!   accelerate (computed torque's defaults).
//!
//! Joint-space PD gains `kp = w^2 R_i` and `kd = 2 w (R_i M_ii)^1/2` (critically damped on
//! `M_ii` at the frequency `kp` gives it; damped on `R_i` the joint's own mode would be
//! overdamped and slow) take the natural frequency `w = min(w_max, w_discrete, w_step)`:
//! - `w_discrete`: an explicit velocity loop `I qdd = -kd qd` sampled at `dt` is stable for
//!   `kd dt / I < 2` (about 1 with one step of delay); the defaults keep
//!   `kd dt / I_eff <= 0.25` at [`DESIGN_RATE`] for the median effective inertia;
//! - `w_step`: a reference step of [`STEP`] must not need more than [`STEP_EFFORT_SHARE`] of the
//!   joint's effort limit: `kp STEP <= share * limit`.
//!
//! Then the coupled joints (`dt lambda_max(M^-1 Kd)`, aligned axes) are checked at every
//! sample with the run-time bound's per-joint factors ([`DampingBound`]) for the same margin,
//! and each joint's damping is scaled by the median of its factors, its stiffness by the
//! square: a joint is cut only where it is coupled at most configurations. Where a
//! configuration has a far lighter mode (aligned axes, a stretched arm pointing up), the laws'
//! run-time bound ([`crate::gain_sizing::damping_bound`]) scales the damping of the joints concerned there,
//! at every step: sizing the defaults on the worst sample instead had left a light wrist
//! nearly free at every configuration. [`PdDesign::describe`] says, joint by joint, what
//! limited the frequency (`--print-params` prints it in the gains' descriptions).
//!
//! Gains per unit inertia (computed torque and its relatives, `qdd = Kd de + Kp e` through the
//! model) take `w = min(w_max, w_step)` with the largest row sum `sum_j |M_ij|` over the
//! samples as the inertia (a step of every joint at once loads each joint through the whole
//! row of M); `kd dt`
//! is far inside the discrete limit for any `w` below 250 rad/s.

use armctl_dynamics::{mass_matrix, DynamicsWorkspace};
use armctl_model::Robot;
use nalgebra::DMatrix;
#[cfg(test)]
use nalgebra::SymmetricEigen;

use crate::gain_sizing::damping_bound::DampingBound;
use crate::numerics::configuration_samples::samples;
use crate::ControlError;

pub use crate::numerics::configuration_samples::DESIGN_RATE;

/// Natural frequency of model-sized default gains, rad/s.
pub(crate) const DEFAULT_BANDWIDTH: f64 = 20.0;

/// Largest `kd dt / I_eff` the defaults allow on the median effective inertia, and the margin
/// of the coupled check at each sample (whose per-joint factors are then taken at their
/// median: the coupled load stays within the run-time margin at most samples, not within this).
const DISCRETE_MARGIN: f64 = 0.25;

/// The reference step a default answers without saturating, rad (m).
pub const STEP: f64 = 0.1;

/// The share of a joint's effort limit such a step may use.
const STEP_EFFORT_SHARE: f64 = 0.4;

/// The sampled joint inertias of a robot.
#[derive(Debug, Clone)]
pub(crate) struct InertiaBounds {
    /// `M_ii` at mid-range.
    pub(crate) typical: Vec<f64>,
    /// The row sum `sum_j |M_ij|` at mid-range: what joint i holds when the others accelerate.
    pub(crate) typical_row: Vec<f64>,
    /// Largest `M_ii` over the samples.
    pub(crate) largest: Vec<f64>,
    /// Largest row sum `sum_j |M_ij|` over the samples: what joint i feels when every joint
    /// accelerates at once.
    pub(crate) largest_row: Vec<f64>,
    /// Smallest `1 / (M^-1)_ii` over the samples.
    pub(crate) smallest_effective: Vec<f64>,
    /// `M^-1` at every sample.
    inverses: Vec<DMatrix<f64>>,
    /// The sampled configurations, for the coupled check.
    configurations: Vec<Vec<f64>>,
}

impl InertiaBounds {
    /// Samples `robot`'s mass matrix.
    pub(crate) fn of(robot: &Robot) -> Result<Self, ControlError> {
        let n = robot.dof();
        let mut ws = DynamicsWorkspace::new(robot);
        let mut m = DMatrix::zeros(n, n);
        let mut bounds = Self {
            typical: vec![0.0; n],
            typical_row: vec![0.0; n],
            largest: vec![0.0; n],
            largest_row: vec![0.0; n],
            smallest_effective: vec![f64::INFINITY; n],
            inverses: Vec::new(),
            configurations: samples(robot),
        };
        for (k, q) in bounds.configurations.iter().enumerate() {
            mass_matrix(robot, &mut ws, q, &mut m)?;
            let inverse = m
                .clone()
                .cholesky()
                .ok_or(ControlError::Dynamics(
                    armctl_dynamics::DynamicsError::SingularMassMatrix,
                ))?
                .inverse();
            for i in 0..n {
                let row: f64 = m.row(i).iter().map(|v| v.abs()).sum();
                if k == 0 {
                    bounds.typical[i] = m[(i, i)];
                    bounds.typical_row[i] = row;
                }
                bounds.largest[i] = bounds.largest[i].max(m[(i, i)]);
                bounds.largest_row[i] = bounds.largest_row[i].max(row);
                bounds.smallest_effective[i] =
                    bounds.smallest_effective[i].min(1.0 / inverse[(i, i)]);
            }
            bounds.inverses.push(inverse);
        }
        Ok(bounds)
    }

    /// The median over the samples of `1 / (M^-1)_ii`: the effective inertia joint i sees at
    /// most configurations (the singular ones, where it is far smaller, are the run-time
    /// bound's).
    fn median_effective(&self, i: usize) -> f64 {
        let mut values: Vec<f64> = self.inverses.iter().map(|inv| 1.0 / inv[(i, i)]).collect();
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    }

    /// The inertia joint i's default damping is sized on: `(R_i M_ii)^1/2` at mid-range, `R_i`
    /// the row sum. The stiffness is sized on `R_i`, what the joint holds when the others
    /// accelerate; damping on `R_i` too would overdamp the joint's own mode (`M_ii`), on `M_ii`
    /// underdamp it: the geometric mean damps it critically at the stiffness's frequency.
    fn damped_inertia(&self, i: usize) -> f64 {
        (self.typical_row[i] * self.typical[i]).sqrt()
    }

    /// Per joint, the median over the samples of the factor by which [`DampingBound`] scales
    /// `kd` to keep `dt lambda_max(M^-1 Kd)` within [`DISCRETE_MARGIN`] there: coupled joints
    /// (aligned axes) are cut where they are coupled at most configurations, joint by joint,
    /// so a heavy joint keeps its stiffness when a light one is the coupled mode.
    fn median_coupled_scales(&self, robot: &Robot, kd: &[f64]) -> Result<Vec<f64>, ControlError> {
        let n = kd.len();
        let mut bound = DampingBound::new(n);
        let mut ws = DynamicsWorkspace::new(robot);
        let mut per_joint = vec![Vec::with_capacity(self.configurations.len()); n];
        for q in &self.configurations {
            let dt = 1.0 / DESIGN_RATE;
            let scales =
                bound.diagonal_scales_within(robot, &mut ws, q, kd, dt, DISCRETE_MARGIN)?;
            for (values, s) in per_joint.iter_mut().zip(scales) {
                values.push(*s);
            }
        }
        Ok(per_joint
            .into_iter()
            .map(|mut values| {
                values.sort_by(f64::total_cmp);
                values[values.len() / 2]
            })
            .collect())
    }

    /// `dt lambda_max(M^-1 Kd)` at every sample.
    #[cfg(test)]
    fn discrete_loads(&self, kd: &[f64]) -> Vec<f64> {
        let root: Vec<f64> = kd.iter().map(|k| k.sqrt()).collect();
        self.inverses
            .iter()
            .map(|inverse| {
                let scaled = DMatrix::from_fn(kd.len(), kd.len(), |r, c| {
                    root[r] * inverse[(r, c)] * root[c]
                });
                SymmetricEigen::new(scaled).eigenvalues.max() / DESIGN_RATE
            })
            .collect()
    }
}

/// The frequency at which a gain `w^2 inertia` answers a [`STEP`] with the allowed share of
/// `limit`.
fn step_frequency(limit: f64, inertia: f64) -> f64 {
    (STEP_EFFORT_SHARE * limit / (inertia * STEP)).sqrt()
}

/// What set a joint's default natural frequency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GainLimit {
    /// The law's bandwidth itself.
    Bandwidth,
    /// The sampled-data margin `kd dt / I_eff` at the joint's median effective inertia.
    SampledData {
        /// That inertia, kg m^2 (kg).
        effective_inertia: f64,
    },
    /// A [`STEP`] may use only a share of the effort limit.
    StepEffort {
        /// The joint's effort limit, N m (N).
        effort_limit: f64,
    },
}

/// How one joint's default PD gains were sized.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JointSizing {
    /// Natural frequency `(kp / R_i)^1/2`, rad/s, after `coupled_scale`.
    pub frequency: f64,
    /// What limited the frequency before the coupled check.
    pub limit: GainLimit,
    /// The factor the coupled check took off (1: none): the joint moves with another one
    /// (aligned axes) at most configurations.
    pub coupled_scale: f64,
}

impl std::fmt::Display for JointSizing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.3} rad/s, limited by ", self.frequency)?;
        match self.limit {
            GainLimit::Bandwidth => write!(f, "the bandwidth")?,
            GainLimit::SampledData { effective_inertia } => write!(
                f,
                "the sampled-data margin at {DESIGN_RATE} Hz on its effective inertia \
                 {effective_inertia:.3e}"
            )?,
            GainLimit::StepEffort { effort_limit } => write!(
                f,
                "a {STEP} rad (m) step within {}% of its effort limit {effort_limit}",
                STEP_EFFORT_SHARE * 100.0
            )?,
        }
        if self.coupled_scale < 1.0 {
            write!(f, ", then x{:.3} for a coupled joint", self.coupled_scale)?;
        }
        Ok(())
    }
}

/// Default joint-space PD gains for natural frequencies up to `w_max`, rad/s: `kp`, `kd` and
/// how each joint was sized.
#[derive(Debug, Clone)]
pub(crate) struct PdDesign {
    pub(crate) kp: Vec<f64>,
    pub(crate) kd: Vec<f64>,
    pub(crate) joints: Vec<JointSizing>,
}

impl PdDesign {
    /// The sizing per joint in one sentence, for a parameter description.
    pub(crate) fn describe(&self, robot: &Robot) -> String {
        let joints: Vec<String> = robot
            .joints()
            .iter()
            .zip(&self.joints)
            .map(|(joint, sizing)| format!("{}: {sizing}", joint.name))
            .collect();
        format!(
            "Defaults on this arm, natural frequency per joint and what limited it \
             (docs/theory.md section 6): {}.",
            joints.join("; ")
        )
    }
}

/// The frequency and its limit for one joint.
fn joint_frequency(w_max: f64, discrete: f64, step: f64, sizing: (f64, f64)) -> (f64, GainLimit) {
    let (effective_inertia, effort_limit) = sizing;
    let mut best = (w_max, GainLimit::Bandwidth);
    if discrete < best.0 {
        best = (discrete, GainLimit::SampledData { effective_inertia });
    }
    if step < best.0 {
        best = (step, GainLimit::StepEffort { effort_limit });
    }
    best
}

/// Default joint-space PD gains `(kp, kd)` for natural frequencies up to `w_max`, rad/s.
pub(crate) fn pd_gains(robot: &Robot, w_max: f64) -> Result<(Vec<f64>, Vec<f64>), ControlError> {
    let design = pd_design(robot, w_max)?;
    Ok((design.kp, design.kd))
}

/// [`PdDesign`] for natural frequencies up to `w_max`, rad/s.
pub(crate) fn pd_design(robot: &Robot, w_max: f64) -> Result<PdDesign, ControlError> {
    let bounds = InertiaBounds::of(robot)?;
    let dt = 1.0 / DESIGN_RATE;
    let limited: Vec<(f64, GainLimit)> = robot
        .joints()
        .iter()
        .enumerate()
        .map(|(i, joint)| {
            let effective = bounds.median_effective(i);
            let damped = bounds.damped_inertia(i);
            let discrete = DISCRETE_MARGIN * effective / (2.0 * damped * dt);
            let step = step_frequency(joint.limits.effort, bounds.typical_row[i]);
            joint_frequency(w_max, discrete, step, (effective, joint.limits.effort))
        })
        .collect();
    let kd: Vec<f64> = limited
        .iter()
        .enumerate()
        .map(|(i, (w, _))| 2.0 * w * bounds.damped_inertia(i))
        .collect();
    let scales = bounds.median_coupled_scales(robot, &kd)?;
    let joints: Vec<JointSizing> = limited
        .iter()
        .zip(&scales)
        .map(|((w, limit), s)| JointSizing {
            frequency: w * s,
            limit: *limit,
            coupled_scale: *s,
        })
        .collect();
    let kp = joints
        .iter()
        .zip(&bounds.typical_row)
        .map(|(j, m)| j.frequency * j.frequency * m)
        .collect();
    let kd = joints
        .iter()
        .enumerate()
        .map(|(i, j)| 2.0 * j.frequency * bounds.damped_inertia(i))
        .collect();
    Ok(PdDesign { kp, kd, joints })
}

/// Stiffness and damping per joint for a hold that stops a moving arm and keeps it where it
/// stopped, N m/rad and N m s/rad (N/m, N s/m): the PD family's defaults, so just as far inside
/// the discrete-time limit.
pub fn hold_gains(robot: &Robot) -> Result<(Vec<f64>, Vec<f64>), ControlError> {
    pd_gains(robot, DEFAULT_BANDWIDTH)
}

/// The stiffest joint-space PD gains `(kp, kd)` the limits allow, with no bandwidth cap: each
/// joint's frequency is set by the sampled-data bound or by a 0.1 rad step within its share of
/// the effort limit, whichever is lower (then the coupled joints' check, as the defaults). For
/// an arm whose model is not known yet (commissioning), where holding against a load the model
/// lacks matters more than a smooth response; the laws' run-time damping bound still applies.
pub fn stiffest_gains(robot: &Robot) -> Result<(Vec<f64>, Vec<f64>), ControlError> {
    pd_gains(robot, f64::INFINITY)
}

/// Default natural frequencies of error dynamics per unit inertia, up to `w_max`, rad/s.
pub(crate) fn error_dynamics_frequencies(
    robot: &Robot,
    w_max: f64,
) -> Result<Vec<f64>, ControlError> {
    let bounds = InertiaBounds::of(robot)?;
    Ok(robot
        .joints()
        .iter()
        .zip(&bounds.largest_row)
        .map(|(joint, m)| w_max.min(step_frequency(joint.limits.effort, *m)))
        .collect())
}

/// The largest acceleration each joint can be commanded with `share` of its effort limit when
/// every joint accelerates at once (`share * limit / max_q sum_j |M_ij|`), rad/s^2: the bound on
/// the defaults of terms that add acceleration on top of the error dynamics (robust, sliding).
pub(crate) fn acceleration_capacity(robot: &Robot, share: f64) -> Result<Vec<f64>, ControlError> {
    let bounds = InertiaBounds::of(robot)?;
    Ok(robot
        .joints()
        .iter()
        .zip(&bounds.largest_row)
        .map(|(joint, m)| share * joint.limits.effort / m)
        .collect())
}

/// Share of each effort limit the default reference acceleration limits leave for accelerating
/// (the rest is for gravity and the velocity terms).
const ACCELERATION_EFFORT_SHARE: f64 = 0.5;

/// Default acceleration limits of references, rad/s^2 (m/s^2) per joint: what half of each
/// effort limit gives when every joint accelerates at once, in the worst sampled configuration
/// (URDF has no acceleration limits). A reference asking for more would saturate the arm.
pub fn acceleration_limits(robot: &Robot) -> Result<Vec<f64>, ControlError> {
    acceleration_capacity(robot, ACCELERATION_EFFORT_SHARE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panda() -> Robot {
        armctl_model::test_support::bundled_robot("panda.urdf")
    }

    #[test]
    fn the_design_says_what_limited_each_joint() {
        let robot = panda();
        let design = pd_design(&robot, 20.0).unwrap();
        let text = design.describe(&robot);
        for joint in robot.joints() {
            assert!(text.contains(&format!("{}: ", joint.name)), "{text}");
        }
        // The Panda's shoulder is limited by the step effort, joint 3 is cut where it lines
        // up with joint 1.
        assert!(matches!(
            design.joints[1].limit,
            GainLimit::StepEffort { effort_limit } if effort_limit == 87.0
        ));
        assert!(design.joints[2].coupled_scale < 1.0, "{text}");
        assert!(text.contains("for a coupled joint"), "{text}");
        for (sizing, kp) in design.joints.iter().zip(&design.kp) {
            assert!(sizing.frequency > 0.0 && sizing.frequency <= 20.0 && *kp > 0.0);
        }
    }

    #[test]
    fn pd_defaults_are_inside_the_discrete_limit_at_most_configurations_and_answer_a_step() {
        let robot = panda();
        let (kp, kd) = pd_gains(&robot, 20.0).unwrap();
        let bounds = InertiaBounds::of(&robot).unwrap();
        let mut loads = bounds.discrete_loads(&kd);
        loads.sort_by(f64::total_cmp);
        // Within the run-time margin (the bound does not act) at most samples.
        assert!(
            loads[loads.len() / 2] <= crate::gain_sizing::damping_bound::RUNTIME_MARGIN,
            "{loads:?}"
        );
        for (i, joint) in robot.joints().iter().enumerate() {
            let load = kd[i] / DESIGN_RATE / bounds.median_effective(i);
            assert!(load <= DISCRETE_MARGIN + 1e-12);
            assert!(kp[i] * STEP <= STEP_EFFORT_SHARE * joint.limits.effort + 1e-9);
            assert!(kp[i] > 0.0 && kd[i] > 0.0);
        }
        // Joint 1 of the Panda sees a tiny inertia where it lines up with joint 3: there the
        // defaults pass the design margin, and the run-time bound (damping_bound.rs) scales
        // them; they are not cut everywhere for that one configuration.
        assert!(bounds.smallest_effective[0] < 0.2 * bounds.typical[0]);
        assert!(loads[loads.len() - 1] > DISCRETE_MARGIN);
    }
}
