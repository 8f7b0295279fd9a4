//! `controller_node`: one arm under a registered law, or two arms holding one object under
//! `cooperative`, in the loop ([`GroupLoop`]). Joint states and timer ticks in, each arm's
//! command out on its publication slot (std_msgs/Float64MultiArray in the order of `joints`,
//! for ros2_control's JointGroupEffortController), the loop's events on /rosout,
//! `/diagnostics`, the parameter services (answered by the loop) and the safe stop. What one
//! arm adds (references, targets, wrenches, the action, its `~/state`) is in `one_arm.rs`,
//! what a pair adds (the object target, its `~/state`) in `pair.rs`.
//!
//! With `update_rate` 0 one command answers each joint state (a pair: once both arms' states
//! came); otherwise a timer runs the loop on the newest states. The node task owns the loop:
//! no lock in it.

mod one_arm;
mod pair;

use armctl_runtime::configure::COOPERATIVE;
use armctl_runtime::controller_core::CoreEvent;
use armctl_runtime::group_loop::{GroupLoop, StepOutput};
use armctl_runtime::loop_timing::LoopTiming;
use armctl_runtime::node_clock::NodeClock;
use armctl_runtime::ros_args::RosArgs;
use armctl_runtime::startup::NodeStart;

use crate::msgs::{Float64MultiArray, JointState};
use crate::nodes::loop_diagnostics::{LoopDiagnostics, LoopState};
use crate::parameter_services::ParameterRequest;
use crate::transport::{Incoming, LogLevel, NodeLogic, NodeSpec, Outgoing, Transport};
use crate::RosError;
use one_arm::OneArm;
use pair::Pair;

/// A configured controller node, ready to run on a transport.
pub struct ControllerNode {
    spec: NodeSpec,
    /// The arms in the loop.
    group: GroupLoop,
    diagnostics: LoopDiagnostics,
    /// Each arm's command message (arm `a` publishes on slot `a`).
    commands: Vec<Float64MultiArray>,
    /// What the node adds for one arm or for a pair.
    face: Face,
}

/// The topics and state a node has besides the loop's.
enum Face {
    One(Box<OneArm>),
    Pair(Pair),
}

impl std::fmt::Debug for ControllerNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerNode")
            .field("name", &self.spec.name)
            .field("group", &self.group)
            .finish()
    }
}

impl ControllerNode {
    /// Configures the node from the command line (parameter files, overrides, remaps).
    pub fn new(args: &RosArgs) -> Result<Self, RosError> {
        Self::from_start(&NodeStart::new(args, "controller_node")?)
    }

    /// Configures the node from its start values: `controller: cooperative` makes a node of
    /// two arms, any other law one of one arm.
    pub fn from_start(start: &NodeStart) -> Result<Self, RosError> {
        if start.controller() != Some(COOPERATIVE) {
            return Self::one_arm(start);
        }
        let group = GroupLoop::pair(start)?;
        let (pair, spec) = Pair::new(&group, start)?;
        Ok(Self::of_group(group, Face::Pair(pair), spec, start))
    }

    /// A node of one arm only, for a runner that drives one arm (the demo, the latency
    /// check): `controller: cooperative` is refused, as for any lone arm.
    pub fn one_arm(start: &NodeStart) -> Result<Self, RosError> {
        let mut group = GroupLoop::lone(start)?;
        let (one, spec) = OneArm::new(&mut group, start);
        Ok(Self::of_group(group, Face::One(Box::new(one)), spec, start))
    }

    /// `group` paced as its settings say (`update_rate`, `use_sim_time`,
    /// `state_publish_rate`).
    fn of_group(group: GroupLoop, face: Face, spec: NodeSpec, start: &NodeStart) -> Self {
        let settings = group.settings();
        let update_rate = settings.update_rate;
        let timing = LoopTiming::new(
            NodeClock::new(settings.robot.use_sim_time),
            update_rate,
            settings.live.state_publish_rate,
        );
        let node = match start.namespace.as_str() {
            "/" => format!("/{}", start.name),
            ns => format!("{ns}/{}", start.name),
        };
        let robot = group.core().robot().name().to_string();
        let command = Float64MultiArray {
            data: vec![0.0; group.core().joints().len()],
            ..Float64MultiArray::default()
        };
        Self {
            spec,
            commands: vec![command; group.arm_count()],
            diagnostics: LoopDiagnostics::new(&node, &robot, update_rate),
            group: group.paced(timing),
            face,
        }
    }

