//! The last step's results, as a runner publishes them: each arm's command in command order
//! (and whether it was sent), the efforts in chain order, the reports and their events, and
//! the counts of what the safety layer bounded.

use super::GroupLoop;
use crate::controller_core::{CoreEvent, StepReport};
use crate::node_configuration::in_command_order;

impl GroupLoop {
    /// Arm `a`'s command of the last step in command order, if that step commanded it.
    pub fn sent(&self, a: usize) -> Option<&[f64]> {
        self.sent[a].then_some(self.commands[a].as_slice())
    }

    /// Whether the last step commanded any arm.
    pub fn sent_any(&self) -> bool {
        self.sent.iter().any(|s| *s)
    }

    /// Arm `a`'s last command in command order (sent or not).
    pub fn command(&self, a: usize) -> &[f64] {
        &self.commands[a]
    }

    /// Arm `a`'s efforts of the last step into `out` in command order, whether or not the
    /// step commanded it (before any valid state: the hold's zero efforts).
    pub fn step_command(&self, a: usize, out: &mut [f64]) {
        in_command_order(self.configuration.command_order(), &self.efforts[a], out);
    }

    /// Arm `a`'s efforts of the last step in chain order.
    pub fn efforts(&self, a: usize) -> &[f64] {
        &self.efforts[a]
    }

    /// Each arm's report of the last step.
    pub fn reports(&self) -> &[StepReport] {
        &self.reports
    }

    /// Arm `a`'s event of the last step, taken out of its report (to keep without a copy).
    pub fn take_event(&mut self, a: usize) -> Option<CoreEvent> {
        self.reports[a].event.take()
    }

    /// Whether any arm held in the last step.
    pub fn holding(&self) -> bool {
        self.reports.iter().any(|r| r.fault.is_some())
    }

    /// Efforts the safety layer clipped at their limits since the start, all arms.
    pub fn saturated(&self) -> u64 {
        self.saturated
    }

    /// Efforts the joint-limit protection bounded since the start, all arms.
    pub fn joint_limited(&self) -> u64 {
        self.joint_limited
    }
}
