//! Joint-limit protection in torque mode (docs/safety.md): a bound on each joint's effort
//! toward its limits, so that a law pushing a joint toward a limit slows it before its soft
//! limit and leaves it at rest there, however hard the law (or the other joints, through the
//! coupling of the mass matrix) pushes.
//!
//! The soft limits sit `margin` inside the URDF limits (at most a quarter of the range). With
//! `d` the distance left to the upper soft limit (negative beyond it), the joint may approach
//! it at
//!
//! ```text
//! v(d) = min(k d, a (sqrt(t_r^2 + 2 d / a) - t_r))   (k' d for d < 0: back toward the soft limit)
//! ```
//!
//! the speed from which braking at `a` after a reaction time `t_r` stops the joint on its
//! soft limit. Its acceleration is bounded by
//!
//! ```text
//! qdd_i <= room(v(d) - qd_i) / T,   room(x) = x / (1 - x / V_i) for 0 <= x < V_i
//! ```
//!
//! (`x` itself below 0, no bound from `V_i` on), the lower limit mirrored, and the effort
//! follows from the model, with `h = C(q, qd) qd + G(q) + F(q, qd)` (the model's friction
//! included), `W = M^-1(q)` and the other joints' efforts as they are:
//!
//! ```text
//! tau_i <= h_i + (room(v(d) - qd_i) / T - max(0, sum_{j != i} W_ij (tau_j - h_j))) m_i
//! ```
//!
//! - The sum cancels the other joints' push through the mass matrix (a bound on the joint's
//!   own damping alone let a whipping arm carry a joint past its limit). It counts only where
//!   it pushes toward the limit: a neighbour at rest held by its friction takes up none of it.
//! - `m_i = 1 / W_ii + dt b_i` is the joint's inertia over one period with its neighbours free,
//!   `b_i` its viscous friction, which acts within the step (on a light geared wrist it
//!   outweighs the inertia). The speed error then closes by `dt / T` a period, `T` four
//!   periods: a quarter, within the sampled-data limit with a step of delay and a model 50 %
//!   off, at every configuration.
//! - With its neighbours held by friction instead, the joint answers `lag = (M_ii + dt b_i) /
//!   m_i` times slower. The profile plans on that: `t_r` is the rate limit's rise to the
//!   effort limit, four lags `lag T` and a period, so the braking part's slope at the soft
//!   limit, `1 / t_r`, leaves the final approach without overshoot; `k`, the hold's `K / D`,
//!   is at most `1 / (4 T)` and `k'` at most `1 / (4 lag T)`.
//! - `a` is a bound, not a sample: half of the effort left after an upper bound of the joint's
//!   gravity torque, over an upper bound of its inertia (every link beyond it stretched out),
//!   so the braking the profile assumes is there at every configuration.
//! - `V_i` is the URDF velocity limit: `room` grows without bound as the slack nears it, so
//!   the bound takes hold continuously (no effort step) and does nothing while the joint is
//!   that far inside its profile. At rest beyond a soft limit the bound pulls back at
//!   `k' |d| / T`: the joint settles on its soft limit whatever the law asks.
//!
//! Only the effort toward a limit is cut: a command that moves a joint away from its limit
//! passes unchanged. A non-finite effort is left for the safety layer (a fault), and a
//! non-finite state bounds nothing (the runtime holds on it). The dynamics are computed only
//! in a step where some joint is within reach of a profile screened with a lag of
//! [`SCREENING_LAG`]; elsewhere the guard costs a few comparisons. Nothing is allocated.

use armctl_dynamics::{
    cholesky_in_place, cholesky_solve_in_place, friction_torques, mass_matrix, nonlinear_effects,
    CoulombSign, DynamicsWorkspace,
};
use armctl_model::Robot;
use nalgebra::{DMatrix, Vector3};

use crate::gain_sizing::default_gains::{hold_gains, DESIGN_RATE};
use crate::safety_bounds::configuration_bounds::{gravity_and_inertia_bounds, gravity_bounds};
use crate::ControlError;