    /// Says at start what the node controls with, and what configuring noticed.
    fn announce<T: Transport>(&self, transport: &mut T) {
        let group = &self.group;
        let controlling = match &self.face {
            Face::One(_) => {
                let joints = group.core().joints().join(", ");
                format!("controlling {joints} with {}", group.law_name())
            }
            Face::Pair(_) => {
                let arms = group.arms().join("' and '");
                format!("controlling arms '{arms}' holding one object with cooperative")
            }
        };
        transport.log(LogLevel::Info, &controlling);
        for warning in group.configuration().model_warnings() {
            transport.log(LogLevel::Warn, &format!("robot model: {warning}"));
        }
        for warning in group.law_warnings() {
            transport.log(LogLevel::Warn, &format!("controller: {warning}"));
        }
        for warning in group.settings().warnings() {
            transport.log(LogLevel::Warn, &format!("parameters: {warning}"));
        }
    }

    /// A joint state (a pair's arm by the subscription it came on): the step it makes is
    /// published.
    fn on_joint_state<T: Transport>(&mut self, transport: &mut T, msg: &JointState) {
        let arm = match self.face {
            Face::One(_) => 0,
            Face::Pair(_) => transport.received_on().min(1),
        };
        let stamp = msg.header.stamp.seconds();
        let (q, qd) = (&msg.position, &msg.velocity);
        if self
            .group
            .on_joint_state(arm, &msg.name, q, qd, stamp)
            .is_some()
            && self.publish_step(transport)
        {
            self.after_step(transport);
        }
    }

    /// The timer: the loop's timed step or watchdog, and the diagnostics when due.
    fn on_tick<T: Transport>(&mut self, transport: &mut T) {
        let ticked = self.group.on_tick();
        // The command first: the diagnostics wait.
        let published = ticked.stepped && self.publish_step(transport);
        if self.diagnostics.due() {
            let state = self.loop_state();
            let out = self.group.output();
            let counts = (out.saturated, out.joint_limited);
            let report = self.diagnostics.report(state, ticked.now, counts);
            transport.publish(Outgoing::Diagnostics(report));
        }
        if published {
            self.after_step(transport);
        }
    }

