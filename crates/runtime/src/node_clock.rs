//! The node's time. On the wall clock: seconds since the node started (monotonic), with
//! message stamps (ROS time, seconds since the epoch) converted to it. On simulated time
//! (`use_sim_time`): `/clock`, zero until the first tick, as in rclcpp; stamps are sim time.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// What a new `/clock` value means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockChange {
    /// Time moved on (or stood still).
    Forward,
    /// Time went back: the simulation was reset.
    JumpedBack,
}

/// The node's time source.
#[derive(Debug, Clone)]
pub struct NodeClock {
    sim: Option<Option<f64>>,
    started: Instant,
    epoch_at_start: f64,
}

impl NodeClock {
    /// Wall-clock time, or simulated time from `/clock` when `use_sim_time`.
    pub fn new(use_sim_time: bool) -> Self {
        let epoch_at_start = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        Self {
            sim: use_sim_time.then_some(None),
            started: Instant::now(),
            epoch_at_start,
        }
    }

    /// Whether time comes from `/clock`.
    pub fn is_simulated(&self) -> bool {
        self.sim.is_some()
    }

    /// Now, s.
    pub fn now(&self) -> f64 {
        match self.sim {
            Some(t) => t.unwrap_or(0.0),
            None => self.started.elapsed().as_secs_f64(),
        }
    }

    /// A message stamp (ROS time) in the node's time.
    pub fn from_stamp(&self, stamp: f64) -> f64 {
        match self.sim {
            Some(_) => stamp,
            None => stamp - self.epoch_at_start,
        }
    }

    /// A message stamp (s since the epoch, or simulated time) for the clock's time `t`: the
    /// inverse of [`NodeClock::from_stamp`].
    pub fn to_stamp(&self, t: f64) -> f64 {
        match self.sim {
            Some(_) => t,
            None => t + self.epoch_at_start,
        }
    }

    /// A `/clock` tick (ignored on the wall clock).
    pub fn on_clock(&mut self, t: f64) -> ClockChange {
        match &mut self.sim {
            Some(sim) => {
                let back = sim.is_some_and(|old| t < old);
                *sim = Some(t);
                if back {
                    ClockChange::JumpedBack
                } else {
                    ClockChange::Forward
                }
            }
            None => ClockChange::Forward,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simulated_time_follows_clock_and_notices_resets() {
        let mut clock = NodeClock::new(true);
        assert_eq!(clock.now(), 0.0);
        assert_eq!(clock.on_clock(2.0), ClockChange::Forward);
        assert_eq!(clock.now(), 2.0);
        assert_eq!(clock.from_stamp(2.5), 2.5);
        assert_eq!(clock.on_clock(0.1), ClockChange::JumpedBack);
    }

    #[test]
    fn wall_time_converts_epoch_stamps() {
        let clock = NodeClock::new(false);
        let epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        let in_one_second = clock.from_stamp(epoch + 1.0);
        assert!(
            (in_one_second - (clock.now() + 1.0)).abs() < 0.05,
            "{in_one_second}"
        );
    }
}