/// Default distance of the soft limits inside the URDF limits, rad (m).
pub const DEFAULT_SOFT_LIMIT_MARGIN: f64 = 0.05;

/// The largest share of a joint's range the margin may take from each end.
const MARGIN_SHARE: f64 = 0.25;

/// Control periods in the braking time constant `T`.
const BRAKE_PERIODS: f64 = 4.0;

/// The share of the effort left after gravity that braking along the profile plans on (the
/// rest is for the coupling and the velocity terms).
const BRAKE_EFFORT_SHARE: f64 = 0.5;

/// The least share of the effort limit braking plans on where the gravity bound leaves less.
const LEAST_BRAKE_SHARE: f64 = 0.05;

/// The Coulomb sign of the model's friction in `h`, smoothed over this speed (rad/s, m/s) so
/// that encoder noise at rest does not flip it.
const FRICTION_SIGN_WIDTH: f64 = 0.01;

/// The lag (`W_ii M_ii`) the screening for joints near their profile allows: a joint that
/// answers its bound more slowly than this is bounded from where the screening finds it.
const SCREENING_LAG: f64 = 8.0;

/// Passes over the bounded joints: the second one bounds each joint against the others'
/// efforts as the first one left them.
const SWEEPS: usize = 2;

/// One joint's soft limits and braking profile.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Profile {
    /// The URDF limits.
    lower: f64,
    upper: f64,
    /// The soft limits.
    soft_lower: f64,
    soft_upper: f64,
    /// `k = K / D` of the hold, 1/s (before the cap of `1 / (4 T)`).
    slope: f64,
    /// The braking deceleration `a`, rad/s^2 (m/s^2); infinite without an effort limit.
    deceleration: f64,
    /// `V`, the slack beyond which nothing is bounded, rad/s (m/s); infinite without one.
    reach: f64,
}

/// What one step's timing makes of a profile: the slopes in effect (toward the soft limit,
/// and back from beyond it) and the reaction time.
#[derive(Debug, Clone, Copy)]
struct Timing {
    slope: f64,
    back_slope: f64,
    reaction: f64,
}

impl Profile {
    /// The speed `v(d)` allowed toward a soft limit `d` away.
    fn allowed_speed(&self, d: f64, timing: Timing) -> f64 {
        if d <= 0.0 {
            return timing.back_slope * d;
        }
        let a = self.deceleration;
        let t = timing.reaction;
        // No finite bound of the robot (an unlimited prismatic joint on the way): the linear
        // part alone.
        let braking = if a.is_finite() && a > 0.0 {
            a * ((t * t + 2.0 * d / a).sqrt() - t)
        } else {
            f64::INFINITY
        };
        (timing.slope * d).min(braking)
    }

