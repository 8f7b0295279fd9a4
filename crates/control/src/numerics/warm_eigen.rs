//! Eigenvalues of a symmetric 6x6 matrix that changes little from one control step to the
//! next, by [`jacobi_eigen`] started from the last step's eigenvectors: in that basis the new
//! matrix is nearly diagonal, and two or three sweeps finish it (from the identity: three to
//! eleven).

use nalgebra::{Matrix6, Vector6};

use crate::numerics::jacobi_eigen::{jacobi_eigen, nearly_diagonal, MAX_SWEEPS};

/// Steps between restarts from the identity. Each warm start multiplies the kept basis by
/// more rotations, and rounding makes it drift from orthogonal by about 1e-16 per step; a
/// restart bounds that at about 1e-13.
const WARM_STEPS: u32 = 256;

/// A warm start is redone from the identity when it needs more sweeps than this, and not
/// tried when an off-diagonal entry of the matrix in the kept basis exceeds `WARM_COUPLING`
/// times the geometric mean of its diagonal entries (quadratic convergence: about four sweeps
/// from there). A kept basis far from the new eigenvectors (after a jump) mixes light and
/// heavy modes, and rounding there costs the light ones their relative accuracy; from the
/// identity a graded matrix keeps it.
const WARM_SWEEPS: usize = 3;
const WARM_COUPLING: f64 = 0.05;

/// The kept eigenvectors and how long they have been carried.
#[derive(Debug, Clone)]
pub(crate) struct WarmEigen {
    vectors: Matrix6<f64>,
    warm_steps: u32,
}

impl Default for WarmEigen {
    fn default() -> Self {
        Self {
            vectors: Matrix6::identity(),
            warm_steps: 0,
        }
    }
}

impl WarmEigen {
    /// The eigenvalues of a symmetric A given as `in_basis(V) = V^T A V` (the caller forms
    /// it, often more cheaply than A itself), with its eigenvectors left in
    /// [`Self::vectors`]: from the kept basis when that converges within [`WARM_SWEEPS`],
    /// else from the identity. `None` when A is not finite or does not converge; the next
    /// call then starts from the identity.
    pub(crate) fn eigenvalues(
        &mut self,
        in_basis: impl Fn(&Matrix6<f64>) -> Matrix6<f64>,
    ) -> Option<Vector6<f64>> {
        let warm = match self.warm_steps {
            0 => None,
            _ => self.solve_from(self.vectors, &in_basis, true),
        };
        let found = warm.or_else(|| self.solve_from(Matrix6::identity(), &in_basis, false));
        self.warm_steps = match found {
            Some(_) => (self.warm_steps + 1) % WARM_STEPS,
            None => 0,
        };
        found
    }

    /// The eigenvectors of the last [`Self::eigenvalues`] (columns, in its order).
    pub(crate) fn vectors(&self) -> &Matrix6<f64> {
        &self.vectors
    }

    /// Diagonalises `in_basis(start)`: the eigenvalues, or `None` (not finite, not
    /// converged, or a `warm` start not worth it).
    fn solve_from(
        &mut self,
        start: Matrix6<f64>,
        in_basis: &impl Fn(&Matrix6<f64>) -> Matrix6<f64>,
        warm: bool,
    ) -> Option<Vector6<f64>> {
        let mut a = in_basis(&start);
        self.vectors = start;
        if warm && !nearly_diagonal(&a, WARM_COUPLING) {
            return None;
        }
        let max_sweeps = if warm { WARM_SWEEPS } else { MAX_SWEEPS };
        jacobi_eigen(&mut a, &mut self.vectors, max_sweeps)?;
        Some(a.diagonal())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A symmetric positive definite matrix turning slowly with t.
    fn turning(t: f64) -> Matrix6<f64> {
        let b = Matrix6::from_fn(|r, c| ((r * 5 + c * 3) as f64 * 0.7 + t * (r + 1) as f64).sin());
        b * b.transpose() + Matrix6::from_diagonal_element(1e-3)
    }

    fn sorted(v: Vector6<f64>) -> Vec<f64> {
        let mut v: Vec<f64> = v.iter().copied().collect();
        v.sort_by(f64::total_cmp);
        v
    }

    #[test]
    fn follows_a_slowly_turning_matrix_with_its_eigenvectors() {
        let mut eigen = WarmEigen::default();
        for step in 0..600 {
            let a = turning(step as f64 * 1e-3);
            let values = eigen.eigenvalues(|v| v.transpose() * a * v).unwrap();
            let want = nalgebra::SymmetricEigen::new(a).eigenvalues;
            for (got, want) in sorted(values).iter().zip(sorted(want)) {
                assert!(
                    (got - want).abs() <= 1e-12 * a.norm(),
                    "step {step}: {got} vs {want}"
                );
            }
            let v = eigen.vectors();
            let residual = a * v - v * Matrix6::from_diagonal(&values);
            assert!(residual.norm() <= 1e-11 * a.norm(), "step {step}");
        }
    }

    #[test]
    fn a_jump_or_a_non_finite_matrix_starts_afresh() {
        let mut eigen = WarmEigen::default();
        let a = turning(0.0);
        eigen.eigenvalues(|v| v.transpose() * a * v).unwrap();
        let far = turning(2.0);
        let values = eigen.eigenvalues(|v| v.transpose() * far * v).unwrap();
        let want = nalgebra::SymmetricEigen::new(far).eigenvalues;
        for (got, want) in sorted(values).iter().zip(sorted(want)) {
            assert!((got - want).abs() <= 1e-12 * far.norm());
        }
        let mut nan = a;
        nan[(2, 3)] = f64::NAN;
        assert!(eigen.eigenvalues(|v| v.transpose() * nan * v).is_none());
        assert_eq!(eigen.warm_steps, 0);
        assert!(eigen.eigenvalues(|v| v.transpose() * a * v).is_some());
    }
}
