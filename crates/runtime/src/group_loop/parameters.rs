//! The group's parameters: the node's and the law's, declared once, checked once and applied
//! alike for one arm and a pair (the law's to the law, the node's to every arm's core).

use armctl_control::{Controller, ParameterValue};

use super::{GroupLoop, Law};
use crate::controller_core::ControllerCore;
use crate::declarations::ControllerNodeSettings;
use crate::error::{law_refusal, not_held};
use crate::node_configuration::NodeConfiguration;
use crate::node_parameters::ParameterStore;
use crate::RuntimeError;

impl GroupLoop {
    /// What the law's claims need and its parameters do not give (gain conditions, a damping
    /// beyond the sampled-data limit), as last checked.
    pub fn law_warnings(&self) -> &[String] {
        match &self.law {
            Law::Pair(_) => &[],
            Law::One | Law::HandBuilt => self.cores[0].controller().warnings(),
        }
    }

    /// Checks the law's claims again after a parameter change.
    pub fn recheck_law(&mut self) {
        if !matches!(self.law, Law::Pair(_)) {
            self.cores[0].controller_mut().check_damping();
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
        match &mut self.law {
            Law::HandBuilt => Err(format!(
                "parameter '{name}': this core was built by hand; set it on the core"
            )),
            Law::Pair(pair) => {
                let law = pair.law_mut();
                let law_declares = law.parameters().get(name).is_some();
                let set_law = |_: &mut [ControllerCore], value| {
                    law.set_parameter(name, value)
                        .map_err(|e| law_refusal(name, e).to_string())?;
                    law.parameters()
                        .get(name)
                        .cloned()
                        .ok_or_else(|| not_held(name))
                };
                let stored = self.configuration.set_parameter(
                    (name, value),
                    law_declares,
                    set_law,
                    &mut self.cores,
                )?;
                if law_declares {
                    let law = pair.law().parameters();
                    self.configuration.take_law_values(law, Some(name));
                }
                Ok(stored)
            }
            Law::One => {
                let law_declares = self.cores[0].controller().parameters().get(name).is_some();
                let set_law = |cores: &mut [ControllerCore], value| {
                    cores[0]
                        .set_parameter(name, value)
                        .map_err(|e| e.to_string())?;
                    let law = cores[0].controller().parameters();
                    law.get(name).cloned().ok_or_else(|| not_held(name))
                };
                let stored = self.configuration.set_parameter(
                    (name, value),
                    law_declares,
                    set_law,
                    &mut self.cores,
                )?;
                if law_declares {
                    let law = self.cores[0].controller().parameters();
                    self.configuration.take_law_values(law, Some(name));
                }
                Ok(stored)
            }
        }
    }

    /// See [`NodeConfiguration::take_implied_changes`].
    pub fn take_implied_changes(&mut self, set: &[&str]) -> Vec<(String, ParameterValue)> {
        self.configuration.take_implied_changes(set)
    }
}
