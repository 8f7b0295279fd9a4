//! What a node of one arm adds to the loop: references on `~/reference`
//! (trajectory_msgs/JointTrajectory), `~/target_pose` (geometry_msgs/PoseStamped) and
//! `~/external_wrench` (geometry_msgs/WrenchStamped), `~/follow_joint_trajectory`, and
//! `~/state` for plotting: a std_msgs/Float64MultiArray with labelled blocks `time`,
//! `holding`, `reference`, `position`, `velocity`, `error`, `effort`, `estimates`,
//! `saturated` (efforts clipped at their limits since the start, counted per joint and step),
//! with `~/controller_state` and the external torques and wrench beside it.

use armctl_runtime::group_loop::GroupLoop;
use armctl_runtime::loop_timing::LoopTiming;
use armctl_runtime::names::resolve;
use armctl_runtime::startup::NodeStart;

use crate::follow_joint_trajectory::{ActionRequest, ActionResult, GoalStatus};
use crate::msgs::{JointTrajectory, PoseStamped, WrenchStamped};
use crate::nodes::arm_state_messages::ArmStateMessages;
use crate::nodes::trajectory_action::{trajectory_points, trajectory_start, TrajectoryAction};
use crate::transport::{Incoming, LogLevel, NodeSpec, Topic, Transport};

/// Seconds a pose target is reached in.
const TARGET_SECONDS: f64 = 1.0;

/// One arm's topics and action beside the loop.
pub(super) struct OneArm {
    /// `~/state`, `~/controller_state` and the external torques and wrench.
    messages: ArmStateMessages,
    /// The frame of the last wrench refused (said once per frame, not per message).
    refused_wrench_frame: Option<String>,
    /// `~/follow_joint_trajectory`.
    action: TrajectoryAction,
}

