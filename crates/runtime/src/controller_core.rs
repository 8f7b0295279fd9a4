//! The controller node without the middleware: the newest joint state in, efforts out, with
//! the safety rules of docs/safety.md. A state that lacks a controlled joint, holds NaN, or is older
//! than `state_timeout` makes the node hold (`safe_mode`: zero effort, or gravity compensation
//! at the last valid configuration), says so once per incident, and resumes when valid states
//! return. Efforts always pass the safety layer (NaN guard, effort limits, optional rate limit).

use armctl_control::reference::{Approach, MultiPoint, Trajectory, TrajectoryPoint};
use armctl_control::{
    ControlError, Controller, Guarded, JointReference, JointState, ParameterValue, SafetyReport,
};
use armctl_dynamics::{gravity_torques, DynamicsWorkspace};
use armctl_model::Robot;

use std::sync::Arc;

use crate::braking::Brake;
use crate::joint_map::{JointMap, MapFault};
use crate::RuntimeError;

/// Default of `max_reference_points`.
pub const DEFAULT_MAX_POINTS: usize = 10_000;

/// How far (rad or m) a trajectory's point due at once may lie from the reference in effect:
/// a start point MoveIt sends (its start state, within its own 0.01 rad start tolerance) is
/// taken, a step is refused.
pub const START_TOLERANCE: f64 = 0.02;

/// The share of each velocity limit the move that joins a trajectory at the start may use:
/// the law's tracking error adds to the reference's speed.
pub const APPROACH_SPEED_SHARE: f64 = 0.5;

/// The share of each acceleration limit that move may use: the proximal joints' acceleration
/// throws a soft, light wrist about (a 0.3 rad step at the full limits swung a random arm's
/// wrist under joint impedance to 1.3 times its velocity limit).
pub const APPROACH_ACCELERATION_SHARE: f64 = 0.25;

/// The share of each effort limit the viscous friction of that move may take.
pub const APPROACH_FRICTION_SHARE: f64 = 0.25;

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

/// What to send while holding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SafeMode {
    /// Zero effort.
    Zero,
    /// Gravity compensation at the last valid configuration.
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
                "{joint} at {value} is beyond its limits [{lower}, {upper}] by more than position_limit_margin {margin}"
            ),
            ImplausibleRule::Velocity { limit, factor } => write!(
                f,
                "{joint} moves at {value}, more than {factor} times its limit {limit}"
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

/// One control step's outcome.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StepReport {
    /// Holding, and why.
    pub fault: Option<Fault>,
    /// What changed in this step, to tell the operator (once per incident).
    pub event: Option<CoreEvent>,
    /// What the safety layer did to this step's efforts (clipped, rate-limited, replaced).
    pub safety: SafetyReport,
}

/// A change of the core's situation worth telling the operator once.
#[derive(Debug, Clone, PartialEq)]
pub enum CoreEvent {
    /// The core started holding (or holds for a new reason).
    Holding {
        /// Why.
        fault: Fault,
        /// What it sends meanwhile.
        mode: SafeMode,
    },
    /// Valid states came back and control resumed.
    Resumed {
        /// A trajectory that ran on meanwhile was cancelled; the arm holds where it is.
        trajectory_cancelled: bool,
    },
}

impl CoreEvent {
    /// Whether the operator should be warned (otherwise it is information).
    pub fn is_warning(&self) -> bool {
        matches!(self, CoreEvent::Holding { .. })
    }
}

impl std::fmt::Display for CoreEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CoreEvent::Holding { fault, mode } => {
                let sending = match mode {
                    SafeMode::Gravity => "gravity compensation",
                    SafeMode::Zero => "zero effort",
                };
                write!(f, "holding ({sending}): {fault}")
            }
            CoreEvent::Resumed {
                trajectory_cancelled: true,
            } => write!(
                f,
                "joint states valid again: control resumed, holding where the arm is (trajectory cancelled)"
            ),
            CoreEvent::Resumed {
                trajectory_cancelled: false,
            } => write!(f, "joint states valid again: control resumed"),
        }
    }
}

/// Samples per segment when the motion between waypoints is checked.
const SAMPLES_PER_SEGMENT: usize = 16;

/// Every segment between consecutive `times`, sampled [`SAMPLES_PER_SEGMENT`] times, ends
/// included.
fn segment_samples(times: &[f64]) -> impl Iterator<Item = f64> + '_ {
    times.windows(2).flat_map(|w| {
        (0..=SAMPLES_PER_SEGMENT)
            .map(move |k| w[0] + (w[1] - w[0]) * k as f64 / SAMPLES_PER_SEGMENT as f64)
    })
}

/// Where an in-process trajectory is checked: every segment of one through waypoints (a
/// segment between two checks could hide a point beyond the limits); else 1000 times over
/// its duration, all of it when it ends (the first 60 s of a periodic one).
fn check_times(trajectory: &dyn Trajectory) -> Vec<f64> {
    const SAMPLES: usize = 1000;
    let knots = trajectory.knots();
    if knots.len() > 1 {
        return segment_samples(knots).collect();
    }
    let duration = trajectory.duration();
    let span = if duration.is_finite() { duration } else { 60.0 };
    if span == 0.0 {
        return vec![0.0];
    }
    (0..=SAMPLES)
        .map(|k| span * k as f64 / SAMPLES as f64)
        .collect()
}

/// A number of a refusal: three decimals, or in exponent form when large (a 1e308 read from
/// a file is not shown as 309 digits).
fn shown(v: f64) -> String {
    if v.abs() < 1e6 {
        format!("{v:.3}")
    } else {
        format!("{v:.3e}")
    }
}

fn reference_error(reason: String) -> RuntimeError {
    RuntimeError::Reference { reason }
}

/// Times from start finite, from 0 on, each after the one before (as joint_trajectory_controller
/// requires), said with the message's point numbers and times.
fn check_point_times(points: &[TrajectoryPoint]) -> Result<(), RuntimeError> {
    let mut before: Option<f64> = None;
    for (k, p) in points.iter().enumerate() {
        let t = p.time;
        let after = before.is_none_or(|b| t > b);
        if !(t.is_finite() && t >= 0.0 && after) {
            let rule = match before {
                Some(b) => format!("after point {}'s {b:?} s", k - 1),
                None => "0 or later".to_string(),
            };
            return Err(reference_error(format!(
                "point {k}: time_from_start {t:?} s must be {rule}"
            )));
        }
        before = Some(t);
    }
    Ok(())
}

/// Point `k` in the controller's joint order (`order[i]`: index of joint i in the message).
fn reorder_point(
    k: usize,
    p: &TrajectoryPoint,
    order: &[usize],
    listed: usize,
) -> Result<TrajectoryPoint, RuntimeError> {
    let reorder = |v: &[f64], what: &str| -> Result<Vec<f64>, RuntimeError> {
        if v.len() != listed {
            return Err(reference_error(format!(
                "point {k}: {what} has {} values for {listed} joint names",
                v.len()
            )));
        }
        if let Some(bad) = v.iter().find(|x| !x.is_finite()) {
            return Err(reference_error(format!("point {k}: {what} holds {bad}")));
        }
        Ok(order.iter().map(|&i| v[i]).collect())
    };
    let optional = |v: &Option<Vec<f64>>, what: &str| {
        v.as_deref()
            .filter(|v| !v.is_empty())
            .map(|v| reorder(v, what))
            .transpose()
    };
    Ok(TrajectoryPoint {
        time: p.time,
        positions: reorder(&p.positions, "positions")?,
        velocities: optional(&p.velocities, "velocities")?,
        accelerations: optional(&p.accelerations, "accelerations")?,
    })
}

