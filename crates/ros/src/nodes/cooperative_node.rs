//! controller_node with `controller: cooperative`: one node controls two arms holding one
//! object ([`armctl_runtime::group_loop`]). `scene_file` names the arms and places their
//! bases; each arm's states come on `<arm>/joint_states` and its efforts go to
//! `<arm>/<command_topic>` (names relative to the node's namespace); the object moves to the
//! poses on `~/object_target` (geometry_msgs/PoseStamped, frame `world` or empty, reached in
//! 1 s from the target in effect, or as `max_object_speed` and `max_object_turn_rate` allow),
//! and `~/state` (at `state_publish_rate`) has the labelled blocks `time`, `holding` (1 while
//! either arm holds), `object_reference`, `object_position` (x y z, world), `effort` (both
//! arms', in command order) and `saturated` (efforts clipped at their limits since the start).
//! An arm that never sent a state is never commanded.
//!
//! With `update_rate` 0 a step runs once both arms' states came since the last step; otherwise
//! a timer runs it on the newest states.

use armctl_runtime::group_loop::GroupLoop;
use armctl_runtime::inputs::object_target_in_world;
use armctl_runtime::loop_timing::LoopTiming;
use armctl_runtime::names::resolve;
use armctl_runtime::startup::NodeStart;
use nalgebra::IsometryMatrix3;

use crate::msgs::{labelled_array, Float64MultiArray, JointState, PoseStamped};
use crate::nodes::loop_node::LoopNode;
use crate::transport::{Incoming, LogLevel, NodeLogic, NodeSpec, Outgoing, Topic, Transport};
use crate::RosError;

/// Subscription slots: each arm's joint states, then the object target.
const TARGET_SLOT: usize = 2;
/// Publication slot of `~/state` (0 and 1: the arms' commands).
const STATE_SLOT: usize = 2;
/// Seconds a target pose is reached in (as controller_node's `~/target_pose`).
const TARGET_SECONDS: f64 = 1.0;

/// A configured two-arm node, ready to run on a transport.
pub struct CooperativeNode {
    spec: NodeSpec,
    /// The pair in the loop, with what the node publishes of it.
    node: LoopNode,
    state: Float64MultiArray,
    both_efforts: Vec<f64>,
}

impl std::fmt::Debug for CooperativeNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CooperativeNode")
            .field("name", &self.spec.name)
            .field("pair", self.pair())
            .finish()
    }
}

fn parameter_error(name: &str, reason: String) -> RosError {
    armctl_runtime::RuntimeError::Parameter {
        name: name.into(),
        reason,
    }
    .into()
}

impl CooperativeNode {
    /// Configures the node from its start values (`controller: cooperative`).
    pub fn from_start(start: &NodeStart) -> Result<Self, RosError> {
        let pair = GroupLoop::pair(start)?;
        let settings = pair.settings().clone();
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
        let use_sim_time = settings.robot.use_sim_time;
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
        if use_sim_time {
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
        let update_rate = settings.update_rate;
        let n = pair.core().joints().len();
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
                update_rate,
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
        Ok(Self {
            spec,
            node: LoopNode::new(pair, start),
            state: Float64MultiArray::default(),
            both_efforts: vec![0.0; 2 * n],
        })
    }

    fn pair(&self) -> &GroupLoop {
        self.node.group()
    }

    fn on_joint_state<T: Transport>(&mut self, transport: &mut T, msg: &JointState) {
        let arm = transport.received_on().min(1);
        if self.node.on_joint_state(transport, arm, msg).is_some() {
            self.publish_state(transport);
        }
    }

    fn on_tick<T: Transport>(&mut self, transport: &mut T) {
        if self.node.on_tick(transport).is_some() {
            self.publish_state(transport);
        }
    }

    /// `~/state` of the last step, when due, from its output.
    fn publish_state<T: Transport>(&mut self, transport: &mut T) {
        let out = self.node.group().output();
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

    fn on_object_target<T: Transport>(&mut self, transport: &mut T, msg: &PoseStamped) {
        let result = object_goal(msg).and_then(|goal| {
            self.node
                .group_mut()
                .take_object_target(goal, TARGET_SECONDS)
        });
        match result {
            Ok(seconds) => transport.log(
                LogLevel::Info,
                &format!("new object target, reached in {seconds:.3} s"),
            ),
            Err(e) => transport.log(LogLevel::Warn, &format!("object target rejected: {e}")),
        }
    }

    fn on_clock<T: Transport>(&mut self, transport: &mut T, t: f64) {
        if self.node.on_clock(t) {
            let text = "simulated time went back (a reset): waiting for both arms' joint states";
            transport.log(LogLevel::Warn, text);
        }
    }
}

/// A world pose from an object target message; another frame is refused, naming it.
fn object_goal(msg: &PoseStamped) -> Result<IsometryMatrix3<f64>, String> {
    object_target_in_world(&msg.header.frame_id, msg.pose.to_isometry())
}

impl NodeLogic for CooperativeNode {
    fn spec(&self) -> &NodeSpec {
        &self.spec
    }

    async fn run<T: Transport + Send>(mut self, transport: &mut T) -> Result<(), RosError> {
        let arms = self.pair().arms().join("' and '");
        let controlling = format!("controlling arms '{arms}' holding one object with cooperative");
        self.node.announce(transport, &controlling);
        while let Some(incoming) = transport.next().await {
            match incoming {
                Incoming::JointStates(msg) => self.on_joint_state(transport, &msg),
                Incoming::Tick => self.on_tick(transport),
                Incoming::Shutdown(signal) => {
                    self.node.stop(transport, signal).await;
                    return Ok(());
                }
                Incoming::Clock(msg) => self.on_clock(transport, msg.clock.seconds()),
                Incoming::TargetPose(msg) if transport.received_on() == TARGET_SLOT => {
                    self.on_object_target(transport, &msg)
                }
                Incoming::ParameterRequest(id, request) => {
                    self.node.on_parameter_request(transport, id, &request)
                }
                _ => {}
            }
        }
        Ok(())
    }
}