impl OneArm {
    /// The topics of the node `start` names over `group`.
    pub(super) fn new(group: &mut GroupLoop, start: &NodeStart) -> (Self, NodeSpec) {
        let settings = group.settings().clone();
        let resolve_name = |name: &str| resolve(name, &start.namespace, &start.name, &start.remaps);
        let mut subscriptions = vec![
            (Topic::JointStates, resolve_name("joint_states")),
            (Topic::Reference, resolve_name("~/reference")),
            (Topic::TargetPose, resolve_name("~/target_pose")),
            (Topic::ExternalWrench, resolve_name("~/external_wrench")),
        ];
        if settings.robot.use_sim_time {
            subscriptions.push((Topic::Clock, resolve_name("/clock")));
        }
        let mut publications = vec![
            (Topic::Commands, resolve_name(&settings.command_topic())),
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
        let messages = ArmStateMessages::new(group, &settings.controller_state_layout);
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
                settings.update_rate,
                settings.live.state_timeout,
            )),
            parameters: group.parameters().clone(),
        };
        let one = Self {
            messages,
            action: TrajectoryAction::new(group.core().joints()),
            refused_wrench_frame: None,
        };
        (one, spec)
    }

    /// After a step that sent a command, from its output: the action's checks and feedback
    /// (an aborted goal's trajectory then goes), and the state when due.
    pub(super) fn after_step<T: Transport>(&mut self, transport: &mut T, group: &mut GroupLoop) {
        let rate = group.settings().live.action_monitor_rate;
        let out = group.output();
        let moment = (out.now, out.stamp);
        let aborted = self.action.is_active()
            && self
                .action
                .after_step(transport, &out.arms[0], moment, rate);
        if aborted {
            group.cancel_trajectory();
        }
        // (A clock that went backwards, a restarted simulation, publishes at once.)
        let out = group.output();
        if out.state_due {
            self.messages.publish(transport, out);
        }
    }

    /// Simulated time went back: the trajectory is gone, and so is the goal.
    pub(super) fn on_reset<T: Transport>(&mut self, transport: &mut T) {
        let text =
            "simulated time went back (a reset): trajectory cancelled, waiting for joint states";
        transport.log(LogLevel::Warn, text);
        let why = invalid_goal("aborted: simulated time went back (a reset)");
        self.action.end(transport, GoalStatus::Aborted, why);
    }

    /// The node stops: a running goal is aborted.
    pub(super) fn on_stop<T: Transport>(&mut self, transport: &mut T, signal: &str) {
        let stopping = format!("aborted: the node stops ({signal})");
        self.action
            .end(transport, GoalStatus::Aborted, invalid_goal(&stopping));
    }

    /// A reference, a target, a wrench or an action request.
    pub(super) fn on_message<T: Transport>(
        &mut self,
        transport: &mut T,
        group: &mut GroupLoop,
        incoming: crate::transport::Incoming,
    ) {
        match incoming {
            Incoming::Reference(msg) => self.on_reference(transport, group, &msg),
            Incoming::TargetPose(msg) => on_target_pose(transport, group, &msg),
            Incoming::ExternalWrench(msg) => self.on_wrench(transport, group, &msg),
            Incoming::Action(id, request) => self.on_action(transport, group, id, request),
            _ => {}
        }
    }

    fn on_reference<T: Transport>(
        &mut self,
        transport: &mut T,
        group: &mut GroupLoop,
        msg: &JointTrajectory,
    ) {
        let now = group.now();
        let start = trajectory_start(msg, now, group.timing().clock());
        let read = || trajectory_points(msg);
        let count = msg.points.len();
        match group.take_trajectory(&msg.joint_names, count, read, start, now) {
            Ok(taken) => {
                transport.log(LogLevel::Info, &taken.to_string());
                // The action's goal is replaced: CANCELED, as a newer goal would.
                let why = invalid_goal("cancelled: a trajectory on ~/reference replaced it");
                self.action.end(transport, GoalStatus::Canceled, why);
            }
            Err(e) => transport.log(LogLevel::Warn, &e.to_string()),
        }
    }

    fn on_action<T: Transport>(
        &mut self,
        transport: &mut T,
        group: &mut GroupLoop,
        id: u64,
        request: ActionRequest,
    ) {
        let settings = group.settings().live.clone();
        let clock = group.timing().clock().clone();
        let law = group.law_name();
        let task_law = group.task_space().is_some().then_some(law);
        let core = group.core_mut();
        match request {
            ActionRequest::SendGoal(goal_id, goal) => {
                let goal = (goal_id, goal.as_ref());
                let arm = (core, task_law);
                self.action
                    .on_goal(transport, id, goal, arm, &settings, &clock);
            }
            ActionRequest::Cancel(which) => self.action.on_cancel(transport, id, which, core),
            ActionRequest::GetResult(goal_id) => self.action.on_get_result(transport, id, goal_id),
        }
    }

    /// A measured wrench, moved to the tip in base link axes from its frame; only task-space
    /// laws take it. One in a frame that cannot be placed is refused, said once per frame.
    fn on_wrench<T: Transport>(
        &mut self,
        transport: &mut T,
        group: &mut GroupLoop,
        msg: &WrenchStamped,
    ) {
        let (f, t) = (msg.wrench.force, msg.wrench.torque);
        let frame = msg.header.frame_id.as_str();
        match group.take_external_wrench(frame, [f.x, f.y, f.z, t.x, t.y, t.z]) {
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

/// A pose target, reached in [`TARGET_SECONDS`]; only task-space laws take one.
fn on_target_pose<T: Transport>(transport: &mut T, group: &mut GroupLoop, msg: &PoseStamped) {
    let result = msg
        .pose
        .to_isometry()
        .and_then(|pose| group.take_target_pose(&msg.header.frame_id, pose, TARGET_SECONDS));
    if let Err(e) = result {
        transport.log(LogLevel::Warn, &format!("target pose rejected: {e}"));
    }
}

/// A result with INVALID_GOAL: how joint_trajectory_controller ends a goal it did not finish.
fn invalid_goal(reason: &str) -> ActionResult {
    ActionResult {
        error_code: ActionResult::INVALID_GOAL,
        error_string: reason.to_string(),
    }
}
