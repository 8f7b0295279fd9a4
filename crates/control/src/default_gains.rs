//! How default gains are derived, so that they are stable on an arm nobody tuned them for
//! (docs/theory.md section 6).
//!
//! The joint inertias are sampled over configurations: the middle of each joint's range, the
//! zero configuration (clamped into the limits; axes often line up there, as the Panda's joints
//! 1 and 3 at joint 2 = 0) and seeded random ones. Per joint:
//! - `I_typ`, the diagonal `M_ii` at mid-range: the gains are sized on it;
//! - `I_min`, the smallest effective inertia `1 / (M^-1)_ii`: the inertia the joint sees when
//!   the others move freely, which sets the discrete-time limit;
//! - `I_max`, the largest `M_ii`, and the largest row sum `sum_j |M_ij|`: what a step in the
//!   reference has to accelerate.
//!
//! Joint-space PD gains `kp = w^2 I_typ`, `kd = 2 w I_typ` (critically damped on `I_typ`) take
//! the natural frequency `w = min(w_max, w_discrete, w_step)`:
//! - `w_discrete`: an explicit velocity loop `I qdd = -kd qd` sampled at `dt` is stable for
//!   `kd dt / I < 2` (about 1 with one step of delay); the defaults keep
//!   `kd dt / I_min <= 0.25` at [`DESIGN_RATE`];
//! - `w_step`: a reference step of [`STEP`] must not need more than [`STEP_EFFORT_SHARE`] of the
//!   joint's effort limit: `kp STEP <= share * limit`.
//!
//! Then `dt * lambda_max(M^-1 Kd)` is checked over the samples (coupled joints) and the damping
//! scaled down, with the stiffness, until it is within the same margin.
//!
//! Gains per unit inertia (computed torque and its relatives, `qdd = Kd de + Kp e` through the
//! model) take `w = min(w_max, w_step)` with the largest row sum `sum_j |M_ij|` in place of
//! `I_typ` (a step of every joint at once loads each joint through the whole row of M); `kd dt`
//! is far inside the discrete limit for any `w` below 250 rad/s.

use armctl_dynamics::{mass_matrix, DynamicsWorkspace};
use armctl_model::Robot;
use nalgebra::{DMatrix, SymmetricEigen};

use crate::gains::Configurations;
use crate::ControlError;

/// Control rate the defaults are sized for, Hz (the simulator's, and most torque-controlled
/// arms'). At a lower rate, scale the damping down with the rate.
pub const DESIGN_RATE: f64 = 1000.0;

/// Largest `kd dt / I` (and `dt lambda_max(M^-1 Kd)`) the defaults allow.
const DISCRETE_MARGIN: f64 = 0.25;

/// The reference step a default answers without saturating, rad (m).
pub const STEP: f64 = 0.1;

/// The share of a joint's effort limit such a step may use.
const STEP_EFFORT_SHARE: f64 = 0.4;

/// Random configurations sampled besides the middle and the zero configuration.
const SAMPLES: usize = 24;

/// The sampled joint inertias of a robot.
#[derive(Debug, Clone)]
pub(crate) struct InertiaBounds {
    /// `M_ii` at mid-range.
    pub(crate) typical: Vec<f64>,
    /// Largest `M_ii` over the samples.
    pub(crate) largest: Vec<f64>,
    /// Largest row sum `sum_j |M_ij|` over the samples: what joint i feels when every joint
    /// accelerates at once.
    pub(crate) largest_row: Vec<f64>,
    /// Smallest `1 / (M^-1)_ii` over the samples.
    pub(crate) smallest_effective: Vec<f64>,
    /// `M^-1` at every sample, for the coupled check.
    inverses: Vec<DMatrix<f64>>,
}

/// The configurations the bounds are taken over.
fn samples(robot: &Robot) -> Vec<Vec<f64>> {
    let middle = Configurations::middle(robot);
    let zero = robot
        .joints()
        .iter()
        .map(|j| 0.0_f64.clamp(j.limits.lower, j.limits.upper))
        .collect();
    let mut random = Configurations::new(0x5EED_0FDE_u64);
    let mut all = vec![middle, zero];
    all.extend((0..SAMPLES).map(|_| random.next(robot)));
    all
}

