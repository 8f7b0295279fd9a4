//! Critical damping of a task-space spring by double diagonalisation (Albu-Schaeffer et al.,
//! 2003; docs/theory.md section 6): with `Lambda = Q Q^T` and `K = Q diag(k0) Q^T`,
//! `D = Q diag(2 zeta sqrt(k0)) Q^T`, so every mode, light or heavy, gets the damping ratio
//! zeta. From the lower Cholesky factor U of the task mobility `Lambda^-1 = U U^T`:
//! `F = U^-T` has `F F^T = Lambda`, `F^-1 K F^-T = U^T K U = V diag(k0) V^T`, `Q = U^-T V`.
//!
//! Only `D v` is needed, for one velocity error v, so D is never formed:
//! `D v = 2 zeta U^-T V diag(sqrt(k0)) V^T U^-1 v`. The eigenvectors V are kept from one step to
//! the next: a controller's `U^T K U` changes little in 1 ms, so in the last step's basis it is
//! nearly diagonal and [`jacobi_eigen`] finishes it in two sweeps instead of six to eight.

use nalgebra::{Matrix6, Vector6};

use crate::jacobi_eigen::jacobi_eigen;
use crate::ControlError;

/// Steps between restarts from the identity. Each warm start multiplies the kept basis by
/// more rotations, and rounding makes it drift from orthogonal by about 1e-16 per step; a
/// restart bounds that at about 1e-13.
const WARM_STEPS: u32 = 256;

/// Eigenvalues of `U^T K U` below this fraction of the largest are taken as zero.
const ROUNDING: f64 = 1e-13;

/// The kept eigenvectors of `U^T K U` and how long they have been carried.
#[derive(Debug, Clone)]
pub(crate) struct ModalDamping {
    vectors: Matrix6<f64>,
    warm_steps: u32,
}

impl Default for ModalDamping {
    fn default() -> Self {
        Self {
            vectors: Matrix6::identity(),
            warm_steps: 0,
        }
    }
}

impl ModalDamping {
    /// `D v` for the stiffness `diag(k)`, the damping ratio `zeta`, the mobility's factor U
    /// and its inverse `U^-1`.
    pub(crate) fn times(
        &mut self,
        (factor, inverse_factor): (&Matrix6<f64>, &Matrix6<f64>),
        k: &[f64],
        zeta: f64,
        v: &Vector6<f64>,
    ) -> Result<Vector6<f64>, ControlError> {
        let modal = self.diagonalise(factor, k)?;
        let in_modes = self.vectors.tr_mul(&(inverse_factor * v));
        // A mode stiffer than rounding is damped; one below it has no stiffness, and the square
        // root of its rounding error would give it damping it should not have.
        let floor = ROUNDING * modal.amax();
        let gain = |k0: f64| {
            if k0 > floor {
                2.0 * zeta * k0.sqrt()
            } else {
                0.0
            }
        };
        let damped = in_modes.zip_map(&modal, |x, k0| gain(k0) * x);
        Ok(inverse_factor.tr_mul(&(self.vectors * damped)))
    }

