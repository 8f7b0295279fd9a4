//! Factoring the mass matrix in place and solving with the factor, without allocating: what
//! forward dynamics needs, and any controller that applies `M^-1` (`Lambda = (J M^-1 J^T)^-1`).
//!
//! `M = L L^T` (Cholesky-Crout, column by column). Only the lower triangle of `M` is read, and
//! `L` replaces it; the strict upper triangle is left as it was, so the matrix holds `L` below
//! and `M` above the diagonal. Use the factor only through [`cholesky_solve_in_place`].

use armctl_model::check_length;
use nalgebra::{DMatrix, Dim, Dyn, Matrix, StorageMut};

use crate::DynamicsError;

/// Factors the symmetric positive definite `m` (n x n) in place: its lower triangle becomes
/// `L` with `m = L L^T`. Allocates nothing.
///
/// Errors: [`DynamicsError::Dimension`] when `m` is not square;
/// [`DynamicsError::SingularMassMatrix`] when `m` is not positive definite (or holds NaN), in
/// which case the lower triangle is partly overwritten and must be refilled before reuse.
pub fn cholesky_in_place(m: &mut DMatrix<f64>) -> Result<(), DynamicsError> {
    let n = m.nrows();
    check_length("mass matrix columns", n, m.ncols())?;
    for j in 0..n {
        let mut diagonal = m[(j, j)];
        for k in 0..j {
            diagonal -= m[(j, k)] * m[(j, k)];
        }
        if !(diagonal.is_finite() && diagonal > 0.0) {
            return Err(DynamicsError::SingularMassMatrix);
        }
        let l_jj = diagonal.sqrt();
        m[(j, j)] = l_jj;
        for i in j + 1..n {
            let mut value = m[(i, j)];
            for k in 0..j {
                value -= m[(i, k)] * m[(j, k)];
            }
            m[(i, j)] = value / l_jj;
        }
    }
    Ok(())
}

/// Solves `L L^T x = b` in place for every column of `b` (n rows: a vector, or several
/// right-hand sides such as `J^T`), with `l` factored by [`cholesky_in_place`]: `b` becomes
/// `M^-1 b`. Reads only the lower triangle of `l`; allocates nothing.
///
/// Errors: [`DynamicsError::Dimension`] when `l` is not square or `b` has not n rows;
/// [`DynamicsError::SingularMassMatrix`] when `l` has a zero on its diagonal (not a factor).
pub fn cholesky_solve_in_place<C, S>(
    l: &DMatrix<f64>,
    b: &mut Matrix<f64, Dyn, C, S>,
) -> Result<(), DynamicsError>
where
    C: Dim,
    S: StorageMut<f64, Dyn, C>,
{
    let n = l.nrows();
    check_length("Cholesky factor columns", n, l.ncols())?;
    check_length("right-hand side rows", n, b.nrows())?;
    if l.solve_lower_triangular_mut(b) && l.tr_solve_lower_triangular_mut(b) {
        Ok(())
    } else {
        Err(DynamicsError::SingularMassMatrix)
    }
}

/// Solves `L x = b` in place for every column of `b` (n x k, column-major): `b` becomes
/// `L^-1 b`, with `l` factored by [`cholesky_in_place`]. Half of [`cholesky_solve_in_place`]:
/// `b^T M^-1 b = (L^-1 b)^T (L^-1 b)`. Reads only the lower triangle; allocates nothing.
///
/// Errors as [`cholesky_solve_in_place`].
pub fn cholesky_forward_in_place(
    l: &DMatrix<f64>,
    b: &mut DMatrix<f64>,
) -> Result<(), DynamicsError> {
    let n = l.nrows();
    // Row by row of the factor: once x_j is known, column j of L takes `L[i, j] x_j` out of
    // every b_i below it.
    substitute(l, b, 0..n, |factor, column, j, x| {
        let l_j = &factor[j * n..(j + 1) * n];
        for (value, l_ij) in column[j + 1..].iter_mut().zip(&l_j[j + 1..]) {
            *value -= l_ij * x;
        }
    })
}

/// Solves `L^T x = b` in place for every column of `b` (n x k, column-major): `b` becomes
/// `L^-T b`. The other half of [`cholesky_solve_in_place`]: after
/// [`cholesky_forward_in_place`] it leaves `M^-1 b`. Reads only the lower triangle; allocates
/// nothing.
///
/// Errors as [`cholesky_solve_in_place`].
pub fn cholesky_backward_in_place(
    l: &DMatrix<f64>,
    b: &mut DMatrix<f64>,
) -> Result<(), DynamicsError> {
    let n = l.nrows();
    // From the last unknown up: once x_j is known, column j of L^T (row j of L) takes
    // `L[j, i] x_j` out of every b_i above it.
    substitute(l, b, (0..n).rev(), |factor, column, j, x| {
        for (i, value) in column[..j].iter_mut().enumerate() {
            *value -= factor[i * n + j] * x;
        }
    })
}