impl InertiaBounds {
    /// Samples `robot`'s mass matrix.
    pub(crate) fn of(robot: &Robot) -> Result<Self, ControlError> {
        let n = robot.dof();
        let mut ws = DynamicsWorkspace::new(robot);
        let mut m = DMatrix::zeros(n, n);
        let mut bounds = Self {
            typical: vec![0.0; n],
            largest: vec![0.0; n],
            largest_row: vec![0.0; n],
            smallest_effective: vec![f64::INFINITY; n],
            inverses: Vec::new(),
        };
        for (k, q) in samples(robot).iter().enumerate() {
            mass_matrix(robot, &mut ws, q, &mut m)?;
            let inverse = m
                .clone()
                .cholesky()
                .ok_or(ControlError::Dynamics(
                    armctl_dynamics::DynamicsError::SingularMassMatrix,
                ))?
                .inverse();
            for i in 0..n {
                if k == 0 {
                    bounds.typical[i] = m[(i, i)];
                }
                bounds.largest[i] = bounds.largest[i].max(m[(i, i)]);
                let row: f64 = m.row(i).iter().map(|v| v.abs()).sum();
                bounds.largest_row[i] = bounds.largest_row[i].max(row);
                bounds.smallest_effective[i] =
                    bounds.smallest_effective[i].min(1.0 / inverse[(i, i)]);
            }
            bounds.inverses.push(inverse);
        }
        Ok(bounds)
    }

    /// `dt lambda_max(M^-1 Kd)` at the worst sample.
    fn discrete_load(&self, kd: &[f64]) -> f64 {
        let root: Vec<f64> = kd.iter().map(|k| k.sqrt()).collect();
        self.inverses
            .iter()
            .map(|inverse| {
                let scaled = DMatrix::from_fn(kd.len(), kd.len(), |r, c| {
                    root[r] * inverse[(r, c)] * root[c]
                });
                SymmetricEigen::new(scaled).eigenvalues.max()
            })
            .fold(0.0, f64::max)
            / DESIGN_RATE
    }
}

/// The frequency at which a gain `w^2 inertia` answers a [`STEP`] with the allowed share of
/// `limit`.
fn step_frequency(limit: f64, inertia: f64) -> f64 {
    (STEP_EFFORT_SHARE * limit / (inertia * STEP)).sqrt()
}

/// Default joint-space PD gains `(kp, kd)` for natural frequencies up to `w_max`, rad/s.
pub(crate) fn pd_gains(robot: &Robot, w_max: f64) -> Result<(Vec<f64>, Vec<f64>), ControlError> {
    let bounds = InertiaBounds::of(robot)?;
    let dt = 1.0 / DESIGN_RATE;
    let w: Vec<f64> = robot
        .joints()
        .iter()
        .enumerate()
        .map(|(i, joint)| {
            let typical = bounds.typical[i];
            let discrete = DISCRETE_MARGIN * bounds.smallest_effective[i] / (2.0 * typical * dt);
            w_max
                .min(discrete)
                .min(step_frequency(joint.limits.effort, typical))
        })
        .collect();
    let mut kp: Vec<f64> = w
        .iter()
        .zip(&bounds.typical)
        .map(|(w, m)| w * w * m)
        .collect();
    let mut kd: Vec<f64> = w
        .iter()
        .zip(&bounds.typical)
        .map(|(w, m)| 2.0 * w * m)
        .collect();
    let load = bounds.discrete_load(&kd);
    if load > DISCRETE_MARGIN {
        let scale = DISCRETE_MARGIN / load;
        kd.iter_mut().for_each(|k| *k *= scale);
        kp.iter_mut().for_each(|k| *k *= scale * scale);
    }
    Ok((kp, kd))
}

/// Damping per joint for a hold that stops a moving arm, N m s/rad (N s/m): the PD family's
/// default damping, so just as far inside the discrete-time limit.
pub fn hold_damping(robot: &Robot) -> Result<Vec<f64>, ControlError> {
    Ok(pd_gains(robot, crate::gains::DEFAULT_BANDWIDTH)?.1)
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
    fn pd_defaults_are_inside_the_discrete_limit_and_answer_a_step_within_the_limits() {
        let robot = panda();
        let (kp, kd) = pd_gains(&robot, 20.0).unwrap();
        let bounds = InertiaBounds::of(&robot).unwrap();
        assert!(bounds.discrete_load(&kd) <= DISCRETE_MARGIN + 1e-12);
        for (i, joint) in robot.joints().iter().enumerate() {
            assert!(kd[i] / DESIGN_RATE / bounds.smallest_effective[i] <= DISCRETE_MARGIN + 1e-12);
            assert!(kp[i] * STEP <= STEP_EFFORT_SHARE * joint.limits.effort + 1e-9);
            assert!(kp[i] > 0.0 && kd[i] > 0.0);
        }
        // Joint 1 of the Panda sees a tiny inertia where it lines up with joint 3: its
        // damping is limited by that, not by M_11.
        assert!(bounds.smallest_effective[0] < 0.2 * bounds.typical[0]);
    }
}
