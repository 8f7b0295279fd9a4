//! What [`crate::arm_loop::ArmLoop`] runs: a group of arms stepped together, each with its own
//! [`ControllerCore`] (joint states by name, state checks, the safety layer, hold and resume).
//! A lone arm is a group of one (a bare core, or a [`ControllerRuntime`] with its command
//! order); two arms under one law over both are a [`PairRuntime`].

use armctl_control::{Controller, ParameterValue};

use crate::controller_core::{ControllerCore, StepReport};
use crate::controller_runtime::{ControllerRuntime, COOPERATIVE};
use crate::node_configuration::NodeConfiguration;
use crate::node_parameters::ParameterStore;
use crate::pair_runtime::PairRuntime;

/// Arms stepped together.
pub trait ArmGroup {
    /// How many arms.
    fn arm_count(&self) -> usize;
    /// Arm `a`'s name, to say which arm an event is about (empty for a lone arm).
    fn arm_name(&self, a: usize) -> &str;
    /// Arm `a`'s core.
    fn core(&self, a: usize) -> &ControllerCore;
    /// Arm `a`'s core, to hand it states and references.
    fn core_mut(&mut self, a: usize) -> &mut ControllerCore;
    /// Command index -> chain index, the same for every arm (the `joints` parameter).
    fn command_order(&self) -> Vec<usize>;
    /// One step of every arm at `now`, `dt` after the last: each arm's efforts in chain order
    /// into `efforts[a]`, its outcome into `reports[a]`. Allocates nothing while controlling.
    fn step(&mut self, now: f64, dt: f64, efforts: &mut [Vec<f64>], reports: &mut [StepReport]);
    /// What the last step changed beyond the arms' own events (a pair's cancelled move), to
    /// tell the operator once.
    fn take_notice(&mut self) -> Option<String> {
        None
    }
}

/// A group configured from node parameters, as a node runs it: its parameters, set live.
pub trait ConfiguredGroup: ArmGroup {
    /// The node's parameters and settings.
    fn configuration(&self) -> &NodeConfiguration;
    /// The control law's name.
    fn law_name(&self) -> &'static str;
    /// The declared parameters with their current values (the law's as it holds them).
    fn parameters(&self) -> &ParameterStore;
    /// Checks and applies a parameter; on a refusal nothing changes. Returns the value as
    /// stored ([`NodeConfiguration`] says how).
    fn set_parameter(
        &mut self,
        name: &str,
        value: &ParameterValue,
    ) -> Result<ParameterValue, String>;
    /// What the law's claims need and its parameters do not give (gain conditions, a damping
    /// beyond the sampled-data limit), as last checked.
    fn law_warnings(&self) -> &[String] {
        &[]
    }
    /// Checks the law's claims again after a parameter change.
    fn recheck_law(&mut self) {}
    /// The law's values a request's sets changed besides the `set` names, as they are now
    /// ([`NodeConfiguration::take_implied_changes`]).
    fn take_implied_changes(&mut self, set: &[&str]) -> Vec<(String, ParameterValue)>;
}

impl ConfiguredGroup for ControllerRuntime {
    fn configuration(&self) -> &NodeConfiguration {
        ControllerRuntime::configuration(self)
    }
    fn law_name(&self) -> &'static str {
        self.core().controller().name()
    }
    fn parameters(&self) -> &ParameterStore {
        ControllerRuntime::parameters(self)
    }
    fn set_parameter(
        &mut self,
        name: &str,
        value: &ParameterValue,
    ) -> Result<ParameterValue, String> {
        ControllerRuntime::set_parameter(self, name, value)
    }
    fn law_warnings(&self) -> &[String] {
        self.core().controller().warnings()
    }
    fn recheck_law(&mut self) {
        self.core_mut().controller_mut().check_damping();
    }
    fn take_implied_changes(&mut self, set: &[&str]) -> Vec<(String, ParameterValue)> {
        ControllerRuntime::take_implied_changes(self, set)
    }
}

