//! Point-to-point motion with a quintic time law: zero velocity and acceleration at both ends.
//! `q(s) = q0 + (q1 - q0)(10 s^3 - 15 s^4 + 6 s^5)`, `s = t / T`.

use super::Trajectory;
use crate::{ControlError, JointReference};

/// From `from` to `to` in `duration` seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Quintic {
    from: Vec<f64>,
    to: Vec<f64>,
    duration: f64,
}

impl Quintic {
    /// Checks sizes, finiteness and a positive duration.
    pub fn new(from: Vec<f64>, to: Vec<f64>, duration: f64) -> Result<Self, ControlError> {
        let invalid = |reason: String| Err(ControlError::InvalidReference { reason });
        if from.len() != to.len() {
            return invalid(format!(
                "start has {} joints, goal {}",
                from.len(),
                to.len()
            ));
        }
        if from.iter().chain(&to).any(|v| !v.is_finite()) {
            return invalid("positions must be finite".into());
        }
        if !(duration.is_finite() && duration > 0.0) {
            return invalid(format!("duration {duration} must be positive"));
        }
        Ok(Self { from, to, duration })
    }
}

impl Trajectory for Quintic {
    fn dof(&self) -> usize {
        self.from.len()
    }
    fn duration(&self) -> f64 {
        self.duration
    }
    fn sample(&self, t: f64, out: &mut JointReference) {
        let big_t = self.duration;
        let s = (t / big_t).clamp(0.0, 1.0);
        let (s2, s3) = (s * s, s * s * s);
        let p = s3 * (10.0 - 15.0 * s + 6.0 * s2);
        let v = 30.0 * s2 * (1.0 - 2.0 * s + s2) / big_t;
        let a = 60.0 * s * (1.0 - 3.0 * s + 2.0 * s2) / (big_t * big_t);
        for i in 0..self.from.len() {
            let delta = self.to[i] - self.from[i];
            out.q[i] = self.from[i] + delta * p;
            out.qd[i] = delta * v;
            out.qdd[i] = delta * a;
        }
    }
}
