//! `controller_node`: `/joint_states` in, efforts out on `command_topic`
//! (std_msgs/Float64MultiArray in the order of `joints`, for ros2_control's
//! JointGroupEffortController), references on `~/reference` (trajectory_msgs/JointTrajectory),
//! `~/target_pose` (geometry_msgs/PoseStamped) and `~/external_wrench`
//! (geometry_msgs/WrenchStamped), and `~/state` for plotting: a std_msgs/Float64MultiArray with
//! labelled blocks `time`, `holding`, `reference`, `position`, `velocity`, `error`, `effort`,
//! `estimates`, `saturated` (efforts clipped at their limits since the start, counted per joint
//! and step).
//!
//! With `update_rate` 0 one command answers each joint state; otherwise a timer runs the
//! controller on the newest state. The node task owns the controller: no lock in the loop.

use armctl_runtime::group_loop::GroupLoop;
use armctl_runtime::loop_timing::LoopTiming;
use armctl_runtime::names::resolve;
use armctl_runtime::ros_args::RosArgs;
use armctl_runtime::startup::NodeStart;

use crate::follow_joint_trajectory::{ActionRequest, ActionResult, GoalStatus};
use crate::msgs::{JointState, PoseStamped, WrenchStamped};
use crate::nodes::arm_state_messages::ArmStateMessages;
use crate::nodes::loop_node::LoopNode;
use crate::nodes::trajectory_action::{trajectory_points, trajectory_start, TrajectoryAction};
use crate::transport::{Incoming, LogLevel, NodeLogic, NodeSpec, Topic, Transport};
use crate::RosError;

/// A configured controller node, ready to run on a transport.
pub struct ControllerNode {
    spec: NodeSpec,
    /// The runtime in the loop, with what the node publishes of it.
    node: LoopNode,
    target_duration: f64,
    /// `~/state`, `~/controller_state` and the external torques and wrench.
    messages: ArmStateMessages,
    /// The frame of the last wrench refused (said once per frame, not per message).
    refused_wrench_frame: Option<String>,
    /// `~/follow_joint_trajectory`.
    action: TrajectoryAction,
}

impl std::fmt::Debug for ControllerNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerNode")
            .field("name", &self.spec.name)
            .field("runtime", self.runtime())
            .finish()
    }
}

impl ControllerNode {
    /// Configures the node from the command line (parameter files, overrides, remaps).
    pub fn new(args: &RosArgs) -> Result<Self, RosError> {
        Self::from_start(&NodeStart::new(args, "controller_node")?)
    }

    /// Configures the node from its start values.
    pub fn from_start(start: &NodeStart) -> Result<Self, RosError> {
        let mut runtime = GroupLoop::lone(start)?;
        let settings = runtime.settings().clone();
        let resolve_name = |name: &str| resolve(name, &start.namespace, &start.name, &start.remaps);
        let command_topic = settings.command_topic();
        let use_sim_time = settings.robot.use_sim_time;
        let mut subscriptions = vec![
            (Topic::JointStates, resolve_name("joint_states")),
            (Topic::Reference, resolve_name("~/reference")),
            (Topic::TargetPose, resolve_name("~/target_pose")),
            (Topic::ExternalWrench, resolve_name("~/external_wrench")),
        ];
        if use_sim_time {
            subscriptions.push((Topic::Clock, resolve_name("/clock")));
        }
        let update_rate = settings.update_rate;
        let mut publications = vec![
            (Topic::Commands, resolve_name(&command_topic)),
            (Topic::State, resolve_name("~/state")),
            (Topic::Diagnostics, resolve_name("/diagnostics")),
            (Topic::ExternalTorques, resolve_name("~/external_torques")),
            (
                Topic::ExternalTorqueBounds,
                resolve_name("~/external_torque_bounds"),
            ),
            (
                Topic::ExternalWrenchEstimate,
                resolve_name("~/external_wrench_estimate"),
            ),
        ];
        let messages = ArmStateMessages::new(&mut runtime, &settings.controller_state_layout);
        if let Some(humble) = messages.controller_state_layout() {
            let topic = match humble {
                true => Topic::ControllerStateHumble,
                false => Topic::ControllerState,
            };
            publications.push((topic, resolve_name("~/controller_state")));
        }
        let spec = NodeSpec {
            name: start.name.clone(),
            namespace: start.namespace.clone(),
            subscriptions,
            publications,
            action: Some(resolve_name("~/follow_joint_trajectory")),
            tick_rate: Some(LoopTiming::tick_rate(
                update_rate,
                settings.live.state_timeout,
            )),
            parameters: runtime.parameters().clone(),
        };
        Ok(Self {
            messages,
            action: TrajectoryAction::new(runtime.core().joints()),
            spec,
            node: LoopNode::new(runtime, start),
            target_duration: 1.0,
            refused_wrench_frame: None,
        })
    }

