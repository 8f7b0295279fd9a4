//! The core's reference stage: the trajectory taken (`trajectory_acceptance.rs` checks it),
//! when it started, the move that joins it from where the arm is at the first start, and
//! the reference in effect, sampled once a step; a hold's reference otherwise.

use armctl_control::reference::{Approach, Trajectory};
use armctl_control::JointReference;
use armctl_model::Robot;

use super::{
    APPROACH_ACCELERATION_SHARE, APPROACH_FRICTION_SHARE, APPROACH_SPEED_SHARE, DEFAULT_MAX_POINTS,
};

/// The trajectory, the reference in effect and the limits a trajectory is checked on.
pub(super) struct ReferenceSource {
    /// The trajectory and when it started; joined by a move from where the arm is when
    /// control starts ([`Approach`]).
    pub(super) trajectory: Option<(f64, Approach)>,
    pub(super) reference: JointReference,
    /// `max_reference_points`.
    pub(super) max_points: usize,
    /// Largest reference acceleration per joint, rad/s^2 (m/s^2).
    pub(super) acceleration_limits: Vec<f64>,
    /// The arm-derived default of `acceleration_limits`.
    pub(super) default_acceleration_limits: Vec<f64>,
    /// Peak speeds and accelerations of the move that joins a trajectory
    /// ([`APPROACH_SPEED_SHARE`], [`APPROACH_ACCELERATION_SHARE`] of the limits), kept to plan
    /// it without allocating.
    approach_speeds: Vec<f64>,
    approach_accelerations: Vec<f64>,
}

impl ReferenceSource {
    /// No trajectory, a hold at zero, and the arm's default acceleration limits.
    pub(super) fn new(acceleration_limits: Vec<f64>) -> Self {
        let n = acceleration_limits.len();
        Self {
            trajectory: None,
            reference: JointReference::hold(&vec![0.0; n]),
            max_points: DEFAULT_MAX_POINTS,
            default_acceleration_limits: acceleration_limits.clone(),
            acceleration_limits,
            approach_speeds: vec![0.0; n],
            approach_accelerations: vec![0.0; n],
        }
    }

    /// The reference at `now`: the trajectory's sample, else the hold in effect.
    pub(super) fn sample(&mut self, now: f64) {
        if let Some((start, trajectory)) = &self.trajectory {
            trajectory.sample(now - start, &mut self.reference);
        }
    }

    /// At the first start, a trajectory sent since the first state is joined from `q` by a
    /// move within half the velocity limits (slower where viscous friction would take more
    /// than a quarter of the effort limit) and a quarter of the smallest acceleration limit,
    /// and runs from `now`.
    pub(super) fn join(&mut self, q: &[f64], now: f64, robot: &Robot) {
        let Some((start, trajectory)) = &mut self.trajectory else {
            return;
        };
        let offset = (now - *start).max(0.0);
        for (v, joint) in self.approach_speeds.iter_mut().zip(robot.joints()) {
            *v = approach_speed(joint);
        }
        // One bound for every joint, the smallest: each joint's limit is what its own effort
        // gives when every joint accelerates at most that much (row sums of M), so a faster
        // neighbour would load a weak joint through the coupling.
        let slowest = self
            .acceleration_limits
            .iter()
            .fold(f64::INFINITY, |m, a| m.min(*a));
        self.approach_accelerations
            .fill(APPROACH_ACCELERATION_SHARE * slowest);
        trajectory.plan(
            q,
            offset,
            &self.approach_speeds,
            &self.approach_accelerations,
        );
        *start = now;
    }
}

/// The peak speed of the move that joins a trajectory: [`APPROACH_SPEED_SHARE`] of the velocity
/// limit, and no faster than the model's viscous friction allows with
/// [`APPROACH_FRICTION_SHARE`] of the effort limit (a heavily damped joint with a small effort
/// limit saturated at half its velocity limit).
fn approach_speed(joint: &armctl_model::Joint) -> f64 {
    let limits = &joint.limits;
    let by_friction = if joint.friction.viscous > 0.0 {
        APPROACH_FRICTION_SHARE * limits.effort / joint.friction.viscous
    } else {
        f64::INFINITY
    };
    (APPROACH_SPEED_SHARE * limits.velocity).min(by_friction)
}
