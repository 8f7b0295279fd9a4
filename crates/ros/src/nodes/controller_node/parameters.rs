//! The node's parameter requests: answered from the loop's parameters as they are (a query
//! borrows them), a set checked and applied once by the loop ([`GroupLoop::set_parameter`]),
//! each change logged, a refusal counted, the values a set implies announced on
//! `/parameter_events` and new warnings logged.

use armctl_control::ParameterValue;
use armctl_runtime::group_loop::GroupLoop;
use armctl_runtime::node_parameters::{shown, ParameterStore};

use super::ControllerNode;
use crate::nodes::loop_diagnostics::LoopDiagnostics;
use crate::parameter_services::{handle_request, ParameterRequest, ParameterTarget};
use crate::transport::{LogLevel, Transport};

impl ControllerNode {
    /// Answers a parameter request: queries from the group's parameters as they are, a set
    /// checked and applied by the group (a refusal changes nothing and is counted), values a
    /// set derives (a gain design's `kp` and `kd`) announced on `/parameter_events`, and new
    /// warnings about the law logged.
    pub(super) fn on_parameter_request<T: Transport>(
        &mut self,
        transport: &mut T,
        id: u64,
        request: &ParameterRequest,
    ) {
        let before = self.group.law_warnings().to_vec();
        let settings_before = self.group.settings().warnings();
        let mut target = Answering {
            group: &mut self.group,
            diagnostics: &mut self.diagnostics,
            transport: &mut *transport,
        };
        let response = handle_request(&mut target, request);
        transport.respond(id, response);
        let rate = self.group.settings().live.state_publish_rate;
        self.group.set_state_rate(rate);
        let implied = self.group.take_implied_changes(&set_names(request));
        if !implied.is_empty() {
            transport.announce_parameters(&implied);
        }
        self.group.recheck_law();
        let group = &self.group;
        for warning in group.law_warnings().iter().filter(|w| !before.contains(w)) {
            transport.log(LogLevel::Warn, &format!("controller: {warning}"));
        }
        let settings = group.settings().warnings();
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
                let name = shown(name);
                let text = format!("parameter {name} not set: {reason}");
                self.transport.log(LogLevel::Warn, &text);
            }
        }
        result
    }
}