    fn runtime(&self) -> &GroupLoop {
        self.node.group()
    }

    fn runtime_mut(&mut self) -> &mut GroupLoop {
        self.node.group_mut()
    }

    fn on_joint_state<T: Transport>(&mut self, transport: &mut T, msg: &JointState) {
        if self.node.on_joint_state(transport, 0, msg).is_some() {
            self.after_step(transport);
        }
    }

    fn on_tick<T: Transport>(&mut self, transport: &mut T) {
        if self.node.on_tick(transport).is_some() {
            self.after_step(transport);
        }
    }

    /// Ends a running goal, then the loop's stop: the last command is the `safe_mode` effort.
    async fn stop<T: Transport>(&mut self, transport: &mut T, signal: &str) {
        let stopping = format!("aborted: the node stops ({signal})");
        self.action
            .end(transport, GoalStatus::Aborted, invalid_goal(&stopping));
        self.node.stop(transport, signal).await;
    }

    fn on_clock<T: Transport>(&mut self, transport: &mut T, t: f64) {
        if self.node.on_clock(t) {
            let text = "simulated time went back (a reset): trajectory cancelled, waiting for joint states";
            transport.log(LogLevel::Warn, text);
            let why = invalid_goal("aborted: simulated time went back (a reset)");
            self.action.end(transport, GoalStatus::Aborted, why);
        }
    }

    /// After a step that sent a command, from its output: the action's checks and feedback
    /// (an aborted goal's trajectory then goes), and the state when due.
    fn after_step<T: Transport>(&mut self, transport: &mut T) {
        let rate = self.node.group().settings().live.action_monitor_rate;
        let out = self.node.group().output();
        let moment = (out.now, out.stamp);
        let aborted = self.action.is_active()
            && self
                .action
                .after_step(transport, &out.arms[0], moment, rate);
        if aborted {
            self.node.group_mut().cancel_trajectory();
        }
        // (A clock that went backwards, a restarted simulation, publishes at once.)
        let out = self.node.group().output();
        if out.state_due {
            self.messages.publish(transport, out);
        }
    }

    fn on_reference<T: Transport>(
        &mut self,
        transport: &mut T,
        msg: &crate::msgs::JointTrajectory,
    ) {
        let now = self.node.group().now();
        let start = trajectory_start(msg, now, self.node.group().timing().clock());
        let read = || trajectory_points(msg);
        let count = msg.points.len();
        match self
            .runtime_mut()
            .take_trajectory(&msg.joint_names, count, read, start, now)
        {
            Ok(taken) => {
                transport.log(LogLevel::Info, &taken.to_string());
                self.end_goal_for_reference(transport);
            }
            Err(e) => transport.log(LogLevel::Warn, &e.to_string()),
        }
    }

    /// A trajectory on `~/reference` replaced the action's goal: CANCELED, as a newer goal
    /// would.
    fn end_goal_for_reference<T: Transport>(&mut self, transport: &mut T) {
        let why = invalid_goal("cancelled: a trajectory on ~/reference replaced it");
        self.action.end(transport, GoalStatus::Canceled, why);
    }