/// The node's state between steps.
pub struct ControllerCore {
    robot: Robot,
    /// The chain's joint names, shared into faults.
    joint_names: Vec<Arc<str>>,
    controller: Guarded,
    map: JointMap,
    safe_mode: SafeMode,
    state_timeout: f64,
    ws: DynamicsWorkspace,
    q: Vec<f64>,
    qd: Vec<f64>,
    last_valid_q: Option<Vec<f64>>,
    /// The buffer `last_valid_q` takes at the first valid state (allocated once, up front).
    spare_q: Vec<f64>,
    state_time: Option<f64>,
    /// What is wrong with the newest state, if anything.
    state_fault: Option<Fault>,
    plausibility: Plausibility,
    /// `max_reference_points`.
    max_points: usize,
    fault: Option<Fault>,
    /// The trajectory and when it started; joined by a move from where the arm is when
    /// control starts ([`Approach`]).
    trajectory: Option<(f64, Approach)>,
    reference: JointReference,
    was_holding: bool,
    /// Largest reference acceleration per joint, rad/s^2 (m/s^2).
    acceleration_limits: Vec<f64>,
    /// The arm-derived default of `acceleration_limits`.
    default_acceleration_limits: Vec<f64>,
    /// The damped hold for a state that is believed (a controller failure, an over-speed).
    brake: Brake,
    /// Peak speeds and accelerations of the move that joins a trajectory
    /// ([`APPROACH_SPEED_SHARE`], [`APPROACH_ACCELERATION_SHARE`] of the limits), kept to plan
    /// it without allocating.
    approach_speeds: Vec<f64>,
    approach_accelerations: Vec<f64>,
}

impl std::fmt::Debug for ControllerCore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerCore")
            .field("controller", &self.controller.name())
            .field("fault", &self.fault)
            .finish()
    }
}

impl ControllerCore {
    /// A core for `robot`, controlling every joint of its chain (in chain order) with
    /// `controller` behind the safety layer (effort limits from the URDF, optional
    /// `rate_limit`); it holds in `safe_mode` when the newest state is older than
    /// `state_timeout` seconds.
    pub fn new(
        robot: Robot,
        controller: Box<dyn Controller>,
        safe_mode: SafeMode,
        state_timeout: f64,
        rate_limit: Option<f64>,
    ) -> Result<Self, RuntimeError> {
        let controller = Guarded::new(controller, &robot, rate_limit).map_err(|e| match e {
            ControlError::InvalidParameter { name, reason } => {
                RuntimeError::Parameter { name, reason }
            }
            other => RuntimeError::Parameter {
                name: "rate_limit".into(),
                reason: other.to_string(),
            },
        })?;
        let n = robot.dof();
        let joints: Vec<String> = robot.joint_names().map(str::to_string).collect();
        let accelerations =
            armctl_control::default_gains::acceleration_limits(&robot).map_err(|e| {
                RuntimeError::Parameter {
                    name: "acceleration_limits".into(),
                    reason: e.to_string(),
                }
            })?;
        let hold_gains = armctl_control::default_gains::hold_gains(&robot).map_err(|e| {
            RuntimeError::Parameter {
                name: "safe_mode".into(),
                reason: e.to_string(),
            }
        })?;
        Ok(Self {
            joint_names: joints.iter().map(|j| Arc::from(j.as_str())).collect(),
            brake: Brake::new(&robot, hold_gains),
            approach_speeds: vec![0.0; n],
            approach_accelerations: vec![0.0; n],
            acceleration_limits: accelerations.clone(),
            default_acceleration_limits: accelerations,
            ws: DynamicsWorkspace::new(&robot),
            map: JointMap::new(joints),
            controller,
            safe_mode,
            state_timeout,
            q: vec![0.0; n],
            qd: vec![0.0; n],
            last_valid_q: None,
            spare_q: vec![0.0; n],
            state_time: None,
            state_fault: None,
            plausibility: Plausibility::default(),
            max_points: DEFAULT_MAX_POINTS,
            fault: Some(Fault::NoState),
            trajectory: None,
            reference: JointReference::hold(&vec![0.0; n]),
            was_holding: true,
            robot,
        })
    }

    /// The model the controller and the hold compute with.
    pub fn robot(&self) -> &Robot {
        &self.robot
    }

    /// The controlled joints, in the order of the command array.
    pub fn joints(&self) -> &[String] {
        self.map.joints()
    }

    /// The controller, to change parameters or hand over targets.
    pub fn controller_mut(&mut self) -> &mut Guarded {
        &mut self.controller
    }

    /// The controller.
    pub fn controller(&self) -> &Guarded {
        &self.controller
    }

    /// The fault the last step held for.
    pub fn fault(&self) -> Option<&Fault> {
        self.fault.as_ref()
    }

    /// When the newest joint state arrived (the node's clock), if one has.
    pub fn state_time(&self) -> Option<f64> {
        self.state_time
    }

    /// The newest valid measured configuration (chain order), if any state was valid.
    pub fn last_valid_q(&self) -> Option<&[f64]> {
        self.last_valid_q.as_deref()
    }

    /// The reference in effect (for `~/state`).
    pub fn reference(&self) -> &JointReference {
        &self.reference
    }

    /// The newest measured positions and velocities in the controller's order.
    pub fn measured(&self) -> (&[f64], &[f64]) {
        (&self.q, &self.qd)
    }

    /// Forgets the states and the trajectory (simulated time went back): as at the start.
    pub fn restart(&mut self) {
        self.state_time = None;
        self.state_fault = None;
        if let Some(q) = self.last_valid_q.take() {
            self.spare_q = q;
        }
        self.trajectory = None;
        self.fault = Some(Fault::NoState);
        self.was_holding = true;
        self.brake.forget();
    }

    /// Whether states came and then stopped: the newest is older than `state_timeout`.
    pub fn states_stopped(&self, now: f64) -> bool {
        self.state_time
            .is_some_and(|t| now - t > self.state_timeout)
    }

    /// Changes what counts as an implausible state (live parameters).
    pub fn set_plausibility(&mut self, plausibility: Plausibility) {
        self.plausibility = plausibility;
    }

    /// The first joint of the newest state that cannot be true, as a fault naming it.
    fn implausible(&self) -> Option<Fault> {
        let Plausibility {
            position_margin,
            velocity_factor,
            ..
        } = self.plausibility;
        self.robot
            .joints()
            .iter()
            .zip(&self.joint_names)
            .zip(self.q.iter().zip(&self.qd))
            .find_map(|((joint, name), (&q, &qd))| {
                let limits = &joint.limits;
                let (lo, hi) = (
                    limits.lower - position_margin,
                    limits.upper + position_margin,
                );
                let (value, rule) = if limits.is_bounded() && !(lo..=hi).contains(&q) {
                    let (lower, upper) = (limits.lower, limits.upper);
                    let margin = position_margin;
                    (
                        q,
                        ImplausibleRule::Position {
                            lower,
                            upper,
                            margin,
                        },
                    )
                } else if limits.velocity > 0.0 && qd.abs() > velocity_factor * limits.velocity {
                    let (limit, factor) = (limits.velocity, velocity_factor);
                    (qd, ImplausibleRule::Velocity { limit, factor })
                } else {
                    return None;
                };
                let joint = name.clone();
                Some(Fault::Implausible(Implausible { joint, value, rule }))
            })
    }

    /// Changes the hold behaviour and timeout (live parameters).
    pub fn set_safety(&mut self, safe_mode: SafeMode, state_timeout: f64) {
        self.safe_mode = safe_mode;
        self.state_timeout = state_timeout;
    }

    /// Prepares the joint mapping for states that list `names` in this order, so that the
    /// first such state allocates nothing (a real-time host calls it before its loop).
    pub fn expect_state_layout(&mut self, names: &[String]) {
        let zeros = vec![0.0; names.len()];
        let (mut q, mut qd) = (zeros.clone(), zeros.clone());
        let _ = self.map.extract(names, &zeros, &zeros, &mut q, &mut qd);
    }

    /// A new joint state, received at `now` (s).
    pub fn on_joint_state(
        &mut self,
        names: &[String],
        position: &[f64],
        velocity: &[f64],
        now: f64,
    ) {
        self.state_fault =
            match self
                .map
                .extract(names, position, velocity, &mut self.q, &mut self.qd)
            {
                Err(fault) => Some(Fault::from(fault)),
                Ok(()) => self.implausible().or_else(|| {
                    let factor = self.plausibility.over_speed_factor;
                    self.brake
                        .over_speed(&self.robot, &self.joint_names, &self.qd, factor)
                }),
            };
        self.state_time = Some(now);
        if matches!(self.state_fault, None | Some(Fault::OverSpeed(_))) {
            match &mut self.last_valid_q {
                Some(q) => q.copy_from_slice(&self.q),
                None => {
                    let mut q = std::mem::take(&mut self.spare_q);
                    q.clear();
                    q.extend_from_slice(&self.q);
                    self.last_valid_q = Some(q);
                }
            }
        }
    }

