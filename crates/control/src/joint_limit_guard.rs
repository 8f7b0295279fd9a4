//! Joint-limit protection in torque mode (docs/safety.md): a bound on each joint's effort
//! toward its limits, so that a law pushing a joint toward a limit slows it before its soft
//! limit and leaves it at rest there, however hard the law pushes.
//!
//! The soft limits sit `margin` inside the URDF limits (at most a quarter of the range). With
//! `d` the distance left to the upper soft limit (negative beyond it), the joint may approach
//! it at
//!
//! ```text
//! v(d) = min(k d, sqrt(2 a d))   (k d for d < 0: back toward the soft limit)
//! ```
//!
//! and its effort is bounded by
//!
//! ```text
//! tau_i <= G_i(q) + s_i D_i room(v(d) - qd_i),   room(x) = x / (1 - x / V_i) for 0 <= x < V_i
//! ```
//!
//! (`x` itself below 0, no bound from `V_i` on), the lower limit mirrored. `D` and `k = K / D`
//! are the hold's gains (the PD family's defaults, critically damped: a joint entering the
//! linear part at its speed comes to rest on the soft limit without overshoot), `s_i` the
//! sampled-data bound's factor at `q` (as the brake's), `a` the default reference acceleration
//! limit (half the effort limit with every joint accelerating at once), so braking along `v`
//! takes at most half the effort, and `V_i` the URDF velocity limit: `room` grows without
//! bound as the slack nears it, so the bound takes hold continuously (no effort step) and does
//! nothing while the joint is that far inside its profile. At rest beyond a soft limit the
//! bound is `G_i - s_i K_i |d|`: the joint settles on its soft limit whatever the law asks.
//!
//! Only the effort toward a limit is cut (`tau > bound`): a command that moves a joint away
//! from its limit passes unchanged. A non-finite effort is left for the safety layer (a fault),
//! and a non-finite state bounds nothing (the runtime holds on it). The dynamics (`G`, the
//! mass matrix for `s`) are computed only in a step where some joint is within its profile's
//! reach; elsewhere the guard costs a few comparisons. Nothing is allocated.

use armctl_dynamics::{gravity_torques, DynamicsWorkspace};
use armctl_model::Robot;

use crate::damping_bound::DampingBound;
use crate::default_gains::{acceleration_limits, hold_gains};
use crate::ControlError;

/// Default distance of the soft limits inside the URDF limits, rad (m).
pub const DEFAULT_SOFT_LIMIT_MARGIN: f64 = 0.05;

/// The largest share of a joint's range the margin may take from each end.
const MARGIN_SHARE: f64 = 0.25;

/// One joint's soft limits and braking profile.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Profile {
    /// The URDF limits.
    lower: f64,
    upper: f64,
    /// The soft limits.
    soft_lower: f64,
    soft_upper: f64,
    /// `k = K / D` of the hold, 1/s.
    slope: f64,
    /// The braking deceleration `a`, rad/s^2 (m/s^2).
    deceleration: f64,
    /// `V`, the slack beyond which nothing is bounded, rad/s (m/s); infinite without one.
    reach: f64,
}

impl Profile {
    /// The speed `v(d)` allowed toward a soft limit `d` away.
    fn allowed_speed(&self, d: f64) -> f64 {
        if d <= 0.0 {
            return self.slope * d;
        }
        (self.slope * d).min((2.0 * self.deceleration * d).sqrt())
    }

    /// The slack `v(d) - speed` toward the upper and the lower soft limit (`speed` signed
    /// along each).
    fn slack(&self, q: f64, qd: f64) -> (f64, f64) {
        let upper = self.allowed_speed(self.soft_upper - q) - qd;
        let lower = self.allowed_speed(q - self.soft_lower) + qd;
        (upper, lower)
    }

    /// `room(x)`: infinite at and beyond the reach, NaN for a NaN slack.
    fn room(&self, slack: f64) -> f64 {
        if slack <= 0.0 {
            slack
        } else if slack < self.reach {
            slack / (1.0 - slack / self.reach)
        } else {
            f64::INFINITY
        }
    }