    fn on_action<T: Transport>(&mut self, transport: &mut T, id: u64, request: ActionRequest) {
        let settings = self.runtime().settings().live.clone();
        let clock = self.node.group().timing().clock().clone();
        let core = self.node.group_mut().core_mut();
        match request {
            ActionRequest::SendGoal(goal_id, goal) => {
                let goal = (goal_id, goal.as_ref());
                self.action
                    .on_goal(transport, id, goal, core, &settings, &clock);
            }
            ActionRequest::Cancel(which) => self.action.on_cancel(transport, id, which, core),
            ActionRequest::GetResult(goal_id) => self.action.on_get_result(transport, id, goal_id),
        }
    }

    fn on_target_pose<T: Transport>(&mut self, transport: &mut T, msg: &PoseStamped) {
        let seconds = self.target_duration;
        let result = msg.pose.to_isometry().and_then(|pose| {
            self.runtime_mut()
                .take_target_pose(&msg.header.frame_id, pose, seconds)
        });
        if let Err(e) = result {
            transport.log(LogLevel::Warn, &format!("target pose rejected: {e}"));
        }
    }

    /// A measured wrench, moved to the tip in base link axes from its frame; only task-space
    /// laws take it. One in a frame that cannot be placed is refused, said once per frame.
    fn on_wrench<T: Transport>(&mut self, transport: &mut T, msg: &WrenchStamped) {
        let (f, t) = (msg.wrench.force, msg.wrench.torque);
        let frame = msg.header.frame_id.as_str();
        match self
            .runtime_mut()
            .take_external_wrench(frame, [f.x, f.y, f.z, t.x, t.y, t.z])
        {
            Ok(true) => self.refused_wrench_frame = None,
            Ok(false) => {}
            Err(e) if self.refused_wrench_frame.as_deref() != Some(frame) => {
                transport.log(LogLevel::Warn, &format!("external wrench refused: {e}"));
                self.refused_wrench_frame = Some(frame.to_string());
            }
            Err(_) => {}
        }
    }
}

impl NodeLogic for ControllerNode {
    fn spec(&self) -> &NodeSpec {
        &self.spec
    }

    async fn run<T: Transport + Send>(mut self, transport: &mut T) -> Result<(), RosError> {
        let law = self.runtime().law_name();
        let joints = self.runtime().core().joints().join(", ");
        let controlling = format!("controlling {joints} with {law}");
        self.node.announce(transport, &controlling);
        while let Some(incoming) = transport.next().await {
            match incoming {
                Incoming::JointStates(msg) => self.on_joint_state(transport, &msg),
                Incoming::Tick => self.on_tick(transport),
                Incoming::Shutdown(signal) => {
                    self.stop(transport, signal).await;
                    return Ok(());
                }
                Incoming::Clock(msg) => self.on_clock(transport, msg.clock.seconds()),
                Incoming::Reference(msg) => self.on_reference(transport, &msg),
                Incoming::TargetPose(msg) => self.on_target_pose(transport, &msg),
                Incoming::ExternalWrench(msg) => self.on_wrench(transport, &msg),
                Incoming::ParameterRequest(id, request) => {
                    self.node.on_parameter_request(transport, id, &request)
                }
                Incoming::Action(id, request) => self.on_action(transport, id, request),
                Incoming::Commands(_)
                | Incoming::State(_)
                | Incoming::Rosout(_)
                | Incoming::Diagnostics(_)
                | Incoming::ControllerState(_)
                | Incoming::ControllerStateHumble(_)
                | Incoming::ExternalTorques(_)
                | Incoming::ExternalTorqueBounds(_)
                | Incoming::ExternalWrenchEstimate(_) => {}
            }
        }
        Ok(())
    }
}

/// A result with INVALID_GOAL: how joint_trajectory_controller ends a goal it did not finish.
fn invalid_goal(reason: &str) -> ActionResult {
    ActionResult {
        error_code: ActionResult::INVALID_GOAL,
        error_string: reason.to_string(),
    }
}
