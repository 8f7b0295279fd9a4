//! Pieces shared by the joint-space controllers: gain declarations, model-sized defaults and
//! the PD term.

use armctl_dynamics::{mass_matrix, DynamicsWorkspace};
use armctl_model::{check_length, Robot};
use nalgebra::DMatrix;

use crate::{ControlError, JointReference, JointState, ParamKind, ParamSpec};

/// Natural frequency of model-sized default gains, rad/s.
pub(crate) const DEFAULT_BANDWIDTH: f64 = 20.0;

/// `M_ii` at the middle of each joint's range (0 for unlimited joints).
pub(crate) fn joint_inertias(robot: &Robot) -> Result<Vec<f64>, ControlError> {
    let n = robot.dof();
    let q: Vec<f64> = robot.middle_configuration();
    let mut m = DMatrix::zeros(n, n);
    mass_matrix(robot, &mut DynamicsWorkspace::new(robot), &q, &mut m)?;
    Ok((0..n).map(|i| m[(i, i)]).collect())
}

/// The inertia each joint feels when the others are free, `1 / (M^-1)_ii`, at mid-range. Where
/// axes line up (the Panda's joints 1 and 3 at joint 2 = 0) it is far below `M_ii`, and a
/// damping gain sized from `M_ii` would be too stiff for that mode at a 1 kHz control rate.
pub(crate) fn effective_inertias(robot: &Robot) -> Result<Vec<f64>, ControlError> {
    let n = robot.dof();
    let q = robot.middle_configuration();
    let mut m = DMatrix::zeros(n, n);
    mass_matrix(robot, &mut DynamicsWorkspace::new(robot), &q, &mut m)?;
    let inverse = m
        .cholesky()
        .ok_or(ControlError::Dynamics(
            armctl_dynamics::DynamicsError::SingularMassMatrix,
        ))?
        .inverse();
    Ok((0..n).map(|i| 1.0 / inverse[(i, i)]).collect())
}

/// Critically damped gains for natural frequency `w` on inertias `m`: `(w^2 m, 2 w m)`.
pub(crate) fn sized_gains(m: &[f64], w: f64) -> (Vec<f64>, Vec<f64>) {
    (
        m.iter().map(|mi| w * w * mi).collect(),
        m.iter().map(|mi| 2.0 * w * mi).collect(),
    )
}

/// A live per-joint gain.
pub(crate) fn joint_gain(name: &'static str, description: &'static str, max: f64) -> ParamSpec {
    ParamSpec {
        name,
        description,
        kind: ParamKind::JointVector,
        min: 0.0,
        max,
        live: true,
    }
}

/// Checks the sizes of a control step's inputs and output.
pub(crate) fn check_step(
    n: usize,
    state: &JointState<'_>,
    reference: &JointReference,
    effort: &[f64],
) -> Result<(), ControlError> {
    check_length("q", n, state.q.len())?;
    check_length("qd", n, state.qd.len())?;
    check_length("reference positions", n, reference.q.len())?;
    check_length("reference velocities", n, reference.qd.len())?;
    check_length("reference accelerations", n, reference.qdd.len())?;
    check_length("effort", n, effort.len())?;
    if state.q.iter().chain(state.qd).any(|v| !v.is_finite()) {
        return Err(ControlError::NonFinite {
            what: "joint state",
        });
    }
    Ok(())
}

/// `out_i = kp_i e_i + kd_i de_i`.
pub(crate) fn pd(
    kp: &[f64],
    kd: &[f64],
    state: &JointState<'_>,
    reference: &JointReference,
    out: &mut [f64],
) {
    for i in 0..out.len() {
        out[i] = kp[i] * (reference.q[i] - state.q[i]) + kd[i] * (reference.qd[i] - state.qd[i]);
    }
}
