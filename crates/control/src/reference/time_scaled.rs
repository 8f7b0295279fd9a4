//! A trajectory followed at a speed its caller changes while it runs: the path stays the same,
//! time along it runs at `rate` (at most 1). Velocities scale by the rate and accelerations by
//! its square; a rate that changes adds its rate of change times the path velocity to the
//! acceleration, which is not in the reference: the caller bounds how fast it changes the rate.
//! Used to slow an excitation down while an arm on a model still unknown tracks it poorly.

use std::sync::{Arc, Mutex, MutexGuard};

use super::Trajectory;
use crate::JointReference;

/// The slowest rate: a trajectory slowed to a stop would leave the arm waiting on a fault.
pub const MIN_RATE: f64 = 0.05;

/// The path time reached, and how fast it advances.
#[derive(Debug)]
struct Clock {
    /// Whether time along the path is scaled yet (not while a host checks the trajectory).
    running: bool,
    rate: f64,
    last_t: f64,
    last_tau: f64,
}

/// The caller's handle on a [`TimeScaled`]'s speed.
#[derive(Debug, Clone)]
pub struct SpeedControl(Arc<Mutex<Clock>>);

impl SpeedControl {
    fn clock(&self) -> MutexGuard<'_, Clock> {
        // A panic elsewhere cannot leave the clock half-written: its fields are plain numbers.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Starts scaling time from trajectory time 0 on (samples before this call are the inner
    /// trajectory's own, so that a host's checks see it as planned).
    pub fn start(&self) {
        let mut clock = self.clock();
        clock.running = true;
        clock.last_t = 0.0;
        clock.last_tau = 0.0;
    }

    /// Sets the rate from the last sample on, within [`MIN_RATE`] and 1.
    pub fn set_rate(&self, rate: f64) {
        let rate = if rate.is_nan() { MIN_RATE } else { rate };
        self.clock().rate = rate.clamp(MIN_RATE, 1.0);
    }

    /// The rate now.
    pub fn rate(&self) -> f64 {
        self.clock().rate
    }
}

/// `inner` at a rate set through its [`SpeedControl`].
pub struct TimeScaled {
    inner: Box<dyn Trajectory>,
    clock: SpeedControl,
}

impl std::fmt::Debug for TimeScaled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimeScaled")
            .field("clock", &self.clock)
            .finish()
    }
}

impl TimeScaled {
    /// `inner` at full speed, and the handle that changes its speed.
    pub fn new(inner: Box<dyn Trajectory>) -> (Self, SpeedControl) {
        let clock = SpeedControl(Arc::new(Mutex::new(Clock {
            running: false,
            rate: 1.0,
            last_t: 0.0,
            last_tau: 0.0,
        })));
        (
            Self {
                inner,
                clock: clock.clone(),
            },
            clock,
        )
    }

    /// The path time at `t` and the rate, advancing the clock when `t` is later than before.
    fn path_time(&self, t: f64) -> (f64, f64) {
        let mut clock = self.clock.clock();
        if !clock.running {
            return (t, 1.0);
        }
        if t > clock.last_t {
            clock.last_tau += (t - clock.last_t) * clock.rate;
            clock.last_t = t;
        }
        (clock.last_tau - (clock.last_t - t) * clock.rate, clock.rate)
    }
}

impl Trajectory for TimeScaled {
    fn dof(&self) -> usize {
        self.inner.dof()
    }

    /// At most the inner trajectory's at the slowest rate.
    fn duration(&self) -> f64 {
        self.inner.duration() / MIN_RATE
    }

    /// The inner trajectory's, in its own time: the trajectory's time before the clock
    /// starts, which is when hosts check it.
    fn knots(&self) -> &[f64] {
        self.inner.knots()
    }

    fn sample(&self, t: f64, out: &mut JointReference) {
        let (tau, rate) = self.path_time(t);
        self.inner.sample(tau, out);
        out.qd.iter_mut().for_each(|v| *v *= rate);
        out.qdd.iter_mut().for_each(|a| *a *= rate * rate);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::Sinusoid;

    fn sine() -> Box<dyn Trajectory> {
        Box::new(Sinusoid::new(vec![0.0], vec![1.0], vec![0.5], vec![0.3]).unwrap())
    }

    #[test]
    fn before_start_it_is_the_inner_trajectory() {
        let (scaled, speed) = TimeScaled::new(sine());
        speed.set_rate(0.5);
        let (mut a, mut b) = (JointReference::hold(&[0.0]), JointReference::hold(&[0.0]));
        scaled.sample(0.7, &mut a);
        sine().sample(0.7, &mut b);
        assert_eq!(a.q, b.q);
        assert_eq!(a.qd, b.qd);
    }

    #[test]
    fn half_rate_follows_the_path_at_half_speed() {
        let (scaled, speed) = TimeScaled::new(sine());
        speed.start();
        let mut out = JointReference::hold(&[0.0]);
        let mut reference = JointReference::hold(&[0.0]);
        for k in 0..=100 {
            scaled.sample(k as f64 * 0.01, &mut out);
            if k == 50 {
                speed.set_rate(0.5);
            }
        }
        // 0.5 s at full speed, then 0.5 s at half: path time 0.75 s.
        sine().sample(0.75, &mut reference);
        assert!((out.q[0] - reference.q[0]).abs() < 1e-12);
        assert!((out.qd[0] - 0.5 * reference.qd[0]).abs() < 1e-12);
        assert!((out.qdd[0] - 0.25 * reference.qdd[0]).abs() < 1e-12);
    }

    #[test]
    fn the_rate_stays_within_its_bounds() {
        let (_, speed) = TimeScaled::new(sine());
        for (asked, got) in [
            (0.0, MIN_RATE),
            (2.0, 1.0),
            (f64::NAN, MIN_RATE),
            (0.3, 0.3),
        ] {
            speed.set_rate(asked);
            assert_eq!(speed.rate(), got);
        }
    }
}
