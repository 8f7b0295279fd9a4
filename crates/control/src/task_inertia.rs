//! The tip's task-space inertia `Lambda = (J M^-1 J^T)^-1` (docs/theory.md section 6), with
//! `M^-1 J^T` kept for the dynamically consistent nullspace projector
//! `N^T = I - J^T Lambda J M^-1`, shared by the task-space laws.

use armctl_dynamics::{cholesky_in_place, cholesky_solve_in_place, mass_matrix, DynamicsWorkspace};
use armctl_model::Robot;
use nalgebra::{DMatrix, DVector, Matrix6, Matrix6xX, Vector6};

use crate::ControlError;

/// Regularisation of the task mobility near a singularity (and for directions an arm of fewer
/// than six joints cannot move).
const REGULARISATION: f64 = 1e-9;

/// Workspace for the task inertia of one robot.
#[derive(Debug, Clone)]
pub(crate) struct TaskInertia {
    ws: DynamicsWorkspace,
    mass: DMatrix<f64>,
    /// `M^-1 J^T` at the last call.
    pub(crate) minv_jt: DMatrix<f64>,
}

impl TaskInertia {
    pub(crate) fn new(robot: &Robot) -> Self {
        let n = robot.dof();
        Self {
            ws: DynamicsWorkspace::new(robot),
            mass: DMatrix::zeros(n, n),
            minv_jt: DMatrix::zeros(n, 6),
        }
    }

    /// `M^-1 J^T` into `minv_jt` and the task mobility `J M^-1 J^T` at `q`.
    pub(crate) fn mobility(
        &mut self,
        robot: &Robot,
        q: &[f64],
        jac: &Matrix6xX<f64>,
    ) -> Result<Matrix6<f64>, ControlError> {
        mass_matrix(robot, &mut self.ws, q, &mut self.mass)?;
        jac.transpose_to(&mut self.minv_jt);
        // M = L L^T in place (M is rebuilt whole at the next call), then M^-1 J^T.
        cholesky_in_place(&mut self.mass)?;
        cholesky_solve_in_place(&self.mass, &mut self.minv_jt)?;
        Ok(Matrix6::<f64>::from_fn(|r, c| {
            jac.row(r)
                .iter()
                .zip(self.minv_jt.column(c).iter())
                .map(|(a, b)| a * b)
                .sum::<f64>()
        }))
    }

    /// `M^-1 J^T` into `minv_jt` and `Lambda = (J M^-1 J^T + 1e-9 I)^-1` at `q`.
    pub(crate) fn inertia(
        &mut self,
        robot: &Robot,
        q: &[f64],
        jac: &Matrix6xX<f64>,
    ) -> Result<Matrix6<f64>, ControlError> {
        let mut inverse = self.mobility(robot, q, jac)?;
        for k in 0..6 {
            inverse[(k, k)] += REGULARISATION;
        }
        inverse.try_inverse().ok_or(ControlError::Dynamics(
            armctl_dynamics::DynamicsError::SingularMassMatrix,
        ))
    }

    /// `J#^T tau_n = Lambda J M^-1 tau_n` (after [`TaskInertia::inertia`]): what the
    /// dynamically consistent projector takes out of a joint torque `tau_n`.
    pub(crate) fn task_part(&self, lambda: &Matrix6<f64>, tau_n: &DVector<f64>) -> Vector6<f64> {
        let jm = Vector6::from_fn(|r, _| self.minv_jt.column(r).dot(tau_n));
        lambda * jm
    }
}
