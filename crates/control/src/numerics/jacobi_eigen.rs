//! Cyclic Jacobi eigendecomposition of a symmetric 6x6 matrix (Golub and Van Loan,
//! "Matrix Computations", section 8.5): plane rotations, each zeroing one off-diagonal entry,
//! sweep after sweep until every off-diagonal entry is negligible next to its two diagonal
//! entries. Chosen over a Householder and QR solver for two reasons: it starts from any
//! orthogonal guess (a matrix already nearly diagonal in the guessed basis, as a controller's
//! from one 1 ms step to the next, converges in two sweeps, quadratically), and with that
//! test it finds the small eigenvalues of a badly scaled matrix to their own relative accuracy
//! (Demmel and Veselic, 1992), where a QR solver gets them only to the largest one's.

use nalgebra::Matrix6;

/// An off-diagonal entry counts as zero below this times the geometric mean of its two
/// diagonal entries. No absolute floor: one relative to the whole matrix would leave the
/// small eigenvalues of a badly scaled matrix unseparated.
const RELATIVE: f64 = 1e-12;

/// Sweeps after which a matrix that is still not diagonal is given up on, unless the caller
/// gives up sooner (convergence is quadratic: six to eleven sweeps from a cold start at double
/// precision).
pub(crate) const MAX_SWEEPS: usize = 30;

/// The 15 planes of a sweep in 5 rounds of 3 disjoint ones (a round-robin tournament of the
/// 6 indices): the rotations of a round commute, so their angles are computed together, from
/// the same matrix, and their long divisions and square roots overlap.
const ROUNDS: [[(usize, usize); 3]; 5] = [
    [(0, 1), (2, 5), (3, 4)],
    [(0, 2), (3, 1), (4, 5)],
    [(0, 3), (4, 2), (5, 1)],
    [(0, 4), (5, 3), (1, 2)],
    [(0, 5), (1, 4), (2, 3)],
];

/// Diagonalises the symmetric `a` in place by rotations `a <- R^T a R`, accumulated into
/// `vectors <- vectors R`: on return the diagonal of `a` holds the eigenvalues and, when
/// `vectors` held an orthogonal V0 with `a = V0^T A V0`, its columns the eigenvectors of A.
/// Returns the sweeps used, or `None` when `a` is not finite or does not converge within
/// `max_sweeps` (at most [`MAX_SWEEPS`]; then `a` and `vectors` are not to be used).
pub(crate) fn jacobi_eigen(
    a: &mut Matrix6<f64>,
    vectors: &mut Matrix6<f64>,
    max_sweeps: usize,
) -> Option<usize> {
    if !a.iter().all(|x| x.is_finite()) {
        return None;
    }
    let max_sweeps = max_sweeps.min(MAX_SWEEPS);
    for sweep in 0..=max_sweeps {
        if nearly_diagonal(a, RELATIVE) {
            return Some(sweep);
        }
        if sweep < max_sweeps {
            for round in &ROUNDS {
                apply_round(a, vectors, round);
            }
        }
    }
    None
}

/// Whether `a[(p, q)]` is negligible next to `a[(p, p)]` and `a[(q, q)]`.
fn negligible(a: &Matrix6<f64>, p: usize, q: usize) -> bool {
    coupling_within(a, (p, q), RELATIVE)
}

/// Whether every off-diagonal entry is at most `ratio` times the geometric mean of its two
/// diagonal entries (as [`coupling_within`], with each square root taken once), e.g. a
/// guessed basis close enough to be worth a warm start.
pub(crate) fn nearly_diagonal(a: &Matrix6<f64>, ratio: f64) -> bool {
    let roots = a.diagonal().map(|x| x.abs().sqrt());
    ROUNDS
        .iter()
        .flatten()
        .all(|&(p, q)| a[(p, q)].abs() <= ratio * roots[p] * roots[q])
}