    /// The eigenvalues k0 of `U^T K U`, with its eigenvectors left in `self.vectors`.
    fn diagonalise(
        &mut self,
        factor: &Matrix6<f64>,
        k: &[f64],
    ) -> Result<Vector6<f64>, ControlError> {
        if self.warm_steps == 0 {
            self.vectors = Matrix6::identity();
        }
        // In the kept basis: `V^T U^T K U V = P^T K P` with `P = U V`.
        let p = factor * self.vectors;
        let scaled = Matrix6::from_fn(|r, c| k[r] * p[(r, c)]);
        let mut modal = p.tr_mul(&scaled);
        match jacobi_eigen(&mut modal, &mut self.vectors) {
            Some(_) => {
                self.warm_steps = (self.warm_steps + 1) % WARM_STEPS;
                Ok(modal.diagonal())
            }
            None => {
                self.warm_steps = 0;
                Err(ControlError::NonFinite {
                    what: "task-space damping design",
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// U and `U^-1` with `Lambda^-1 = U U^T`.
    fn factors_of(lambda: &Matrix6<f64>) -> (Matrix6<f64>, Matrix6<f64>) {
        let u = lambda.try_inverse().unwrap().cholesky().unwrap().unpack();
        (u, u.try_inverse().unwrap())
    }

    /// D, column by column.
    fn matrix(
        damping: &mut ModalDamping,
        lambda: &Matrix6<f64>,
        k: &[f64],
        zeta: f64,
    ) -> Matrix6<f64> {
        let (u, g) = factors_of(lambda);
        let mut d = Matrix6::zeros();
        for c in 0..6 {
            let column = damping
                .times((&u, &g), k, zeta, &Vector6::ith(c, 1.0))
                .unwrap();
            d.set_column(c, &column);
        }
        d
    }

    #[test]
    fn damping_is_critical_in_every_mode() {
        let mut damping = ModalDamping::default();
        // A scalar inertia gives the familiar 2 zeta sqrt(k m) per axis.
        let d = matrix(
            &mut damping,
            &(Matrix6::identity() * 4.0),
            &[9.0, 16.0, 25.0, 1.0, 1.0, 1.0],
            1.0,
        );
        assert!((d[(0, 0)] - 2.0 * 6.0).abs() < 1e-12 && (d[(2, 2)] - 2.0 * 10.0).abs() < 1e-12);
        // A general inertia and stiffness: D is the geometric mean 2 zeta (Lambda # K), the
        // symmetric positive definite solution of `D Lambda^-1 D = 4 zeta^2 K`.
        for seed in 0..20_usize {
            let a = Matrix6::from_fn(|r, c| {
                ((r * 7 + c * 3 + seed) % 5) as f64 * 0.1 + if r == c { 1.0 } else { 0.0 }
            });
            let lambda = a * a.transpose();
            let k: Vec<f64> = (0..6)
                .map(|i| 10.0 + ((i * 13 + seed * 5) % 7) as f64 * 300.0)
                .collect();
            let d = matrix(&mut damping, &lambda, &k, 0.7);
            let lhs = d * lambda.try_inverse().unwrap() * d;
            let rhs = Matrix6::from_diagonal(&Vector6::from_column_slice(&k)) * 4.0 * 0.49;
            assert!((lhs - rhs).amax() < 1e-9 * rhs.amax(), "{lhs}");
            assert!((d - d.transpose()).amax() < 1e-9 * d.amax());
            assert!(d.symmetric_eigenvalues().min() > 0.0);
        }
    }

    #[test]
    fn warm_and_cold_starts_agree() {
        // Along a path of inertias with a stiffness of mixed scales and a zero axis: the kept
        // basis gives the same D as a fresh design at every step.
        let k = [2000.0, 1500.0, 0.0, 60.0, 40.0, 25.0];
        let mut kept = ModalDamping::default();
        for step in 0..600 {
            let s = step as f64 * 1e-3;
            let a = Matrix6::from_fn(|r, c| {
                (((r * 7 + c * 3) % 5) as f64 * 0.1 * (s + r as f64).cos())
                    + if r == c {
                        1.0 + 0.5 * (3.0 * s).sin()
                    } else {
                        0.0
                    }
            });
            let lambda = a * a.transpose();
            let warm = matrix(&mut kept, &lambda, &k, 1.0);
            let cold = matrix(&mut ModalDamping::default(), &lambda, &k, 1.0);
            assert!((warm - cold).amax() < 1e-9 * cold.amax(), "step {step}");
            assert!((warm - warm.transpose()).amax() < 1e-9 * cold.amax());
        }
    }

    #[test]
    fn a_non_finite_design_is_refused_and_forgotten() {
        let mut damping = ModalDamping::default();
        let (u, g) = factors_of(&Matrix6::identity());
        let v = Vector6::repeat(1.0);
        let _ = damping.times((&u, &g), &[1.0; 6], 1.0, &v).unwrap();
        let nan = [f64::NAN, 1.0, 1.0, 1.0, 1.0, 1.0];
        assert!(damping.times((&u, &g), &nan, 1.0, &v).is_err());
        // The next finite design starts afresh rather than from a poisoned basis.
        let d = damping.times((&u, &g), &[4.0; 6], 1.0, &v).unwrap();
        assert!((d - Vector6::repeat(4.0)).amax() < 1e-12, "{d}");
    }

    #[test]
    fn badly_scaled_designs_converge_and_stay_finite() {
        // Mobility factors over twenty decades (an arm at a singularity, regularised to 1e-9,
        // has task inertias up to 1e9) and stiffnesses from zero to 1e6: the design converges
        // (no fault for a finite input) and D is finite, symmetric and positive semidefinite.
        let mut x = 0x9E37_79B9_7F4A_7C15_u64;
        let mut unit = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut damping = ModalDamping::default();
        for case in 0..2000 {
            let mut u = Matrix6::from_fn(|r, c| if r >= c { unit() - 0.5 } else { 0.0 });
            for i in 0..6 {
                u[(i, i)] = 10f64.powf(10.0 * unit() - 5.0);
            }
            let k: Vec<f64> = (0..6)
                .map(|_| {
                    if unit() < 0.2 {
                        0.0
                    } else {
                        10f64.powf(6.0 * unit())
                    }
                })
                .collect();
            let g = u.try_inverse().unwrap();
            if case % 3 == 0 {
                damping = ModalDamping::default();
            }
            let mut d = Matrix6::zeros();
            for c in 0..6 {
                let column = damping.times((&u, &g), &k, 1.0, &Vector6::ith(c, 1.0));
                d.set_column(c, &column.unwrap_or_else(|e| panic!("case {case}: {e}")));
            }
            assert!(d.iter().all(|v| v.is_finite()), "case {case}");
            // Rounding scales with the factors' sizes: `D = U^-T sqrt(U^T K U) U^-1`.
            let kmax = k.iter().fold(0.0_f64, |a, &b| a.max(b));
            let scale = g.norm_squared() * u.norm() * kmax.sqrt();
            let asymmetry = (d - d.transpose()).amax();
            assert!(
                asymmetry <= 1e-12 * scale,
                "case {case}: {asymmetry:e}, {scale:e}"
            );
        }
    }
}
