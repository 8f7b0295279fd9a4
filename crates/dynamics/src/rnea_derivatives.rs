//! Analytical partial derivatives of inverse dynamics, `d tau / dq` and `d tau / dqd`, with
//! everything in frame {0}: O(n) composites, then O(n^2) six-vector dot products; no 6x6
//! matrix is formed (docs/theory.md, "Derivatives of the dynamics").
//!
//! Moving q_j moves links j..n rigidly by the joint's axis `S_j`. Moving everything rigidly,
//! motion included, changes no torque; what is left is that link j's parent does not move:
//! with `sigma_j = v_j x S_j` (`Sdot_j`) and `beta_j = S_j x a_{j-1} + sigma_j x v_{j-1}`, a
//! link i >= j has `dv_i = S_j x v_i + sigma_j`, `da_i = S_j x a_i - beta_j + sigma_j x v_i`.
//! Its force `f_i = I_i a_i + v_i x* I_i v_i` then changes by `S_j x* f_i - I_i beta_j +
//! B_i sigma_j` with `B_i u = Idot_i u + u x* (I_i v_i)`, and by `B_i S_j + 2 I_i sigma_j`
//! per unit of qd_j. Summed over the links a joint carries (composites `I^c`, `B^c`, `F^c`):
//! - row k >= j: `d tau_k/dq_j = (B^c_k^T S_k).sigma_j - (I^c_k S_k).beta_j`,
//!   `d tau_k/dqd_j = (B^c_k^T S_k).S_j + 2 (I^c_k S_k).sigma_j`;
//! - column j > k: `d tau_k/dq_j = S_k.(S_j x* F^c_j - I^c_j beta_j + B^c_j sigma_j)`,
//!   `d tau_k/dqd_j = S_k.(B^c_j S_j + 2 I^c_j sigma_j)`.
//!
//! Reference: Carpentier and Mansard, "Analytical derivatives of rigid body dynamics
//! algorithms", Robotics: Science and Systems, 2018 (the same quantities, derived there in
//! local frames).

use armctl_model::{check_length, Robot};
use nalgebra::{DMatrix, Vector6};

use crate::composite::{composite_times, rate_times, update_composites, update_moving_composites};
use crate::spatial::{cross_force, cross_motion};
use crate::{DynamicsError, DynamicsWorkspace};

/// Gravity as the base's upward acceleration `[0; -g]`.
fn base_acceleration(robot: &Robot) -> Vector6<f64> {
    let g = -robot.gravity_in_frame0();
    Vector6::new(0.0, 0.0, 0.0, g.x, g.y, g.z)
}

/// Link velocities `v_i`, accelerations `a_i`, `sigma_i = Sdot_i` (`ws.axis_rate`) and
/// `beta_i` (`ws.column`); `qdd = None` is zero.
fn outward(robot: &Robot, ws: &mut DynamicsWorkspace, qd: &[f64], qdd: Option<&[f64]>) {
    let (mut v, mut a) = (Vector6::zeros(), base_acceleration(robot));
    for (i, &qdi) in qd.iter().enumerate() {
        let s = ws.axis[i];
        let v_next = v + s * qdi;
        let sigma = cross_motion(&v_next, &s);
        ws.column[i] = cross_motion(&s, &a) + cross_motion(&sigma, &v);
        a += s * qdd.map_or(0.0, |qdd| qdd[i]) + sigma * qdi;
        v = v_next;
        (ws.velocity[i], ws.acceleration[i], ws.axis_rate[i]) = (v, a, sigma);
    }
}

/// Rows k of both derivatives for the joints j <= k at or before it.
pub(crate) fn fill_lower(
    ws: &DynamicsWorkspace,
    dq: &mut DMatrix<f64>,
    mut dqd: Option<&mut DMatrix<f64>>,
) {
    for k in 0..ws.n {
        let s = &ws.axis[k];
        let (inertia_s, coriolis_s) = (composite_times(ws, k, s), rate_times(ws, k, s, -1.0));
        for j in 0..=k {
            let sigma = &ws.axis_rate[j];
            dq[(k, j)] = coriolis_s.dot(sigma) - inertia_s.dot(&ws.column[j]);
            if let Some(dqd) = dqd.as_deref_mut() {
                dqd[(k, j)] = coriolis_s.dot(&ws.axis[j]) + 2.0 * inertia_s.dot(sigma);
            }
        }
    }
}

