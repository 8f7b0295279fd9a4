//! A finite Fourier series per joint, the usual excitation trajectory for identification
//! (Swevers et al. 1997): with `w = 2 pi f` and harmonics `l = 1..L`,
//! `q_i = offset_i + sum_l a_il / (w l) sin(w l t) - b_il / (w l) cos(w l t)`,
//! `qd_i = sum_l a_il cos(w l t) + b_il sin(w l t)`,
//! `qdd_i = sum_l w l (b_il cos(w l t) - a_il sin(w l t))`. Periodic with period `1 / f`.

use super::Trajectory;
use crate::{ControlError, JointReference};

/// Per-joint Fourier series (periodic, never ends).
#[derive(Debug, Clone, PartialEq)]
pub struct Fourier {
    base_frequency: f64,
    offset: Vec<f64>,
    a: Vec<Vec<f64>>,
    b: Vec<Vec<f64>>,
}

impl Fourier {
    /// Base frequency (Hz), offsets, and the sine and cosine coefficients per joint (rad/s),
    /// one list of `L` harmonics per joint.
    pub fn new(
        base_frequency: f64,
        offset: Vec<f64>,
        a: Vec<Vec<f64>>,
        b: Vec<Vec<f64>>,
    ) -> Result<Self, ControlError> {
        let invalid = |reason: &str| {
            Err(ControlError::InvalidReference {
                reason: reason.into(),
            })
        };
        if !(base_frequency.is_finite() && base_frequency > 0.0) {
            return invalid("the base frequency must be positive");
        }
        let n = offset.len();
        let harmonics = a.first().map_or(0, Vec::len);
        if a.len() != n
            || b.len() != n
            || a.iter().chain(&b).any(|h| h.len() != harmonics)
            || harmonics == 0
        {
            return invalid(
                "a and b need the same number of harmonics (at least one) for every joint",
            );
        }
        if offset
            .iter()
            .chain(a.iter().flatten())
            .chain(b.iter().flatten())
            .any(|v| !v.is_finite())
        {
            return invalid("Fourier coefficients must be finite");
        }
        Ok(Self {
            base_frequency,
            offset,
            a,
            b,
        })
    }

    /// Base frequency, Hz.
    pub fn base_frequency(&self) -> f64 {
        self.base_frequency
    }
    /// Offsets.
    pub fn offset(&self) -> &[f64] {
        &self.offset
    }
    /// Sine coefficients, per joint.
    pub fn a(&self) -> &[Vec<f64>] {
        &self.a
    }
    /// Cosine coefficients, per joint.
    pub fn b(&self) -> &[Vec<f64>] {
        &self.b
    }
}

impl Trajectory for Fourier {
    fn dof(&self) -> usize {
        self.offset.len()
    }
    fn duration(&self) -> f64 {
        f64::INFINITY
    }
    fn sample(&self, t: f64, out: &mut JointReference) {
        let w = 2.0 * std::f64::consts::PI * self.base_frequency;
        for i in 0..self.offset.len() {
            let (mut q, mut qd, mut qdd) = (self.offset[i], 0.0, 0.0);
            for (l, (a, b)) in self.a[i].iter().zip(&self.b[i]).enumerate() {
                let wl = w * (l + 1) as f64;
                let (s, c) = (wl * t).sin_cos();
                q += (a * s - b * c) / wl;
                qd += a * c + b * s;
                qdd += wl * (b * c - a * s);
            }
            out.q[i] = q;
            out.qd[i] = qd;
            out.qdd[i] = qdd;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derivatives_match_finite_differences() {
        let f = Fourier::new(
            0.2,
            vec![0.1, -0.3],
            vec![vec![0.4, -0.2], vec![0.1, 0.3]],
            vec![vec![-0.1, 0.2], vec![0.5, -0.4]],
        )
        .unwrap();
        let (mut a, mut b, mut c) = (
            JointReference::hold(&[0.0; 2]),
            JointReference::hold(&[0.0; 2]),
            JointReference::hold(&[0.0; 2]),
        );
        let h = 1e-5;
        f.sample(1.3 - h, &mut a);
        f.sample(1.3, &mut b);
        f.sample(1.3 + h, &mut c);
        for i in 0..2 {
            assert!(((c.q[i] - a.q[i]) / (2.0 * h) - b.qd[i]).abs() < 1e-8);
            assert!(((c.qd[i] - a.qd[i]) / (2.0 * h) - b.qdd[i]).abs() < 1e-7);
        }
        // Periodic.
        f.sample(1.3 + 5.0, &mut c);
        assert!((c.q[0] - b.q[0]).abs() < 1e-12);
        assert!(Fourier::new(0.0, vec![0.0], vec![vec![1.0]], vec![vec![1.0]]).is_err());
        assert!(Fourier::new(1.0, vec![0.0], vec![vec![1.0]], vec![vec![]]).is_err());
    }
}
