//! The node's side of a configured group of arms, the same for one arm and for a pair: its
//! parameters and settings, the command order, and what configuring noticed. A node
//! parameter is checked and applied here ([`NodeConfiguration::set_node_parameter`], to every
//! arm's core); a law's by the group ([`crate::group_loop::GroupLoop::set_parameter`]).

use armctl_control::{Declaration, ParameterSet, ParameterValue};

use crate::controller_core::ControllerCore;
use crate::declarations::ControllerNodeSettings;
use crate::declarations::LiveSettings;
use crate::error::invalid;
use crate::node_parameters::ParameterStore;
use crate::payload_service::estimate_payload;
use crate::RuntimeError;

/// A node's parameters and settings as configured.
#[derive(Debug)]
pub struct NodeConfiguration {
    /// The node's values and the law's, as the law holds them (taken after every change).
    parameters: ParameterStore,
    /// The law's parameters a set changed without setting them (a gain design writes `kp`),
    /// with their values before, since [`Self::take_implied_changes`].
    implied: Vec<(String, ParameterValue)>,
    settings: ControllerNodeSettings,
    /// Command index -> chain index.
    order: Vec<usize>,
    /// What the URDF conversion noticed.
    warnings: Vec<String>,
}

impl NodeConfiguration {
    /// The configuration for a chain of joints `chain` (the command order from `joints`).
    pub(crate) fn new(
        mut parameters: ParameterStore,
        mut settings: ControllerNodeSettings,
        warnings: Vec<String>,
        chain: &[String],
    ) -> Result<Self, RuntimeError> {
        // The triggers act when set: given at start there is nothing to act on, and left true
        // one would act again at the next change of any parameter.
        settings.live.reset_collision = false;
        settings.live.estimate_payload = false;
        let triggers: Vec<String> = parameters.triggers().map(String::from).collect();
        for trigger in &triggers {
            parameters.set(trigger, &ParameterValue::Bool(false), false)?;
        }
        Ok(Self {
            order: command_order(&settings.joints, chain)?,
            parameters,
            implied: Vec::new(),
            settings,
            warnings,
        })
    }

    /// The node's settings as the loop reads them.
    pub fn settings(&self) -> &ControllerNodeSettings {
        &self.settings
    }

    /// Command index -> chain index (the `joints` parameter).
    pub fn command_order(&self) -> &[usize] {
        &self.order
    }

    /// What configuring noticed about the model, for the operator once at start.
    pub fn model_warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Every declaration: the node's and the law's.
    pub fn declarations(&self) -> &[Declaration] {
        self.parameters.declarations()
    }

    /// The declared parameters with their current values (for a parameter query: borrowed,
    /// never copied per request).
    pub fn parameters(&self) -> &ParameterStore {
        &self.parameters
    }

    /// The current value of `name`.
    pub fn parameter(&self, name: &str) -> Option<&ParameterValue> {
        self.parameters.get(name)
    }

    /// Takes the values `law` holds after it was configured or a parameter `set` of it was
    /// applied: those that changed besides `set` are implied changes.
    pub(crate) fn take_law_values(&mut self, law: &ParameterSet, set: Option<&str>) {
        for (name, before) in self.parameters.take_values_of(law) {
            let implied = set.is_some() && Some(name.as_str()) != set;
            if implied && !self.implied.iter().any(|(n, _)| *n == name) {
                self.implied.push((name, before));
            }
        }
    }

    /// The law's values that changed since the last call without being among `set` (the
    /// names a request set, which its answer announces), with their values now: what
    /// `/parameter_events` must announce besides the answer.
    pub fn take_implied_changes(&mut self, set: &[&str]) -> Vec<(String, ParameterValue)> {
        let implied = std::mem::take(&mut self.implied);
        implied
            .into_iter()
            .filter(|(name, _)| !set.contains(&name.as_str()))
            .filter_map(|(name, before)| {
                let now = self.parameters.get(&name)?;
                (*now != before).then(|| (name.clone(), now.clone()))
            })
            .collect()
    }

    /// Checks `value` for `name` against its declaration, as a set does first.
    pub fn validate(
        &self,
        name: &str,
        value: &ParameterValue,
    ) -> Result<ParameterValue, RuntimeError> {
        self.parameters.validate(name, value, false)
    }

    /// Checks `value` once, against its declaration, and applies the node parameter `name`:
    /// to every core in `cores` and then stored. On any refusal nothing changes. Returns the
    /// value as stored (integers widened to doubles; a trigger reads false again).
    pub(crate) fn set_node_parameter(
        &mut self,
        (name, value): (&str, &ParameterValue),
        cores: &mut [ControllerCore],
    ) -> Result<ParameterValue, String> {
        let typed = self.validate(name, value).map_err(|e| e.to_string())?;
        let live = &mut self.settings.live;
        set_node_parameter(&mut self.parameters, live, cores, name, typed)
    }
}