    /// A state in which controlled joint `joint` (chain index) has no reading at `now`: a
    /// host whose state interface could not be read. Holds as a joint missing from a state.
    pub fn on_unreadable_joint(&mut self, joint: usize, now: f64) {
        self.state_fault = Some(Fault::Unreadable(self.map.shared_name(joint)));
        self.state_time = Some(now);
    }

    /// A joint trajectory to follow from time `start` (s, the node's clock), joints matched by
    /// name (the JointTrajectory shape): every controlled joint listed once, nothing else, one
    /// value per listed joint in every point, times from start increasing from 0 on, positions
    /// within the URDF limits, velocities within the velocity limits. It starts from the
    /// reference in effect, with its velocity and acceleration (a newer trajectory replacing a
    /// moving one makes no step in the reference velocity), or from the arm at rest when not
    /// controlling yet. Refused with a reason otherwise, and before the first valid joint
    /// state; the old reference stays.
    ///
    /// A `start` before `now` is never a step (as ros2_control's joint_trajectory_controller
    /// does it): the points already due are dropped and the first point still ahead is reached
    /// from the reference in effect; a trajectory entirely in the past is refused. A `start`
    /// after `now` is reached from the reference in effect too (the reference moves to the
    /// first point by then, not at once). A point due at once must lie within
    /// [`START_TOLERANCE`] of the reference in effect. The interpolated motion between the
    /// points is checked against the velocity and acceleration limits, and more than
    /// `max_reference_points` points are refused.
    pub fn set_trajectory(
        &mut self,
        joint_names: &[String],
        points: &[TrajectoryPoint],
        start: f64,
        now: f64,
    ) -> Result<(), RuntimeError> {
        if self.last_valid_q.is_none() {
            return Err(reference_error("no valid joint state yet".into()));
        }
        self.check_point_count(points.len())?;
        check_point_times(points)?;
        let order = self.trajectory_order(joint_names)?;
        let mut ordered = Vec::with_capacity(points.len() + 1);
        for (k, p) in points.iter().enumerate() {
            let point = reorder_point(k, p, &order, joint_names.len())?;
            self.check_limits(k, &point)?;
            ordered.push(point);
        }
        // From now on: points already due dropped, a later start a delay before the points.
        let late = now - start;
        ordered.retain(|p| p.time > late || (late <= 0.0 && p.time == 0.0));
        if ordered.is_empty() {
            return Err(reference_error(format!(
                "every point lies in the past (the trajectory started {late:.3} s ago)"
            )));
        }
        ordered.iter_mut().for_each(|p| p.time -= late);
        let from = self.start_point();
        match ordered.first() {
            Some(first) if first.time > 0.0 => ordered.insert(0, from),
            Some(first) => self.check_start(first, &from)?,
            None => {}
        }
        let trajectory = MultiPoint::new(self.robot.dof(), &ordered).map_err(|e| match e {
            ControlError::InvalidReference { reason } => reference_error(reason),
            other => reference_error(other.to_string()),
        })?;
        self.check_interpolated_motion(&trajectory, &ordered)?;
        self.trajectory = Some((now, Approach::new(Box::new(trajectory))));
        Ok(())
    }

    /// Where a new trajectory starts from: the reference in effect (with its velocity and
    /// acceleration), or the arm at rest when not controlling yet.
    fn start_point(&self) -> TrajectoryPoint {
        match (&self.last_valid_q, self.was_holding) {
            (Some(q), true) => TrajectoryPoint {
                time: 0.0,
                positions: q.clone(),
                velocities: None,
                accelerations: None,
            },
            _ => TrajectoryPoint {
                time: 0.0,
                positions: self.reference.q.clone(),
                velocities: Some(self.reference.qd.clone()),
                accelerations: Some(self.reference.qdd.clone()),
            },
        }
    }

    /// A point due at once must be where the reference is (within [`START_TOLERANCE`]).
    fn check_start(
        &self,
        first: &TrajectoryPoint,
        from: &TrajectoryPoint,
    ) -> Result<(), RuntimeError> {
        let joints = self.robot.joints().iter();
        for ((joint, q), here) in joints.zip(&first.positions).zip(&from.positions) {
            if (q - here).abs() > START_TOLERANCE {
                return Err(reference_error(format!(
                    "the first point is due now (time_from_start 0) but puts {} at {}, {} from where its reference is ({}): start the trajectory where the arm is, or give the first point a time to get there",
                    joint.name,
                    shown(*q),
                    shown(q - here),
                    shown(*here)
                )));
            }
        }
        Ok(())
    }

    /// Refuses more than `max_reference_points` points (before anything is built from them).
    pub fn check_point_count(&self, points: usize) -> Result<(), RuntimeError> {
        if points > self.max_points {
            return Err(reference_error(format!(
                "{points} points exceed max_reference_points ({})",
                self.max_points
            )));
        }
        Ok(())
    }

    /// Changes the largest number of points a trajectory may have (live parameter).
    pub fn set_max_points(&mut self, max_points: usize) {
        self.max_points = max_points;
    }

    /// Sets the reference acceleration limits (live parameter `acceleration_limits`): one
    /// positive value per controlled joint, or none for the arm-derived defaults
    /// ([`armctl_control::default_gains::acceleration_limits`]).
    pub fn set_acceleration_limits(&mut self, limits: &[f64]) -> Result<(), String> {
        if limits.is_empty() {
            self.acceleration_limits
                .clone_from(&self.default_acceleration_limits);
            return Ok(());
        }
        if limits.len() != self.robot.dof() {
            return Err(format!(
                "{} values for {} joints (or none for the defaults)",
                limits.len(),
                self.robot.dof()
            ));
        }
        if let Some(bad) = limits.iter().find(|a| !(a.is_finite() && **a > 0.0)) {
            return Err(format!("{bad} is not a positive acceleration"));
        }
        self.acceleration_limits = limits.to_vec();
        Ok(())
    }

    /// The reference acceleration limits in effect, per joint.
    pub fn acceleration_limits(&self) -> &[f64] {
        &self.acceleration_limits
    }

    /// A sample of a reference at `t` within the velocity and acceleration limits; `why` says
    /// what may have made it too fast.
    fn check_motion(&self, t: f64, sample: &JointReference, why: &str) -> Result<(), RuntimeError> {
        let joints = self.robot.joints().iter().zip(&self.acceleration_limits);
        for ((joint, accel_limit), (qd, qdd)) in joints.zip(sample.qd.iter().zip(&sample.qdd)) {
            let limit = joint.limits.velocity;
            if qd.is_nan() || (limit > 0.0 && qd.abs() > limit * (1.0 + 1e-9)) {
                return Err(reference_error(format!(
                    "{} would move at {} at t = {} s, above its velocity limit {limit}{why}",
                    joint.name,
                    shown(*qd),
                    shown(t)
                )));
            }
            if qdd.is_nan() || qdd.abs() > accel_limit * (1.0 + 1e-9) {
                return Err(reference_error(format!(
                    "{} would accelerate at {} at t = {} s, above its acceleration_limits entry {accel_limit:.3}{why}",
                    joint.name,
                    shown(*qdd),
                    shown(t)
                )));
            }
        }
        Ok(())
    }

    /// The velocities and accelerations of the motion between the points, sampled (16 per
    /// segment, ends included), within the limits: waypoints that respect them can still be
    /// joined too fast.
    fn check_interpolated_motion(
        &self,
        trajectory: &MultiPoint,
        points: &[TrajectoryPoint],
    ) -> Result<(), RuntimeError> {
        let times: Vec<f64> = points.iter().map(|p| p.time).collect();
        let mut sample = JointReference::hold(&self.reference.q);
        for t in segment_samples(&times) {
            trajectory.sample(t, &mut sample);
            self.check_motion(t, &sample, " (points too close in time)")?;
        }
        Ok(())
    }

    /// Follows `trajectory` from time `start` (s, the core's clock): for in-process runners
    /// whose trajectories are built and checked by their own code (such as `armctl sim`'s
    /// specifications). Messages go through [`ControllerCore::set_trajectory`], which checks
    /// them.
    pub fn follow(
        &mut self,
        trajectory: Box<dyn Trajectory>,
        start: f64,
    ) -> Result<(), RuntimeError> {
        if trajectory.dof() != self.robot.dof() {
            return Err(reference_error(format!(
                "the trajectory has {} joints, the robot {}",
                trajectory.dof(),
                self.robot.dof()
            )));
        }
        self.check_sampled(trajectory.as_ref())?;
        self.trajectory = Some((start, Approach::new(trajectory)));
        Ok(())
    }

