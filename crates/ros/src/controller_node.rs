//! `controller_node`: `/joint_states` in, efforts out on `command_topic`
//! (std_msgs/Float64MultiArray in the order of `joints`, for ros2_control's
//! JointGroupEffortController), references on `~/reference` (trajectory_msgs/JointTrajectory),
//! `~/target_pose` (geometry_msgs/PoseStamped) and `~/external_wrench`
//! (geometry_msgs/WrenchStamped), and `~/state` for plotting: a std_msgs/Float64MultiArray with
//! labelled blocks `time`, `holding`, `reference`, `position`, `velocity`, `error`, `effort`,
//! `estimates`.
//!
//! With `update_rate` 0 one command answers each joint state; otherwise a timer runs the
//! controller on the newest state. The node task owns the controller: no lock in the loop.

use armctl_control::reference::TrajectoryPoint;
use armctl_control::{controller_by_name, Controller};
use nalgebra::{IsometryMatrix3, Quaternion, Translation3, UnitQuaternion};

use crate::controller_core::{ControllerCore, Fault, LogLevel, SafeMode};
use crate::declarations::{
    controller_declarations, controller_node_declarations, to_controller_value,
};
use crate::model_parameters::identified_model;
use crate::msgs::JointState;
use crate::msgs::{labelled_array, Float64MultiArray};
use crate::names::resolve;
use crate::node_clock::{ClockChange, NodeClock};
use crate::node_parameters::ParameterStore;
use crate::parameter_services::{handle_request, ParameterRequest};
use crate::params_file::RosValue;
use crate::ros_args::RosArgs;
use crate::startup::{load_robot, NodeStart};
use crate::transport::{Incoming, Node, NodeSpec, Outgoing, Topic, Transport};
use crate::RosError;

/// A configured controller node, ready to run on a transport.
pub struct ControllerNode {
    spec: NodeSpec,
    core: ControllerCore,
    /// Command index -> chain index.
    order: Vec<usize>,
    update_rate: f64,
    clock: NodeClock,
    last_step: Option<f64>,
    target_duration: f64,
    /// Seconds between ~/state messages (0: every step) and when the last one went out.
    state_period: f64,
    last_state: Option<f64>,
    effort: Vec<f64>,
    command: Float64MultiArray,
    state: Float64MultiArray,
    error: Vec<f64>,
}

impl std::fmt::Debug for ControllerNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerNode")
            .field("name", &self.spec.name)
            .field("core", &self.core)
            .finish()
    }
}

fn invalid(name: &str, reason: String) -> RosError {
    RosError::Parameter {
        name: name.into(),
        reason,
    }
}