/// Sets the node parameter `name` to `typed` (checked by its declaration, not again here): a live setting is
/// applied to every core first (one arm's, or a pair's), then the value is stored; on a
/// refusal nothing changes. A start-only or model parameter is stored only. Returns the value
/// as stored.
fn set_node_parameter(
    parameters: &mut ParameterStore,
    live: &mut LiveSettings,
    cores: &mut [ControllerCore],
    name: &str,
    typed: ParameterValue,
) -> Result<ParameterValue, String> {
    let mut changed = live.clone();
    let mut stored = typed;
    if changed.set(name, &stored)? {
        for core in cores {
            apply_settings(core, live, &changed)?;
        }
        // A trigger: done once applied, it reads false again.
        if changed.reset_collision || changed.estimate_payload {
            changed.reset_collision = false;
            changed.estimate_payload = false;
            stored = ParameterValue::Bool(false);
        }
        *live = changed;
    }
    parameters.insert_validated(name, stored.clone());
    Ok(stored)
}

/// Writes efforts in chain order (`chain`) into `command` in the command order `order`
/// (command index -> chain index): the one reordering every runner's command goes through.
pub fn in_command_order(order: &[usize], chain: &[f64], command: &mut [f64]) {
    for (slot, &i) in command.iter_mut().zip(order) {
        *slot = chain[i];
    }
}

/// Command order: the `joints` parameter as indices into the chain (default: the chain).
pub fn command_order(joints: &[String], chain: &[String]) -> Result<Vec<usize>, RuntimeError> {
    if joints.is_empty() {
        return Ok((0..chain.len()).collect());
    }
    if let Some((k, twice)) = joints
        .iter()
        .enumerate()
        .find(|(k, j)| joints[..*k].contains(j))
    {
        return Err(invalid(
            "joints",
            format!("'{twice}' is listed twice (entry {k})"),
        ));
    }
    let order = joints
        .iter()
        .map(|j| {
            chain.iter().position(|c| c == j).ok_or_else(|| {
                invalid(
                    "joints",
                    format!("'{j}' is not a joint of the chain ({})", chain.join(", ")),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(missing) = chain.iter().find(|c| !joints.contains(c)) {
        return Err(invalid(
            "joints",
            format!("chain joint '{missing}' is missing: every chain joint must be controlled"),
        ));
    }
    Ok(order)
}

/// Applies to `core` what changed from `old` to `new` (the safety and reference settings; the
/// others are read where they act). The fallible changes come first, so a refusal changes
/// nothing.
pub(crate) fn apply_settings(
    core: &mut ControllerCore,
    old: &LiveSettings,
    new: &LiveSettings,
) -> Result<(), String> {
    let payload = new.payload();
    if let Err((item, reason)) = payload.check() {
        return Err(format!("payload_{item}: {reason}"));
    }
    if new.acceleration_limits != old.acceleration_limits {
        core.set_acceleration_limits(&new.acceleration_limits)?;
    }
    if payload != old.payload() {
        core.set_payload(payload, new.payload_ramp_time)?;
    }
    if (new.rate_limit, new.effort_rise_time) != (old.rate_limit, old.effort_rise_time) {
        new.apply_rate_limits(core.layer_mut().safety_mut())
            .map_err(|e| e.to_string())?;
    }
    if new.soft_limit_margin != old.soft_limit_margin {
        core.layer_mut()
            .limits_mut()
            .set_margin(new.soft_limit_margin)
            .map_err(|e| e.to_string())?;
    }
    if new.external_torque_gain != old.external_torque_gain {
        core.set_external_torque_gain(new.external_torque_gain);
    }
    if new.external_wrench_source != old.external_wrench_source {
        core.set_wrench_from_estimate(new.wrench_from_estimate());
    }
    if new.collision() != old.collision() {
        core.set_collision(new.collision());
    }
    if new.reset_collision {
        core.reset_collision();
    }
    if new.estimate_payload {
        core.report_payload_estimate(estimate_payload(core));
    }
    if new.max_reference_points != old.max_reference_points {
        core.set_max_points(usize::try_from(new.max_reference_points).unwrap_or(0));
    }
    if new.plausibility() != old.plausibility() {
        core.set_plausibility(new.plausibility());
    }
    if (new.safe_mode, new.state_timeout) != (old.safe_mode, old.state_timeout) {
        core.set_safety(new.safe_mode, new.state_timeout);
    }
    Ok(())
}