    /// Whether a slack bounds anything (`room` finite).
    fn acts(&self, slack: f64) -> bool {
        slack < self.reach
    }
}

/// The soft limits of every joint with finite limits, and buffers for one step.
#[derive(Debug, Clone)]
pub struct JointLimitGuard {
    robot: Robot,
    margin: f64,
    /// Per joint; `None` for a joint without finite limits.
    profiles: Vec<Option<Profile>>,
    /// The hold's stiffness and damping per joint.
    stiffness: Vec<f64>,
    /// The braking deceleration `a` per joint (sampled once: a live margin change, handed over
    /// between two updates, does not sample the robot again).
    decelerations: Vec<f64>,
    damping: Vec<f64>,
    /// `D` of the joints bounded this step, 0 elsewhere (what the sampled-data bound scales).
    acting_damping: Vec<f64>,
    gravity: Vec<f64>,
    bound: DampingBound,
    ws: DynamicsWorkspace,
}

impl JointLimitGuard {
    /// The guard of `robot`, its soft limits `margin` (rad or m) inside the URDF limits.
    pub fn new(robot: &Robot, margin: f64) -> Result<Self, ControlError> {
        let (stiffness, damping) = hold_gains(robot)?;
        let n = robot.dof();
        let mut guard = Self {
            robot: robot.clone(),
            margin: 0.0,
            profiles: vec![None; n],
            stiffness,
            decelerations: acceleration_limits(robot)?,
            damping,
            acting_damping: vec![0.0; n],
            gravity: vec![0.0; n],
            bound: DampingBound::new(n),
            ws: DynamicsWorkspace::new(robot),
        };
        guard.set_margin(margin)?;
        Ok(guard)
    }

    /// Moves the soft limits to `margin` (rad or m) inside the URDF limits (at most a quarter
    /// of each joint's range).
    pub fn set_margin(&mut self, margin: f64) -> Result<(), ControlError> {
        if !(margin.is_finite() && margin >= 0.0) {
            return Err(ControlError::InvalidParameter {
                name: "soft_limit_margin".into(),
                reason: format!("{margin} must be a number >= 0 (rad or m)"),
            });
        }
        for (i, joint) in self.robot.joints().iter().enumerate() {
            let limits = &joint.limits;
            let bounded =
                limits.lower.is_finite() && limits.upper.is_finite() && limits.upper > limits.lower;
            self.profiles[i] = bounded.then(|| {
                let inset = margin.min(MARGIN_SHARE * (limits.upper - limits.lower));
                let velocity = limits.velocity;
                Profile {
                    lower: limits.lower,
                    upper: limits.upper,
                    soft_lower: limits.lower + inset,
                    soft_upper: limits.upper - inset,
                    slope: self.stiffness[i] / self.damping[i],
                    deceleration: self.decelerations[i],
                    reach: if velocity.is_finite() && velocity > 0.0 {
                        velocity
                    } else {
                        f64::INFINITY
                    },
                }
            });
        }
        self.margin = margin;
        Ok(())
    }

    /// The margin in effect, rad (m).
    pub fn margin(&self) -> f64 {
        self.margin
    }

    /// The soft limits of joint `i` (`None` without finite URDF limits).
    pub fn soft_limits(&self, i: usize) -> Option<(f64, f64)> {
        self.profiles
            .get(i)
            .copied()
            .flatten()
            .map(|p| (p.soft_lower, p.soft_upper))
    }