    /// For the diagnostics: the first holding arm's reason, the oldest arm's newest state.
    fn loop_state(&self) -> LoopState<'static> {
        let group = &self.group;
        let cores = (0..group.arm_count()).map(|a| group.arm(a));
        let times: Option<Vec<f64>> = cores.clone().map(|c| c.state_time()).collect();
        LoopState {
            law: group.law_name(),
            fault: cores.clone().find_map(|c| c.fault().cloned()),
            state_time: times.map(|t| t.into_iter().fold(f64::INFINITY, f64::min)),
        }
    }

    /// Logs the step's events and publishes each commanded arm's command, from the step's
    /// output alone; `false` when it commanded none (no state yet: nothing to compute from, so
    /// nothing rather than a guess).
    fn publish_step<T: Transport>(&mut self, transport: &mut T) -> bool {
        let out = self.group.output();
        tell(transport, out, self.group.arms());
        if !out.sent_any() {
            return false;
        }
        self.diagnostics.on_step();
        for (a, message) in self.commands.iter_mut().enumerate() {
            if let Some(command) = out.sent(a) {
                message.data.copy_from_slice(command);
                transport.publish_on(a, Outgoing::Commands(message));
            }
        }
        true
    }

    /// After a step that sent commands, from its output: the face's state and checks.
    fn after_step<T: Transport>(&mut self, transport: &mut T) {
        match &mut self.face {
            Face::One(one) => one.after_step(transport, &mut self.group),
            Face::Pair(pair) => pair.publish_state(transport, self.group.output()),
        }
    }

    /// A `/clock` tick: when time went back, every arm starts over.
    fn on_clock<T: Transport>(&mut self, transport: &mut T, t: f64) {
        if !self.group.on_clock(t) {
            return;
        }
        match &mut self.face {
            Face::One(one) => one.on_reset(transport),
            Face::Pair(_) => {
                let text =
                    "simulated time went back (a reset): waiting for both arms' joint states";
                transport.log(LogLevel::Warn, text);
            }
        }
    }

    /// The last commands: each commanded arm's `safe_mode` effort (gravity compensation at
    /// the last valid configuration, or zero), sent once and given time to leave, since an
    /// effort controller keeps applying the last command it received. A running goal ends
    /// first.
    async fn stop<T: Transport>(&mut self, transport: &mut T, signal: &str) {
        if let Face::One(one) = &mut self.face {
            one.on_stop(transport, signal);
        }
        let stopped = self.group.stop();
        if stopped.is_empty() {
            let text = format!(
                "stopping on {signal}: no command was sent since the start or the last reset"
            );
            transport.log(LogLevel::Info, &text);
            return;
        }
        let mut modes = vec![];
        for (a, mode) in stopped {
            modes.push(mode);
            let command = &self.group.output().arms[a].command;
            self.commands[a].data.copy_from_slice(command);
            transport.publish_on(a, Outgoing::Commands(&self.commands[a]));
        }
        let what = match modes.as_slice() {
            [mode] => format!("last command sent is the safe_mode command ({mode})"),
            _ => format!(
                "last commands sent are the safe_mode commands ({})",
                modes.join("; ")
            ),
        };
        transport.log(LogLevel::Info, &format!("stopping on {signal}: {what}"));
        transport.flush().await;
    }

    /// A parameter request, answered by the loop: the changes logged (a refusal counted),
    /// the response sent, values the changes implied (a gain design's `kp` and `kd`)
    /// announced on `/parameter_events`, and new warnings logged.
    fn on_parameter_request<T: Transport>(
        &mut self,
        transport: &mut T,
        id: u64,
        request: &ParameterRequest,
    ) {
        let answer = self.group.answer_parameters(request);
        for (warning, text) in &answer.said {
            let level = if *warning {
                LogLevel::Warn
            } else {
                LogLevel::Info
            };
            transport.log(level, text);
        }
        for _ in 0..answer.refused {
            self.diagnostics.on_refusal();
        }
        transport.respond(id, answer.response);
        if !answer.implied.is_empty() {
            transport.announce_parameters(&answer.implied);
        }
        for warning in &answer.new_warnings {
            transport.log(LogLevel::Warn, warning);
        }
    }

    /// A message only one arm's node or only a pair's takes.
    fn on_face_message<T: Transport>(&mut self, transport: &mut T, incoming: Incoming) {
        match &mut self.face {
            Face::One(one) => one.on_message(transport, &mut self.group, incoming),
            Face::Pair(pair) => pair.on_message(transport, &mut self.group, incoming),
        }
    }
}

impl NodeLogic for ControllerNode {
    fn spec(&self) -> &NodeSpec {
        &self.spec
    }

    async fn run<T: Transport + Send>(mut self, transport: &mut T) -> Result<(), RosError> {
        self.announce(transport);
        while let Some(incoming) = transport.next().await {
            match incoming {
                Incoming::JointStates(msg) => self.on_joint_state(transport, &msg),
                Incoming::Tick => self.on_tick(transport),
                Incoming::Shutdown(signal) => {
                    self.stop(transport, signal).await;
                    return Ok(());
                }
                Incoming::Clock(msg) => self.on_clock(transport, msg.clock.seconds()),
                Incoming::ParameterRequest(id, request) => {
                    self.on_parameter_request(transport, id, &request)
                }
                other => self.on_face_message(transport, other),
            }
        }
        Ok(())
    }
}

/// Logs what a step changed: each arm's event (holding and why, resumed), named by arm in a
/// group of several (`arms`), and the group's notice.
fn tell<T: Transport>(transport: &mut T, out: &StepOutput, arms: &[String]) {
    if let Some(notice) = &out.notice {
        transport.log(LogLevel::Warn, notice);
    }
    for (arm, name) in out.arms.iter().zip(arms) {
        if let Some(event) = &arm.report.event {
            transport.log(level_of(event), &about_arm(name, event));
        }
    }
}

fn level_of(event: &CoreEvent) -> LogLevel {
    if event.is_warning() {
        LogLevel::Warn
    } else {
        LogLevel::Info
    }
}

/// An event of arm `arm` (unnamed when it is the only one).
fn about_arm(arm: &str, event: &CoreEvent) -> String {
    match arm {
        "" => event.to_string(),
        arm => format!("arm '{arm}': {event}"),
    }
}
