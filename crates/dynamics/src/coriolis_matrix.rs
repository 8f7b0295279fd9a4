//! The Christoffel-consistent Coriolis matrix `C(q, qd)` (docs/theory.md section 2), so that
//! `C qd` is the velocity term of the dynamics and `Mdot - 2C` is skew-symmetric.
//!
//! With everything in frame {0}: `M = sum_k J_k^T I_k J_k`, `J_k = [S_1 .. S_k 0]`,
//! `Sdot_i = v_i x S_i`, and `C = sum_k J_k^T (I_k Jdot_k + B_k J_k)` with the body Coriolis
//! matrix `B_k = 1/2 (v_k x* I_k - I_k v_k x + (I_k v_k) x-bar*) = 1/2 (Idot_k + (I_k v_k) x-bar*)`.
//! Composites `I^c_j`, `Idot^c_j`, momentum `p^c_j = sum_{k >= j} I_k v_k` give
//! `B^c_j u = 1/2 (Idot^c_j u + u x* p^c_j)` and
//! `C_ij = S_i^T (I^c_j Sdot_j + B^c_j S_j)` for `i <= j`,
//! `C_ij = (I^c_i S_i)^T Sdot_j + (B^c_i^T S_i)^T S_j` for `i > j`
//! (`B^c^T u = 1/2 (Idot^c u - u x* p^c)`). `Idot = [[Idot_O, S(hdot)], [-S(hdot), 0]]` with
//! `Idot_O = S(w) I_O - I_O S(w) - S(v) S(h) - S(h) S(v)`, `hdot = w x h + m v`.
//! Cost O(n) 3x3 products plus O(n^2) six-vector dots; no 6x6 matrix is formed.
//! Reference: Echeandia and Wensing, "Numerical methods to compute the Coriolis matrix and
//! Christoffel symbols for rigid-body systems", J. Comput. Nonlinear Dyn. 16(9), 2021.

use armctl_model::{check_length, Robot};
use nalgebra::{DMatrix, Vector6};

use crate::composite::{composite_times, rate_times, update_moving_composites};
use crate::spatial::cross_motion;
use crate::{DynamicsError, DynamicsWorkspace};

/// `C(q, qd)` into `out` (n x n).
pub fn coriolis_matrix(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    q: &[f64],
    qd: &[f64],
    out: &mut DMatrix<f64>,
) -> Result<(), DynamicsError> {
    ws.set_configuration(robot, q)?;
    check_length("qd", ws.n, qd.len())?;
    check_length("C rows", ws.n, out.nrows())?;
    check_length("C columns", ws.n, out.ncols())?;
    ws.update_world_frames(robot);
    update_velocities(ws, qd);
    update_moving_composites(robot, ws, false);
    let n = ws.n;
    for j in 0..n {
        let (s, sdot) = (ws.axis[j], ws.axis_rate[j]);
        let f = composite_times(ws, j, &sdot) + coriolis_times(ws, j, &s, 1.0);
        for i in 0..=j {
            out[(i, j)] = ws.axis[i].dot(&f);
        }
        // Row helpers of row j for the columns before it.
        ws.column[j] = coriolis_times(ws, j, &s, -1.0);
    }
    for i in 1..n {
        let g = composite_times(ws, i, &ws.axis[i]);
        for j in 0..i {
            out[(i, j)] = g.dot(&ws.axis_rate[j]) + ws.column[i].dot(&ws.axis[j]);
        }
    }
    Ok(())
}

/// `B^c_j u` (sign +1) or `B^c_j^T u` (sign -1), the body Coriolis matrices' halves.
fn coriolis_times(ws: &DynamicsWorkspace, j: usize, u: &Vector6<f64>, sign: f64) -> Vector6<f64> {
    rate_times(ws, j, u, sign) * 0.5
}

/// Link velocities and `Sdot_i`.
fn update_velocities(ws: &mut DynamicsWorkspace, qd: &[f64]) {
    let mut v = Vector6::zeros();
    for (i, &rate) in qd.iter().enumerate() {
        v += ws.axis[i] * rate;
        ws.velocity[i] = v;
        ws.axis_rate[i] = cross_motion(&v, &ws.axis[i]);
    }
}