    /// Bounds `effort` toward the limits at `(q, qd)` for a step of `dt`; returns how many
    /// efforts it changed. Allocates nothing.
    pub fn apply(&mut self, (q, qd): (&[f64], &[f64]), dt: f64, effort: &mut [f64]) -> usize {
        if !self.mark_acting(q, qd) {
            return 0;
        }
        let scales_ok = self.prepare_dynamics(q, dt);
        let mut changed = 0;
        for (i, e) in effort.iter_mut().enumerate() {
            let Some(profile) = self.profiles[i].filter(|_| self.acting_damping[i] > 0.0) else {
                continue;
            };
            if !e.is_finite() {
                continue;
            }
            let s = if scales_ok {
                self.bound.scales()[i]
            } else {
                1.0
            };
            let (upper, lower) = profile.slack(q[i], qd[i]);
            let push = s * self.damping[i];
            let high = self.gravity[i] + push * profile.room(upper);
            let low = self.gravity[i] - push * profile.room(lower);
            let bounded = clamp_toward_nearer(*e, (low, high), q[i], &profile);
            if bounded != *e {
                *e = bounded;
                changed += 1;
            }
        }
        changed
    }

    /// Marks in `acting_damping` the joints whose bound acts at `(q, qd)`; whether any does.
    fn mark_acting(&mut self, q: &[f64], qd: &[f64]) -> bool {
        let mut any = false;
        for (i, acting) in self.acting_damping.iter_mut().enumerate() {
            *acting = 0.0;
            let (Some(profile), Some(&q), Some(&qd)) = (self.profiles[i], q.get(i), qd.get(i))
            else {
                continue;
            };
            let (upper, lower) = profile.slack(q, qd);
            if profile.acts(upper) || profile.acts(lower) {
                *acting = self.damping[i];
                any = true;
            }
        }
        any
    }

    /// `G(q)` and the sampled-data factors of the acting damping at `q`; whether the factors
    /// could be computed. A model that fails leaves `G` zero and the gains unscaled (a bound
    /// beats none).
    fn prepare_dynamics(&mut self, q: &[f64], dt: f64) -> bool {
        if gravity_torques(&self.robot, &mut self.ws, q, &mut self.gravity).is_err()
            || self.gravity.iter().any(|g| !g.is_finite())
        {
            self.gravity.fill(0.0);
        }
        let step = if dt.is_finite() && dt > 0.0 {
            dt
        } else {
            1.0 / crate::default_gains::DESIGN_RATE
        };
        self.bound
            .diagonal_scales(&self.robot, &mut self.ws, q, &self.acting_damping, step)
            .is_ok()
    }
}