/// Columns j of both derivatives for the joints k < j before it.
pub(crate) fn fill_upper(
    ws: &DynamicsWorkspace,
    dq: &mut DMatrix<f64>,
    mut dqd: Option<&mut DMatrix<f64>>,
) {
    for j in 1..ws.n {
        let (s, sigma, beta) = (&ws.axis[j], &ws.axis_rate[j], &ws.column[j]);
        let by_q = cross_force(s, &ws.c_force[j]) - composite_times(ws, j, beta)
            + rate_times(ws, j, sigma, 1.0);
        let by_qd = dqd
            .is_some()
            .then(|| rate_times(ws, j, s, 1.0) + composite_times(ws, j, sigma) * 2.0);
        for k in 0..j {
            dq[(k, j)] = ws.axis[k].dot(&by_q);
            if let (Some(dqd), Some(by_qd)) = (dqd.as_deref_mut(), by_qd.as_ref()) {
                dqd[(k, j)] = ws.axis[k].dot(by_qd);
            }
        }
    }
}

/// Link motions at `(q, qd, qdd)` (`qdd = None`: zero) and the moving composites, after
/// `set_configuration`: everything [`fill_lower`] and [`fill_upper`] read.
pub(crate) fn moving_pass(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    qd: &[f64],
    qdd: Option<&[f64]>,
) {
    ws.update_world_frames(robot);
    outward(robot, ws, qd, qdd);
    update_moving_composites(robot, ws, true);
}

/// `d G / dq` after `set_configuration`: the arm at rest, where `sigma`, the rates and
/// momenta vanish and every link's force is `I_k a_0`, so `F^c_j = I^c_j a_0`.
fn fill_gravity_derivative(robot: &Robot, ws: &mut DynamicsWorkspace, dg_dq: &mut DMatrix<f64>) {
    ws.update_world_frames(robot);
    let base = base_acceleration(robot);
    for i in 0..ws.n {
        ws.column[i] = cross_motion(&ws.axis[i], &base);
    }
    update_composites(robot, ws);
    for k in 0..ws.n {
        let inertia_s = composite_times(ws, k, &ws.axis[k]);
        for j in 0..=k {
            dg_dq[(k, j)] = -inertia_s.dot(&ws.column[j]);
        }
    }
    for j in 1..ws.n {
        let (s, beta) = (&ws.axis[j], &ws.column[j]);
        let by_q = cross_force(s, &composite_times(ws, j, &base)) - composite_times(ws, j, beta);
        for k in 0..j {
            dg_dq[(k, j)] = ws.axis[k].dot(&by_q);
        }
    }
}

/// An n x n output (its rows and columns checked under its name).
pub(crate) fn check_square(
    name: &'static str,
    n: usize,
    m: &DMatrix<f64>,
) -> Result<(), DynamicsError> {
    check_length(name, n, m.nrows())?;
    Ok(check_length(name, n, m.ncols())?)
}

/// `d tau / dq` and `d tau / dqd` of inverse dynamics ([`crate::rnea`]) at `(q, qd, qdd)`;
/// entry `(i, j)` is `d tau_i / d q_j` (`d tau / d qdd` is the mass matrix).
pub fn rnea_derivatives(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    (q, qd, qdd): (&[f64], &[f64], &[f64]),
    dtau_dq: &mut DMatrix<f64>,
    dtau_dqd: &mut DMatrix<f64>,
) -> Result<(), DynamicsError> {
    ws.set_configuration(robot, q)?;
    check_length("qd", ws.n, qd.len())?;
    check_length("qdd", ws.n, qdd.len())?;
    check_square("dtau_dq", ws.n, dtau_dq)?;
    check_square("dtau_dqd", ws.n, dtau_dqd)?;
    moving_pass(robot, ws, qd, Some(qdd));
    fill_lower(ws, dtau_dq, Some(&mut *dtau_dqd));
    fill_upper(ws, dtau_dq, Some(dtau_dqd));
    Ok(())
}

/// `d G / dq` of the gravity torques ([`crate::gravity_torques`]) at `q`.
pub fn gravity_derivatives(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    q: &[f64],
    dg_dq: &mut DMatrix<f64>,
) -> Result<(), DynamicsError> {
    ws.set_configuration(robot, q)?;
    check_square("dg_dq", ws.n, dg_dq)?;
    fill_gravity_derivative(robot, ws, dg_dq);
    Ok(())
}