impl ConfiguredGroup for PairRuntime {
    fn configuration(&self) -> &NodeConfiguration {
        PairRuntime::configuration(self)
    }
    fn law_name(&self) -> &'static str {
        COOPERATIVE
    }
    fn parameters(&self) -> &ParameterStore {
        PairRuntime::parameters(self)
    }
    fn set_parameter(
        &mut self,
        name: &str,
        value: &ParameterValue,
    ) -> Result<ParameterValue, String> {
        PairRuntime::set_parameter(self, name, value)
    }
    fn take_implied_changes(&mut self, set: &[&str]) -> Vec<(String, ParameterValue)> {
        PairRuntime::take_implied_changes(self, set)
    }
}

impl ArmGroup for ControllerCore {
    fn arm_count(&self) -> usize {
        1
    }
    fn arm_name(&self, _a: usize) -> &str {
        ""
    }
    fn core(&self, _a: usize) -> &ControllerCore {
        self
    }
    fn core_mut(&mut self, _a: usize) -> &mut ControllerCore {
        self
    }
    fn command_order(&self) -> Vec<usize> {
        (0..self.joints().len()).collect()
    }
    fn step(&mut self, now: f64, dt: f64, efforts: &mut [Vec<f64>], reports: &mut [StepReport]) {
        reports[0] = ControllerCore::step(self, now, dt, &mut efforts[0]);
    }
}

impl ArmGroup for ControllerRuntime {
    fn arm_count(&self) -> usize {
        1
    }
    fn arm_name(&self, _a: usize) -> &str {
        ""
    }
    fn core(&self, _a: usize) -> &ControllerCore {
        ControllerRuntime::core(self)
    }
    fn core_mut(&mut self, _a: usize) -> &mut ControllerCore {
        ControllerRuntime::core_mut(self)
    }
    fn command_order(&self) -> Vec<usize> {
        ControllerRuntime::command_order(self).to_vec()
    }
    fn step(&mut self, now: f64, dt: f64, efforts: &mut [Vec<f64>], reports: &mut [StepReport]) {
        reports[0] = self.core_mut().step(now, dt, &mut efforts[0]);
    }
}

impl ArmGroup for PairRuntime {
    fn arm_count(&self) -> usize {
        2
    }
    fn arm_name(&self, a: usize) -> &str {
        &self.arms()[a]
    }
    fn core(&self, a: usize) -> &ControllerCore {
        PairRuntime::core(self, a)
    }
    fn core_mut(&mut self, a: usize) -> &mut ControllerCore {
        PairRuntime::core_mut(self, a)
    }
    fn command_order(&self) -> Vec<usize> {
        PairRuntime::command_order(self).to_vec()
    }
    fn step(&mut self, now: f64, dt: f64, efforts: &mut [Vec<f64>], reports: &mut [StepReport]) {
        let (first, second) = efforts.split_at_mut(1);
        let [report_0, report_1] =
            PairRuntime::step(self, now, dt, [&mut first[0], &mut second[0]]);
        reports[0] = report_0;
        reports[1] = report_1;
    }
    fn take_notice(&mut self) -> Option<String> {
        PairRuntime::take_notice(self)
    }
}

/// A group borrowed from its owner (who keeps it for what comes after the run).
impl<G: ArmGroup + ?Sized> ArmGroup for &mut G {
    fn arm_count(&self) -> usize {
        (**self).arm_count()
    }
    fn arm_name(&self, a: usize) -> &str {
        (**self).arm_name(a)
    }
    fn core(&self, a: usize) -> &ControllerCore {
        (**self).core(a)
    }
    fn core_mut(&mut self, a: usize) -> &mut ControllerCore {
        (**self).core_mut(a)
    }
    fn command_order(&self) -> Vec<usize> {
        (**self).command_order()
    }
    fn step(&mut self, now: f64, dt: f64, efforts: &mut [Vec<f64>], reports: &mut [StepReport]) {
        (**self).step(now, dt, efforts, reports)
    }
    fn take_notice(&mut self) -> Option<String> {
        (**self).take_notice()
    }
}