/// Triangular substitution with the factor `l` over every column of `b` at once, unknowns in
/// the order `rows`: `x_j = b_j / L_jj` (one division per row), then `eliminate(factor,
/// column, j, x_j)` takes it out of the rest of the column.
fn substitute(
    l: &DMatrix<f64>,
    b: &mut DMatrix<f64>,
    rows: impl Iterator<Item = usize>,
    eliminate: impl Fn(&[f64], &mut [f64], usize, f64),
) -> Result<(), DynamicsError> {
    let n = l.nrows();
    check_length("Cholesky factor columns", n, l.ncols())?;
    check_length("right-hand side rows", n, b.nrows())?;
    let factor = l.as_slice();
    for j in rows {
        let l_jj = factor[j * n + j];
        if l_jj == 0.0 {
            return Err(DynamicsError::SingularMassMatrix);
        }
        let inverse = l_jj.recip();
        for column in b.as_mut_slice().chunks_exact_mut(n) {
            let x = column[j] * inverse;
            column[j] = x;
            eliminate(factor, column, j, x);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DVector;

    /// A symmetric positive definite matrix with entries of mixed signs.
    fn spd(n: usize) -> DMatrix<f64> {
        let a = DMatrix::from_fn(n, n, |r, c| ((r * 7 + c * 3) as f64 * 0.37).sin());
        &a * a.transpose() + DMatrix::identity(n, n) * 0.5
    }

    #[test]
    fn factor_matches_nalgebra_and_keeps_the_upper_triangle() {
        let m = spd(6);
        let mut f = m.clone();
        cholesky_in_place(&mut f).unwrap();
        let want = m.clone().cholesky().unwrap().l();
        assert!((f.lower_triangle() - &want).amax() < 1e-13);
        for c in 0..6 {
            for r in 0..c {
                assert_eq!(f[(r, c)], m[(r, c)], "upper triangle ({r}, {c}) kept");
            }
        }
    }

    #[test]
    fn solve_inverts_for_one_or_many_right_hand_sides() {
        let m = spd(5);
        let mut l = m.clone();
        cholesky_in_place(&mut l).unwrap();
        let x = DVector::from_fn(5, |i, _| i as f64 - 1.5);
        let mut b = &m * &x;
        cholesky_solve_in_place(&l, &mut b).unwrap();
        assert!((b - &x).amax() < 1e-12);
        let xs = DMatrix::from_fn(5, 6, |r, c| (r as f64 - c as f64) * 0.3);
        let mut bs = &m * &xs;
        cholesky_solve_in_place(&l, &mut bs).unwrap();
        assert!((bs - xs).amax() < 1e-12);
    }

    #[test]
    fn forward_substitution_gives_l_inverse_b() {
        let m = spd(5);
        let mut l = m.clone();
        cholesky_in_place(&mut l).unwrap();
        let xs = DMatrix::from_fn(5, 6, |r, c| (r as f64 - c as f64) * 0.3);
        let mut bs = l.lower_triangle() * &xs;
        cholesky_forward_in_place(&l, &mut bs).unwrap();
        assert!((bs - xs).amax() < 1e-12);
        let mut short = DMatrix::zeros(4, 1);
        assert!(cholesky_forward_in_place(&l, &mut short).is_err());
    }

    #[test]
    fn backward_substitution_gives_l_transpose_inverse_b_and_both_halves_solve() {
        let m = spd(5);
        let mut l = m.clone();
        cholesky_in_place(&mut l).unwrap();
        let xs = DMatrix::from_fn(5, 6, |r, c| (r as f64 - c as f64) * 0.3);
        let mut bs = l.lower_triangle().transpose() * &xs;
        cholesky_backward_in_place(&l, &mut bs).unwrap();
        assert!((bs - &xs).amax() < 1e-12);
        let mut both = &m * &xs;
        cholesky_forward_in_place(&l, &mut both).unwrap();
        cholesky_backward_in_place(&l, &mut both).unwrap();
        assert!((both - xs).amax() < 1e-12);
        let mut short = DMatrix::zeros(4, 1);
        assert!(cholesky_backward_in_place(&l, &mut short).is_err());
        l[(2, 2)] = 0.0;
        assert_eq!(
            cholesky_backward_in_place(&l, &mut DMatrix::zeros(5, 1)),
            Err(DynamicsError::SingularMassMatrix)
        );
    }

    #[test]
    fn not_positive_definite_or_wrong_sizes_are_errors() {
        let mut singular = DMatrix::from_diagonal(&DVector::from_vec(vec![1.0, 0.0, 2.0]));
        assert_eq!(
            cholesky_in_place(&mut singular),
            Err(DynamicsError::SingularMassMatrix)
        );
        let mut nan = spd(3);
        nan[(1, 1)] = f64::NAN;
        assert_eq!(
            cholesky_in_place(&mut nan),
            Err(DynamicsError::SingularMassMatrix)
        );
        let mut wide = DMatrix::zeros(2, 3);
        assert!(matches!(
            cholesky_in_place(&mut wide),
            Err(DynamicsError::Dimension {
                expected: 2,
                got: 3,
                ..
            })
        ));
        let mut l = spd(3);
        cholesky_in_place(&mut l).unwrap();
        let mut short = DVector::zeros(2);
        assert!(matches!(
            cholesky_solve_in_place(&l, &mut short),
            Err(DynamicsError::Dimension {
                what: "right-hand side rows",
                expected: 3,
                got: 2
            })
        ));
        let zero = DMatrix::<f64>::zeros(3, 3);
        let mut b = DMatrix::<f64>::zeros(3, 2);
        assert_eq!(
            cholesky_solve_in_place(&zero, &mut b),
            Err(DynamicsError::SingularMassMatrix)
        );
    }
}
