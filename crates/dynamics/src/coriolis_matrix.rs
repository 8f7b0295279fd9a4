//! The Christoffel-consistent Coriolis matrix `C(q, qd)` (theory.md section 2), so that
//! `C qd` is the velocity term of the dynamics and `Mdot - 2C` is skew-symmetric.
//!
//! With everything in frame {0}: `M = sum_k J_k^T I_k J_k`, `J_k = [S_1 .. S_k 0]`,
//! `Sdot_i = v_i x S_i`, and `C = sum_k J_k^T (I_k Jdot_k + B_k J_k)` with the body Coriolis
//! matrix `B_k = 1/2 (v_k x* I_k - I_k v_k x + (I_k v_k) x-bar*)`. Composites
//! `I^c_j = sum_{k >= j} I_k`, `B^c_j = sum_{k >= j} B_k` give
//! `C_ij = S_i^T (I^c_j Sdot_j + B^c_j S_j)` for `i <= j` and
//! `C_ij = (I^c_i S_i)^T Sdot_j + (B^c_i^T S_i)^T S_j` for `i > j`.
//! Cost O(n) 6x6 products plus O(n^2) six-vector dots.
//! Reference: Echeandia and Wensing, "Numerical methods to compute the Coriolis matrix and
//! Christoffel symbols for rigid-body systems", J. Comput. Nonlinear Dyn. 16(9), 2021.

use armctl_model::Robot;
use nalgebra::{DMatrix, Matrix6, Vector6};

use crate::error::check;
use crate::gravity::update_composites;
use crate::spatial::{force_cross_bar, motion_cross, spatial_inertia, to_world};
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
    check("qd", ws.n, qd.len())?;
    check("C rows", ws.n, out.nrows())?;
    check("C columns", ws.n, out.ncols())?;
    ws.update_world_frames(robot);
    update_body_terms(robot, ws, qd);
    update_composites(robot, ws);
    let n = ws.n;
    for j in 0..n {
        // Column part for i <= j, and the row helpers for i = j used by later columns.
        let f = ws.composite[j] * ws.axis_rate[j] + ws.composite_b[j] * ws.axis[j];
        for i in 0..=j {
            out[(i, j)] = ws.axis[i].dot(&f);
        }
        ws.column[j] = ws.composite_b[j].transpose() * ws.axis[j];
    }
    for i in 1..n {
        let g = ws.composite[i] * ws.axis[i];
        for j in 0..i {
            out[(i, j)] = g.dot(&ws.axis_rate[j]) + ws.column[i].dot(&ws.axis[j]);
        }
    }
    Ok(())
}

/// Body velocities, `Sdot_i = v_i x S_i`, and the composite body Coriolis matrices.
fn update_body_terms(robot: &Robot, ws: &mut DynamicsWorkspace, qd: &[f64]) {
    let mut v = Vector6::zeros();
    for (i, &rate) in qd.iter().enumerate() {
        v += ws.axis[i] * rate;
        ws.axis_rate[i] = motion_cross(&v) * ws.axis[i];
        // B_i in the slot of the composite; accumulated below.
        let (inertia, h, m) =
            to_world(&robot.link_parameters()[i], &ws.world_rot[i], &ws.origin[i]);
        let body = spatial_inertia(&inertia, &h, m);
        let cross = motion_cross(&v);
        ws.composite_b[i] =
            (-(cross.transpose()) * body - body * cross + force_cross_bar(&(body * v))) * 0.5;
    }
    let mut total = Matrix6::zeros();
    for i in (0..ws.n).rev() {
        total += ws.composite_b[i];
        ws.composite_b[i] = total;
    }
}
