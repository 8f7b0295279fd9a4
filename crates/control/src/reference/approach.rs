//! Joining a trajectory from where the arm is, instead of by a step: a quintic move within a
//! share of the velocity limits and within the acceleration limits to the point the trajectory
//! has reached, then the trajectory from there on. A set point reached from 0.5 rad away is
//! then a move the law can follow without driving a joint past its velocity limit.

use super::Trajectory;
use crate::JointReference;

/// Peak speed of the quintic time law per unit distance and time (`15/8`).
const QUINTIC_PEAK_SPEED: f64 = 1.875;

/// Peak acceleration of the quintic time law per unit distance and time squared (`10/sqrt(3)`).
const QUINTIC_PEAK_ACCELERATION: f64 = 5.773_502_691_896_258;

/// A trajectory, joined by a move planned when the arm's position is known.
pub struct Approach {
    inner: Box<dyn Trajectory>,
    from: Vec<f64>,
    to: JointReference,
    /// The time of `inner` the move joins it at.
    offset: f64,
    /// Of the move; 0 when none is planned.
    move_duration: f64,
}

impl std::fmt::Debug for Approach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Approach")
            .field("from", &self.from)
            .field("to", &self.to.q)
            .field("offset", &self.offset)
            .field("move_duration", &self.move_duration)
            .finish()
    }
}

impl Approach {
    /// `inner` as it is (no move yet); the buffers of a later [`Approach::plan`] are allocated
    /// here.
    pub fn new(inner: Box<dyn Trajectory>) -> Self {
        let n = inner.dof();
        Self {
            inner,
            from: vec![0.0; n],
            to: JointReference::hold(&vec![0.0; n]),
            offset: 0.0,
            move_duration: 0.0,
        }
    }

    /// Plans the move from the arm at rest at `q` to where `inner` is at its time `offset`,
    /// with peak speeds within `velocity` and peak accelerations within `acceleration` per
    /// joint (a non-positive or non-finite entry bounds nothing). Sampling then starts the
    /// move at 0. Allocates nothing.
    pub fn plan(&mut self, q: &[f64], offset: f64, velocity: &[f64], acceleration: &[f64]) {
        self.inner.sample(offset, &mut self.to);
        self.from.copy_from_slice(q);
        self.offset = offset;
        self.move_duration = self
            .from
            .iter()
            .zip(&self.to.q)
            .zip(velocity.iter().zip(acceleration))
            .map(|((a, b), (&v, &acc))| move_time((b - a).abs(), v, acc))
            .fold(0.0, f64::max);
    }

    /// Seconds the planned move takes (0: none).
    pub fn move_duration(&self) -> f64 {
        self.move_duration
    }
}

/// The shortest quintic move over `distance` within `velocity` and `acceleration`.
fn move_time(distance: f64, velocity: f64, acceleration: f64) -> f64 {
    let bounded = |limit: f64| limit.is_finite() && limit > 0.0;
    let by_speed = if bounded(velocity) {
        QUINTIC_PEAK_SPEED * distance / velocity
    } else {
        0.0
    };
    let by_acceleration = if bounded(acceleration) {
        (QUINTIC_PEAK_ACCELERATION * distance / acceleration).sqrt()
    } else {
        0.0
    };
    by_speed.max(by_acceleration)
}

impl Trajectory for Approach {
    fn dof(&self) -> usize {
        self.inner.dof()
    }
    fn duration(&self) -> f64 {
        self.move_duration + (self.inner.duration() - self.offset).max(0.0)
    }
    fn sample(&self, t: f64, out: &mut JointReference) {
        let big_t = self.move_duration;
        if t >= big_t {
            return self.inner.sample(t - big_t + self.offset, out);
        }
        let s = (t / big_t).clamp(0.0, 1.0);
        let (s2, s3) = (s * s, s * s * s);
        let p = s3 * (10.0 - 15.0 * s + 6.0 * s2);
        let v = 30.0 * s2 * (1.0 - 2.0 * s + s2) / big_t;
        let a = 60.0 * s * (1.0 - 3.0 * s + 2.0 * s2) / (big_t * big_t);
        for (i, (from, to)) in self.from.iter().zip(&self.to.q).enumerate() {
            let delta = to - from;
            out.q[i] = from + delta * p;
            out.qd[i] = delta * v;
            out.qdd[i] = delta * a;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::{SetPoint, Sinusoid};

    #[test]
    fn a_set_point_is_reached_within_the_limits_and_then_held() {
        let mut approach = Approach::new(Box::new(SetPoint::new(vec![0.5, -0.2])));
        approach.plan(&[0.0, 0.0], 0.0, &[1.0, 0.1], &[10.0, 10.0]);
        // Joint 2 is the slow one: 0.2 rad at 0.1 rad/s.
        let big_t = approach.move_duration();
        assert!((big_t - 1.875 * 0.2 / 0.1).abs() < 1e-12, "{big_t}");
        let mut out = JointReference::hold(&[0.0, 0.0]);
        let (mut peak_speed, mut peak_acceleration) = ([0.0f64; 2], [0.0f64; 2]);
        for k in 0..=4000 {
            approach.sample(k as f64 * 1e-3, &mut out);
            for i in 0..2 {
                peak_speed[i] = peak_speed[i].max(out.qd[i].abs());
                peak_acceleration[i] = peak_acceleration[i].max(out.qdd[i].abs());
            }
        }
        assert!(
            peak_speed[0] <= 1.0 && peak_speed[1] <= 0.1 * (1.0 + 1e-6),
            "{peak_speed:?}"
        );
        assert!(
            peak_acceleration.iter().all(|a| *a <= 10.0),
            "{peak_acceleration:?}"
        );
        assert_eq!(out.q, vec![0.5, -0.2]);
        assert_eq!(approach.duration(), big_t);
    }

    #[test]
    fn a_moving_trajectory_is_joined_where_it_has_got_to() {
        let inner = Sinusoid::new(vec![0.0], vec![0.3], vec![1.0], vec![0.0]).unwrap();
        let mut expected = JointReference::hold(&[0.0]);
        inner.sample(2.0, &mut expected);
        let mut approach = Approach::new(Box::new(inner));
        approach.plan(&[1.0], 2.0, &[0.5], &[5.0]);
        let big_t = approach.move_duration();
        let mut out = JointReference::hold(&[0.0]);
        approach.sample(0.0, &mut out);
        assert_eq!(out.q, vec![1.0]);
        approach.sample(big_t, &mut out);
        assert!((out.q[0] - expected.q[0]).abs() < 1e-12);
        // Without a plan the trajectory passes through unchanged.
        let plain = Approach::new(Box::new(SetPoint::new(vec![0.2])));
        plain.sample(0.0, &mut out);
        assert_eq!((plain.move_duration(), out.q[0]), (0.0, 0.2));
    }
}
