//! sim_node's `lockstep` under simulated time: a step waits until every arm's controller has
//! answered the joint states last published, so a busy machine slows the simulated time
//! instead of delaying the commands. The default gains are sized for one step of delay
//! (docs/safety.md); a controller that answers three steps late destabilises them, as a
//! free-running distributed loop on a loaded machine does. Gazebo steps in lockstep with the
//! controllers it hosts in the same way.

use std::time::{Duration, Instant};

/// How long a step waits for the answer before the simulation runs on without it (a
/// controller that stopped must not stop time: its command timeout then acts).
pub(crate) const LOCKSTEP_WAIT: Duration = Duration::from_millis(100);

/// Whether the simulation may take its next step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NextStep {
    /// Every arm answered (or none was asked yet).
    Step,
    /// An answer is still due.
    Wait,
    /// No answer within [`LOCKSTEP_WAIT`]: the simulation runs on until a command comes.
    RunOn,
}

/// Which arms have answered the last joint states, and since when they were asked.
#[derive(Debug, Clone)]
pub(crate) struct Lockstep {
    answered: Vec<bool>,
    asked_at: Option<Instant>,
    running_on: bool,
}

impl Lockstep {
    /// For `arms` arms, none asked yet.
    pub(crate) fn new(arms: usize) -> Self {
        Self {
            answered: vec![true; arms],
            asked_at: None,
            running_on: false,
        }
    }

    /// Joint states went out: each arm owes a command.
    pub(crate) fn asked(&mut self, now: Instant) {
        if !self.running_on {
            self.answered.fill(false);
            self.asked_at = Some(now);
        }
    }

    /// Arm `arm`'s command came: lockstep resumes if it had run on.
    pub(crate) fn answered(&mut self, arm: usize) {
        if self.running_on {
            self.running_on = false;
            self.answered.fill(true);
        }
        if let Some(a) = self.answered.get_mut(arm) {
            *a = true;
        }
    }

    /// Whether to step at `now`; [`NextStep::RunOn`] is said once per silence.
    pub(crate) fn next(&mut self, now: Instant) -> NextStep {
        if self.running_on || self.answered.iter().all(|a| *a) {
            return NextStep::Step;
        }
        let waited = self.asked_at.map_or(Duration::ZERO, |t| now - t);
        if waited < LOCKSTEP_WAIT {
            return NextStep::Wait;
        }
        self.running_on = true;
        NextStep::RunOn
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_waits_for_every_arm_and_runs_on_after_the_wait() {
        let t0 = Instant::now();
        let mut lockstep = Lockstep::new(2);
        assert_eq!(lockstep.next(t0), NextStep::Step, "nothing asked yet");
        lockstep.asked(t0);
        assert_eq!(lockstep.next(t0), NextStep::Wait);
        lockstep.answered(0);
        assert_eq!(lockstep.next(t0), NextStep::Wait, "the second arm owes");
        lockstep.answered(1);
        assert_eq!(lockstep.next(t0), NextStep::Step);
        lockstep.asked(t0);
        let late = t0 + LOCKSTEP_WAIT;
        assert_eq!(lockstep.next(late), NextStep::RunOn);
        lockstep.asked(late);
        assert_eq!(lockstep.next(late), NextStep::Step, "running on: no wait");
        lockstep.answered(0);
        lockstep.asked(late);
        assert_eq!(lockstep.next(late), NextStep::Wait, "a command resumed it");
    }
}
