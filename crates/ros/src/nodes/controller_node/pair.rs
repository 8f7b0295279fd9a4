//! What a node of two arms holding one object (`controller: cooperative`) adds to the loop.
//! `scene_file` names the arms and places their bases; each arm's states come on
//! `<arm>/joint_states` and its efforts go to `<arm>/<command_topic>` (names relative to the
//! node's namespace); the object moves to the poses on `~/object_target`
//! (geometry_msgs/PoseStamped, frame `world` or empty, reached in 1 s from the target in
//! effect, or as `max_object_speed` and `max_object_turn_rate` allow), and `~/state` (at
//! `state_publish_rate`) has the labelled blocks `time`, `holding` (1 while either arm holds),
//! `object_reference`, `object_position` (x y z, world), `effort` (both arms', in command
//! order) and `saturated` (efforts clipped at their limits since the start). An arm that
//! never sent a state is never commanded.

use armctl_runtime::group_loop::{GroupLoop, StepOutput};
use armctl_runtime::inputs::object_target_in_world;
use armctl_runtime::loop_timing::LoopTiming;
use armctl_runtime::names::resolve;
use armctl_runtime::startup::NodeStart;
use nalgebra::IsometryMatrix3;

use crate::msgs::{labelled_array, Float64MultiArray, PoseStamped};
use crate::transport::{Incoming, LogLevel, NodeSpec, Outgoing, Topic, Transport};
use crate::RosError;

/// Subscription slots: each arm's joint states, then the object target.
const TARGET_SLOT: usize = 2;
/// Publication slot of `~/state` (0 and 1: the arms' commands).
const STATE_SLOT: usize = 2;
/// Seconds a target pose is reached in (as one arm's `~/target_pose`).
const TARGET_SECONDS: f64 = 1.0;

/// A pair's topics beside the loop.
pub(super) struct Pair {
    state: Float64MultiArray,
    both_efforts: Vec<f64>,
}

fn parameter_error(name: &str, reason: String) -> RosError {
    armctl_runtime::RuntimeError::Parameter {
        name: name.into(),
        reason,
    }
    .into()
}

impl Pair {
    /// The topics of the node `start` names over `pair`; refused when the arms' topics would
    /// be one.
    pub(super) fn new(pair: &GroupLoop, start: &NodeStart) -> Result<(Self, NodeSpec), RosError> {
        let settings = pair.settings();
        let resolve_name = |name: &str| resolve(name, &start.namespace, &start.name, &start.remaps);
        let command_topic = settings.command_topic();
        if command_topic.starts_with('/') || command_topic.starts_with('~') {
            return Err(parameter_error(
                "command_topic",
                format!("'{command_topic}' must be relative: each arm's efforts go to <arm>/<command_topic>"),
            ));
        }
        let [left, right] = match pair.arms() {
            [left, right] => [left.clone(), right.clone()],
            _ => return Err(parameter_error("scene_file", "a pair has two arms".into())),
        };
        let mut subscriptions = vec![
            (
                Topic::JointStates,
                resolve_name(&format!("{left}/joint_states")),
            ),
            (
                Topic::JointStates,
                resolve_name(&format!("{right}/joint_states")),
            ),
            (Topic::TargetPose, resolve_name("~/object_target")),
        ];
        if settings.robot.use_sim_time {
            subscriptions.push((Topic::Clock, resolve_name("/clock")));
        }
        if subscriptions[0].1 == subscriptions[1].1 {
            return Err(parameter_error(
                "scene_file",
                format!(
                    "arms '{left}' and '{right}' would both take {}: give them topics of their own",
                    subscriptions[0].1
                ),
            ));
        }
        let spec = NodeSpec {
            action: None,
            name: start.name.clone(),
            namespace: start.namespace.clone(),
            subscriptions,
            publications: vec![
                (
                    Topic::Commands,
                    resolve_name(&format!("{left}/{command_topic}")),
                ),
                (
                    Topic::Commands,
                    resolve_name(&format!("{right}/{command_topic}")),
                ),
                (Topic::State, resolve_name("~/state")),
                (Topic::Diagnostics, resolve_name("/diagnostics")),
            ],
            tick_rate: Some(LoopTiming::tick_rate(
                settings.update_rate,
                settings.live.state_timeout,
            )),
            parameters: pair.parameters().clone(),
        };
        if spec.publications[0].1 == spec.publications[1].1 {
            return Err(parameter_error(
                "command_topic",
                format!(
                    "arms '{left}' and '{right}' would both be commanded on {}",
                    spec.publications[0].1
                ),
            ));
        }
        let n = pair.core().joints().len();
        let face = Self {
            state: Float64MultiArray::default(),
            both_efforts: vec![0.0; 2 * n],
        };
        Ok((face, spec))
    }

    /// `~/state` of the last step, when due, from its output.
    pub(super) fn publish_state<T: Transport>(&mut self, transport: &mut T, out: &StepOutput) {
        let (true, Some(object)) = (out.state_due, out.object) else {
            return;
        };
        let holding = [f64::from(u8::from(out.holding()))];
        let n = self.both_efforts.len() / 2;
        for (a, arm) in out.arms.iter().enumerate() {
            self.both_efforts[a * n..(a + 1) * n].copy_from_slice(&arm.command);
        }
        labelled_array(
            &[
                ("time", &[out.now]),
                ("holding", &holding),
                ("object_reference", &object.reference),
                ("object_position", &object.position),
                ("effort", &self.both_efforts),
                ("saturated", &[out.saturated as f64]),
            ],
            &mut self.state,
        );
        transport.publish_on(STATE_SLOT, Outgoing::State(&self.state));
    }

    /// An object target (the only message a pair takes besides the loop's).
    pub(super) fn on_message<T: Transport>(
        &mut self,
        transport: &mut T,
        pair: &mut GroupLoop,
        incoming: Incoming,
    ) {
        let Incoming::TargetPose(msg) = incoming else {
            return;
        };
        if transport.received_on() != TARGET_SLOT {
            return;
        }
        let result =
            object_goal(&msg).and_then(|goal| pair.take_object_target(goal, TARGET_SECONDS));
        match result {
            Ok(seconds) => transport.log(
                LogLevel::Info,
                &format!("new object target, reached in {seconds:.3} s"),
            ),
            Err(e) => transport.log(LogLevel::Warn, &format!("object target rejected: {e}")),
        }
    }
}

/// A world pose from an object target message; another frame is refused, naming it.
fn object_goal(msg: &PoseStamped) -> Result<IsometryMatrix3<f64>, String> {
    object_target_in_world(&msg.header.frame_id, msg.pose.to_isometry())
}