    /// A trajectory's positions within the limits and its motion within the velocity and
    /// acceleration limits where [`check_times`] samples it, and no more points than a message
    /// may have: what the node checks of a message, for references built in process.
    fn check_sampled(&self, trajectory: &dyn Trajectory) -> Result<(), RuntimeError> {
        self.check_point_count(trajectory.knots().len())?;
        let mut sample = JointReference::hold(&self.reference.q);
        for t in check_times(trajectory) {
            trajectory.sample(t, &mut sample);
            for (j, joint) in self.robot.joints().iter().enumerate() {
                let (q, limits) = (sample.q[j], &joint.limits);
                let outside = limits.is_bounded() && !(limits.lower..=limits.upper).contains(&q);
                if !q.is_finite() || outside {
                    return Err(reference_error(format!(
                        "{} = {q:?} at t = {} s is outside [{}, {}]",
                        joint.name,
                        shown(t),
                        limits.lower,
                        limits.upper
                    )));
                }
            }
            self.check_motion(t, &sample, "")?;
        }
        Ok(())
    }

    /// When the trajectory being followed ends (s, the core's clock), if one is.
    pub fn trajectory_end(&self) -> Option<f64> {
        self.trajectory
            .as_ref()
            .map(|(start, t)| start + t.duration())
    }

    /// Refuses joint names a trajectory could not be matched by (a joint listed twice, one
    /// not controlled, a controlled one missing): the checks a FollowJointTrajectory goal's
    /// INVALID_JOINTS answer stands for.
    pub fn check_trajectory_joints(&self, joint_names: &[String]) -> Result<(), RuntimeError> {
        self.trajectory_order(joint_names).map(|_| ())
    }

    /// Stops following the trajectory and holds where the arm is (an empty JointTrajectory).
    pub fn cancel_trajectory(&mut self) {
        self.trajectory = None;
        if let Some(q) = &self.last_valid_q {
            self.reference = JointReference::hold(q);
        }
    }

    /// For each controlled joint, its index in `joint_names`.
    fn trajectory_order(&self, joint_names: &[String]) -> Result<Vec<usize>, RuntimeError> {
        for (k, name) in joint_names.iter().enumerate() {
            if joint_names[..k].contains(name) {
                return Err(reference_error(format!("joint '{name}' is listed twice")));
            }
            if !self.map.joints().contains(name) {
                return Err(reference_error(format!(
                    "joint '{name}' is not controlled by this node"
                )));
            }
        }
        self.map
            .joints()
            .iter()
            .map(|j| {
                joint_names.iter().position(|n| n == j).ok_or_else(|| {
                    reference_error(format!("joint '{j}' is missing from joint_names"))
                })
            })
            .collect()
    }

    fn check_limits(&self, k: usize, point: &TrajectoryPoint) -> Result<(), RuntimeError> {
        for (j, joint) in self.robot.joints().iter().enumerate() {
            let (q, limits) = (point.positions[j], &joint.limits);
            if limits.is_bounded() && !(limits.lower..=limits.upper).contains(&q) {
                return Err(reference_error(format!(
                    "point {k}: {} = {q:?} is outside [{}, {}]",
                    joint.name, limits.lower, limits.upper
                )));
            }
            let qd = point.velocities.as_ref().map_or(0.0, |v| v[j]);
            if limits.velocity > 0.0 && qd.abs() > limits.velocity {
                return Err(reference_error(format!(
                    "point {k}: {} velocity {qd:?} exceeds its limit {}",
                    joint.name, limits.velocity
                )));
            }
            let qdd = point.accelerations.as_ref().map_or(0.0, |a| a[j]);
            if qdd.abs() > self.acceleration_limits[j] {
                return Err(reference_error(format!(
                    "point {k}: {} acceleration {qdd:?} exceeds its acceleration_limits entry {:.3}",
                    joint.name, self.acceleration_limits[j]
                )));
            }
        }
        Ok(())
    }

    /// Changes a controller parameter (live gains ramp; invalid values are rejected).
    pub fn set_parameter(&mut self, name: &str, value: ParameterValue) -> Result<(), RuntimeError> {
        self.controller
            .set_parameter(name, value)
            .map_err(|e| RuntimeError::Parameter {
                name: name.into(),
                reason: e.to_string(),
            })
    }

    /// Why a step at `now` would hold (none: it would control).
    pub fn holds_at(&self, now: f64) -> Option<Fault> {
        self.current_fault(now)
    }

    fn current_fault(&self, now: f64) -> Option<Fault> {
        let Some(time) = self.state_time else {
            return Some(Fault::NoState);
        };
        if let Some(fault) = &self.state_fault {
            return Some(fault.clone());
        }
        let age = now - time;
        (age > self.state_timeout).then_some(Fault::Stale(age))
    }

    /// One control step at `now`, `dt` after the last: efforts in the order of `joints()`.
    pub fn step(&mut self, now: f64, dt: f64, effort: &mut [f64]) -> StepReport {
        self.step_from(now, dt, effort, None)
    }

    /// A step whose efforts a law over two arms computed ([`crate::pair_runtime`]): `given`
    /// is this arm's share, or why there is none (then the arm holds, as after a controller
    /// failure). The state checks, the safety layer, hold and resume are those of
    /// [`ControllerCore::step`]; the core's own controller does not run.
    pub fn step_given(
        &mut self,
        now: f64,
        dt: f64,
        effort: &mut [f64],
        given: Result<&[f64], &str>,
    ) -> StepReport {
        self.step_from(now, dt, effort, Some(given))
    }

    fn step_from(
        &mut self,
        now: f64,
        dt: f64,
        effort: &mut [f64],
        given: Option<Result<&[f64], &str>>,
    ) -> StepReport {
        let mut fault = self.current_fault(now);
        let mut cancelled = false;
        let mut controlled = false;
        if fault.is_none() {
            if self.was_holding {
                let first_start = self.fault == Some(Fault::NoState);
                cancelled = self.resume(first_start, now);
            }
            fault = match given {
                None => self.control(now, dt, effort),
                Some(given) => self.pass_on(given, dt, effort),
            };
            controlled = true;
        }
        let safety = match fault {
            Some(Fault::Controller(_) | Fault::OverSpeed(_)) => {
                self.hold(effort, dt, controlled, true)
            }
            Some(_) => self.hold(effort, dt, controlled, false),
            None => {
                self.brake.release();
                self.controller.last_report()
            }
        };
        let event = match (&fault, &self.fault) {
            (Some(new), old)
                if old.as_ref().map(std::mem::discriminant)
                    != Some(std::mem::discriminant(new)) =>
            {
                Some(CoreEvent::Holding {
                    fault: new.clone(),
                    mode: self.safe_mode,
                })
            }
            (None, Some(old)) if *old != Fault::NoState => Some(CoreEvent::Resumed {
                trajectory_cancelled: cancelled,
            }),
            _ => None,
        };
        self.was_holding = fault.is_some();
        self.fault = fault.clone();
        StepReport {
            fault,
            event,
            safety,
        }
    }

    /// Starts the controller and the reference from where the arm is. After a hold, a
    /// trajectory that ran on meanwhile would jump: it is cancelled (returns whether one was).
    /// At the first start a trajectory sent since the first state is kept, and joined from
    /// where the arm is by a move within half the velocity limits (slower where viscous
    /// friction would take more than a quarter of the effort limit) and a quarter of the
    /// smallest acceleration limit (a set point or a trajectory that starts elsewhere is not
    /// a step).
    fn resume(&mut self, first_start: bool, now: f64) -> bool {
        let state = JointState {
            q: &self.q,
            qd: &self.qd,
        };
        self.controller.reset(&state);
        self.reference.set_hold(&self.q);
        if !first_start {
            return self.trajectory.take().is_some();
        }
        if let Some((start, trajectory)) = &mut self.trajectory {
            let offset = (now - *start).max(0.0);
            for (v, joint) in self.approach_speeds.iter_mut().zip(self.robot.joints()) {
                *v = approach_speed(joint);
            }
            // One bound for every joint, the smallest: each joint's limit is what its own
            // effort gives when every joint accelerates at most that much (row sums of M), so
            // a faster neighbour would load a weak joint through the coupling.
            let slowest = self
                .acceleration_limits
                .iter()
                .fold(f64::INFINITY, |m, a| m.min(*a));
            self.approach_accelerations
                .fill(APPROACH_ACCELERATION_SHARE * slowest);
            trajectory.plan(
                &self.q,
                offset,
                &self.approach_speeds,
                &self.approach_accelerations,
            );
            *start = now;
        }
        false
    }

