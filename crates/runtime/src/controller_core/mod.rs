//! The controller node without the middleware: the newest joint state in, efforts out, with
//! the safety rules of docs/safety.md. A state that lacks a controlled joint, holds NaN, or is older
//! than `state_timeout` makes the node hold (`safe_mode`: zero effort, or gravity compensation
//! at the last valid configuration), says so once per incident, and resumes when valid states
//! return. Efforts always pass the safety layer (NaN guard, effort limits, optional rate limit).
//! The faults and plausibility rules are in `faults.rs`, trajectory acceptance in
//! `trajectory_acceptance.rs`, a step's report and events in `events.rs`; this file is the state
//! and the step with its hold and resume.

use armctl_control::reference::{Approach, MultiPoint, Trajectory, TrajectoryPoint};
use armctl_control::{
    CheckedLaw, ControlError, Controller, JointReference, JointState, SafetyLayer, SafetyReport,
};
use armctl_dynamics::{gravity_torques, DynamicsWorkspace};
use armctl_ident::payload_estimation::PayloadEstimate;
use armctl_model::Robot;

use std::sync::Arc;

pub mod braking;
mod collision;
mod events;
mod external_forces;
mod external_torque;
mod faults;
mod holding;
mod observers;
mod payload;
mod reference_source;
mod rest_poses;
mod state_gate;
mod supervisor;
mod trajectory_acceptance;

pub use collision::{
    sensitivity_warning, Collision, CollisionDetection, CollisionReaction, CollisionSettings,
    RETRACT_SPEED,
};
pub use events::{CoreEvent, StepReport};
pub use external_torque::DEFAULT_OBSERVER_GAIN;
pub use faults::{Fault, Implausible, ImplausibleRule, Plausibility, SafeMode};
pub use rest_poses::{MAX_POSES, MIN_REST_TIME};

use crate::RuntimeError;
use braking::Brake;
use observers::Observers;
use reference_source::ReferenceSource;
use state_gate::StateGate;
use supervisor::Supervisor;

/// Where a step's efforts come from: the arm's own law, or a law over two arms.
enum Efforts<'a> {
    Law(&'a mut CheckedLaw),
    Given(Result<&'a [f64], &'a str>),
}

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

/// The node's state between steps.
pub struct ControllerCore {
    robot: Robot,
    /// The arm as it is: `robot` with the payload set (`payload_*`), which the holds, the
    /// hand-off and the external torque estimate compute with.
    loaded: Robot,
    /// The chain's joint names, shared into faults.
    joint_names: Vec<Arc<str>>,
    /// What every effort passes: the payload, the soft limits, the effort and rate limits.
    layer: SafetyLayer,
    /// The newest state, mapped and judged.
    gate: StateGate,
    ws: DynamicsWorkspace,
    /// The effort the rate limit starts from at a first start: `G(q)`.
    hand_off: Vec<f64>,
    /// The trajectory, the reference in effect and the limits a trajectory is checked on.
    source: ReferenceSource,
    /// Holds, brakes and resumes.
    supervisor: Supervisor,
    /// The external torques, the tip wrench and collisions, observed from the motion.
    observers: Observers,
    /// An online payload estimate asked for (`estimate_payload`), for the next step to report.
    payload_estimated: Option<Result<PayloadEstimate, String>>,
}

impl std::fmt::Debug for ControllerCore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerCore")
            .field("joints", &self.joint_names)
            .field("fault", &self.supervisor.fault)
            .finish()
    }
}

impl ControllerCore {
    /// A core for `robot`, controlling every joint of its chain (in chain order) behind the
    /// safety layer (effort limits from the URDF, optional `rate_limit`); it holds in
    /// `safe_mode` when the newest state is older than `state_timeout` seconds. The law that
    /// steps it is the caller's ([`ControllerCore::check_law`], [`ControllerCore::step`]), or
    /// a law over two arms hands it its efforts ([`ControllerCore::step_given`]).
    pub fn new(
        robot: Robot,
        safe_mode: SafeMode,
        state_timeout: f64,
        rate_limit: Option<f64>,
    ) -> Result<Self, RuntimeError> {
        let layer = SafetyLayer::new(&robot, rate_limit).map_err(|e| match e {
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
            supervisor: Supervisor::new(safe_mode, Brake::new(&robot, hold_gains)),
            source: ReferenceSource::new(accelerations),
            ws: DynamicsWorkspace::new(&robot),
            hand_off: vec![0.0; n],
            gate: StateGate::new(joints, state_timeout),
            layer,
            observers: Observers::new(&robot),
            payload_estimated: None,
            loaded: robot.clone(),
            robot,
        })
    }

