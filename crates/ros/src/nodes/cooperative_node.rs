//! controller_node with `controller: cooperative`: one node controls two arms holding one
//! object ([`armctl_runtime::pair_runtime`]). `scene_file` names the arms and places their
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

use armctl_runtime::arm_loop::ArmLoop;
use armctl_runtime::controller_runtime::COOPERATIVE;
use armctl_runtime::loop_timing::LoopTiming;
use armctl_runtime::names::resolve;
use armctl_runtime::node_clock::NodeClock;
use armctl_runtime::node_parameters::shown;
use armctl_runtime::pair_runtime::PairRuntime;
use armctl_runtime::startup::NodeStart;
use nalgebra::IsometryMatrix3;

use crate::msgs::{labelled_array, Float64MultiArray, JointState, PoseStamped};
use crate::nodes::loop_diagnostics::{LoopDiagnostics, LoopState};
use crate::parameter_services::{answer_request, ParameterRequest};
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
    /// The pair in the loop that paces it on the node's clock.
    arm_loop: ArmLoop<PairRuntime>,
    commands: [Float64MultiArray; 2],
    state: Float64MultiArray,
    both_efforts: Vec<f64>,
    diagnostics: LoopDiagnostics,
}

impl std::fmt::Debug for CooperativeNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CooperativeNode")
            .field("name", &self.spec.name)
            .field("pair", self.arm_loop.group())
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
        let pair = PairRuntime::new(start)?;
        let settings = pair.settings().clone();
        let resolve_name = |name: &str| resolve(name, &start.namespace, &start.name, &start.remaps);
        let command_topic = settings.command_topic();
        if command_topic.starts_with('/') || command_topic.starts_with('~') {
            return Err(parameter_error(
                "command_topic",
                format!("'{command_topic}' must be relative: each arm's efforts go to <arm>/<command_topic>"),
            ));
        }
        let [left, right] = pair.arms().clone();
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
        let n = pair.core(0).joints().len();
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
            parameters: pair.parameters(),
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
        let command = Float64MultiArray {
            data: vec![0.0; n],
            ..Float64MultiArray::default()
        };
        let node = match start.namespace.as_str() {
            "/" => format!("/{}", start.name),
            ns => format!("{ns}/{}", start.name),
        };
        let robot = pair.core(0).robot().name().to_string();
        let timing = LoopTiming::new(
            NodeClock::new(use_sim_time),
            update_rate,
            settings.live.state_publish_rate,
        );
        Ok(Self {
            diagnostics: LoopDiagnostics::new(&node, &robot, update_rate),
            spec,
            arm_loop: ArmLoop::new(pair, timing),
            commands: [command.clone(), command],
            state: Float64MultiArray::default(),
            both_efforts: vec![0.0; 2 * n],
        })
    }

    fn pair(&self) -> &PairRuntime {
        self.arm_loop.group()
    }

    fn on_joint_state<T: Transport>(&mut self, transport: &mut T, msg: &JointState) {
        let arm = transport.received_on().min(1);
        let stamp = msg.header.stamp.seconds();
        let (q, qd) = (&msg.position, &msg.velocity);
        if let Some(now) = self.arm_loop.on_joint_state(arm, &msg.name, q, qd, stamp) {
            self.after_step(transport, now);
        }
    }

    /// The timer: the loop's timed step or watchdog, and the diagnostics when due.
    fn on_tick<T: Transport>(&mut self, transport: &mut T) {
        let ticked = self.arm_loop.on_tick();
        if ticked.stepped {
            self.after_step(transport, ticked.now);
        }
        if self.diagnostics.due() {
            let saturated = self.arm_loop.saturated();
            let report = self
                .diagnostics
                .report(self.loop_state(), ticked.now, saturated);
            transport.publish(Outgoing::Diagnostics(report));
        }
    }

    /// The pair for the diagnostics: the first arm's reason to hold, the older arm's state.
    fn loop_state(&self) -> LoopState<'static> {
        let cores = [self.pair().core(0), self.pair().core(1)];
        let times = cores.map(|c| c.state_time());
        LoopState {
            law: COOPERATIVE,
            fault: cores.iter().find_map(|c| c.fault().cloned()),
            state_time: times[0].zip(times[1]).map(|(a, b)| a.min(b)),
        }
    }

    /// Publishes what the loop's step of both arms at `now` gave: the events, each commanded
    /// arm's command (an arm that never sent a state is sent nothing, as controller_node
    /// publishes nothing before its first state), and the state when due.
    fn after_step<T: Transport>(&mut self, transport: &mut T, now: f64) {
        self.tell(transport);
        if !self.arm_loop.sent_any() {
            return;
        }
        self.diagnostics.on_step();
        for a in 0..2 {
            if let Some(command) = self.arm_loop.sent(a) {
                self.commands[a].data.copy_from_slice(command);
                transport.publish_on(a, Outgoing::Commands(&self.commands[a]));
            }
        }
        if self.arm_loop.state_due(now) {
            self.publish_state(transport, now);
        }
    }

    /// Logs each arm's events (holding and why, resumed) and what the step did to the
    /// object's move.
    fn tell<T: Transport>(&mut self, transport: &mut T) {
        if let Some(notice) = self.arm_loop.take_notice() {
            transport.log(LogLevel::Warn, &notice);
        }
        for (arm, report) in self.pair().arms().iter().zip(self.arm_loop.reports()) {
            if let Some(event) = &report.event {
                let level = if event.is_warning() {
                    LogLevel::Warn
                } else {
                    LogLevel::Info
                };
                transport.log(level, &format!("arm '{arm}': {event}"));
            }
        }
    }

    fn publish_state<T: Transport>(&mut self, transport: &mut T, now: f64) {
        let holding = [f64::from(u8::from(self.arm_loop.holding()))];
        let law = self.arm_loop.group().law();
        let reference = law.desired().pose.translation.vector;
        let object = law.object().pose.translation.vector;
        let n = self.commands[0].data.len();
        for a in 0..2 {
            self.both_efforts[a * n..(a + 1) * n].copy_from_slice(&self.commands[a].data);
        }
        labelled_array(
            &[
                ("time", &[now]),
                ("holding", &holding),
                ("object_reference", reference.as_slice()),
                ("object_position", object.as_slice()),
                ("effort", &self.both_efforts),
                ("saturated", &[self.arm_loop.saturated() as f64]),
            ],
            &mut self.state,
        );
        transport.publish_on(STATE_SLOT, Outgoing::State(&self.state));
    }

    fn on_object_target<T: Transport>(&mut self, transport: &mut T, msg: &PoseStamped) {
        let result = object_goal(msg).and_then(|goal| {
            self.arm_loop
                .group_mut()
                .law_mut()
                .set_object_target(goal, TARGET_SECONDS)
                .map_err(|e| e.to_string())
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
        if self.arm_loop.on_clock(t) {
            let text = "simulated time went back (a reset): waiting for both arms' joint states";
            transport.log(LogLevel::Warn, text);
        }
    }

    /// The last command of both arms: their `safe_mode` efforts.
    async fn stop<T: Transport>(&mut self, transport: &mut T, signal: &str) {
        let stopped = self.arm_loop.stop();
        if stopped.is_empty() {
            transport.log(
                LogLevel::Info,
                &format!(
                    "stopping on {signal}: no command was sent since the start or the last reset"
                ),
            );
            return;
        }
        let mut modes = vec![];
        for (a, mode) in stopped {
            modes.push(mode);
            self.commands[a]
                .data
                .copy_from_slice(self.arm_loop.command(a));
            transport.publish_on(a, Outgoing::Commands(&self.commands[a]));
        }
        transport.log(
            LogLevel::Info,
            &format!(
                "stopping on {signal}: last commands sent are the safe_mode commands ({})",
                modes.join("; ")
            ),
        );
        transport.flush().await;
    }

    fn on_parameter_request<T: Transport>(
        &mut self,
        transport: &mut T,
        id: u64,
        request: &ParameterRequest,
    ) {
        let snapshot = self.pair().parameters();
        let (pair, diagnostics) = (self.arm_loop.group_mut(), &mut self.diagnostics);
        answer_request(transport, id, &snapshot, request, |name, value| {
            let applied = pair.set_parameter(name, value).map(|_| ());
            applied.inspect_err(|_| diagnostics.on_refusal())
        });
        let rate = self.pair().settings().live.state_publish_rate;
        self.arm_loop.set_state_rate(rate);
    }
}

/// A world pose from an object target message; another frame is refused, naming it.
fn object_goal(msg: &PoseStamped) -> Result<IsometryMatrix3<f64>, String> {
    let frame = msg.header.frame_id.as_str();
    if !(frame.is_empty() || frame == "world") {
        return Err(format!(
            "frame '{}' is not the world (object targets are in frame 'world')",
            shown(frame)
        ));
    }
    msg.pose
        .to_isometry()
        .ok_or_else(|| "not finite or zero quaternion".into())
}

impl NodeLogic for CooperativeNode {
    fn spec(&self) -> &NodeSpec {
        &self.spec
    }

    async fn run<T: Transport + Send>(mut self, transport: &mut T) -> Result<(), RosError> {
        let [left, right] = self.pair().arms();
        transport.log(
            LogLevel::Info,
            &format!("controlling arms '{left}' and '{right}' holding one object with cooperative"),
        );
        for warning in self.pair().model_warnings() {
            transport.log(LogLevel::Warn, &format!("robot model: {warning}"));
        }
        while let Some(incoming) = transport.next().await {
            match incoming {
                Incoming::JointStates(msg) => self.on_joint_state(transport, &msg),
                Incoming::Tick => self.on_tick(transport),
                Incoming::Shutdown(signal) => {
                    self.stop(transport, signal).await;
                    return Ok(());
                }
                Incoming::Clock(msg) => self.on_clock(transport, msg.clock.seconds()),
                Incoming::TargetPose(msg) if transport.received_on() == TARGET_SLOT => {
                    self.on_object_target(transport, &msg)
                }
                Incoming::ParameterRequest(id, request) => {
                    self.on_parameter_request(transport, id, &request)
                }
                _ => {}
            }
        }
        Ok(())
    }
}
