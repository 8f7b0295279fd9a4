//! Forward dynamics: `qdd = M(q)^-1 (tau - C(q, qd) qd - G(q))` (docs/theory.md section 4), with
//! M from the composite-rigid-body algorithm (armature included), the bias from RNEA with zero
//! acceleration, and a Cholesky solve in place ([`crate::cholesky_in_place`]). Friction is not
//! applied here: subtract [`crate::friction_torques`] from tau first when the model should
//! have it.

use armctl_model::{check_length, Robot};
use nalgebra::{DMatrix, DVector};

use crate::cholesky::{cholesky_in_place, cholesky_solve_in_place};
use crate::crba::fill_mass_matrix;
use crate::rnea::newton_euler;
use crate::{DynamicsError, DynamicsWorkspace};

/// `qdd` for joint torques `tau` at `(q, qd)`.
pub fn forward_dynamics(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    q: &[f64],
    qd: &[f64],
    tau: &[f64],
    qdd: &mut [f64],
) -> Result<(), DynamicsError> {
    ws.set_configuration(robot, q)?;
    check_length("qd", ws.n, qd.len())?;
    check_length("tau", ws.n, tau.len())?;
    check_length("qdd", ws.n, qdd.len())?;
    // The bias into `ws.rhs`, then `rhs = tau - bias`; M into `ws.mass_matrix`, factored and
    // solved in place (no allocation).
    let mut rhs = std::mem::replace(&mut ws.rhs, DVector::zeros(0));
    newton_euler(robot, ws, qd, None, None, rhs.as_mut_slice());
    for (r, t) in rhs.iter_mut().zip(tau) {
        *r = t - *r;
    }
    let mut m = std::mem::replace(&mut ws.mass_matrix, DMatrix::zeros(0, 0));
    fill_mass_matrix(robot, ws, &mut m);
    let result = cholesky_in_place(&mut m).and_then(|()| cholesky_solve_in_place(&m, &mut rhs));
    if result.is_ok() {
        qdd.copy_from_slice(rhs.as_slice());
    }
    ws.mass_matrix = m;
    ws.rhs = rhs;
    result
}