    /// `law` checked for this arm (the damping bound, the safety layer's warnings), and
    /// automatic collision detection set for it: an adaptive law's model is uncertain by
    /// design, a hybrid law presses on a surface by design, so neither is watched.
    pub fn check_law(&mut self, law: Box<dyn Controller>) -> CheckedLaw {
        let auto_on = law.estimates().is_empty() && law.name() != "hybrid_force_position";
        self.observers.collision.set_auto(auto_on);
        CheckedLaw::new(law, &self.robot, &self.layer)
    }

    /// An arm stepped with another under one law ([`ControllerCore::step_given`]): the two
    /// arms carry the object's load, so automatic collision detection is off.
    pub fn stepped_with_another(&mut self) {
        self.observers.collision.set_auto(false);
    }

    /// The model the controller and the hold compute with.
    pub fn robot(&self) -> &Robot {
        &self.robot
    }

    /// The controlled joints, in the order of the command array.
    pub fn joints(&self) -> &[String] {
        self.gate.map.joints()
    }

    /// The safety layer every effort passes.
    pub fn layer(&self) -> &SafetyLayer {
        &self.layer
    }

    /// The safety layer, to set its limits and margins.
    pub fn layer_mut(&mut self) -> &mut SafetyLayer {
        &mut self.layer
    }

    /// The fault the last step held for.
    pub fn fault(&self) -> Option<&Fault> {
        self.supervisor.fault.as_ref()
    }

    /// When the newest joint state arrived (the node's clock), if one has.
    pub fn state_time(&self) -> Option<f64> {
        self.gate.state_time
    }

    /// The newest valid measured configuration (chain order), if any state was valid.
    pub fn last_valid_q(&self) -> Option<&[f64]> {
        self.gate.last_valid_q.as_deref()
    }

    /// The reference in effect (for `~/state`).
    pub fn reference(&self) -> &JointReference {
        &self.source.reference
    }

    /// The newest measured positions and velocities in the controller's order.
    pub fn measured(&self) -> (&[f64], &[f64]) {
        (&self.gate.q, &self.gate.qd)
    }

    /// Forgets the states and the trajectory (simulated time went back, or a host activates
    /// the controller again): as at the start, except that a latched collision stays latched
    /// until `reset_collision`.
    pub fn restart(&mut self) {
        self.gate.forget();
        self.source.trajectory = None;
        self.supervisor.fault = Some(Fault::NoState);
        self.supervisor.was_holding = true;
        self.supervisor.brake.forget();
        // As at the start: the rate limit counts from zero until the first state's hand-off
        // (what the arm got between two runs is the host's, not the last command of this one).
        self.layer.safety_mut().restart();
        self.observers.external.restart();
        // A latched collision stays latched (until reset_collision), whoever restarts.
        self.observers.collision.forget_path();
    }

    /// Whether states came and then stopped: the newest is older than `state_timeout`.
    pub fn states_stopped(&self, now: f64) -> bool {
        self.gate
            .state_time
            .is_some_and(|t| now - t > self.gate.state_timeout)
    }

    /// Changes what counts as an implausible state (live parameters).
    pub fn set_plausibility(&mut self, plausibility: Plausibility) {
        self.gate.plausibility = plausibility;
    }

    /// Changes the hold behaviour and timeout (live parameters).
    pub fn set_safety(&mut self, safe_mode: SafeMode, state_timeout: f64) {
        self.supervisor.safe_mode = safe_mode;
        self.gate.state_timeout = state_timeout;
    }

    /// Prepares the joint mapping for states that list `names` in this order, so that the
    /// first such state allocates nothing (a real-time host calls it before its loop).
    pub fn expect_state_layout(&mut self, names: &[String]) {
        let zeros = vec![0.0; names.len()];
        let (mut q, mut qd) = (zeros.clone(), zeros.clone());
        let _ = self
            .gate
            .map
            .extract(names, &zeros, &zeros, &mut q, &mut qd);
    }

