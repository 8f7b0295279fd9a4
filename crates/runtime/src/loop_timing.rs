//! When a controller node computes a command and publishes its state: the timing policy both
//! controller nodes share (one arm, or two under one law), on the wall clock or on simulated
//! time. With `update_rate` 0 a step answers the joint states (the node says when they are
//! complete) and the timer is a watchdog; otherwise the timer steps at `update_rate`, on
//! simulated time only when time moved on. A clock that goes back (a reset simulation) starts
//! the timing over.

use crate::node_clock::{ClockChange, NodeClock};

/// What the node does at a tick of its timer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tick {
    /// A control step at this time.
    Step(f64),
    /// Per-message mode: step at this time only if the states stopped coming (the core then
    /// holds, and the hold must be sent).
    Watchdog(f64),
    /// Simulated time stood still since the last step: nothing to do.
    Idle,
}

/// The node's clock, its control and state-publishing rates, and when it last did each.
#[derive(Debug, Clone)]
pub struct LoopTiming {
    clock: NodeClock,
    update_rate: f64,
    last_step: Option<f64>,
    state_period: f64,
    last_state: Option<f64>,
}

/// The timer's rate in per-message mode: often enough to notice a state older than
/// `state_timeout` within a tenth of it, between 100 and 1000 Hz.
pub fn watchdog_rate(state_timeout: f64) -> f64 {
    (10.0 / state_timeout).clamp(100.0, 1000.0)
}

/// Seconds between messages at `rate` Hz (0 Hz: every time).
pub fn period(rate: f64) -> f64 {
    if rate > 0.0 {
        1.0 / rate
    } else {
        0.0
    }
}

impl LoopTiming {
    /// Timing on `clock` at `update_rate` (0: per message), publishing the state at
    /// `state_publish_rate` (0: every step).
    pub fn new(clock: NodeClock, update_rate: f64, state_publish_rate: f64) -> Self {
        Self {
            clock,
            update_rate,
            last_step: None,
            state_period: period(state_publish_rate),
            last_state: None,
        }
    }

    /// The timer's rate: `update_rate`, or the watchdog's for `state_timeout`.
    pub fn tick_rate(update_rate: f64, state_timeout: f64) -> f64 {
        if update_rate > 0.0 {
            update_rate
        } else {
            watchdog_rate(state_timeout)
        }
    }

    /// The clock.
    pub fn clock(&self) -> &NodeClock {
        &self.clock
    }

    /// Now on the node's clock.
    pub fn now(&self) -> f64 {
        self.clock.now()
    }

    /// Whether a step answers the joint states (`update_rate` 0) rather than the timer.
    pub fn per_message(&self) -> bool {
        self.update_rate <= 0.0
    }

    /// The time of a joint state stamped `stamp` (ROS time): the stamp on simulated time
    /// when it has one, else now.
    pub fn state_time(&self, stamp: f64) -> f64 {
        if self.clock.is_simulated() && stamp > 0.0 {
            stamp
        } else {
            self.clock.now()
        }
    }

    /// What a tick of the timer at `now` asks for.
    pub fn tick(&self, now: f64) -> Tick {
        if self.per_message() {
            Tick::Watchdog(now)
        } else if !self.clock.is_simulated() || self.last_step.is_none_or(|t| now > t) {
            Tick::Step(now)
        } else {
            Tick::Idle
        }
    }

    /// Marks a step at `now`; returns the time it advances ramps and adaptation by: since the
    /// last step (a timer that merged missed ticks after a stall still advances by the real
    /// time; at most 0.1 s, beyond the default `state_timeout`, after which the core holds
    /// anyway), or one period of `update_rate` (1 ms per message) at the first step.
    pub fn step(&mut self, now: f64) -> f64 {
        let first = if self.update_rate > 0.0 {
            1.0 / self.update_rate
        } else {
            1e-3
        };
        let dt = self.last_step.map_or(first, |t| (now - t).clamp(1e-6, 0.1));
        self.last_step = Some(now);
        dt
    }

    /// Whether a step was ever made.
    pub fn ever_stepped(&self) -> bool {
        self.last_step.is_some()
    }

    /// Whether the state is due at `now` (marked published when it is); a clock that went
    /// back publishes at once.
    pub fn state_due(&mut self, now: f64) -> bool {
        let due = self
            .last_state
            .is_none_or(|t| now - t >= self.state_period - 1e-9 || now < t);
        if due {
            self.last_state = Some(now);
        }
        due
    }

    /// A new `state_publish_rate`.
    pub fn set_state_rate(&mut self, rate: f64) {
        self.state_period = period(rate);
    }

    /// A `/clock` tick; `true` when time went back (a reset simulation): the timing starts
    /// over, and the caller restarts what follows time (the core, a running goal).
    pub fn on_clock(&mut self, t: f64) -> bool {
        let back = self.clock.on_clock(t) == ClockChange::JumpedBack;
        if back {
            self.last_step = None;
            self.last_state = None;
        }
        back
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_timed_from_the_last_and_bounded() {
        let mut timing = LoopTiming::new(NodeClock::new(true), 500.0, 0.0);
        assert_eq!(timing.step(1.0), 2e-3, "one period at the first step");
        assert!((timing.step(1.004) - 4e-3).abs() < 1e-12);
        assert_eq!(timing.step(5.0), 0.1, "a stall advances by 0.1 s at most");
        assert_eq!(timing.step(5.0), 1e-6);
        let mut per_message = LoopTiming::new(NodeClock::new(false), 0.0, 0.0);
        assert!(per_message.per_message());
        assert_eq!(per_message.step(0.0), 1e-3);
        assert_eq!(per_message.tick(0.5), Tick::Watchdog(0.5));
    }

    #[test]
    fn simulated_time_steps_only_when_it_moves_and_a_reset_starts_over() {
        let mut timing = LoopTiming::new(NodeClock::new(true), 100.0, 10.0);
        assert!(!timing.on_clock(1.0));
        assert_eq!(timing.tick(1.0), Tick::Step(1.0));
        timing.step(1.0);
        assert_eq!(timing.tick(1.0), Tick::Idle, "time stood still");
        assert!(timing.state_due(1.0));
        assert!(!timing.state_due(1.05), "10 Hz");
        assert!(timing.state_due(1.1));
        assert!(timing.on_clock(0.5), "went back");
        assert!(!timing.ever_stepped());
        assert!(timing.state_due(0.5));
        assert_eq!(timing.state_time(0.7), 0.7, "stamps are sim time");
    }

    #[test]
    fn the_watchdog_notices_a_stale_state_within_a_tenth_of_the_timeout() {
        assert_eq!(watchdog_rate(0.1), 100.0);
        assert_eq!(watchdog_rate(0.005), 1000.0);
        assert_eq!(LoopTiming::tick_rate(250.0, 0.1), 250.0);
        assert_eq!(LoopTiming::tick_rate(0.0, 0.02), 500.0);
    }
}