/// Command order: the `joints` parameter as indices into the chain (default: the chain).
fn command_order(joints: &[String], chain: &[String]) -> Result<Vec<usize>, RosError> {
    if joints.is_empty() {
        return Ok((0..chain.len()).collect());
    }
    if let Some((k, twice)) = joints
        .iter()
        .enumerate()
        .find(|(k, j)| joints[..*k].contains(j))
    {
        return Err(invalid(
            "joints",
            format!("'{twice}' is listed twice (entry {k})"),
        ));
    }
    let order = joints
        .iter()
        .map(|j| {
            chain.iter().position(|c| c == j).ok_or_else(|| {
                invalid(
                    "joints",
                    format!("'{j}' is not a joint of the chain ({})", chain.join(", ")),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(missing) = chain.iter().find(|c| !joints.contains(c)) {
        return Err(invalid(
            "joints",
            format!("chain joint '{missing}' is missing: every chain joint must be controlled"),
        ));
    }
    Ok(order)
}

/// In per-message mode a timer checks for stale states: ten checks per `state_timeout`, at
/// least 100 Hz, at most 1 kHz.
fn watchdog_rate(state_timeout: f64) -> f64 {
    (10.0 / state_timeout).clamp(100.0, 1000.0)
}

/// Seconds between messages at `rate` Hz (0 Hz: every time).
fn period(rate: f64) -> f64 {
    if rate > 0.0 {
        1.0 / rate
    } else {
        0.0
    }
}

/// Every declaration, the controller's included, with the start values applied.
pub fn controller_node_parameters(
    start: &NodeStart,
) -> Result<(ParameterStore, Box<dyn Controller>, armctl_model::Robot), RosError> {
    let mut store = ParameterStore::new(controller_node_declarations());
    let unknown = start.apply(&mut store)?;
    let mut robot = load_robot(&store)?;
    if let Some(model) = identified_model(|name| store.get(name)) {
        robot = model
            .apply(&robot)
            .map_err(|e| invalid("model_base_parameters", e.to_string()))?;
    }
    let controller_name = store.string("controller");
    let mut controller = controller_by_name(&controller_name, &robot)
        .map_err(|e| invalid("controller", e.to_string()))?;
    store.extend(controller_declarations(controller.as_ref()));
    for name in unknown {
        if store.declaration(&name).is_none() {
            return Err(invalid(
                &name,
                format!("not declared by controller_node with controller '{controller_name}'"),
            ));
        }
    }
    start.apply(&mut store)?;
    for d in controller_declarations(controller.as_ref()) {
        if let Some(value) = store.get(&d.name).and_then(to_controller_value) {
            controller
                .set_parameter(&d.name, value)
                .map_err(|e| invalid(&d.name, e.to_string()))?;
        }
    }
    controller.parameters_mut().settle();
    Ok((store, controller, robot))
}

impl ControllerNode {
    /// Configures the node from the command line (parameter files, overrides, remaps).
    pub fn new(args: &RosArgs) -> Result<Self, RosError> {
        let start = NodeStart::new(args, "controller_node")?;
        let (store, controller, robot) = controller_node_parameters(&start)?;
        let chain: Vec<String> = robot.joint_names().map(str::to_string).collect();
        let joints = match store.get("joints") {
            Some(RosValue::StringArray(j)) => j.clone(),
            _ => vec![],
        };
        let order = command_order(&joints, &chain)?;
        let safe_mode = SafeMode::parse(&store.string("safe_mode")).unwrap_or(SafeMode::Gravity);
        let rate_limit = Some(store.double("rate_limit")).filter(|r| *r > 0.0);
        let n = robot.dof();
        let core = ControllerCore::new(
            robot,
            controller,
            safe_mode,
            store.double("state_timeout"),
            rate_limit,
        )?;
        let resolve_name = |name: &str| resolve(name, &start.namespace, &start.name, &start.remaps);
        let command_topic = match store.string("command_topic") {
            t if t.is_empty() => format!("{}/commands", store.string("controller")),
            t => t,
        };
        let use_sim_time = store.get("use_sim_time") == Some(&RosValue::Bool(true));
        let mut subscriptions = vec![
            (Topic::JointStates, resolve_name("joint_states")),
            (Topic::Reference, resolve_name("~/reference")),
            (Topic::TargetPose, resolve_name("~/target_pose")),
            (Topic::ExternalWrench, resolve_name("~/external_wrench")),
        ];
        if use_sim_time {
            subscriptions.push((Topic::Clock, resolve_name("/clock")));
        }
        let update_rate = store.double("update_rate");
        let state_period = period(store.double("state_publish_rate"));
        let spec = NodeSpec {
            name: start.name.clone(),
            namespace: start.namespace.clone(),
            subscriptions,
            publications: vec![
                (Topic::Commands, resolve_name(&command_topic)),
                (Topic::State, resolve_name("~/state")),
            ],
            tick_rate: Some(if update_rate > 0.0 {
                update_rate
            } else {
                watchdog_rate(store.double("state_timeout"))
            }),
            parameters: store,
        };
        Ok(Self {
            spec,
            core,
            order,
            update_rate,
            clock: NodeClock::new(use_sim_time),
            last_step: None,
            target_duration: 1.0,
            state_period,
            last_state: None,
            effort: vec![0.0; n],
            command: Float64MultiArray {
                data: vec![0.0; n],
                ..Float64MultiArray::default()
            },
            state: Float64MultiArray::default(),
            error: vec![0.0; n],
        })
    }

    fn on_joint_state<T: Transport>(&mut self, transport: &mut T, msg: &JointState) {
        // On simulated time a state's stamp is its time: a /clock tick that overtook it
        // must not shift the reference by a step.
        let stamp = msg.header.stamp.seconds();
        let now = if self.clock.is_simulated() && stamp > 0.0 {
            stamp
        } else {
            self.clock.now()
        };
        self.core
            .on_joint_state(&msg.name, &msg.position, &msg.velocity, now);
        if self.update_rate <= 0.0 {
            self.step_at(transport, now);
        }
    }

    /// The timer: a control step at `update_rate` (on simulated time only when time moved
    /// on), or in per-message mode the watchdog that holds when states stop coming.
    fn on_tick<T: Transport>(&mut self, transport: &mut T) {
        let now = self.clock.now();
        if self.update_rate <= 0.0 {
            if self.core.states_stopped(now) {
                self.step_at(transport, now);
            }
        } else if !self.clock.is_simulated() {
            self.last_step = Some(now);
            self.step(transport, now, 1.0 / self.update_rate);
        } else if self.last_step.is_none_or(|t| now > t) {
            self.step_at(transport, now);
        }
    }

    fn on_clock<T: Transport>(&mut self, transport: &mut T, t: f64) {
        if self.clock.on_clock(t) == ClockChange::JumpedBack {
            self.core.restart();
            self.last_step = None;
            self.last_state = None;
            let text = "simulated time went back (a reset): trajectory cancelled, waiting for joint states";
            transport.log(LogLevel::Warn, text);
        }
    }

    /// A step at `now`, `dt` from the previous one.
    fn step_at<T: Transport>(&mut self, transport: &mut T, now: f64) {
        let dt = self.last_step.map_or(1e-3, |t| (now - t).clamp(1e-6, 0.1));
        self.last_step = Some(now);
        self.step(transport, now, dt);
    }

    fn step<T: Transport>(&mut self, transport: &mut T, now: f64, dt: f64) {
        let report = self.core.step(now, dt, &mut self.effort);
        if report.fault == Some(Fault::NoState) {
            // Nothing to compute from yet: publish nothing rather than a guess.
            return;
        }
        let holding = [if report.fault.is_some() { 1.0 } else { 0.0 }];
        if let Some((level, text)) = &report.log {
            transport.log(*level, text);
        }
        for (slot, &i) in self.command.data.iter_mut().zip(&self.order) {
            *slot = self.effort[i];
        }
        transport.publish(Outgoing::Array(Topic::Commands, &self.command));
        // (A clock that went backwards, a restarted simulation, publishes at once.)
        let due = self
            .last_state
            .is_none_or(|t| now - t >= self.state_period - 1e-9 || now < t);
        if !due {
            return;
        }
        self.last_state = Some(now);
        let reference = self.core.reference();
        let (q, qd) = self.core.measured();
        for ((e, r), q) in self.error.iter_mut().zip(&reference.q).zip(q) {
            *e = r - q;
        }
        let estimates = self.core.controller().estimates();
        labelled_array(
            &[
                ("time", &[now]),
                ("holding", &holding),
                ("reference", &reference.q),
                ("position", q),
                ("velocity", qd),
                ("error", &self.error),
                ("effort", &self.effort),
                ("estimates", estimates),
            ],
            &mut self.state,
        );
        transport.publish(Outgoing::Array(Topic::State, &self.state));
    }

    fn on_reference<T: Transport>(
        &mut self,
        transport: &mut T,
        msg: &crate::msgs::JointTrajectory,
    ) {
        if msg.points.is_empty() {
            // As ros2_control's trajectory controller: an empty trajectory stops the motion.
            self.core.cancel_trajectory();
            transport.log(LogLevel::Info, "empty reference: holding where the arm is");
            return;
        }
        let points: Vec<TrajectoryPoint> = msg
            .points
            .iter()
            .map(|p| TrajectoryPoint {
                time: p.time_from_start.seconds(),
                positions: p.positions.clone(),
                velocities: Some(p.velocities.clone()).filter(|v| !v.is_empty()),
                accelerations: Some(p.accelerations.clone()).filter(|v| !v.is_empty()),
            })
            .collect();
        // As in ros2_control's trajectory controller: a zero stamp means "start now".
        let stamp = msg.header.stamp.seconds();
        let start = if stamp > 0.0 {
            self.clock.from_stamp(stamp)
        } else {
            self.clock.now()
        };
        match self.core.set_trajectory(&msg.joint_names, &points, start) {
            Ok(()) => transport.log(
                LogLevel::Info,
                &format!(
                    "new reference: {} points over {:.3} s, starting at t = {start:.3} s",
                    points.len(),
                    points.last().map_or(0.0, |p| p.time)
                ),
            ),
            Err(e) => transport.log(LogLevel::Warn, &e.to_string()),
        }
    }

    fn on_target_pose<T: Transport>(&mut self, transport: &mut T, pose: &crate::msgs::Pose) {
        let (p, o) = (pose.position, pose.orientation);
        let q = Quaternion::new(o.w, o.x, o.y, o.z);
        if !(q.norm() > 1e-9
            && [p.x, p.y, p.z, o.x, o.y, o.z, o.w]
                .iter()
                .all(|v| v.is_finite()))
        {
            transport.log(
                LogLevel::Warn,
                "target pose rejected: not finite or zero quaternion",
            );
            return;
        }
        let goal = IsometryMatrix3::from_parts(
            Translation3::new(p.x, p.y, p.z),
            UnitQuaternion::from_quaternion(q).to_rotation_matrix(),
        );
        if let Err(e) = self
            .core
            .controller_mut()
            .set_target_pose(goal, self.target_duration)
        {
            transport.log(LogLevel::Warn, &format!("target pose rejected: {e}"));
        }
    }

    fn on_parameter_request<T: Transport>(
        &mut self,
        transport: &mut T,
        id: u64,
        request: &ParameterRequest,
    ) {
        let snapshot = self.spec.parameters.clone();
        let response = handle_request(&snapshot, request, |name, value| {
            let result = self.apply_parameter(name, value);
            match &result {
                Ok(()) => transport.log(
                    LogLevel::Info,
                    &format!("parameter {name} set to {}", value.to_yaml()),
                ),
                Err(reason) => transport.log(
                    LogLevel::Warn,
                    &format!("parameter {name} not set: {reason}"),
                ),
            }
            result
        });
        transport.respond(id, response);
    }

    /// Checks `value` against the declaration and the controller, then applies and stores it;
    /// on any rejection nothing changes.
    fn apply_parameter(&mut self, name: &str, value: &RosValue) -> Result<(), String> {
        let parameters = &mut self.spec.parameters;
        let typed = parameters
            .validate(name, value, false)
            .map_err(|e| e.to_string())?;
        match name {
            "state_timeout" | "safe_mode" => {
                let mut mode =
                    SafeMode::parse(&parameters.string("safe_mode")).unwrap_or(SafeMode::Gravity);
                let mut timeout = parameters.double("state_timeout");
                match &typed {
                    RosValue::String(s) => mode = SafeMode::parse(s).unwrap_or(mode),
                    RosValue::Double(t) => timeout = *t,
                    _ => {}
                }
                self.core.set_safety(mode, timeout);
            }
            "state_publish_rate" => {
                if let RosValue::Double(rate) = typed {
                    self.state_period = period(rate);
                }
            }
            "rate_limit" => {
                let limit = match typed {
                    RosValue::Double(r) if r > 0.0 => Some(r),
                    _ => None,
                };
                self.core
                    .controller_mut()
                    .safety_mut()
                    .set_rate_limit(limit)
                    .map_err(|e| e.to_string())?;
            }
            _ => {
                let value = to_controller_value(&typed)
                    .ok_or_else(|| format!("{} is not a controller value", typed.type_name()))?;
                self.core
                    .set_parameter(name, value)
                    .map_err(|e| e.to_string())?;
            }
        }
        parameters
            .set(name, &typed, false)
            .map_err(|e| e.to_string())
    }
}

impl Node for ControllerNode {
    fn spec(&self) -> &NodeSpec {
        &self.spec
    }

    async fn run<T: Transport + Send>(mut self, transport: &mut T) {
        let law = self.core.controller().name();
        let joints = self.core.joints().join(", ");
        transport.log(LogLevel::Info, &format!("controlling {joints} with {law}"));
        while let Some(incoming) = transport.next().await {
            match incoming {
                Incoming::JointState(msg) => self.on_joint_state(transport, &msg),
                Incoming::Tick => self.on_tick(transport),
                Incoming::Clock(t) => self.on_clock(transport, t),
                Incoming::Reference(msg) => self.on_reference(transport, &msg),
                Incoming::TargetPose(msg) => self.on_target_pose(transport, &msg.pose),
                Incoming::ExternalWrench(msg) => {
                    let (f, t) = (msg.wrench.force, msg.wrench.torque);
                    self.core
                        .controller_mut()
                        .set_external_wrench(&[f.x, f.y, f.z, t.x, t.y, t.z]);
                }
                Incoming::ParameterRequest(id, request) => {
                    self.on_parameter_request(transport, id, &request)
                }
                Incoming::Command(_) | Incoming::State(_) | Incoming::Log(_) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_order_follows_joints_and_names_bad_ones() {
        let chain: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let joints = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(command_order(&[], &chain).unwrap(), vec![0, 1, 2]);
        assert_eq!(
            command_order(&joints(&["c", "a", "b"]), &chain).unwrap(),
            vec![2, 0, 1]
        );
        assert!(command_order(&joints(&["a", "b", "x"]), &chain)
            .unwrap_err()
            .to_string()
            .contains("'x'"));
        assert!(command_order(&joints(&["a", "b"]), &chain)
            .unwrap_err()
            .to_string()
            .contains("'c' is missing"));
        assert!(command_order(&joints(&["a", "a", "b", "c"]), &chain)
            .unwrap_err()
            .to_string()
            .contains("'a' is listed twice"));
    }
}
