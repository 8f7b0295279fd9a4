//! A law with its claims checked: when asked, a damping gain that changed since the last check
//! is checked against the sampled-data damping bound ([`crate::damping_bound`]) again, and the
//! law's warnings, that check's and the safety layer's start-up warning are kept in one list.

use armctl_model::Robot;

use crate::gain_sizing::damping_bound::DampingCheck;
use crate::safety_bounds::safety_layer::SafetyLayer;
use crate::{ControlError, Controller, JointState, ParameterSet, ParameterValue, Step, TaskSpace};

/// A law and the checks of its gains.
pub struct CheckedLaw {
    inner: Box<dyn Controller>,
    damping: DampingCheck,
    /// The damping check's warning for the damping last checked.
    damping_warning: Option<String>,
    /// The damping as last checked (`None`: the law has no damping parameter), so a check
    /// needs no mark from the set that changed it.
    damping_checked: Option<ParameterValue>,
    /// What the arm's safety layer warns about at start (placeholder effort limits).
    layer_warning: Option<String>,
    /// The law's warnings, the damping check's and the safety layer's.
    warnings: Vec<String>,
}

impl CheckedLaw {
    /// `inner` for `robot`, whose safety layer is `layer`; checks the damping a parameter
    /// file gave (set before the law was wrapped).
    pub fn new(inner: Box<dyn Controller>, robot: &Robot, layer: &SafetyLayer) -> Self {
        let mut checked = Self {
            inner,
            damping: DampingCheck::new(robot),
            damping_warning: None,
            damping_checked: None,
            layer_warning: layer.limits().warning().map(str::to_string),
            warnings: Vec::new(),
        };
        checked.check_damping();
        checked
    }

    /// The law itself, to step it and to set its parameters.
    pub fn law_mut(&mut self) -> &mut dyn Controller {
        self.inner.as_mut()
    }

    /// Checks the damping again if it changed since the last check, and collects the
    /// warnings. Not done at each set: a real-time host (the C ABI) sets gains between two
    /// updates, and the check takes eigensolvers at a few dozen configurations.
    pub fn check_damping(&mut self) {
        let Some(name) = self.inner.damping_parameter() else {
            return self.collect_warnings();
        };
        let parameters = self.inner.parameters();
        let set = parameters.get(name);
        if set.is_some() && set != self.damping_checked.as_ref() {
            // The defaults are not warned about: they are sized to need the run-time bound
            // only near singular configurations (`crate::gain_sizing::default_gains`).
            let default = parameters.declaration(name).map(|d| &d.default);
            self.damping_warning = match set {
                Some(value) if Some(value) != default => {
                    let damping = value.numbers().to_vec();
                    self.damping.warning(name, &damping)
                }
                _ => None,
            };
            self.damping_checked = set.cloned();
        }
        self.collect_warnings();
    }

    /// The law's warnings now, the damping check's last and the safety layer's.
    fn collect_warnings(&mut self) {
        self.warnings.clear();
        self.warnings.extend_from_slice(self.inner.warnings());
        self.warnings.extend(self.damping_warning.iter().cloned());
        self.warnings.extend(self.layer_warning.iter().cloned());
    }
}

impl Controller for CheckedLaw {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn parameters(&self) -> &ParameterSet {
        self.inner.parameters()
    }
    fn parameters_mut(&mut self) -> &mut ParameterSet {
        self.inner.parameters_mut()
    }
    fn reset(&mut self, state: &JointState<'_>) {
        self.inner.reset(state);
    }
    fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError> {
        self.inner.compute(step)
    }
    fn update(
        &mut self,
        state: &JointState<'_>,
        reference: &crate::JointReference,
        dt: f64,
        effort: &mut [f64],
    ) -> Result<(), ControlError> {
        self.inner.update(state, reference, dt, effort)
    }
    fn estimates(&self) -> &[f64] {
        self.inner.estimates()
    }
    /// As of the last [`CheckedLaw::check_damping`] (a set does not refresh them: a real-time
    /// host sets gains between two updates; the loop checks after each parameter request).
    fn warnings(&self) -> &[String] {
        &self.warnings
    }
    fn damping_parameter(&self) -> Option<&'static str> {
        self.inner.damping_parameter()
    }
    fn set_parameter(&mut self, name: &str, value: ParameterValue) -> Result<(), ControlError> {
        self.inner.set_parameter(name, value)
    }
    fn task_space(&mut self) -> Option<&mut dyn TaskSpace> {
        self.inner.task_space()
    }
}
