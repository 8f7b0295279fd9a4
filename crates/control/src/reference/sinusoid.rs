//! A sinusoid per joint: `q = center + amplitude sin(2 pi f t + phase)`.

use super::Trajectory;
use crate::{ControlError, JointReference};

/// Per-joint sinusoids (periodic, never ends).
#[derive(Debug, Clone, PartialEq)]
pub struct Sinusoid {
    center: Vec<f64>,
    amplitude: Vec<f64>,
    frequency: Vec<f64>,
    phase: Vec<f64>,
}

impl Sinusoid {
    /// Centre, amplitude, frequency (Hz) and phase (rad) per joint.
    pub fn new(
        center: Vec<f64>,
        amplitude: Vec<f64>,
        frequency: Vec<f64>,
        phase: Vec<f64>,
    ) -> Result<Self, ControlError> {
        let n = center.len();
        if [amplitude.len(), frequency.len(), phase.len()]
            .iter()
            .any(|&l| l != n)
        {
            return Err(ControlError::InvalidReference {
                reason: "centre, amplitude, frequency and phase need one value per joint".into(),
            });
        }
        if center
            .iter()
            .chain(&amplitude)
            .chain(&frequency)
            .chain(&phase)
            .any(|v| !v.is_finite())
        {
            return Err(ControlError::InvalidReference {
                reason: "sinusoid values must be finite".into(),
            });
        }
        Ok(Self {
            center,
            amplitude,
            frequency,
            phase,
        })
    }
}

impl Trajectory for Sinusoid {
    fn dof(&self) -> usize {
        self.center.len()
    }
    fn duration(&self) -> f64 {
        f64::INFINITY
    }
    fn sample(&self, t: f64, out: &mut JointReference) {
        for i in 0..self.center.len() {
            let w = 2.0 * std::f64::consts::PI * self.frequency[i];
            let (s, c) = (w * t + self.phase[i]).sin_cos();
            out.q[i] = self.center[i] + self.amplitude[i] * s;
            out.qd[i] = self.amplitude[i] * w * c;
            out.qdd[i] = -self.amplitude[i] * w * w * s;
        }
    }
}
