//! Braking an arm that really moves to rest: the damped hold after a controller failure and
//! while a joint is over its speed (docs/safety.md).
//!
//! An over-speed (a velocity above `over_speed` times the URDF limit that an arm can still
//! have) is believed: the state is used, the arm is braked with `G(q) - s D qd` (without `G`
//! in `safe_mode: zero`), and control resumes only once every joint is at rest again, from
//! where the arm stopped. The damping `D` is the PD family's default, scaled by `s` at every
//! step so that `dt lambda_max(M(q)^-1 s D)` stays within the sampled-data margin
//! ([`armctl_control::damping_bound`]): a brake that cannot itself destabilise the arm, also
//! where the wrist axes align.

use std::sync::Arc;

use armctl_control::damping_bound::DampingBound;
use armctl_dynamics::DynamicsWorkspace;
use armctl_model::Robot;

use crate::controller_core::{Fault, Implausible, ImplausibleRule};

/// A joint is at rest below this share of its velocity limit.
pub const REST_SHARE: f64 = 0.05;

/// A joint without a velocity limit is at rest below this, rad/s (m/s).
pub const REST_WITHOUT_LIMIT: f64 = 0.05;

/// The damping of the hold and the over-speed that started a braking.
#[derive(Debug, Clone)]
pub(crate) struct Brake {
    damping: Vec<f64>,
    bound: DampingBound,
    /// The over-speed that started the braking in progress, kept until the arm is at rest.
    cause: Option<Implausible>,
}

impl Brake {
    /// The brake of `robot` with `damping` per joint.
    pub(crate) fn new(robot: &Robot, damping: Vec<f64>) -> Self {
        Self {
            bound: DampingBound::new(robot.dof()),
            damping,
            cause: None,
        }
    }

    /// Subtracts `S D qd` from `effort`, `S` the per-joint factors in (0, 1] that keep the
    /// damping within the sampled-data margin at `q` for a step of `dt`. A mass matrix that
    /// cannot be factored (a broken model) leaves the designed damping unscaled: braking beats
    /// coasting.
    pub(crate) fn damp(
        &mut self,
        robot: &Robot,
        ws: &mut DynamicsWorkspace,
        (q, qd): (&[f64], &[f64]),
        dt: f64,
        effort: &mut [f64],
    ) {
        let scales = self
            .bound
            .diagonal_scales(robot, ws, q, &self.damping, dt)
            .ok();
        for (i, ((e, d), v)) in effort.iter_mut().zip(&self.damping).zip(qd).enumerate() {
            *e -= scales.map_or(1.0, |s| s[i]) * d * v;
        }
    }

    /// The over-speed fault of a believed state: the first joint faster than `factor` times
    /// its velocity limit starts a braking, which lasts until every joint is at rest.
    pub(crate) fn over_speed(
        &mut self,
        robot: &Robot,
        names: &[Arc<str>],
        qd: &[f64],
        factor: f64,
    ) -> Option<Fault> {
        let joints = robot.joints().iter().zip(names).zip(qd);
        let fastest = joints
            .filter(|((joint, _), v)| {
                let limit = joint.limits.velocity;
                limit > 0.0 && v.abs() > factor * limit
            })
            .map(|((joint, name), &value)| Implausible {
                joint: name.clone(),
                value,
                rule: ImplausibleRule::Velocity {
                    limit: joint.limits.velocity,
                    factor,
                },
            })
            .next();
        match (&self.cause, fastest) {
            (None, Some(found)) => self.cause = Some(found),
            (Some(_), None) if at_rest(robot, qd) => self.cause = None,
            _ => {}
        }
        self.cause.clone().map(Fault::OverSpeed)
    }

    /// Forgets a braking in progress (the states start over).
    pub(crate) fn forget(&mut self) {
        self.cause = None;
    }
}

/// Every joint below [`REST_SHARE`] of its velocity limit (below [`REST_WITHOUT_LIMIT`]
/// without one).
fn at_rest(robot: &Robot, qd: &[f64]) -> bool {
    robot.joints().iter().zip(qd).all(|(joint, v)| {
        let limit = joint.limits.velocity;
        let rest = if limit > 0.0 {
            REST_SHARE * limit
        } else {
            REST_WITHOUT_LIMIT
        };
        v.abs() <= rest
    })
}
