//! Braking an arm that really moves to rest: the damped hold after a controller failure and
//! while a joint is over its speed (docs/safety.md).
//!
//! An over-speed (a velocity above `over_speed` times the URDF limit that an arm can still
//! have) is believed: the state is used, the arm is braked with
//! `G(q) - s D qd + s^2 K (q_b - q)` (without `G` in `safe_mode: zero`), `q_b` where the
//! braking began, and control resumes only once every joint is at rest again, from where the
//! arm stopped. `K` and `D` are the PD family's defaults, scaled per joint by `s` at every step
//! so that `dt lambda_max(M(q)^-1 s D)` stays within the sampled-data margin
//! ([`armctl_control::damping_bound`]): a brake that cannot itself destabilise the arm, also
//! where the wrist axes align. The spring makes it a hold: under a steady external load a
//! damper alone lets the arm drift at `load / D` (a light wrist braked by 0.01 N m s/rad turns
//! at 5 rad/s under 0.05 N m), never coming to rest; with it the arm stops `K^-1 load` from
//! `q_b`.

use std::sync::Arc;

use armctl_control::damping_bound::DampingBound;
use armctl_dynamics::DynamicsWorkspace;
use armctl_model::Robot;

use super::faults::{Fault, Implausible, ImplausibleRule};

/// The `compliant` reaction's share of the hold's natural frequency.
const YIELD: f64 = 1.0 / 3.0;

/// A joint is at rest below this share of its velocity limit.
pub const REST_SHARE: f64 = 0.05;

/// A joint without a velocity limit is at rest below this, rad/s (m/s).
pub const REST_WITHOUT_LIMIT: f64 = 0.05;

/// The gains of the hold, where it began and the over-speed that started a braking.
#[derive(Debug, Clone)]
pub(crate) struct Brake {
    stiffness: Vec<f64>,
    damping: Vec<f64>,
    bound: DampingBound,
    /// Where the hold in progress began (meaningful while `anchored`).
    anchor: Vec<f64>,
    anchored: bool,
    /// The over-speed that started the braking in progress, kept until the arm is at rest.
    cause: Option<Implausible>,
}

impl Brake {
    /// The brake of `robot` with `(stiffness, damping)` per joint.
    pub(crate) fn new(robot: &Robot, (stiffness, damping): (Vec<f64>, Vec<f64>)) -> Self {
        Self {
            bound: DampingBound::new(robot.dof()),
            anchor: vec![0.0; robot.dof()],
            anchored: false,
            stiffness,
            damping,
            cause: None,
        }
    }

    /// Adds `S^2 K (q_b - q) - S D qd` to `effort`, `q_b` the configuration at the first call
    /// since [`Brake::release`], `S` the per-joint factors in (0, 1] that keep the damping
    /// within the sampled-data margin at `q` for a step of `dt`. A mass matrix that cannot be
    /// factored (a broken model) leaves the designed gains unscaled: braking beats coasting.
    pub(crate) fn hold(
        &mut self,
        robot: &Robot,
        ws: &mut DynamicsWorkspace,
        (q, qd): (&[f64], &[f64]),
        dt: f64,
        effort: &mut [f64],
    ) {
        self.anchor_once(q);
        self.apply(robot, ws, (q, qd), dt, effort, 1.0);
    }

    /// Anchors the hold at `q` unless it is anchored already (since [`Brake::release`]).
    fn anchor_once(&mut self, q: &[f64]) {
        if !self.anchored {
            self.anchor_at(q);
        }
    }

    /// Holds at `anchor` from now on (a retract moves it step by step).
    pub(crate) fn anchor_at(&mut self, anchor: &[f64]) {
        self.anchor.copy_from_slice(anchor);
        self.anchored = true;
    }

    /// The yielding hold of the `compliant` reaction: a third of the hold's natural frequency
    /// (a ninth of its stiffness, a third of its damping, so just as well damped) toward where
    /// it began. The arm gives way to the obstacle and to a push nine times further than the
    /// hold lets it, and comes to rest even where the model's weight is off (damping alone
    /// lets such an arm sink).
    pub(crate) fn yielding_hold(
        &mut self,
        robot: &Robot,
        ws: &mut DynamicsWorkspace,
        (q, qd): (&[f64], &[f64]),
        dt: f64,
        effort: &mut [f64],
    ) {
        self.anchor_once(q);
        self.apply(robot, ws, (q, qd), dt, effort, YIELD);
    }

    /// `(r s)^2 K (anchor - q) - r s D qd` added to `effort`, `s` the sampled-data bound's
    /// scale at `q`, `r` the share of the hold's natural frequency.
    fn apply(
        &mut self,
        robot: &Robot,
        ws: &mut DynamicsWorkspace,
        (q, qd): (&[f64], &[f64]),
        dt: f64,
        effort: &mut [f64],
        frequency_share: f64,
    ) {
        let scales = self
            .bound
            .diagonal_scales(robot, ws, q, &self.damping, dt)
            .ok();
        for (i, e) in effort.iter_mut().enumerate() {
            let s = frequency_share * scales.map_or(1.0, |s| s[i]);
            let pull = s * s * self.stiffness[i] * (self.anchor[i] - q[i]);
            *e += pull - s * self.damping[i] * qd[i];
        }
    }

    /// Ends the hold in progress: the next one holds where it begins.
    pub(crate) fn release(&mut self) {
        self.anchored = false;
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
        self.anchored = false;
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

#[cfg(test)]
mod tests {
    use super::*;
    use armctl_model::ChainOptions;

    fn planar() -> Robot {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/planar_2link.urdf");
        Robot::from_urdf_file(path, &ChainOptions::default()).unwrap()
    }

    /// The hold springs back to where it began (so a steady load cannot drag the arm away),
    /// damps the velocity, and begins afresh after a release.
    #[test]
    fn the_hold_keeps_the_arm_where_it_began() {
        let robot = planar();
        let mut brake = Brake::new(&robot, (vec![100.0, 50.0], vec![2.0, 1.0]));
        let mut ws = DynamicsWorkspace::new(&robot);
        let mut effort = [0.0; 2];
        brake.hold(
            &robot,
            &mut ws,
            (&[0.3, 0.2], &[0.0, 0.0]),
            1e-3,
            &mut effort,
        );
        assert_eq!(effort, [0.0, 0.0]);
        let mut effort = [0.0; 2];
        brake.hold(
            &robot,
            &mut ws,
            (&[0.4, 0.1], &[1.0, -1.0]),
            1e-3,
            &mut effort,
        );
        // Gains this small are within the margin: applied as designed.
        let expected = [100.0 * -0.1 - 2.0, 50.0 * 0.1 + 1.0];
        for (e, x) in effort.iter().zip(expected) {
            assert!((e - x).abs() < 1e-9, "{effort:?}");
        }
        brake.release();
        let mut effort = [0.0; 2];
        brake.hold(
            &robot,
            &mut ws,
            (&[0.4, 0.1], &[0.0, 0.0]),
            1e-3,
            &mut effort,
        );
        assert_eq!(effort, [0.0, 0.0]);
    }
}