    /// A new joint state, received at `now` (s).
    pub fn on_joint_state(
        &mut self,
        names: &[String],
        position: &[f64],
        velocity: &[f64],
        now: f64,
    ) {
        let model = (&self.robot, self.joint_names.as_slice());
        let state = (names, position, velocity);
        let believable = self
            .gate
            .admit(state, now, model, &mut self.supervisor.brake);
        self.observers.external.on_state(believable);
    }

    /// A state in which controlled joint `joint` (chain index) has no reading at `now`: a
    /// host whose state interface could not be read. Holds as a joint missing from a state.
    pub fn on_unreadable_joint(&mut self, joint: usize, now: f64) {
        self.gate.unreadable(joint, now);
        self.observers.external.on_state(false);
    }

    /// Why a step at `now` would hold (none: it would control): the state's fault, or a
    /// latched collision.
    pub fn holds_at(&self, now: f64) -> Option<Fault> {
        self.current_fault(now).or_else(|| {
            let latched = self.observers.collision.latched()?;
            Some(Fault::Collision(latched.clone()))
        })
    }

    fn current_fault(&self, now: f64) -> Option<Fault> {
        self.gate.fault_at(now)
    }

    /// One control step of `law` at `now`, `dt` after the last: efforts in the order of
    /// `joints()`.
    pub fn step(
        &mut self,
        now: f64,
        dt: f64,
        law: &mut CheckedLaw,
        effort: &mut [f64],
    ) -> StepReport {
        self.step_from(now, dt, effort, Efforts::Law(law))
    }

    /// A step whose efforts a law over two arms computed ([`crate::group_loop`]): `given`
    /// is this arm's share, or why there is none (then the arm holds, as after a controller
    /// failure). The state checks, the safety layer, hold and resume are those of
    /// [`ControllerCore::step`].
    pub fn step_given(
        &mut self,
        now: f64,
        dt: f64,
        effort: &mut [f64],
        given: Result<&[f64], &str>,
    ) -> StepReport {
        self.step_from(now, dt, effort, Efforts::Given(given))
    }

    /// The step, stage by stage: the state's fault (the gate), what the motion tells
    /// (observers: a collision is a fault too), the law unless something holds (resuming
    /// first after a hold), the supervisor's hold, brake or release, and the event.
    fn step_from(
        &mut self,
        now: f64,
        dt: f64,
        effort: &mut [f64],
        mut efforts: Efforts<'_>,
    ) -> StepReport {
        let fault = self.observe(self.gate.fault_at(now), dt);
        let (fault, controlled, cancelled) = match fault {
            Some(fault) => (Some(fault), false, false),
            None => {
                let cancelled = self.resume_if_held(now, &mut efforts);
                (self.run_law(now, dt, effort, efforts), true, cancelled)
            }
        };
        let safety = self.supervise(&fault, effort, dt, controlled);
        let event = self.event(&fault, cancelled);
        self.supervisor.was_holding = fault.is_some();
        self.supervisor.fault = fault.clone();
        self.observers.external.sent(effort);
        StepReport {
            fault,
            event,
            safety,
        }
    }

    /// The observers on a believed state (an over-speed is believed: its torques are real);
    /// a collision they detect becomes the step's fault. Restarted on any other fault.
    fn observe(&mut self, fault: Option<Fault>, dt: f64) -> Option<Fault> {
        if !matches!(fault, None | Some(Fault::OverSpeed(_))) {
            self.observers.external.restart();
            return fault;
        }
        let state = (self.gate.q.as_slice(), self.gate.qd.as_slice());
        self.observers.external.step(&self.loaded, state, dt);
        self.detect_collision(dt).or(fault)
    }

    /// Resumes after a hold (returns whether a trajectory was cancelled); the arm's own law
    /// starts over from where the arm is.
    fn resume_if_held(&mut self, now: f64, efforts: &mut Efforts<'_>) -> bool {
        if !self.supervisor.was_holding {
            return false;
        }
        if let Efforts::Law(law) = efforts {
            let state = JointState {
                q: &self.gate.q,
                qd: &self.gate.qd,
            };
            law.reset(&state);
        }
        let first_start = self.supervisor.fault == Some(Fault::NoState);
        self.resume(first_start, now)
    }