    /// One controller update on the newest state; a failure or a non-finite effort (which the
    /// safety layer would silently replace by the last one) is a fault.
    fn control(&mut self, now: f64, dt: f64, effort: &mut [f64]) -> Option<Fault> {
        if let Some((start, trajectory)) = &self.trajectory {
            trajectory.sample(now - start, &mut self.reference);
        }
        let state = JointState {
            q: &self.q,
            qd: &self.qd,
        };
        if let Err(e) = self.controller.update(&state, &self.reference, dt, effort) {
            return Some(Fault::Controller(e.to_string()));
        }
        let non_finite = self.controller.last_report().non_finite;
        (non_finite > 0).then(|| Fault::Controller(format!("{non_finite} non-finite efforts")))
    }

    /// Another law's efforts through the safety layer; none, or non-finite ones, are a fault.
    fn pass_on(
        &mut self,
        given: Result<&[f64], &str>,
        dt: f64,
        effort: &mut [f64],
    ) -> Option<Fault> {
        match given {
            Ok(given) if given.len() == effort.len() => effort.copy_from_slice(given),
            Ok(given) => {
                let reason = format!("{} efforts for {} joints", given.len(), effort.len());
                effort.fill(f64::NAN);
                self.controller.guard(effort, dt);
                return Some(Fault::Controller(reason));
            }
            Err(reason) => {
                effort.fill(f64::NAN);
                self.controller.guard(effort, dt);
                return Some(Fault::Controller(reason.to_string()));
            }
        }
        self.controller.guard(effort, dt);
        let non_finite = self.controller.last_report().non_finite;
        (non_finite > 0).then(|| Fault::Controller(format!("{non_finite} non-finite efforts")))
    }

