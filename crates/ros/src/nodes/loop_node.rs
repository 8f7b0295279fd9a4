//! What every controller node (one arm, or two under one law) does around the loop
//! ([`GroupLoop`]): joint states and timer ticks in, each arm's command out on its publication
//! slot, the cores' events on /rosout, `/diagnostics`, the parameter services and the stop.
//! A node adds only its own topics and its `~/state` layout.

use armctl_control::ParameterValue;
use armctl_runtime::group_loop::{GroupLoop, StepOutput};

use armctl_runtime::controller_core::CoreEvent;
use armctl_runtime::loop_timing::LoopTiming;
use armctl_runtime::node_clock::NodeClock;
use armctl_runtime::node_parameters::ParameterStore;
use armctl_runtime::startup::NodeStart;

use crate::msgs::{Float64MultiArray, JointState};
use crate::nodes::loop_diagnostics::{LoopDiagnostics, LoopState};
use crate::parameter_services::{handle_request, ParameterRequest, ParameterTarget};
use crate::transport::{LogLevel, Outgoing, Transport};

/// A group of arms in the loop, with what the node publishes of it.
#[derive(Debug)]
pub(crate) struct LoopNode {
    group: GroupLoop,
    diagnostics: LoopDiagnostics,
    /// Each arm's command message (arm `a` publishes on slot `a`).
    commands: Vec<Float64MultiArray>,
}

impl LoopNode {
    /// `group` paced as its settings say (`update_rate`, `use_sim_time`,
    /// `state_publish_rate`), for the node `start` names.
    pub(crate) fn new(group: GroupLoop, start: &NodeStart) -> Self {
        let settings = group.configuration().settings();
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
            commands: vec![command; group.arm_count()],
            diagnostics: LoopDiagnostics::new(&node, &robot, update_rate),
            group: group.paced(timing),
        }
    }

    /// The group.
    pub(crate) fn group(&self) -> &GroupLoop {
        &self.group
    }

    /// The group, to hand it references and targets.
    pub(crate) fn group_mut(&mut self) -> &mut GroupLoop {
        &mut self.group
    }

    /// Says at start what the group controls with, and what configuring noticed.
    pub(crate) fn announce<T: Transport>(&self, transport: &mut T, controlling: &str) {
        transport.log(LogLevel::Info, controlling);
        let group = self.group();
        for warning in group.configuration().model_warnings() {
            transport.log(LogLevel::Warn, &format!("robot model: {warning}"));
        }
        for warning in group.law_warnings() {
            transport.log(LogLevel::Warn, &format!("controller: {warning}"));
        }
        for warning in group.configuration().settings().warnings() {
            transport.log(LogLevel::Warn, &format!("parameters: {warning}"));
        }
    }

    /// Arm `arm`'s joint state; returns the output of the step it made, whose commands are
    /// published.
    pub(crate) fn on_joint_state<T: Transport>(
        &mut self,
        transport: &mut T,
        arm: usize,
        msg: &JointState,
    ) -> Option<&StepOutput> {
        let stamp = msg.header.stamp.seconds();
        let (q, qd) = (&msg.position, &msg.velocity);
        self.group.on_joint_state(arm, &msg.name, q, qd, stamp)?;
        self.publish_step(transport).then(|| self.group.output())
    }

    /// The timer: the loop's timed step or watchdog, and the diagnostics when due. Returns
    /// the output of the step it made, whose commands are published.
    pub(crate) fn on_tick<T: Transport>(&mut self, transport: &mut T) -> Option<&StepOutput> {
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
        published.then(|| self.group.output())
    }

    /// For the diagnostics: the first holding arm's reason, the oldest arm's newest state.
    fn loop_state(&self) -> LoopState<'static> {
        let group = self.group();
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

    /// A `/clock` tick; `true` when time went back and every arm started over.
    pub(crate) fn on_clock(&mut self, t: f64) -> bool {
        self.group.on_clock(t)
    }

    /// The last commands: each commanded arm's `safe_mode` effort (gravity compensation at
    /// the last valid configuration, or zero), sent once and given time to leave, since an
    /// effort controller keeps applying the last command it received.
    pub(crate) async fn stop<T: Transport>(&mut self, transport: &mut T, signal: &str) {
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

    /// Answers a parameter request: queries from the group's parameters as they are, a set
    /// checked and applied by the group (a refusal changes nothing and is counted), values a
    /// set derives (a gain design's `kp` and `kd`) announced on `/parameter_events`, and new
    /// warnings about the law logged.
    pub(crate) fn on_parameter_request<T: Transport>(
        &mut self,
        transport: &mut T,
        id: u64,
        request: &ParameterRequest,
    ) {
        let before = self.group().law_warnings().to_vec();
        let settings_before = self.group().configuration().settings().warnings();
        let mut target = Answering {
            group: &mut self.group,
            diagnostics: &mut self.diagnostics,
            transport: &mut *transport,
        };
        let response = handle_request(&mut target, request);
        transport.respond(id, response);
        let rate = self
            .group()
            .configuration()
            .settings()
            .live
            .state_publish_rate;
        self.group.set_state_rate(rate);
        let implied = self.group_mut().take_implied_changes(&set_names(request));
        if !implied.is_empty() {
            transport.announce_parameters(&implied);
        }
        self.group_mut().recheck_law();
        let group = self.group();
        for warning in group.law_warnings().iter().filter(|w| !before.contains(w)) {
            transport.log(LogLevel::Warn, &format!("controller: {warning}"));
        }
        let settings = group.configuration().settings().warnings();
        for warning in settings.iter().filter(|w| !settings_before.contains(w)) {
            transport.log(LogLevel::Warn, &format!("parameters: {warning}"));
        }
    }
}

/// The names a request sets (none for a query).
fn set_names(request: &ParameterRequest) -> Vec<&str> {
    match request {
        ParameterRequest::Set(changes) | ParameterRequest::SetAtomically(changes) => {
            changes.iter().map(|(name, _)| name.as_str()).collect()
        }
        _ => vec![],
    }
}

/// A request answered by a node's group: each change logged (set, or not set with the
/// reason) and a refusal counted.
struct Answering<'a, T> {
    group: &'a mut GroupLoop,
    diagnostics: &'a mut LoopDiagnostics,
    transport: &'a mut T,
}

impl<T: Transport> ParameterTarget for Answering<'_, T> {
    fn store(&self) -> &ParameterStore {
        self.group.parameters()
    }

    fn apply(&mut self, name: &str, value: &ParameterValue) -> Result<ParameterValue, String> {
        let result = self.group.set_parameter(name, value);
        match &result {
            Ok(_) => self.transport.log(
                LogLevel::Info,
                &format!("parameter {name} set to {}", value.to_yaml()),
            ),
            Err(reason) => {
                self.diagnostics.on_refusal();
                self.transport.log(
                    LogLevel::Warn,
                    &format!(
                        "parameter {} not set: {reason}",
                        armctl_runtime::node_parameters::shown(name)
                    ),
                );
            }
        }
        result
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
