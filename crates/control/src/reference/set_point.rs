//! A constant target.

use super::Trajectory;
use crate::JointReference;

/// Hold `q` forever.
#[derive(Debug, Clone, PartialEq)]
pub struct SetPoint {
    q: Vec<f64>,
}

impl SetPoint {
    /// A set point at `q`.
    pub fn new(q: Vec<f64>) -> Self {
        Self { q }
    }
}

impl Trajectory for SetPoint {
    fn dof(&self) -> usize {
        self.q.len()
    }
    fn duration(&self) -> f64 {
        0.0
    }
    fn sample(&self, _t: f64, out: &mut JointReference) {
        out.q.copy_from_slice(&self.q);
        out.qd.fill(0.0);
        out.qdd.fill(0.0);
    }
}
