//! When the loop steps and what a step does around the law: states and ticks in (a node),
//! or states and steps at the host's times; the command order, which arms were commanded,
//! clock jumps, restarts and the safe stop.

use super::{GroupLoop, Law};
use crate::controller_core::Fault;
use crate::loop_timing::Tick;
use crate::node_configuration::in_command_order;

/// What a tick of the node's timer did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ticked {
    /// The node's time at the tick.
    pub now: f64,
    /// Whether it stepped (a timed step, or the watchdog's hold).
    pub stepped: bool,
}

impl GroupLoop {
    /// Arm `arm`'s joint state `names`, `q`, `qd` stamped `stamp` (ROS time), as a node
    /// receives it; steps when stepping answers the states and every arm's came since the last
    /// step. Returns the time of the step it made.
    pub fn on_joint_state(
        &mut self,
        arm: usize,
        names: &[String],
        q: &[f64],
        qd: &[f64],
        stamp: f64,
    ) -> Option<f64> {
        // On simulated time a state's stamp is its time: a /clock tick that overtook it must
        // not shift the reference by a step.
        let now = self.timing.state_time(stamp);
        self.record_state(arm, names, q, qd, now);
        self.fresh[arm] = true;
        let all_came = self.fresh.iter().all(|f| *f);
        (self.timing.per_message() && all_came).then(|| self.step_timed(now))
    }

    /// Arm `arm`'s joint state at the host's time `t` (no step).
    pub fn record_state(&mut self, arm: usize, names: &[String], q: &[f64], qd: &[f64], t: f64) {
        self.cores[arm].on_joint_state(names, q, qd, t);
    }

    /// The node's timer: a step at `update_rate` (on simulated time only when time moved on),
    /// or when stepping answers the states, the watchdog's step that holds once any arm's
    /// states stopped.
    pub fn on_tick(&mut self) -> Ticked {
        let now = self.timing.now();
        let stepped = match self.timing.tick(now) {
            Tick::Step(now) => Some(self.step_timed(now)),
            Tick::Watchdog(now) if self.states_stopped(now) => Some(self.step_timed(now)),
            Tick::Watchdog(_) | Tick::Idle => None,
        };
        Ticked {
            now,
            stepped: stepped.is_some(),
        }
    }

    fn states_stopped(&self, now: f64) -> bool {
        self.cores.iter().any(|core| core.states_stopped(now))
    }

    /// A step at `now` by the time since the last ([`LoopTiming::step`]).
    fn step_timed(&mut self, now: f64) -> f64 {
        let dt = self.timing.step(now);
        self.step(now, dt);
        now
    }

    /// One step of every arm at `now`, `dt` after the last; its outcome in [`Self::output`].
    /// An arm that never sent a state is not commanded: there is nothing to compute from yet,
    /// and a guess is worse than nothing. Allocates nothing while controlling.
    pub fn step(&mut self, now: f64, dt: f64) {
        self.fresh.fill(false);
        self.step_arms(now, dt);
        let out = &mut self.output;
        out.now = now;
        out.stamp = self.timing.clock().to_stamp(now);
        for (arm, commanded) in out.arms.iter_mut().zip(&mut self.commanded) {
            out.saturated += arm.report.safety.saturated as u64;
            out.joint_limited += arm.report.safety.joint_limited as u64;
            *commanded |= arm.report.fault != Some(Fault::NoState);
        }
        let any_commanded = self.commanded.iter().any(|c| *c);
        out.state_due = self.publishes && any_commanded && self.timing.state_due(now);
        let order = self.configuration.command_order();
        let estimates = self.law.estimates();
        for (arm, core) in out.arms.iter_mut().zip(&self.cores) {
            let stepped = (core, estimates);
            arm.take_step(stepped, (order, &mut self.frames), out.state_due);
        }
    }

    /// The law's step of every arm: each arm's efforts in chain order and its report into its
    /// output, and what the step changed beyond the arms' events.
    fn step_arms(&mut self, now: f64, dt: f64) {
        let arms = &mut self.output.arms;
        self.output.notice = match &mut self.law {
            Law::Pair(pair) => {
                let cores = (self.cores.as_mut_slice(), self.arms.as_slice());
                pair.step(cores, (now, dt), arms);
                self.output.object = Some(pair.object());
                pair.take_notice()
            }
            Law::One(law) | Law::HandBuilt(law) => {
                let arm = &mut arms[0];
                arm.report = self.cores[0].step(now, dt, law, &mut arm.efforts);
                None
            }
        };
    }

    /// A new `state_publish_rate`.
    pub fn set_state_rate(&mut self, rate: f64) {
        self.timing.set_state_rate(rate);
    }

    /// A `/clock` tick; `true` when time went back (a reset simulation): every arm starts over
    /// as at the start, waiting for states (the runner ends what followed time, a goal).
    pub fn on_clock(&mut self, t: f64) -> bool {
        let back = self.timing.on_clock(t);
        if back {
            self.restart();
        }
        back
    }

    /// Forgets the states and references of every arm: the next valid state holds each
    /// where it is (a host's activation, a reset simulation). As at the start, no arm counts
    /// as commanded: a configuration from before the restart belongs to another run, so
    /// there is no gravity to brake with until a state comes, and the last command sent stays
    /// in effect rather than a zero effort that would let the arm fall.
    pub fn restart(&mut self) {
        for a in 0..self.fresh.len() {
            self.cores[a].restart();
        }
        self.fresh.fill(false);
        self.commanded.fill(false);
    }

    /// Arm `a`'s `safe_mode` command into its output's command, whether or
    /// not it was ever commanded; returns what it is.
    pub fn safe_command(&mut self, a: usize) -> &'static str {
        let arm = &mut self.output.arms[a];
        let mode = self.cores[a].safe_command(&mut arm.efforts);
        let order = self.configuration.command_order();
        in_command_order(order, &arm.efforts, &mut arm.command);
        mode
    }

    /// The last commands at a stop: the `safe_mode` command of each arm commanded since the
    /// start or the last restart (an effort controller keeps applying the last command it
    /// received, so that one must brake the arm); the arms and what their commands are. None
    /// when nothing was sent.
    pub fn stop(&mut self) -> Vec<(usize, &'static str)> {
        let commanded: Vec<usize> = (0..self.commanded.len())
            .filter(|&a| self.commanded[a])
            .collect();
        commanded
            .into_iter()
            .map(|a| (a, self.safe_command(a)))
            .collect()
    }
}
