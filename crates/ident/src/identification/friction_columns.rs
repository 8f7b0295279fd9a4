//! The friction columns of the regressor: viscous and Coulomb per joint, then the Coulomb
//! friction's harmonics over each joint's position where the log sweeps enough of its range,
//! then (if asked) each joint's friction offset.

use nalgebra::{DMatrix, DVector};

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
    /// One column per joint for its Coulomb asymmetry, 1 on the rows where it slides
    /// (Gautier's `Off_j`).
    pub(super) offset: bool,
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
            offset: options.friction && options.friction_offset,
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
        let n = self.per_joint.len();
        if self.on {
            2 * n + 2 * self.per_joint.iter().sum::<usize>() + if self.offset { n } else { 0 }
        } else {
            0
        }
    }

    /// The column of joint j's offset, after every harmonic.
    pub(super) fn offset_column(&self, b: usize, j: usize) -> usize {
        self.first_harmonic(b, self.per_joint.len()) + j
    }

    /// Cuts each joint's harmonics to its Coulomb level (a model clamps a slightly negative
    /// level to zero), then its offset to what the harmonics leave, so that the friction
    /// drives the joint neither way (a model would refuse it otherwise): the joints whose
    /// harmonics, and whose offset, were cut.
    pub(super) fn limit(&self, estimate: &mut DVector<f64>, b: usize) -> (Vec<usize>, Vec<usize>) {
        let n = self.per_joint.len();
        let (mut ripple_cut, mut offset_cut) = (vec![], vec![]);
        if !self.on {
            return (ripple_cut, offset_cut);
        }
        for j in 0..n {
            let level = estimate[b + n + j].max(0.0);
            let first = self.first_harmonic(b, j);
            let mut harmonics = estimate.rows_mut(first, 2 * self.per_joint[j]);
            let bound: f64 = harmonics
                .as_slice()
                .chunks(2)
                .map(|p| p[0].hypot(p[1]))
                .sum();
            if bound > level {
                harmonics *= if bound > 0.0 { level / bound } else { 0.0 };
                ripple_cut.push(j);
            }
            let room = level - bound.min(level);
            if self.offset {
                let offset = &mut estimate[self.offset_column(b, j)];
                if offset.abs() > room {
                    *offset = offset.signum() * room;
                    offset_cut.push(j);
                }
            }
        }
        (ripple_cut, offset_cut)
    }

    /// Joint j's friction entries in row `r` of `w`, at position `q` and velocity `qd`:
    /// viscous `qd`, Coulomb `sgn(qd)`, its harmonics `sgn(qd) cos(k q)`, `sgn(qd) sin(k q)`
    /// and the offset `|sgn(qd)|`.
    pub(super) fn fill(
        &self,
        w: &mut DMatrix<f64>,
        (r, b): (usize, usize),
        j: usize,
        q: f64,
        qd: f64,
    ) {
        let n = self.per_joint.len();
        let sign = qd.signum() * f64::from(qd != 0.0);
        w[(r, b + j)] = qd;
        w[(r, b + n + j)] = sign;
        for h in 0..self.per_joint[j] {
            let (sin, cos) = ((h + 1) as f64 * q).sin_cos();
            let column = self.first_harmonic(b, j) + 2 * h;
            w[(r, column)] = sign * cos;
            w[(r, column + 1)] = sign * sin;
        }
        if self.offset {
            w[(r, self.offset_column(b, j))] = sign.abs();
        }
    }

    /// The column of joint j's first harmonic, after the base and the viscous and Coulomb
    /// columns.
    pub(super) fn first_harmonic(&self, b: usize, j: usize) -> usize {
        b + 2 * self.per_joint.len() + 2 * self.per_joint[..j].iter().sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Harmonics above the Coulomb level are scaled to it; offsets are cut to what is left.
    #[test]
    fn the_friction_shape_is_cut_to_the_coulomb_level_naming_the_joints() {
        let columns = FrictionColumns {
            on: true,
            harmonics: 1,
            per_joint: vec![1, 0],
            offset: true,
            min_speed: 0.1,
        };
        let b = 1;
        assert_eq!(columns.unknowns(), 2 + 2 + 2 + 2);
        assert_eq!(columns.offset_column(b, 1), 8);
        // [base, viscous 1, 2, Coulomb 1, 2, cos 1, sin 1, offset 1, 2]
        let mut estimate = DVector::from_vec(vec![1.0, 0.1, 0.1, 0.4, 0.2, 0.3, 0.4, 0.1, -0.5]);
        let (ripple_cut, offset_cut) = columns.limit(&mut estimate, b);
        assert_eq!((ripple_cut, offset_cut), (vec![0], vec![0, 1]));
        assert!((estimate[5] - 0.24).abs() < 1e-12 && (estimate[6] - 0.32).abs() < 1e-12);
        assert_eq!((estimate[7], estimate[8]), (0.0, -0.2));
        let mut kept = DVector::from_vec(vec![1.0, 0.1, 0.1, 0.4, 0.2, 0.1, 0.0, 0.3, -0.2]);
        assert_eq!(columns.limit(&mut kept, b), (vec![], vec![]));
    }
}