    /// The law (or another law's efforts) through the safety layer.
    fn run_law(
        &mut self,
        now: f64,
        dt: f64,
        effort: &mut [f64],
        efforts: Efforts<'_>,
    ) -> Option<Fault> {
        match efforts {
            Efforts::Law(law) => self.control(law, now, dt, effort),
            Efforts::Given(given) => self.pass_on(given, dt, effort),
        }
    }

    /// What the supervisor sends for the step's fault: the collision reaction, a brake for a
    /// believed arm, a hold for one that cannot be believed; the law's efforts, the brake
    /// released, when nothing holds.
    fn supervise(
        &mut self,
        fault: &Option<Fault>,
        effort: &mut [f64],
        dt: f64,
        controlled: bool,
    ) -> SafetyReport {
        match fault {
            Some(Fault::Collision(_)) => self.react_to_collision(effort, dt),
            Some(Fault::Controller(_) | Fault::OverSpeed(_)) => {
                self.hold(effort, dt, controlled, true)
            }
            Some(_) => self.hold(effort, dt, controlled, false),
            None => {
                self.supervisor.brake.release();
                self.layer.last_report()
            }
        }
    }

    /// The step's event against the last step's fault: a new hold (or a collision latched
    /// anew), a collision cleared, a resume; else a payload estimate asked for, reported only
    /// on a step with no other event.
    fn event(&mut self, fault: &Option<Fault>, cancelled: bool) -> Option<CoreEvent> {
        let latched_anew = self.observers.collision.take_new_latch();
        match (fault, &self.supervisor.fault) {
            (Some(new), old)
                if latched_anew
                    || old.as_ref().map(std::mem::discriminant)
                        != Some(std::mem::discriminant(new)) =>
            {
                Some(CoreEvent::Holding {
                    fault: new.clone(),
                    mode: self.supervisor.safe_mode,
                })
            }
            (None, Some(Fault::Collision(collision))) => Some(CoreEvent::CollisionCleared {
                peak_force: collision.peak_force,
                trajectory_cancelled: cancelled,
            }),
            (None, Some(old)) if *old != Fault::NoState => Some(CoreEvent::Resumed {
                trajectory_cancelled: cancelled,
            }),
            _ => self
                .payload_estimated
                .take()
                .map(CoreEvent::PayloadEstimated),
        }
    }

    /// One controller update on the newest state; a failure or a non-finite effort (which the
    /// safety layer would silently replace by the last one) is a fault.
    fn control(
        &mut self,
        law: &mut CheckedLaw,
        now: f64,
        dt: f64,
        effort: &mut [f64],
    ) -> Option<Fault> {
        self.source.sample(now);
        if self.observers.wrench_from_estimate {
            let wrench = self.observers.external.tip_wrench();
            if let Some(task_space) = law.task_space() {
                task_space.set_external_wrench(wrench);
            }
        }
        let state = JointState {
            q: &self.gate.q,
            qd: &self.gate.qd,
        };
        let reference = &self.source.reference;
        let updated = law.law_mut().update(&state, reference, dt, effort);
        if let Err(e) = self
            .layer
            .after_law(updated, (&state, reference), dt, effort)
        {
            return Some(Fault::Controller(e.to_string()));
        }
        let non_finite = self.layer.last_report().non_finite;
        (non_finite > 0).then(|| Fault::Controller(format!("{non_finite} non-finite efforts")))
    }

    /// Another law's efforts through the safety layer; none, or non-finite ones, are a fault.
    fn pass_on(
        &mut self,
        given: Result<&[f64], &str>,
        dt: f64,
        effort: &mut [f64],
    ) -> Option<Fault> {
        let state = JointState {
            q: &self.gate.q,
            qd: &self.gate.qd,
        };
        match given {
            Ok(given) if given.len() == effort.len() => effort.copy_from_slice(given),
            Ok(given) => {
                let reason = format!("{} efforts for {} joints", given.len(), effort.len());
                effort.fill(f64::NAN);
                self.layer.guard(&state, effort, dt);
                return Some(Fault::Controller(reason));
            }
            Err(reason) => {
                effort.fill(f64::NAN);
                self.layer.guard(&state, effort, dt);
                return Some(Fault::Controller(reason.to_string()));
            }
        }
        self.layer.guard(&state, effort, dt);
        let non_finite = self.layer.last_report().non_finite;
        (non_finite > 0).then(|| Fault::Controller(format!("{non_finite} non-finite efforts")))
    }
}

#[cfg(test)]
mod tests;
