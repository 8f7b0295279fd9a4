//! The control loop every runner drives: controller_node (one arm or a pair, on DDS or rcl),
//! the C ABI of the ros2_control plugin and `armctl sim`. It takes joint states and time and
//! gives commands in command order, each step's reports and the state to publish; it owns the
//! timing policy ([`LoopTiming`]: per message or on a timer, simulated time, the watchdog),
//! clock jumps, which arms were commanded, and the safe stop. Holding and the safety layer are
//! each arm's [`ControllerCore`](crate::controller_core::ControllerCore)'s. A runner only
//! converts messages and publishes.
//!
//! Two ways to give time: a node hands states as they come and ticks of its timer
//! ([`ArmLoop::on_joint_state`], [`ArmLoop::on_tick`]) and the loop decides when to step; a host
//! with its own cycle (the plugin's `update`, the simulator) records states at its times and
//! steps by its period ([`ArmLoop::record_state`], [`ArmLoop::step`]).

use std::borrow::BorrowMut;

use crate::arm_group::ArmGroup;
use crate::controller_core::{CoreEvent, Fault, StepReport};
use crate::loop_timing::{LoopTiming, Tick};
use crate::node_clock::NodeClock;
use crate::node_configuration::in_command_order;

/// A group of arms in the loop.
#[derive(Debug)]
pub struct ArmLoop<G> {
    group: G,
    timing: LoopTiming,
    /// Command index -> chain index.
    order: Vec<usize>,
    /// Which arms sent a state since the last step (per-message stepping waits for all).
    fresh: Vec<bool>,
    /// Which arms were sent a command since the start or the last restart (a stop sends them
    /// their safe command).
    commanded: Vec<bool>,
    /// Which arms the last step commanded.
    sent: Vec<bool>,
    /// Each arm's efforts of the last step, chain order.
    efforts: Vec<Vec<f64>>,
    /// The same in command order.
    commands: Vec<Vec<f64>>,
    reports: Vec<StepReport>,
    /// Efforts the safety layer clipped at a limit since the start (all arms).
    saturated: u64,
    /// Efforts the joint-limit protection bounded, all arms.
    joint_limited: u64,
}

/// What a tick of the node's timer did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ticked {
    /// The node's time at the tick.
    pub now: f64,
    /// Whether it stepped (a timed step, or the watchdog's hold).
    pub stepped: bool,
}

impl<G: BorrowMut<ArmGroup>> ArmLoop<G> {
    /// `group` paced by `timing` (a node).
    pub fn new(group: G, timing: LoopTiming) -> Self {
        let arms = group.borrow().arm_count();
        let n = group.borrow().core().joints().len();
        Self {
            order: group.borrow().command_order().to_vec(),
            group,
            timing,
            fresh: vec![false; arms],
            commanded: vec![false; arms],
            sent: vec![false; arms],
            efforts: vec![vec![0.0; n]; arms],
            commands: vec![vec![0.0; n]; arms],
            reports: vec![StepReport::default(); arms],
            saturated: 0,
            joint_limited: 0,
        }
    }

    /// `group` paced by its host, which gives every time ([`Self::record_state`],
    /// [`Self::step`]).
    pub fn hosted(group: G) -> Self {
        Self::new(group, LoopTiming::new(NodeClock::new(false), 0.0, 0.0))
    }

    /// The arms.
    pub fn group(&self) -> &ArmGroup {
        self.group.borrow()
    }

    /// The arms, to set parameters, references and targets.
    pub fn group_mut(&mut self) -> &mut ArmGroup {
        self.group.borrow_mut()
    }

    /// The arms, out of the loop.
    pub fn into_group(self) -> G {
        self.group
    }

    /// The node's timing.
    pub fn timing(&self) -> &LoopTiming {
        &self.timing
    }

    /// Now on the node's clock.
    pub fn now(&self) -> f64 {
        self.timing.now()
    }

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
        self.group_mut()
            .arm_mut(arm)
            .on_joint_state(names, q, qd, t);
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
        (0..self.fresh.len()).any(|a| self.group().arm(a).states_stopped(now))
    }

    /// A step at `now` by the time since the last ([`LoopTiming::step`]).
    fn step_timed(&mut self, now: f64) -> f64 {
        let dt = self.timing.step(now);
        self.step(now, dt);
        now
    }

    /// One step of every arm at `now`, `dt` after the last. An arm that never sent a state is
    /// not commanded: there is nothing to compute from yet, and a guess is worse than nothing.
    pub fn step(&mut self, now: f64, dt: f64) {
        self.fresh.fill(false);
        let group: &mut ArmGroup = self.group.borrow_mut();
        group.step(now, dt, &mut self.efforts, &mut self.reports);
        for a in 0..self.reports.len() {
            self.saturated += self.reports[a].safety.saturated as u64;
            self.joint_limited += self.reports[a].safety.joint_limited as u64;
            self.sent[a] = self.reports[a].fault != Some(Fault::NoState);
            if self.sent[a] {
                self.reorder(a);
                self.commanded[a] = true;
            }
        }
    }

    fn reorder(&mut self, a: usize) {
        in_command_order(&self.order, &self.efforts[a], &mut self.commands[a]);
    }

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
        in_command_order(&self.order, &self.efforts[a], out);
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

    /// What the last step changed beyond the arms' own events, to tell once.
    pub fn take_notice(&mut self) -> Option<String> {
        self.group_mut().take_notice()
    }

    /// Whether the state of the step at `now` is due for publishing (at
    /// `state_publish_rate`, once any arm was commanded; marked published when it is).
    pub fn state_due(&mut self, now: f64) -> bool {
        self.commanded.iter().any(|c| *c) && self.timing.state_due(now)
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
            self.group_mut().arm_mut(a).restart();
        }
        self.fresh.fill(false);
        self.commanded.fill(false);
    }

    /// Arm `a`'s `safe_mode` command into its command (see [`Self::command`]), whether or
    /// not it was ever commanded; returns what it is.
    pub fn safe_command(&mut self, a: usize) -> &'static str {
        let mode = self
            .group
            .borrow_mut()
            .arm_mut(a)
            .safe_command(&mut self.efforts[a]);
        self.reorder(a);
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

#[cfg(test)]
mod tests;