/// `|a_pq| <= ratio sqrt(|a_pp|) sqrt(|a_qq|)`, the square roots taken apart so that neither
/// tiny nor huge entries leave the range of f64.
fn coupling_within(a: &Matrix6<f64>, (p, q): (usize, usize), ratio: f64) -> bool {
    a[(p, q)].abs() <= ratio * a[(p, p)].abs().sqrt() * a[(q, q)].abs().sqrt()
}

/// The round's three rotations, each zeroing its entry unless that is already negligible.
fn apply_round(a: &mut Matrix6<f64>, vectors: &mut Matrix6<f64>, round: &[(usize, usize); 3]) {
    let rotations = round.map(|(p, q)| {
        let keep = negligible(a, p, q);
        (p, q, if keep { (1.0, 0.0) } else { rotation(a, p, q) })
    });
    for &(p, q, (c, s)) in &rotations {
        if s != 0.0 {
            rotate_columns(a, p, q, c, s);
            rotate_columns(vectors, p, q, c, s);
        }
    }
    for &(p, q, (c, s)) in &rotations {
        if s != 0.0 {
            rotate_rows(a, p, q, c, s);
            a[(p, q)] = 0.0;
            a[(q, p)] = 0.0;
        }
    }
}

/// Cosine and sine of the rotation in the (p, q) plane that zeroes `a[(p, q)]`.
fn rotation(a: &Matrix6<f64>, p: usize, q: usize) -> (f64, f64) {
    let (d, b) = (a[(q, q)] - a[(p, p)], 2.0 * a[(p, q)]);
    if b == 0.0 {
        return (1.0, 0.0);
    }
    // The rotation under 45 degrees: tan = b / (|d| + r) sgn(d) with r = sqrt(d^2 + b^2),
    // and the cosine and sine from that tangent's numerator and denominator: two square roots
    // and one division in a row, and nothing that cancels. Entries whose squares would leave
    // the normal range of f64 are scaled first.
    let scale = d.abs().max(b.abs());
    let (d, b) = if (1e-150..1e150).contains(&scale) {
        (d, b)
    } else {
        (d / scale, b / scale)
    };
    let h = d.abs() + (d * d + b * b).sqrt();
    let w = 1.0 / (h * h + b * b).sqrt();
    (h * w, d.signum() * b * w)
}

/// `m <- m R` for the rotation (c, s) in the (p, q) plane.
fn rotate_columns(m: &mut Matrix6<f64>, p: usize, q: usize, c: f64, s: f64) {
    for k in 0..6 {
        let (mp, mq) = (m[(k, p)], m[(k, q)]);
        m[(k, p)] = c * mp - s * mq;
        m[(k, q)] = s * mp + c * mq;
    }
}