/// `effort` within `(low, high)`; where the two cross (both limits near, or far beyond one),
/// the bound of the limit `q` is nearer to wins.
fn clamp_toward_nearer(effort: f64, (low, high): (f64, f64), q: f64, profile: &Profile) -> f64 {
    if q > 0.5 * (profile.lower + profile.upper) {
        effort.max(low).min(high)
    } else {
        effort.min(high).max(low)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panda() -> Robot {
        armctl_model::test_support::bundled_robot("panda.urdf")
    }

    fn gravity_at(robot: &Robot, q: &[f64]) -> Vec<f64> {
        let mut gravity = vec![0.0; robot.dof()];
        gravity_torques(robot, &mut DynamicsWorkspace::new(robot), q, &mut gravity).unwrap();
        gravity
    }

    /// Far from its limits, at any speed within its velocity limit, no joint is bounded and
    /// no dynamics are computed.
    #[test]
    fn far_from_the_limits_nothing_is_bounded() {
        let robot = panda();
        let mut guard = JointLimitGuard::new(&robot, DEFAULT_SOFT_LIMIT_MARGIN).unwrap();
        let q = robot.middle_configuration();
        let mut effort: Vec<f64> = robot.joints().iter().map(|j| j.limits.effort).collect();
        let before = effort.clone();
        let qd: Vec<f64> = robot
            .joints()
            .iter()
            .map(|j| 0.3 * j.limits.velocity)
            .collect();
        assert_eq!(guard.apply((&q, &qd), 1e-3, &mut effort), 0);
        assert_eq!(effort, before);
    }

    /// At rest on the upper soft limit a push toward it is cut to gravity, one away from it
    /// passes, and a NaN effort is left for the safety layer.
    #[test]
    fn at_the_soft_limit_only_the_push_toward_it_is_cut() {
        let robot = panda();
        let mut guard = JointLimitGuard::new(&robot, DEFAULT_SOFT_LIMIT_MARGIN).unwrap();
        let mut q = robot.middle_configuration();
        let (_, soft_upper) = guard.soft_limits(1).unwrap();
        q[1] = soft_upper;
        let qd = vec![0.0; 7];
        let gravity = gravity_at(&robot, &q);
        let mut effort = gravity.clone();
        effort[1] += 50.0;
        effort[3] = f64::NAN;
        assert_eq!(guard.apply((&q, &qd), 1e-3, &mut effort), 1);
        assert!((effort[1] - gravity[1]).abs() < 1e-9, "{effort:?}");
        assert!(effort[3].is_nan());
        let mut away = gravity.clone();
        away[1] -= 50.0;
        let expected = away.clone();
        assert_eq!(guard.apply((&q, &qd), 1e-3, &mut away), 0);
        assert_eq!(away, expected);
    }

    /// Beyond a soft limit at rest the bound pulls back (below gravity); moving toward the
    /// limit faster than the profile allows, it brakes.
    #[test]
    fn beyond_the_soft_limit_and_too_fast_the_bound_brakes() {
        let robot = panda();
        let mut guard = JointLimitGuard::new(&robot, DEFAULT_SOFT_LIMIT_MARGIN).unwrap();
        let mut q = robot.middle_configuration();
        let (soft_lower, soft_upper) = guard.soft_limits(3).unwrap();
        q[3] = soft_upper + 0.02;
        let gravity = gravity_at(&robot, &q);
        let mut effort = gravity.clone();
        guard.apply((&q, &[0.0; 7]), 1e-3, &mut effort);
        assert!(
            effort[3] < gravity[3] - 1.0,
            "{} vs {}",
            effort[3],
            gravity[3]
        );
        q[3] = soft_lower + 0.1;
        let gravity = gravity_at(&robot, &q);
        let mut qd = [0.0; 7];
        qd[3] = -2.0;
        let mut effort = gravity.clone();
        guard.apply((&q, &qd), 1e-3, &mut effort);
        assert!(
            effort[3] > gravity[3] + 1.0,
            "{} vs {}",
            effort[3],
            gravity[3]
        );
    }

    /// A non-finite state bounds nothing; a bad margin is refused by name.
    #[test]
    fn a_non_finite_state_bounds_nothing_and_a_bad_margin_is_refused() {
        let robot = panda();
        let mut guard = JointLimitGuard::new(&robot, DEFAULT_SOFT_LIMIT_MARGIN).unwrap();
        let mut q = robot.middle_configuration();
        q[1] = f64::NAN;
        let mut effort = vec![80.0; 7];
        assert_eq!(guard.apply((&q, &[f64::NAN; 7]), 1e-3, &mut effort), 0);
        assert_eq!(effort, vec![80.0; 7]);
        for bad in [-0.1, f64::NAN, f64::INFINITY] {
            let error = guard.set_margin(bad).unwrap_err().to_string();
            assert!(error.contains("soft_limit_margin"), "{error}");
        }
        assert_eq!(guard.margin(), DEFAULT_SOFT_LIMIT_MARGIN);
    }

    /// The margin takes at most a quarter of a joint's range.
    #[test]
    fn the_margin_takes_at_most_a_quarter_of_the_range() {
        let robot = panda();
        let guard = JointLimitGuard::new(&robot, 10.0).unwrap();
        for (i, joint) in robot.joints().iter().enumerate() {
            let (lower, upper) = guard.soft_limits(i).unwrap();
            let range = joint.limits.upper - joint.limits.lower;
            assert!((lower - joint.limits.lower - 0.25 * range).abs() < 1e-12);
            assert!((joint.limits.upper - upper - 0.25 * range).abs() < 1e-12);
        }
    }
}
