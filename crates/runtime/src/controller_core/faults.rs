//! Why the node holds: the faults, the plausibility rules a state must pass, and what is sent
//! while holding.

use std::sync::Arc;

use crate::joint_map::MapFault;

/// What to send while holding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SafeMode {
    /// Zero effort.
    Zero,
    /// Gravity compensation at the last valid configuration (the `safe_mode` default).
    #[default]
    Gravity,
}

impl SafeMode {
    /// From the `safe_mode` parameter.
    pub fn parse(text: &str) -> Option<SafeMode> {
        match text {
            "zero" => Some(SafeMode::Zero),
            "gravity" => Some(SafeMode::Gravity),
            _ => None,
        }
    }
}

/// Why the node holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// No joint state received yet.
    NoState,
    /// A controlled joint is missing from the state.
    MissingJoint(Arc<str>),
    /// A controlled joint's position or velocity is NaN or absent.
    NonFinite(Arc<str>),
    /// A host could not read a controlled joint's state (a C ABI host's state interface).
    Unreadable(Arc<str>),
    /// The newest state is older than `state_timeout`.
    Stale(f64),
    /// The state lists a joint name twice.
    DuplicateJoint(String),
    /// The state's arrays do not fit its names.
    Malformed(String),
    /// The state cannot be true (a position far beyond the limits, a velocity no drive
    /// reaches).
    Implausible(Implausible),
    /// A joint moved faster than `over_speed` times its velocity limit: a true state, braked
    /// to rest (the fault lasts until every joint is at rest).
    OverSpeed(Implausible),
    /// The controller failed.
    Controller(String),
    /// A collision was detected on the external torque estimate; latched until reset.
    Collision(super::collision::Collision),
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fault::NoState => write!(f, "no joint state received yet"),
            Fault::MissingJoint(j) => write!(f, "joint '{j}' is missing from /joint_states"),
            Fault::NonFinite(j) => {
                write!(f, "joint '{j}' has a NaN or missing position or velocity")
            }
            Fault::Unreadable(j) => write!(f, "joint '{j}' has no reading this cycle"),
            Fault::Stale(age) => write!(f, "newest joint state is {age:.3} s old"),
            Fault::DuplicateJoint(j) => write!(f, "joint '{j}' is listed twice in /joint_states"),
            Fault::Malformed(m) => write!(f, "/joint_states is malformed: {m}"),
            Fault::Implausible(what) => write!(f, "implausible joint state: {what}"),
            Fault::OverSpeed(what) => write!(f, "over-speed, braking to rest: {what}"),
            Fault::Controller(e) => write!(f, "controller error: {e}"),
            Fault::Collision(c) => write!(f, "{c}"),
        }
    }
}

/// A joint whose state cannot be true, and what was wrong; the text is made when shown, so
/// detecting it allocates nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct Implausible {
    /// The joint.
    pub joint: Arc<str>,
    /// The position (rad, m) or velocity (rad/s, m/s) measured.
    pub value: f64,
    /// Which rule it broke.
    pub rule: ImplausibleRule,
}

/// The plausibility rule a state broke, with the numbers it was checked against.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ImplausibleRule {
    /// Beyond `[lower, upper]` by more than `margin`.
    Position {
        /// Lower limit.
        lower: f64,
        /// Upper limit.
        upper: f64,
        /// `position_limit_margin`.
        margin: f64,
    },
    /// Faster than `factor` times `limit`.
    Velocity {
        /// Velocity limit.
        limit: f64,
        /// `velocity_plausibility`, or `over_speed` for an over-speed.
        factor: f64,
    },
}

impl std::fmt::Display for Implausible {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (joint, value) = (&self.joint, self.value);
        match self.rule {
            ImplausibleRule::Position { lower, upper, margin } => write!(
                f,
                "{joint} at {value:.4} is beyond its limits [{lower}, {upper}] by more than position_limit_margin {margin}"
            ),
            ImplausibleRule::Velocity { limit, factor } => write!(
                f,
                "{joint} moves at {value:.3}, more than {factor} times its limit {limit}"
            ),
        }
    }
}

/// What a joint state must satisfy to be believed: positions within the URDF limits widened by
/// `position_margin` (rad or m), velocities within `velocity_factor` times the URDF velocity
/// limit. A state that fails is a fault like NaN. A believed state faster than
/// `over_speed_factor` times the limit is an over-speed: the arm is braked to rest.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plausibility {
    /// `position_limit_margin`.
    pub position_margin: f64,
    /// `velocity_plausibility`.
    pub velocity_factor: f64,
    /// `over_speed`.
    pub over_speed_factor: f64,
}

impl Default for Plausibility {
    /// 0.1 rad (m) beyond the limits; ten times the velocity limit (no drive reaches it); an
    /// over-speed at one and a half times.
    fn default() -> Self {
        Self {
            position_margin: 0.1,
            velocity_factor: 10.0,
            over_speed_factor: 1.5,
        }
    }
}

impl From<MapFault> for Fault {
    fn from(fault: MapFault) -> Self {
        match fault {
            MapFault::Missing(j) => Fault::MissingJoint(j),
            MapFault::NonFinite(j) => Fault::NonFinite(j),
            MapFault::Duplicate(j) => Fault::DuplicateJoint(j),
            MapFault::Malformed(m) => Fault::Malformed(m),
        }
    }
}
