//! The tip's task-space inertia `Lambda = (J M^-1 J^T)^-1` (docs/theory.md section 6), with
//! `W = L^-1 J^T` (`M = L L^T`) kept for the dynamically consistent nullspace projector
//! `N^T = I - J^T Lambda J M^-1`, shared by the task-space laws. The task mobility
//! `J M^-1 J^T = W^T W` needs only the forward half of the solve.

use armctl_dynamics::{cholesky_forward_in_place, cholesky_in_place, Terms};
use armctl_model::Robot;
use nalgebra::{DMatrix, DVector, Matrix6, Matrix6xX, Vector6};

use crate::ControlError;

/// Regularisation of the task mobility near a singularity (and for directions an arm of fewer
/// than six joints cannot move).
const REGULARISATION: f64 = 1e-9;

/// Workspace for the task inertia of one robot.
#[derive(Debug, Clone)]
pub(crate) struct TaskInertia {
    /// M, then its factor L (lower triangle).
    mass: DMatrix<f64>,
    /// `W = L^-1 J^T` at the last call.
    w: DMatrix<f64>,
    /// `L^-1 tau` (n x 1) for [`TaskInertia::task_part`].
    scratch: DMatrix<f64>,
    /// The lower Cholesky factor U of the regularised mobility `J M^-1 J^T + 1e-9 I = U U^T`
    /// at the last [`TaskInertia::inertia`]: `Lambda = U^-T U^-1`.
    pub(crate) mobility_factor: Matrix6<f64>,
    /// `U^-1` at the last [`TaskInertia::inertia`].
    pub(crate) inverse_mobility_factor: Matrix6<f64>,
}

impl TaskInertia {
    pub(crate) fn new(robot: &Robot) -> Self {
        let n = robot.dof();
        Self {
            mass: DMatrix::zeros(n, n),
            w: DMatrix::zeros(n, 6),
            scratch: DMatrix::zeros(n, 1),
            mobility_factor: Matrix6::identity(),
            inverse_mobility_factor: Matrix6::identity(),
        }
    }

    /// A task inertia holding only the mobility factor U (for the damping design's tests).
    #[cfg(test)]
    pub(crate) fn with_mobility_factor(factor: Matrix6<f64>) -> Self {
        Self {
            mass: DMatrix::zeros(0, 0),
            w: DMatrix::zeros(0, 6),
            scratch: DMatrix::zeros(0, 1),
            mobility_factor: factor,
            inverse_mobility_factor: factor.try_inverse().unwrap_or_else(Matrix6::zeros),
        }
    }

    /// The lower Cholesky factor `L` of `M` (`M = L L^T`, lower triangle) at the last
    /// [`TaskInertia::mobility`].
    pub(crate) fn mass_factor(&self) -> &DMatrix<f64> {
        &self.mass
    }

    /// `W = L^-1 J^T` and the task mobility `J M^-1 J^T = W^T W` at the terms' q.
    pub(crate) fn mobility(
        &mut self,
        terms: &mut Terms<'_>,
        jac: &Matrix6xX<f64>,
    ) -> Result<Matrix6<f64>, ControlError> {
        terms.mass_matrix(&mut self.mass)?;
        jac.transpose_to(&mut self.w);
        // M = L L^T in place (M is rebuilt whole at the next call).
        cholesky_in_place(&mut self.mass)?;
        cholesky_forward_in_place(&self.mass, &mut self.w)?;
        let w = &self.w;
        let mut mobility = Matrix6::zeros();
        for r in 0..6 {
            for c in 0..=r {
                let value = w.column(r).dot(&w.column(c));
                mobility[(r, c)] = value;
                mobility[(c, r)] = value;
            }
        }
        Ok(mobility)
    }

    /// `W` and `Lambda = (J M^-1 J^T + 1e-9 I)^-1` at the terms' q, through the mobility's
    /// Cholesky factor (kept in `mobility_factor`, its inverse in `inverse_mobility_factor`).
    pub(crate) fn inertia(
        &mut self,
        terms: &mut Terms<'_>,
        jac: &Matrix6xX<f64>,
    ) -> Result<Matrix6<f64>, ControlError> {
        let mut mobility = self.mobility(terms, jac)?;
        for k in 0..6 {
            mobility[(k, k)] += REGULARISATION;
        }
        let singular = ControlError::Dynamics(armctl_dynamics::DynamicsError::SingularMassMatrix);
        let factor = mobility.cholesky().ok_or(singular.clone())?.unpack();
        let inverse = factor
            .solve_lower_triangular(&Matrix6::identity())
            .ok_or(singular)?;
        self.mobility_factor = factor;
        self.inverse_mobility_factor = inverse;
        Ok(inverse.tr_mul(&inverse))
    }

    /// `J#^T tau_n = Lambda J M^-1 tau_n = Lambda W^T L^-1 tau_n` (after
    /// [`TaskInertia::inertia`]): what the dynamically consistent projector takes out of a
    /// joint torque `tau_n`.
    pub(crate) fn task_part(
        &mut self,
        lambda: &Matrix6<f64>,
        tau_n: &DVector<f64>,
    ) -> Result<Vector6<f64>, ControlError> {
        self.scratch.copy_from(tau_n);
        cholesky_forward_in_place(&self.mass, &mut self.scratch)?;
        let z = self.scratch.column(0);
        let jm = Vector6::from_fn(|r, _| self.w.column(r).dot(&z));
        Ok(lambda * jm)
    }
}