    /// The slack `v(d) - speed` toward the upper and the lower soft limit (`speed` signed
    /// along each).
    fn slack(&self, q: f64, qd: f64, timing: Timing) -> (f64, f64) {
        let upper = self.allowed_speed(self.soft_upper - q, timing) - qd;
        let lower = self.allowed_speed(q - self.soft_lower, timing) + qd;
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

/// One joint's bound in a step: the accelerations allowed toward the upper and the lower limit
/// (`room(slack) / T`) and its inertia over the period.
#[derive(Debug, Clone, Copy, Default)]
struct JointBound {
    upper: f64,
    lower: f64,
    inertia: f64,
}

/// The soft limits of every joint with finite limits, and buffers for one step.
#[derive(Debug, Clone)]
pub struct JointLimitGuard {
    robot: Robot,
    margin: f64,
    /// Per joint; `None` for a joint without finite limits.
    profiles: Vec<Option<Profile>>,
    /// The hold's `K / D` per joint, 1/s.
    slopes: Vec<f64>,
    /// The braking deceleration `a` per joint (bounds of the robot, computed once).
    decelerations: Vec<f64>,
    /// Upper bounds of each joint's inertia (the fallback when the model fails).
    inertia_bounds: Vec<f64>,
    /// Said at start when the effort limits look like a template's placeholder.
    placeholder: Option<String>,
    /// Per joint this step: its bound, `None` where nothing is bounded.
    bounds: Vec<Option<JointBound>>,
    /// `h = C qd + G + F(q, qd)` at the step's state: the effort of no acceleration.
    bias: Vec<f64>,
    /// `F(q, qd)`, the model's friction.
    friction: Vec<f64>,
    /// The efforts as the law gave them this step.
    given: Vec<f64>,
    /// `M`, then its Cholesky factor.
    factor: DMatrix<f64>,
    /// `M_ii`, kept from before the factoring.
    mass_diagonal: Vec<f64>,
    /// `W = M^-1`.
    inverse: DMatrix<f64>,
    ws: DynamicsWorkspace,
}

impl JointLimitGuard {
    /// The guard of `robot`, its soft limits `margin` (rad or m) inside the URDF limits.
    pub fn new(robot: &Robot, margin: f64) -> Result<Self, ControlError> {
        let (stiffness, damping) = hold_gains(robot)?;
        let n = robot.dof();
        let (gravity_bounds, inertia_bounds) = gravity_and_inertia_bounds(robot);
        let placeholder = placeholder_limits(robot);
        let mut guard = Self {
            robot: robot.clone(),
            margin: 0.0,
            profiles: vec![None; n],
            slopes: stiffness.iter().zip(&damping).map(|(k, d)| k / d).collect(),
            decelerations: braking_decelerations(robot, &gravity_bounds, &inertia_bounds),
            inertia_bounds,
            placeholder,
            bounds: vec![None; n],
            bias: vec![0.0; n],
            friction: vec![0.0; n],
            given: vec![0.0; n],
            factor: DMatrix::zeros(n, n),
            mass_diagonal: vec![0.0; n],
            inverse: DMatrix::zeros(n, n),
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
                    slope: self.slopes[i],
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

    /// What the guard warns about at start: effort limits that look like a placeholder.
    pub fn warning(&self) -> Option<&str> {
        self.placeholder.as_deref()
    }

    /// The braking deceleration each joint's profile plans on, rad/s^2 (m/s^2).
    pub fn decelerations(&self) -> &[f64] {
        &self.decelerations
    }

    /// Bounds `effort` toward the limits at `(q, qd)` for a step of `dt`, with the effort rate
    /// limits `rates` (N m/s per joint, infinite for none) the safety layer applies after it;
    /// returns how many efforts it changed. Allocates nothing.
    pub fn apply(
        &mut self,
        (q, qd): (&[f64], &[f64]),
        dt: f64,
        rates: &[f64],
        effort: &mut [f64],
    ) -> usize {
        let period = if dt.is_finite() && dt > 0.0 {
            dt
        } else {
            1.0 / DESIGN_RATE
        };
        if !self.mark_acting((q, qd), period, rates) {
            return 0;
        }
        self.prepare_dynamics(q, qd);
        self.bound_screened((q, qd), period, rates);
        let n = self.bounds.len().min(effort.len());
        self.given[..n].copy_from_slice(&effort[..n]);
        for _ in 0..SWEEPS {
            for i in 0..n {
                let (Some(profile), Some(bound)) = (self.profiles[i], self.bounds[i]) else {
                    continue;
                };
                if !self.given[i].is_finite() {
                    continue;
                }
                // The law's own effort, bounded against the others' as they now stand (a
                // joint cut in the first sweep for a push another joint no longer gives is
                // released in the second). The coupling counts only where it pushes toward a
                // limit: a neighbour held by its friction does not take up what the model
                // says it would.
                let coupling = self.coupling(i, effort);
                let high = self.bias[i] + (bound.upper - coupling.max(0.0)) * bound.inertia;
                let low = self.bias[i] - (bound.lower + coupling.min(0.0)) * bound.inertia;
                effort[i] = clamp_toward_nearer(self.given[i], (low, high), q[i], &profile);
            }
        }
        // By bits: a NaN effort, passed on, is not a change.
        (0..n)
            .filter(|&i| effort[i].to_bits() != self.given[i].to_bits())
            .count()
    }

    /// Joint `i`'s inertia over one step of `period` with its neighbours free,
    /// `1 / W_ii + dt b_i` (`b_i` its viscous friction, which acts within the step: on a light
    /// geared wrist it outweighs the inertia), and how much slower than `T` it answers its
    /// bound when its neighbours are held by their friction instead (`M_ii + dt b_i` over the
    /// former, at least 1).
    fn step_inertia(&self, i: usize, period: f64) -> (f64, f64) {
        let damping = period * self.robot.joints()[i].friction.viscous.max(0.0);
        let free = 1.0 / self.inverse[(i, i)] + damping;
        let held = self.mass_diagonal[i] + damping;
        (free, (held / free).max(1.0))
    }

    /// `sum_{j != i} W_ij (tau_j - h_j)`: the acceleration the other joints' efforts give
    /// joint `i` (a non-finite effort, which the safety layer replaces, counts as `h_j`).
    fn coupling(&self, i: usize, effort: &[f64]) -> f64 {
        effort
            .iter()
            .zip(&self.bias)
            .enumerate()
            .filter(|&(j, (e, _))| j != i && e.is_finite())
            .map(|(j, (e, h))| self.inverse[(i, j)] * (e - h))
            .sum()
    }

    /// Marks in `bounds` the joints whose bound may act at `(q, qd)`, screened with a lag of
    /// [`SCREENING_LAG`] (before the dynamics tell each joint's own); whether any may.
    fn mark_acting(&mut self, (q, qd): (&[f64], &[f64]), period: f64, rates: &[f64]) -> bool {
        let mut any = false;
        for i in 0..self.bounds.len() {
            self.bounds[i] = None;
            let (Some(profile), Some(&q), Some(&qd)) = (self.profiles[i], q.get(i), qd.get(i))
            else {
                continue;
            };
            let timing = self.timing(i, period, rates, SCREENING_LAG);
            let (upper, lower) = profile.slack(q, qd, timing);
            if profile.acts(upper) || profile.acts(lower) {
                self.bounds[i] = Some(JointBound::default());
                any = true;
            }
        }
        any
    }

    /// Each screened joint's bound this step, with its own lag and inertia (the dynamics
    /// prepared).
    fn bound_screened(&mut self, (q, qd): (&[f64], &[f64]), period: f64, rates: &[f64]) {
        let brake_time = BRAKE_PERIODS * period;
        for i in 0..self.bounds.len() {
            let (Some(profile), Some(_)) = (self.profiles[i], self.bounds[i]) else {
                continue;
            };
            let (inertia, lag) = self.step_inertia(i, period);
            let timing = self.timing(i, period, rates, lag);
            let (upper, lower) = profile.slack(q[i], qd[i], timing);
            self.bounds[i] = Some(JointBound {
                upper: profile.room(upper) / brake_time,
                lower: profile.room(lower) / brake_time,
                inertia,
            });
        }
    }

    /// Joint `i`'s profile timing when it answers its bound `lag` times slower than `T`: the
    /// slope at most `1 / (4 T)`, `1 / (4 lag T)` back from beyond the soft limit, and the
    /// reaction time: the rate limit's rise to the effort limit, four lags `lag T` and a
    /// period. The braking part's slope at the soft limit is `1 / t_r`, so the final approach
    /// is not oscillatory when the neighbours are held (a slope cut by the lag everywhere
    /// bounded a Panda's wrist holding an unmodelled 1 kg tool far from any limit, which then
    /// never came to rest; cut near the limit only, it made the lagging joint overshoot where
    /// the cut began).
    fn timing(&self, i: usize, period: f64, rates: &[f64], lag: f64) -> Timing {
        let answer = BRAKE_PERIODS * period * lag;
        let rate = rates.get(i).copied().unwrap_or(f64::INFINITY);
        let rise = self.robot.joints()[i].limits.effort / rate;
        Timing {
            slope: self.slopes[i].min(0.25 / (BRAKE_PERIODS * period)),
            back_slope: self.slopes[i].min(0.25 / answer),
            reaction: rise + 4.0 * answer + period,
        }
    }

    /// `h` and `W = M^-1` at the state. The model's friction is in `h`: a law that
    /// compensates it accelerates nothing, and counted as a push through the coupling it
    /// read as hundreds of rad/s^2 on an arm with geared joints. A model that fails leaves
    /// `h` zero and each joint alone at its inertia bound (a bound beats none).
    fn prepare_dynamics(&mut self, q: &[f64], qd: &[f64]) {
        let sign = CoulombSign::Smooth {
            width: FRICTION_SIGN_WIDTH,
        };
        let ok = nonlinear_effects(&self.robot, &mut self.ws, q, qd, &mut self.bias).is_ok()
            && friction_torques(&self.robot, q, qd, sign, &mut self.friction).is_ok()
            && {
                for (h, f) in self.bias.iter_mut().zip(&self.friction) {
                    *h += f;
                }
                true
            }
            && mass_matrix(&self.robot, &mut self.ws, q, &mut self.factor).is_ok()
            && {
                for (i, m) in self.mass_diagonal.iter_mut().enumerate() {
                    *m = self.factor[(i, i)];
                }
                cholesky_in_place(&mut self.factor).is_ok()
            }
            && {
                self.inverse.fill_with_identity();
                cholesky_solve_in_place(&self.factor, &mut self.inverse).is_ok()
            }
            && self
                .bias
                .iter()
                .chain(self.inverse.iter())
                .all(|v| v.is_finite());
        if !ok {
            self.bias.fill(0.0);
            self.inverse.fill(0.0);
            for (i, bound) in self.inertia_bounds.iter().enumerate() {
                self.inverse[(i, i)] = 1.0 / bound;
                self.mass_diagonal[i] = *bound;
            }
        }
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

/// Standard gravity, m/s^2.
const STANDARD_GRAVITY: f64 = 9.81;

/// How many times the largest gravity torque any joint may hold a shared effort limit may be
/// before it reads as a placeholder (real arms: 1.3 (the UR5e) to 2.5 (the Panda's shoulders)
/// between their shoulders' limits and their bound).
const PLACEHOLDER_RATIO: f64 = 10.0;

/// A warning when every joint has the same effort limit (a template's, such as the 1000 N m
/// URDF exporters write) far beyond the largest gravity torque any of them may hold: the
/// braking, the collision thresholds and the rate limit are planned on these limits, and a
/// real drive will not give them. Real arms differ between their shoulders and their wrists.
fn placeholder_limits(robot: &Robot) -> Option<String> {
    let joints = robot.joints();
    let first = joints.first()?.limits.effort;
    // Standard gravity whatever the model's (zero when the arm compensates its own), down
    // the model's gravity or else frame 0's z.
    let g = robot.gravity_in_frame0();
    let down = if g.norm() > 0.0 {
        g.normalize()
    } else {
        -Vector3::z()
    };
    let heaviest = gravity_bounds(robot, &(STANDARD_GRAVITY * down))
        .into_iter()
        .fold(0.0, f64::max);
    let shared = joints.len() > 1 && joints.iter().all(|j| j.limits.effort == first);
    (shared && first > PLACEHOLDER_RATIO * heaviest).then(|| {
        format!(
            "every joint's effort limit is {first} (N m or N), {:.0} times the largest gravity torque any joint may hold ({heaviest:.1}): a placeholder? The joint-limit braking, the collision thresholds and the rate limit are planned on the effort limits; give the drives' real ones in the URDF or in effort_limits",
            first / heaviest
        )
    })
}

/// The deceleration each joint's braking plans on: `BRAKE_EFFORT_SHARE` of the effort left
/// after its gravity bound (at least `LEAST_BRAKE_SHARE` of the limit) over its inertia bound.
fn braking_decelerations(robot: &Robot, gravity: &[f64], inertia: &[f64]) -> Vec<f64> {
    robot
        .joints()
        .iter()
        .zip(gravity.iter().zip(inertia))
        .map(|(joint, (g, m))| {
            let effort = joint.limits.effort;
            let left = (effort - g).max(LEAST_BRAKE_SHARE * effort);
            BRAKE_EFFORT_SHARE * left / m
        })
        .collect()
}

#[cfg(test)]
mod tests;