    /// The `safe_mode` effort for a last command (gravity compensation at the last valid
    /// configuration, or zero; zero too before any valid state), within the effort limits and
    /// finite. Unlike a hold, no rate limit applies: the command must be the safe one itself,
    /// since it stays in effect after the node is gone. Returns what it is.
    pub fn safe_command(&mut self, effort: &mut [f64]) -> &'static str {
        effort.fill(0.0);
        let mut what = "zero effort";
        let robot_compensates = self.robot.gravity().iter().all(|g| *g == 0.0);
        if let (SafeMode::Gravity, Some(q)) = (self.safe_mode, &self.last_valid_q) {
            what = if robot_compensates {
                "zero effort (gravity_compensation is false: the robot holds its own weight)"
            } else {
                "gravity compensation at the last valid configuration"
            };
            if gravity_torques(&self.robot, &mut self.ws, q, effort).is_err() {
                effort.fill(0.0);
                what = "zero effort (gravity could not be computed)";
            }
        }
        for (e, joint) in effort.iter_mut().zip(self.robot.joints()) {
            let limit = joint.limits.effort;
            *e = if e.is_finite() {
                e.clamp(-limit, limit)
            } else {
                0.0
            };
        }
        what
    }

    /// The hold effort, through the safety layer; when the controller ran this cycle (and its
    /// effort went through the layer already) the hold replaces that effort, so the rate limit
    /// applies once per cycle. With a `trusted` state (the controller failed, or an over-speed)
    /// the hold brakes the arm: `G(q) - s D qd + s^2 K (q_b - q)` (without `G` in
    /// `safe_mode: zero`), `q_b` where the braking began, within the sampled-data bound at `q`
    /// ([`Brake`]); otherwise the state is not to be believed and it is `G` at the last valid
    /// configuration (or zero), undamped.
    fn hold(&mut self, effort: &mut [f64], dt: f64, replaces: bool, trusted: bool) -> SafetyReport {
        effort.fill(0.0);
        if let (SafeMode::Gravity, Some(q)) = (self.safe_mode, &self.last_valid_q) {
            let q = if trusted { &self.q } else { q };
            if gravity_torques(&self.robot, &mut self.ws, q, effort).is_err() {
                effort.fill(0.0);
            }
        }
        if trusted {
            let state = (self.q.as_slice(), self.qd.as_slice());
            self.brake
                .hold(&self.robot, &mut self.ws, state, dt, effort);
        } else {
            // Undamped, the arm may drift: a later braking holds where it begins, not where
            // an earlier one did.
            self.brake.release();
        }
        let safety = self.controller.safety_mut();
        if replaces {
            safety.replace(effort, dt)
        } else {
            safety.apply(effort, dt)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use armctl_control::controller_by_name;
    use armctl_model::ChainOptions;

    fn core() -> ControllerCore {
        let robot = Robot::from_urdf_file(
            concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/planar_2link.urdf"),
            &ChainOptions::default(),
        )
        .unwrap();
        let controller = controller_by_name("pd_gravity", &robot).unwrap();
        ControllerCore::new(robot, controller, SafeMode::Gravity, 0.05, None).unwrap()
    }

    /// `G(q)` of a two-joint robot.
    fn gravity_of(robot: &Robot, q: &[f64; 2]) -> [f64; 2] {
        let mut gravity = [0.0; 2];
        gravity_torques(robot, &mut DynamicsWorkspace::new(robot), q, &mut gravity).unwrap();
        gravity
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    /// Efforts `[NaN, big]` in the direction of gravity: the safety layer after the controller
    /// moves the finite one a step towards `big`, then the hold replaces the whole effort.
    struct PartlyNan(armctl_control::ParameterSet, f64);

    impl Controller for PartlyNan {
        fn name(&self) -> &'static str {
            "partly_nan"
        }
        fn parameters(&self) -> &armctl_control::ParameterSet {
            &self.0
        }
        fn parameters_mut(&mut self) -> &mut armctl_control::ParameterSet {
            &mut self.0
        }
        fn compute(
            &mut self,
            step: armctl_control::Step<'_>,
        ) -> Result<(), armctl_control::ControlError> {
            step.effort.copy_from_slice(&[f64::NAN, self.1]);
            Ok(())
        }
    }

    #[test]
    fn a_hold_after_non_finite_efforts_moves_no_effort_more_than_one_rate_limit_step() {
        let robot = Robot::from_urdf_file(
            concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/planar_2link.urdf"),
            &ChainOptions::default(),
        )
        .unwrap();
        let q = [0.1, 0.2];
        let gravity = gravity_of(&robot, &q);
        let (rate, dt) = (100.0, 1e-3);
        assert!(gravity[1].abs() > 2.0 * rate * dt, "{gravity:?}");
        let controller = PartlyNan(
            armctl_control::ParameterSet::new(2),
            1e3 * gravity[1].signum(),
        );
        let mut core = ControllerCore::new(
            robot,
            Box::new(controller),
            SafeMode::Gravity,
            0.05,
            Some(rate),
        )
        .unwrap();
        core.on_joint_state(&names(&["joint1", "joint2"]), &q, &[0.0, 0.0], 0.0);
        let mut effort = [0.0; 2];
        let r = core.step(0.001, dt, &mut effort);
        assert!(matches!(r.fault, Some(Fault::Controller(_))), "{r:?}");
        // The effort sent before was 0: one step of the rate limit at most, not two.
        for e in effort {
            assert!(e.abs() <= rate * dt * (1.0 + 1e-12), "{effort:?}");
        }
        assert!((effort[1] - rate * dt * gravity[1].signum()).abs() < 1e-12);
    }

    #[test]
    fn a_controller_fault_holds_with_damping_against_the_measured_velocity() {
        let robot = core().robot().clone();
        let (q, qd) = ([0.1, 0.2], [0.5, -0.3]);
        let mut gravity = [0.0; 2];
        let mut ws = DynamicsWorkspace::new(&robot);
        gravity_torques(&robot, &mut ws, &q, &mut gravity).unwrap();
        let (_, damping) = armctl_control::default_gains::hold_gains(&robot).unwrap();
        let controller = PartlyNan(armctl_control::ParameterSet::new(2), 0.0);
        let mut core =
            ControllerCore::new(robot, Box::new(controller), SafeMode::Gravity, 0.05, None)
                .unwrap();
        core.on_joint_state(&names(&["joint1", "joint2"]), &q, &qd, 0.0);
        let mut effort = [0.0; 2];
        let r = core.step(0.001, 1e-3, &mut effort);
        assert!(matches!(r.fault, Some(Fault::Controller(_))), "{r:?}");
        for i in 0..2 {
            let expected = gravity[i] - damping[i] * qd[i];
            assert!(
                damping[i] > 0.0 && (effort[i] - expected).abs() < 1e-9,
                "{effort:?}"
            );
        }
        // Still failing, the arm moved on: the spring pulls back to where braking began.
        let (moved, rest) = ([0.15, 0.2], [0.0, 0.0]);
        core.on_joint_state(&names(&["joint1", "joint2"]), &moved, &rest, 0.0015);
        core.step(0.0015, 5e-4, &mut effort);
        let g_moved = gravity_of(core.robot(), &moved);
        assert!(
            effort[0] < g_moved[0] - 1e-3,
            "pulled back: {effort:?} vs {g_moved:?}"
        );
        // A state that cannot be believed holds gravity only, at the last valid configuration.
        core.on_joint_state(&names(&["joint1", "joint2"]), &[0.1, f64::NAN], &qd, 0.002);
        core.step(0.002, 1e-3, &mut effort);
        assert_eq!(effort, g_moved);
        // A braking after that undamped hold holds where it begins, not where the first did.
        core.on_joint_state(&names(&["joint1", "joint2"]), &moved, &rest, 0.003);
        core.step(0.003, 1e-3, &mut effort);
        for (e, g) in effort.iter().zip(g_moved) {
            assert!((e - g).abs() < 1e-9, "{effort:?} vs {g_moved:?}");
        }
    }

    #[test]
    fn holds_on_every_fault_says_so_once_and_resumes() {
        let mut core = core();
        let mut effort = [0.0; 2];
        let joints = names(&["joint1", "joint2"]);
        // No state yet: gravity hold needs a configuration, so zero effort; no log (expected at start).
        let r = core.step(0.0, 1e-3, &mut effort);
        assert_eq!(r.fault, Some(Fault::NoState));
        assert_eq!(effort, [0.0, 0.0]);
        // Valid state: control.
        core.on_joint_state(&joints, &[0.1, 0.2], &[0.0, 0.0], 0.001);
        let r = core.step(0.002, 1e-3, &mut effort);
        assert_eq!(r.fault, None);
        assert!(effort[0].abs() > 1.0, "gravity is compensated: {effort:?}");
        // A missing joint: hold with gravity at the last valid configuration, log once.
        core.on_joint_state(&names(&["joint1"]), &[0.1], &[0.0], 0.003);
        let r = core.step(0.003, 1e-3, &mut effort);
        assert_eq!(r.fault, Some(Fault::MissingJoint("joint2".into())));
        let event = r.event.unwrap();
        assert!(event.is_warning());
        let text = event.to_string();
        assert!(
            text.contains("joint2") && text.contains("gravity"),
            "{text}"
        );
        assert!(
            core.step(0.004, 1e-3, &mut effort).event.is_none(),
            "said once per incident"
        );
        // NaN in a state.
        core.on_joint_state(&joints, &[f64::NAN, 0.2], &[0.0, 0.0], 0.005);
        let r = core.step(0.005, 1e-3, &mut effort);
        assert_eq!(r.fault, Some(Fault::NonFinite("joint1".into())));
        assert!(r.event.is_some());
        assert!(effort.iter().all(|e| e.is_finite()));
        // Valid again: resumes, and says so.
        core.on_joint_state(&joints, &[0.1, 0.2], &[0.0, 0.0], 0.006);
        let r = core.step(0.006, 1e-3, &mut effort);
        assert_eq!(r.fault, None);
        assert!(!r.event.unwrap().is_warning());
        // The publisher stops: stale after state_timeout (0.05 s).
        assert_eq!(core.step(0.05, 1e-3, &mut effort).fault, None);
        let r = core.step(0.0571, 1e-3, &mut effort);
        assert!(matches!(r.fault, Some(Fault::Stale(_))), "{:?}", r.fault);
        // Zero mode holds with zero effort.
        core.set_safety(SafeMode::Zero, 0.05);
        core.step(0.06, 1e-3, &mut effort);
        assert_eq!(effort, [0.0, 0.0]);
    }

    fn point(t: f64, p: Vec<f64>) -> TrajectoryPoint {
        TrajectoryPoint {
            time: t,
            positions: p,
            velocities: None,
            accelerations: None,
        }
    }

    #[test]
    fn trajectories_are_matched_by_name_and_bad_ones_refused() {
        let mut core = core();
        let joints = names(&["joint1", "joint2"]);
        let e = core.set_trajectory(&joints, &[point(1.0, vec![0.5, -0.3])], 0.0, 0.0);
        assert!(e
            .unwrap_err()
            .to_string()
            .contains("no valid joint state yet"));
        core.on_joint_state(&joints, &[0.0, 0.0], &[0.0, 0.0], 0.0);
        // Joints in another order.
        core.set_trajectory(
            &names(&["joint2", "joint1"]),
            &[point(1.0, vec![0.5, -0.3])],
            0.0,
            0.0,
        )
        .unwrap();
        core.on_joint_state(&joints, &[0.0, 0.0], &[0.0, 0.0], 1.0);
        let mut effort = [0.0; 2];
        core.step(1.0, 1e-3, &mut effort);
        // Control starts after the point was due: the arm is brought there by a move from
        // where it is, not by a step.
        assert_eq!(core.reference().q, vec![0.0, 0.0]);
        let end = core.trajectory_end().unwrap();
        assert!(end > 1.1, "{end}");
        core.on_joint_state(&joints, &[0.0, 0.0], &[0.0, 0.0], end);
        core.step(end, 1e-3, &mut effort);
        assert_eq!(core.reference().q, vec![-0.3, 0.5]);
        let refused = |core: &mut ControllerCore, names: &[String], p: TrajectoryPoint| {
            core.set_trajectory(names, &[p], 1.0, 1.0)
                .unwrap_err()
                .to_string()
        };
        let e = refused(&mut core, &joints, point(1.0, vec![0.5]));
        assert!(e.contains("1 values for 2 joint names"), "{e}");
        let e = refused(&mut core, &names(&["joint1"]), point(1.0, vec![0.5]));
        assert!(e.contains("'joint2' is missing"), "{e}");
        let e = refused(
            &mut core,
            &names(&["joint1", "joint1"]),
            point(1.0, vec![0.5, 0.5]),
        );
        assert!(e.contains("listed twice"), "{e}");
        let e = refused(
            &mut core,
            &names(&["joint1", "joint2", "gripper"]),
            point(1.0, vec![0.0; 3]),
        );
        assert!(e.contains("'gripper' is not controlled"), "{e}");
        let e = refused(&mut core, &joints, point(1.0, vec![1e308, 0.0]));
        assert!(e.contains("outside"), "{e}");
        let e = refused(&mut core, &joints, point(1.0, vec![f64::NAN, 0.0]));
        assert!(e.contains("NaN"), "{e}");
        // The refused ones left the first trajectory in place.
        core.step(end, 1e-3, &mut effort);
        assert_eq!(core.reference().q, vec![-0.3, 0.5]);
    }

    /// Found by a review of the FollowJointTrajectory action, each for `~/reference` too: a
    /// newer trajectory starts from the reference's velocity (no step in it); a later start is
    /// reached smoothly, not by a step at once; a point due at once far from the reference is
    /// refused; times must increase from 0, said with the message's point numbers.
    #[test]
    fn newer_and_later_trajectories_start_smoothly_and_bad_times_are_refused() {
        let mut core = core();
        let joints = names(&["joint1", "joint2"]);
        let mut effort = [0.0; 2];
        let mut state = |core: &mut ControllerCore, t: f64| {
            core.on_joint_state(&joints, &[0.0, 0.0], &[0.0, 0.0], t);
            core.step(t, 1e-3, &mut effort);
            (core.reference().q.clone(), core.reference().qd.clone())
        };
        state(&mut core, 0.0);
        core.set_trajectory(&joints, &[point(2.0, vec![0.5, 0.5])], 0.0, 0.0)
            .unwrap();
        let (_, qd_before) = state(&mut core, 1.0);
        assert!(qd_before[0] > 0.3, "{qd_before:?}");
        // Replaced mid-motion: the reference velocity carries on.
        core.set_trajectory(&joints, &[point(1.0, vec![0.5, 0.5])], 1.0, 1.0)
            .unwrap();
        let (_, qd_after) = state(&mut core, 1.0);
        assert!(
            (qd_after[0] - qd_before[0]).abs() < 1e-9,
            "{qd_before:?} -> {qd_after:?}"
        );
        // A start 3 s ahead whose first point is due then: the reference does not jump now.
        let (q_now, _) = state(&mut core, 2.0);
        let later = [point(0.0, vec![0.2, 0.2]), point(1.0, vec![0.3, 0.3])];
        core.set_trajectory(&joints, &later, 5.0, 2.0).unwrap();
        let (q_soon, _) = state(&mut core, 2.001);
        assert!(
            (q_soon[0] - q_now[0]).abs() < 1e-4,
            "{q_now:?} -> {q_soon:?}"
        );
        assert!((core.trajectory_end().unwrap() - 6.0).abs() < 1e-12);
        // A point due now far from the reference: refused; one within the start tolerance: taken.
        let far = core
            .set_trajectory(
                &joints,
                &[point(0.0, vec![0.2, 0.2]), point(1.0, vec![0.3, 0.3])],
                3.0,
                3.0,
            )
            .unwrap_err()
            .to_string();
        assert!(far.contains("due now") && far.contains("joint1"), "{far}");
        let (q, _) = state(&mut core, 3.0);
        let near = [
            point(0.0, vec![q[0] + 0.01, q[1]]),
            point(1.0, vec![0.3, 0.3]),
        ];
        core.set_trajectory(&joints, &near, 3.0, 3.0).unwrap();
        // Times: out of order, negative, not finite; numbered as in the message.
        let mut times = |t: [f64; 3]| {
            let points: Vec<_> = t.iter().map(|t| point(*t, vec![0.3, 0.3])).collect();
            core.set_trajectory(&joints, &points, 3.0, 3.0)
                .unwrap_err()
                .to_string()
        };
        let e = times([0.5, 1e-9, 1.0]);
        assert!(
            e.contains("point 1: time_from_start 1e-9 s must be after point 0's 0.5 s"),
            "{e}"
        );
        assert!(
            times([-1.0, 1.0, 2.0]).contains("point 0: time_from_start -1.0 s must be 0 or later")
        );
        assert!(times([0.5, f64::NAN, 2.0]).contains("point 1"));
        assert!(
            !times([0.5, 0.5, 2.0]).contains("invalid reference"),
            "no doubled prefix"
        );
    }

    #[test]
    fn a_hold_cancels_the_trajectory_and_resumes_where_the_arm_is() {
        let mut core = core();
        let joints = names(&["joint1", "joint2"]);
        let mut effort = [0.0; 2];
        core.on_joint_state(&joints, &[0.0, 0.0], &[0.0, 0.0], 0.0);
        core.step(0.0, 1e-3, &mut effort);
        core.set_trajectory(&joints, &[point(1.0, vec![0.5, 0.5])], 0.0, 0.0)
            .unwrap();
        core.on_joint_state(&joints, &[0.1, 0.1], &[0.0, 0.0], 0.5);
        assert_eq!(core.step(0.5, 1e-3, &mut effort).fault, None);
        // States stop; they come back at t = 2 with the arm somewhere else.
        assert!(core.step(0.6, 1e-3, &mut effort).fault.is_some());
        core.on_joint_state(&joints, &[0.2, -0.1], &[0.0, 0.0], 2.0);
        let r = core.step(2.0, 1e-3, &mut effort);
        assert_eq!(r.fault, None);
        assert!(r
            .event
            .unwrap()
            .to_string()
            .contains("trajectory cancelled"));
        assert_eq!(core.reference().q, vec![0.2, -0.1]);
        // An empty JointTrajectory cancels too: hold at the measured position.
        core.set_trajectory(&joints, &[point(1.0, vec![0.5, 0.5])], 2.0, 2.0)
            .unwrap();
        core.cancel_trajectory();
        core.step(2.5, 1e-3, &mut effort);
        assert_eq!(core.reference().q, vec![0.2, -0.1]);
    }

    #[test]
    fn the_safe_command_is_the_hold_itself_without_a_rate_limit() {
        let mut core = core();
        let joints = names(&["joint1", "joint2"]);
        let mut effort = [5.0, -5.0];
        // Before any state: zero.
        assert_eq!(core.safe_command(&mut effort), "zero effort");
        assert_eq!(effort, [0.0, 0.0]);
        core.on_joint_state(&joints, &[0.1, 0.2], &[0.0, 0.0], 0.0);
        core.step(0.0, 1e-3, &mut effort);
        core.controller_mut()
            .safety_mut()
            .set_rate_limit(Some(1e-3))
            .unwrap();
        core.safe_command(&mut effort);
        let gravity = gravity_of(&core.robot, &[0.1, 0.2]);
        assert_eq!(
            effort, gravity,
            "the full gravity hold, not a rate-limited step towards it"
        );
        core.set_safety(SafeMode::Zero, 0.05);
        core.safe_command(&mut effort);
        assert_eq!(effort, [0.0, 0.0]);
    }

    #[test]
    fn states_that_cannot_be_true_hold_name_the_joint_and_resume() {
        let mut core = core();
        let joints = names(&["joint1", "joint2"]);
        let mut effort = [0.0; 2];
        core.on_joint_state(&joints, &[0.1, 0.2], &[0.0, 0.0], 0.0);
        assert_eq!(core.step(0.0, 1e-3, &mut effort).fault, None);
        // A finite position 100 rad away: hold, say so once, naming the joint and the value.
        core.on_joint_state(&joints, &[100.0, 0.2], &[0.0, 0.0], 0.001);
        let r = core.step(0.001, 1e-3, &mut effort);
        let text = r.event.expect("said").to_string();
        assert!(
            matches!(r.fault, Some(Fault::Implausible(_))),
            "{:?}",
            r.fault
        );
        assert!(
            text.contains("joint1 at 100") && text.contains("position_limit_margin"),
            "{text}"
        );
        assert_eq!(core.measured().0.len(), 2);
        // Gravity hold at the last plausible configuration.
        let gravity = gravity_of(&core.robot, &[0.1, 0.2]);
        assert_eq!(effort, gravity);
        // A velocity of 1e6 rad/s.
        core.on_joint_state(&joints, &[0.1, 0.2], &[0.0, 1e6], 0.002);
        let r = core.step(0.002, 1e-3, &mut effort);
        assert!(
            matches!(&r.fault, Some(Fault::Implausible(t)) if t.to_string().contains("joint2 moves at 1000000"))
        );
        // Plausible again: resume. A wider margin accepts what was refused.
        core.on_joint_state(&joints, &[0.1, 0.2], &[0.0, 0.0], 0.003);
        assert_eq!(core.step(0.003, 1e-3, &mut effort).fault, None);
        core.set_plausibility(Plausibility {
            position_margin: 200.0,
            ..Plausibility::default()
        });
        core.on_joint_state(&joints, &[100.0, 0.2], &[0.0, 0.0], 0.004);
        assert_eq!(core.step(0.004, 1e-3, &mut effort).fault, None);
    }

    #[test]
    fn an_over_speed_brakes_with_damping_until_the_arm_is_at_rest_then_holds_there() {
        let mut core = core();
        let robot = core.robot().clone();
        let joints = names(&["joint1", "joint2"]);
        let limit = robot.joints()[1].limits.velocity;
        let mut effort = [0.0; 2];
        core.on_joint_state(&joints, &[0.1, 0.2], &[0.0, 0.0], 0.0);
        assert_eq!(core.step(0.0, 1e-3, &mut effort).fault, None);
        // Twice the limit: a true state, braked. The effort opposes the motion beyond G(q).
        let (q, qd) = ([0.1, 0.25], [0.0, 2.0 * limit]);
        core.on_joint_state(&joints, &q, &qd, 0.001);
        let r = core.step(0.001, 1e-3, &mut effort);
        assert!(matches!(r.fault, Some(Fault::OverSpeed(_))), "{r:?}");
        let text = r.event.expect("said once").to_string();
        assert!(
            text.contains("over-speed") && text.contains("joint2"),
            "{text}"
        );
        let gravity = gravity_of(&robot, &q);
        assert!(effort[1] < gravity[1], "{effort:?} vs G {gravity:?}");
        // Slower but still moving (within the limit): still braking, and not said again.
        core.on_joint_state(&joints, &[0.1, 0.26], &[0.0, 0.5 * limit], 0.002);
        let r = core.step(0.002, 1e-3, &mut effort);
        assert!(
            matches!(r.fault, Some(Fault::OverSpeed(_))) && r.event.is_none(),
            "{r:?}"
        );
        // At rest: control resumes, holding where the arm stopped.
        core.on_joint_state(&joints, &[0.1, 0.27], &[0.0, 0.0], 0.003);
        let r = core.step(0.003, 1e-3, &mut effort);
        assert_eq!(r.fault, None);
        assert!(matches!(r.event, Some(CoreEvent::Resumed { .. })), "{r:?}");
        assert_eq!(core.reference().q, vec![0.1, 0.27]);
        // Beyond velocity_plausibility (10 times the limit): not believed, undamped.
        core.on_joint_state(&joints, &[0.1, 0.27], &[0.0, 20.0 * limit], 0.004);
        let r = core.step(0.004, 1e-3, &mut effort);
        assert!(matches!(r.fault, Some(Fault::Implausible(_))), "{r:?}");
    }

    #[test]
    fn the_braking_damping_stays_within_the_sampled_data_margin() {
        // A damping far beyond the margin for a step of 1 s is scaled, not applied.
        let robot = core().robot().clone();
        let mut brake = Brake::new(&robot, (vec![0.0; 2], vec![1e4, 1e4]));
        let mut ws = DynamicsWorkspace::new(&robot);
        let (q, qd) = ([0.1, 0.2], [1.0, -1.0]);
        let mut effort = [0.0; 2];
        brake.hold(&robot, &mut ws, (&q, &qd), 1.0, &mut effort);
        let applied: Vec<f64> = effort.iter().zip(&qd).map(|(e, v)| -e / v).collect();
        // lambda_max(M^-1 D) = lambda_max(D^1/2 M^-1 D^1/2), by nalgebra's eigensolver.
        let mut m = nalgebra::DMatrix::zeros(2, 2);
        armctl_dynamics::mass_matrix(&robot, &mut ws, &q, &mut m).unwrap();
        let inverse = m.cholesky().unwrap().inverse();
        let root: Vec<f64> = applied.iter().map(|d| d.sqrt()).collect();
        let w = nalgebra::DMatrix::from_fn(2, 2, |r, c| root[r] * inverse[(r, c)] * root[c]);
        let load = w.symmetric_eigenvalues().max();
        assert!(
            load <= armctl_control::damping_bound::RUNTIME_MARGIN * (1.0 + 1e-9),
            "{load}"
        );
        assert!(applied.iter().all(|d| *d > 0.0), "{applied:?}");
    }

    #[test]
    fn a_late_reference_is_never_a_step_and_a_too_fast_one_is_refused() {
        let mut core = core();
        let joints = names(&["joint1", "joint2"]);
        let mut effort = [0.0; 2];
        core.on_joint_state(&joints, &[0.0, 0.0], &[0.0, 0.0], 10.0);
        core.step(10.0, 1e-3, &mut effort);
        // Stamped 10 s ago: points at 1 s and 12 s. The first is due already and dropped; the
        // second is reached from the reference in effect in the 2 s still ahead.
        core.set_trajectory(
            &joints,
            &[point(1.0, vec![1.5, 0.0]), point(12.0, vec![0.2, 0.0])],
            0.0,
            10.0,
        )
        .unwrap();
        core.on_joint_state(&joints, &[0.0, 0.0], &[0.0, 0.0], 10.001);
        core.step(10.001, 1e-3, &mut effort);
        assert!(
            core.reference().q[0].abs() < 1e-3,
            "no step: {:?}",
            core.reference().q
        );
        // (States keep coming; a stall would hold and cancel the trajectory.)
        for k in 1..=2000 {
            let t = 10.001 + k as f64 * 1e-3;
            core.on_joint_state(&joints, &[0.0, 0.0], &[0.0, 0.0], t);
            core.step(t, 1e-3, &mut effort);
        }
        assert!(
            (core.reference().q[0] - 0.2).abs() < 1e-9,
            "{:?}",
            core.reference().q
        );
        let e = core
            .set_trajectory(&joints, &[point(1.0, vec![0.5, 0.0])], 0.0, 10.0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("every point lies in the past"), "{e}");
        // 2 rad in 10 ms, through waypoints within the limits: refused, naming the joint.
        let e = core
            .set_trajectory(&joints, &[point(0.01, vec![2.0, 0.0])], 12.0, 12.0)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("joint1 would move at") && e.contains("velocity limit 4"),
            "{e}"
        );
        core.set_max_points(3);
        let many: Vec<TrajectoryPoint> = (1..=4).map(|k| point(k as f64, vec![0.1, 0.0])).collect();
        let e = core
            .set_trajectory(&joints, &many, 12.0, 12.0)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("4 points exceed max_reference_points (3)"),
            "{e}"
        );
    }

    #[test]
    fn references_beyond_the_acceleration_limits_are_refused_naming_the_joint() {
        let mut core = core();
        let joints = vec!["joint1".to_string(), "joint2".to_string()];
        core.on_joint_state(&joints, &[0.0, 0.0], &[0.0, 0.0], 1.0);
        let mut effort = [0.0; 2];
        core.step(1.0, 1e-3, &mut effort);
        // The derived defaults are positive and finite for every joint.
        assert!(core
            .acceleration_limits()
            .iter()
            .all(|a| a.is_finite() && *a > 0.0));
        core.set_acceleration_limits(&[2.0, 2.0]).unwrap();
        // 0.5 rad in 1 s from rest (a quintic peaks at 5.77 s^-2 per rad: 2.9 rad/s^2).
        let e = core
            .set_trajectory(&joints, &[point(1.0, vec![0.5, 0.0])], 1.0, 1.0)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("joint1 would accelerate at") && e.contains("acceleration_limits"),
            "{e}"
        );
        // The same move over 2 s needs 0.72 rad/s^2: accepted.
        core.set_trajectory(&joints, &[point(2.0, vec![0.5, 0.0])], 1.0, 1.0)
            .unwrap();
        // A given waypoint acceleration above the limit is refused too.
        let mut fast = point(3.0, vec![0.5, 0.0]);
        fast.accelerations = Some(vec![0.0, 3.0]);
        let e = core
            .set_trajectory(&joints, &[fast], 1.0, 1.0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("point 0: joint2 acceleration 3"), "{e}");
        assert!(core.set_acceleration_limits(&[1.0]).is_err());
        assert!(core.set_acceleration_limits(&[1.0, -1.0]).is_err());
        core.set_acceleration_limits(&[]).unwrap();
    }

    #[test]
    fn in_process_waypoints_are_checked_to_the_end_and_between_every_point() {
        let mut core = core();
        let follow = |core: &mut ControllerCore, points: &[TrajectoryPoint]| {
            let trajectory = MultiPoint::new(2, points).unwrap();
            core.follow(Box::new(trajectory), 0.0)
                .map_err(|e| e.to_string())
        };
        let mut points: Vec<TrajectoryPoint> =
            (0..=60).map(|k| point(k as f64, vec![0.0, 0.0])).collect();
        points.push(point(200.0, vec![3.0, 0.0]));
        follow(&mut core, &points).unwrap();
        // Beyond the limit (3.1) 200 s in: once, only the first minute was checked.
        points[61].positions[0] = 3.5;
        let e = follow(&mut core, &points).unwrap_err();
        assert!(
            e.contains("joint1 = 3.") && e.contains("outside [-3.1, 3.1]"),
            "{e}"
        );
        // A spike of 0.5 ms between the 1000 even samples of 70 s.
        let mut spike = vec![point(0.0, vec![0.0, 0.0]), point(35.0, vec![0.0, 0.0])];
        spike.push(point(35.0005, vec![0.0, 0.0]));
        spike.push(point(70.0, vec![0.0, 0.0]));
        spike[1].positions[1] = 1e-3;
        let e = follow(&mut core, &spike).unwrap_err();
        assert!(e.contains("joint2 would"), "{e}");
    }
}
