//! The group's parameters: the node's and the law's, declared once, checked once and applied
//! alike for one arm and a pair (the law's to the law, the node's to every arm's core).

use armctl_control::{ControlError, Controller, ParameterValue};

use super::{GroupLoop, Law};
use crate::declarations::ControllerNodeSettings;
use crate::error::{law_refusal, not_held};
use crate::node_configuration::NodeConfiguration;
use crate::node_parameters::{shown, ParameterStore};
use crate::parameter_services::{
    answer_query, set_atomically, ParameterRequest, ParameterResponse, ParameterTarget,
};
use crate::RuntimeError;

impl GroupLoop {
    /// What the law's claims need and its parameters do not give (gain conditions, a damping
    /// beyond the sampled-data limit), as last checked (a pair's law has none).
    pub fn law_warnings(&self) -> &[String] {
        self.law.lone().map_or(&[], |law| law.warnings())
    }

    /// Checks the law's claims again after a parameter change.
    pub fn recheck_law(&mut self) {
        if let Some(law) = self.law.lone_mut() {
            law.check_damping();
        }
    }

    /// The node's parameters and settings.
    pub fn configuration(&self) -> &NodeConfiguration {
        &self.configuration
    }

    /// The declared parameters and their current values (the law's as the law holds them:
    /// a gain design writes `kp` and `kd`), for a parameter query.
    pub fn parameters(&self) -> &ParameterStore {
        self.configuration.parameters()
    }

    /// Every declaration: the node's and the law's.
    pub fn declarations(&self) -> &[armctl_control::Declaration] {
        self.configuration.declarations()
    }

    /// The current value of `name` (the law's as the law holds it).
    pub fn parameter(&self, name: &str) -> Option<&ParameterValue> {
        self.configuration.parameter(name)
    }

    /// Checks `value` for `name` as [`Self::set_parameter`] does first, without applying it.
    pub fn validate_parameter(
        &self,
        name: &str,
        value: &ParameterValue,
    ) -> Result<ParameterValue, RuntimeError> {
        self.configuration.validate(name, value)
    }

    /// The node's settings as the loop reads them.
    pub fn settings(&self) -> &ControllerNodeSettings {
        self.configuration.settings()
    }

    /// Checks `value` against its declaration and applies it: the law's parameters to the
    /// law (checked against the law as well), the node's to every arm's core. On any refusal
    /// nothing changes. Returns the value as stored (integers widened to doubles), so the
    /// runner can act on parameters of its own (such as `state_publish_rate`).
    pub fn set_parameter(
        &mut self,
        name: &str,
        value: &ParameterValue,
    ) -> Result<ParameterValue, String> {
        if matches!(self.law, Law::HandBuilt(_)) {
            return Err(format!(
                "parameter '{name}': this arm was built by hand with its law, not from node parameters; set the law's parameters before building the loop"
            ));
        }
        if self.law.parameters().get(name).is_none() {
            let cores = &mut self.cores;
            return self.configuration.set_node_parameter((name, value), cores);
        }
        let store = self.configuration.parameters();
        store.admit(name, value, false).map_err(|e| e.to_string())?;
        self.set_law_parameter(name, value.clone())
            .map_err(|e| law_refusal(name, e).to_string())?;
        let held = self.law.parameters();
        let stored = held.get(name).cloned().ok_or_else(|| not_held(name))?;
        self.configuration.take_law_values(held, Some(name));
        Ok(stored)
    }

    /// Sets the group law's parameter `name`, checked by the law's own declaration (its
    /// claims are checked again after the request: [`Self::recheck_law`]).
    fn set_law_parameter(&mut self, name: &str, value: ParameterValue) -> Result<(), ControlError> {
        match &mut self.law {
            Law::Pair(pair) => pair.law_mut().set_parameter(name, value),
            Law::One(law) | Law::HandBuilt(law) => law.law_mut().set_parameter(name, value),
        }
    }

    /// See [`NodeConfiguration::take_implied_changes`].
    pub fn take_implied_changes(&mut self, set: &[&str]) -> Vec<(String, ParameterValue)> {
        self.configuration.take_implied_changes(set)
    }
}

/// What answering a parameter request did, for the runner to tell: the response, what to log
/// about each change, the values the changes implied (for `/parameter_events`), how many
/// changes were refused and the warnings the changes brought.
#[derive(Debug, Clone, PartialEq)]
pub struct ParameterAnswer {
    /// The request's response.
    pub response: ParameterResponse,
    /// Each change, set (`false`: information) or refused with the reason (`true`: a
    /// warning), in the order applied.
    pub said: Vec<(bool, String)>,
    /// Values a set derived besides the ones it named (a gain design's `kp` and `kd`).
    pub implied: Vec<(String, ParameterValue)>,
    /// Changes refused.
    pub refused: u64,
    /// Warnings about the law and the settings that the changes brought.
    pub new_warnings: Vec<String>,
}

impl GroupLoop {
    /// Answers a parameter service request: queries from the parameters as they are, each
    /// change checked and applied once ([`Self::set_parameter`]; a refusal changes nothing;
    /// an atomic set undone as a whole), then the law's claims checked again and the state
    /// rate taken.
    pub fn answer_parameters(&mut self, request: &ParameterRequest) -> ParameterAnswer {
        let law_before = self.law_warnings().to_vec();
        let settings_before = self.settings().warnings();
        let mut answering = Answering {
            group: self,
            said: vec![],
            refused: 0,
        };
        let response = match request {
            ParameterRequest::Set(changes) => {
                let each = changes
                    .iter()
                    .map(|(name, value)| answering.apply(name, value));
                ParameterResponse::Set(each.collect())
            }
            ParameterRequest::SetAtomically(changes) => set_atomically(&mut answering, changes),
            query => {
                answer_query(answering.store(), query).unwrap_or(ParameterResponse::List(vec![]))
            }
        };
        let (said, refused) = (answering.said, answering.refused);
        let rate = self.settings().live.state_publish_rate;
        self.timing.set_state_rate(rate);
        let implied = self.take_implied_changes(&set_names(request));
        self.recheck_law();
        let law = self
            .law_warnings()
            .iter()
            .filter(|w| !law_before.contains(w));
        let mut new_warnings: Vec<String> = law.map(|w| format!("controller: {w}")).collect();
        let settings = self.settings().warnings();
        let settings = settings.iter().filter(|w| !settings_before.contains(w));
        new_warnings.extend(settings.map(|w| format!("parameters: {w}")));
        ParameterAnswer {
            response,
            said,
            implied,
            refused,
            new_warnings,
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

/// A request answered by the group: each change said (set, or not set with the reason) and
/// a refusal counted.
struct Answering<'a> {
    group: &'a mut GroupLoop,
    said: Vec<(bool, String)>,
    refused: u64,
}

impl ParameterTarget for Answering<'_> {
    fn store(&self) -> &ParameterStore {
        self.group.parameters()
    }

    fn apply(&mut self, name: &str, value: &ParameterValue) -> Result<ParameterValue, String> {
        let result = self.group.set_parameter(name, value);
        match &result {
            Ok(_) => {
                let text = format!("parameter {name} set to {}", value.to_yaml());
                self.said.push((false, text));
            }
            Err(reason) => {
                self.refused += 1;
                let text = format!("parameter {} not set: {reason}", shown(name));
                self.said.push((true, text));
            }
        }
        result
    }
}