/// `m <- R^T m` for the rotation (c, s) in the (p, q) plane.
fn rotate_rows(m: &mut Matrix6<f64>, p: usize, q: usize, c: f64, s: f64) {
    for k in 0..6 {
        let (mp, mq) = (m[(p, k)], m[(q, k)]);
        m[(p, k)] = c * mp - s * mq;
        m[(q, k)] = s * mp + c * mq;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn symmetric(seed: u64) -> Matrix6<f64> {
        let mut x = seed | 1;
        let b = Matrix6::from_fn(|_, _| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        });
        b * b.transpose()
    }

    fn reassembled(a: &Matrix6<f64>, v: &Matrix6<f64>) -> Matrix6<f64> {
        v * Matrix6::from_diagonal(&a.diagonal()) * v.transpose()
    }

    #[test]
    fn diagonalises_from_the_identity_and_from_a_nearby_basis() {
        for seed in 1..50 {
            let original = symmetric(seed);
            let (mut a, mut v) = (original, Matrix6::identity());
            let cold = jacobi_eigen(&mut a, &mut v, MAX_SWEEPS).unwrap();
            assert!((reassembled(&a, &v) - original).amax() < 1e-11 * original.amax());
            assert!((v.transpose() * v - Matrix6::identity()).amax() < 1e-14);
            // A small change, started from the last eigenvectors: fewer sweeps, same accuracy.
            let moved = original + symmetric(seed + 100) * 1e-3;
            let mut warm = v.transpose() * moved * v;
            let warm_sweeps = jacobi_eigen(&mut warm, &mut v, MAX_SWEEPS).unwrap();
            assert!(warm_sweeps < cold, "{warm_sweeps} vs {cold}");
            let error = (reassembled(&warm, &v) - moved).amax() / moved.amax();
            assert!(error < 1e-11, "{error:e}");
        }
    }

    #[test]
    fn repeated_and_zero_eigenvalues() {
        let basis = symmetric(5).qr().q();
        let spectrum = nalgebra::Vector6::new(4.0, 4.0, 0.0, 0.0, 1.0, 4.0);
        let original = basis * Matrix6::from_diagonal(&spectrum) * basis.transpose();
        let (mut a, mut v) = (original, Matrix6::identity());
        jacobi_eigen(&mut a, &mut v, MAX_SWEEPS).unwrap();
        assert!((reassembled(&a, &v) - original).amax() < 1e-13);
        let mut eigenvalues: Vec<f64> = a.diagonal().iter().copied().collect();
        eigenvalues.sort_by(f64::total_cmp);
        let expected = [0.0, 0.0, 1.0, 4.0, 4.0, 4.0];
        for (got, want) in eigenvalues.iter().zip(expected) {
            assert!((got - want).abs() < 1e-14, "{eigenvalues:?}");
        }
    }

    #[test]
    fn every_plane_once_per_sweep_and_disjoint_within_a_round() {
        let mut seen = std::collections::BTreeSet::new();
        for round in &ROUNDS {
            let mut indices: Vec<usize> = round.iter().flat_map(|&(p, q)| [p, q]).collect();
            indices.sort();
            assert_eq!(indices, [0, 1, 2, 3, 4, 5]);
            seen.extend(round.iter().map(|&(p, q)| (p.min(q), p.max(q))));
        }
        assert_eq!(seen.len(), 15);
    }

    #[test]
    fn rotations_of_tiny_and_huge_entries() {
        for scale in [1e-200, 1e-160, 1.0, 1e150, 1e200] {
            let mut a =
                Matrix6::from_diagonal(&nalgebra::Vector6::new(1.0, 3.0, 2.0, 5.0, 4.0, 6.0));
            a[(1, 2)] = 0.5;
            a[(2, 1)] = 0.5;
            let (c, s) = rotation(&(a * scale), 1, 2);
            assert!((c * c + s * s - 1.0).abs() < 1e-15, "{scale:e}");
            let (c1, s1) = rotation(&a, 1, 2);
            assert!(
                (c - c1).abs() < 1e-15 && (s - s1).abs() < 1e-15,
                "{scale:e}"
            );
            // The rotated entry vanishes.
            let (mut r, mut v) = (a, Matrix6::identity());
            rotate_columns(&mut r, 1, 2, c, s);
            rotate_columns(&mut v, 1, 2, c, s);
            rotate_rows(&mut r, 1, 2, c, s);
            assert!(r[(1, 2)].abs() < 1e-15, "{}", r[(1, 2)]);
        }
    }

    #[test]
    fn tiny_and_huge_matrices_are_diagonalised_too() {
        for scale in [1e-300, 1e-170, 1e160, 1e300] {
            let original = symmetric(7) * scale;
            let (mut a, mut v) = (original, Matrix6::identity());
            assert!(
                jacobi_eigen(&mut a, &mut v, MAX_SWEEPS).is_some(),
                "{scale:e}"
            );
            let error = (reassembled(&a, &v) - original).amax() / original.amax();
            assert!(error < 1e-11, "{scale:e}: {error:e}");
        }
    }

    #[test]
    fn refuses_what_is_not_finite() {
        let mut a = symmetric(3);
        a[(2, 4)] = f64::NAN;
        assert_eq!(
            jacobi_eigen(&mut a, &mut Matrix6::identity(), MAX_SWEEPS),
            None
        );
        let mut a = Matrix6::from_element(f64::INFINITY);
        assert_eq!(
            jacobi_eigen(&mut a, &mut Matrix6::identity(), MAX_SWEEPS),
            None
        );
    }
}
