//! The derivatives of forward dynamics: `d qdd/dq = -M^-1 d tau/dq`,
//! `d qdd/dqd = -M^-1 d tau/dqd`, `d qdd/d tau = M^-1`, taken at the forward dynamics' own
//! `qdd` (`crate::rnea_derivatives` for `d tau`).
//!
//! One pass serves both: the composites of the derivatives give M (`M_kj = S_k^T I^c_k S_j`)
//! and, with zero `qdd`, the bias `S_k^T F^c_k`; once `qdd` is solved, its share of the link
//! accelerations and forces is added from the same composites (`add_accelerations`).

use armctl_model::{check_length, Robot};
use nalgebra::{DMatrix, DVector, Vector6};

use crate::cholesky::{
    cholesky_backward_in_place, cholesky_forward_in_place, cholesky_in_place,
    cholesky_solve_in_place,
};
use crate::composite::composite_times;
use crate::crba::mass_from_composites;
use crate::rnea_derivatives::{check_square, fill_lower, fill_upper, moving_pass};
use crate::spatial::cross_motion;
use crate::{DynamicsError, DynamicsWorkspace};

/// The derivatives of forward dynamics ([`crate::forward_dynamics`]) at `(q, qd, tau)`.
pub struct ForwardDerivatives<'a> {
    /// `qdd` itself.
    pub qdd: &'a mut [f64],
    /// `d qdd / dq`.
    pub dqdd_dq: &'a mut DMatrix<f64>,
    /// `d qdd / dqd`.
    pub dqdd_dqd: &'a mut DMatrix<f64>,
    /// `d qdd / d tau = M^-1`.
    pub dqdd_dtau: &'a mut DMatrix<f64>,
}

/// Forward dynamics at `(q, qd, tau)` and its derivatives, into `out`.
pub fn forward_dynamics_derivatives(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    (q, qd, tau): (&[f64], &[f64], &[f64]),
    out: ForwardDerivatives<'_>,
) -> Result<(), DynamicsError> {
    for (name, m) in [
        ("dqdd_dq", &*out.dqdd_dq),
        ("dqdd_dqd", &*out.dqdd_dqd),
        ("dqdd_dtau", &*out.dqdd_dtau),
    ] {
        check_square(name, ws.n, m)?;
    }
    ws.set_configuration(robot, q)?;
    check_length("qd", ws.n, qd.len())?;
    check_length("tau", ws.n, tau.len())?;
    check_length("qdd", ws.n, out.qdd.len())?;
    moving_pass(robot, ws, qd, None);
    // Leaves M's Cholesky factor in `ws.mass_matrix`.
    solve_accelerations(robot, ws, tau, out.qdd)?;
    add_accelerations(ws, out.qdd);
    fill_lower(ws, out.dqdd_dq, Some(&mut *out.dqdd_dqd));
    fill_upper(ws, out.dqdd_dq, Some(&mut *out.dqdd_dqd));
    // d qdd / d tau = M^-1 through the factor, then d qdd = -M^-1 d tau with the factor's
    // storage (no longer needed) as scratch.
    out.dqdd_dtau.fill_with_identity();
    cholesky_forward_in_place(&ws.mass_matrix, out.dqdd_dtau)?;
    cholesky_backward_in_place(&ws.mass_matrix, out.dqdd_dtau)?;
    for derivative in [out.dqdd_dq, out.dqdd_dqd] {
        ws.mass_matrix.copy_from(derivative);
        negated_symmetric_product(out.dqdd_dtau, &ws.mass_matrix, derivative);
    }
    Ok(())
}

/// `out = -a b` for n x n matrices with `a` symmetric: entry (i, j) is the dot product of
/// column i of `a` (its row i) and column j of `b`, both contiguous, so every entry sums in
/// registers (nalgebra's `gemm` packs through a buffer it allocates).
fn negated_symmetric_product(a: &DMatrix<f64>, b: &DMatrix<f64>, out: &mut DMatrix<f64>) {
    let n = a.nrows().max(1);
    let a = a.as_slice();
    for (out_j, b_j) in out
        .as_mut_slice()
        .chunks_exact_mut(n)
        .zip(b.as_slice().chunks_exact(n))
    {
        for (o, a_i) in out_j.iter_mut().zip(a.chunks_exact(n)) {
            *o = -a_i.iter().zip(b_j).map(|(x, y)| x * y).sum::<f64>();
        }
    }
}

/// `qdd = M^-1 (tau - bias)` from the pass at zero `qdd`, M factored in `ws.mass_matrix`.
fn solve_accelerations(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    tau: &[f64],
    qdd: &mut [f64],
) -> Result<(), DynamicsError> {
    let mut m = std::mem::replace(&mut ws.mass_matrix, DMatrix::zeros(0, 0));
    let mut rhs = std::mem::replace(&mut ws.rhs, DVector::zeros(0));
    mass_from_composites(robot, ws, &mut m);
    for (k, r) in rhs.iter_mut().enumerate() {
        *r = tau[k] - ws.axis[k].dot(&ws.c_force[k]);
    }
    let result = cholesky_in_place(&mut m).and_then(|()| cholesky_solve_in_place(&m, &mut rhs));
    if result.is_ok() {
        qdd.copy_from_slice(rhs.as_slice());
    }
    (ws.mass_matrix, ws.rhs) = (m, rhs);
    result
}

/// Adds `qdd`'s share to the pass at zero `qdd`, where the fills read it: with
/// `A_i = sum_{m <= i} S_m qdd_m` (what every `a_i` gains), every `beta_i` gains
/// `S_i x A_{i-1}`, and `F^c_j` gains `I^c_j A_j + sum_{m > j} I^c_m S_m qdd_m`.
fn add_accelerations(ws: &mut DynamicsWorkspace, qdd: &[f64]) {
    let mut sum = Vector6::zeros();
    for (i, &qddi) in qdd.iter().enumerate() {
        ws.column[i] += cross_motion(&ws.axis[i], &sum);
        sum += ws.axis[i] * qddi;
        let share = composite_times(ws, i, &sum);
        ws.c_force[i] += share;
    }
    let mut outer = Vector6::zeros();
    for (j, &qddj) in qdd.iter().enumerate().rev() {
        ws.c_force[j] += outer;
        outer += composite_times(ws, j, &ws.axis[j]) * qddj;
    }
}
