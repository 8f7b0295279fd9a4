//! The friction columns of the regressor: viscous and Coulomb per joint, then the Coulomb
//! friction's harmonics over each joint's position where the log sweeps enough of its range.

use nalgebra::DMatrix;

use super::{condition_number, IdentifyOptions, Signals};

/// The friction model identified: none, or viscous and Coulomb with `harmonics` harmonics of
/// the Coulomb level over the position; and the speed below which a joint's equation is left
/// out.
#[derive(Debug, Clone)]
pub(super) struct FrictionColumns {
    pub(super) on: bool,
    /// Harmonics asked for.
    pub(super) harmonics: usize,
    /// Harmonics identified per joint (`harmonics`, or 0 where the log cannot tell them).
    pub(super) per_joint: Vec<usize>,
    pub(super) min_speed: f64,
}

/// Above this condition number (unit columns) of `[1, cos q, sin q, .., cos Kq, sin Kq]` over
/// a joint's moving samples, the harmonics and the mean Coulomb level trade off against each
/// other: the joint does not sweep enough of its range.
const MAX_HARMONIC_CONDITION: f64 = 1000.0;

impl FrictionColumns {
    pub(super) fn of(options: &IdentifyOptions, n: usize) -> Self {
        let harmonics = if options.friction {
            options.friction_harmonics
        } else {
            0
        };
        Self {
            on: options.friction,
            harmonics,
            per_joint: vec![harmonics; n],
            min_speed: options.min_speed,
        }
    }

    /// Leaves out the harmonics of the joints whose moving samples in `samples` cannot
    /// determine them.
    pub(super) fn keep_identifiable(&mut self, s: &Signals, samples: &[usize]) {
        for (j, count) in self.per_joint.iter_mut().enumerate() {
            let k = *count;
            if k == 0 {
                continue;
            }
            let moving: Vec<f64> = samples
                .iter()
                .filter(|&&r| s.qd[r][j].abs() >= self.min_speed)
                .map(|&r| s.q[r][j])
                .collect();
            let basis = DMatrix::from_fn(moving.len(), 1 + 2 * k, |r, c| match c {
                0 => 1.0,
                c => {
                    let h = c.div_ceil(2) as f64;
                    if c % 2 == 1 {
                        (h * moving[r]).cos()
                    } else {
                        (h * moving[r]).sin()
                    }
                }
            });
            if moving.len() < 2 * (1 + 2 * k) || condition_number(&basis) > MAX_HARMONIC_CONDITION {
                *count = 0;
            }
        }
    }

    /// Friction unknowns of all joints.
    pub(super) fn unknowns(&self) -> usize {
        if self.on {
            2 * self.per_joint.len() + 2 * self.per_joint.iter().sum::<usize>()
        } else {
            0
        }
    }

    /// The column of joint j's first harmonic, after the base and the viscous and Coulomb
    /// columns.
    pub(super) fn first_harmonic(&self, b: usize, j: usize) -> usize {
        b + 2 * self.per_joint.len() + 2 * self.per_joint[..j].iter().sum::<usize>()
    }
}
