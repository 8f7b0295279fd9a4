//! The model a law computes with (the robot and its dynamics workspace), and the model terms
//! the laws use, each into a caller's buffer.

use armctl_dynamics::{
    gravity_torques, nonlinear_effects, regressor, rnea, rnea_two_velocity, DynamicsWorkspace,
};
use armctl_model::Robot;
use nalgebra::DMatrix;

use crate::gain_sizing::damping_bound::DampingBound;
use crate::{ControlError, JointState, Step};

/// The robot model and its workspace.
#[derive(Debug, Clone)]
pub(crate) struct ModelTerms {
    pub(crate) robot: Robot,
    pub(crate) ws: DynamicsWorkspace,
}

impl ModelTerms {
    pub(crate) fn new(robot: &Robot) -> Self {
        Self {
            ws: DynamicsWorkspace::new(robot),
            robot: robot.clone(),
        }
    }

    /// `M(q) qdd + C(q, qd) qd + G(q)` (RNEA) into `out`.
    pub(crate) fn inverse_dynamics(
        &mut self,
        state: &JointState<'_>,
        qdd: &[f64],
        out: &mut [f64],
    ) -> Result<(), ControlError> {
        Ok(rnea(
            &self.robot,
            &mut self.ws,
            state.q,
            state.qd,
            qdd,
            out,
        )?)
    }

    /// `M(q) a + C(q, qd) v + G(q)` (two-velocity RNEA) into `out`.
    pub(crate) fn two_velocity(
        &mut self,
        state: &JointState<'_>,
        v: &[f64],
        a: &[f64],
        out: &mut [f64],
    ) -> Result<(), ControlError> {
        let (q, qd) = (state.q, state.qd);
        Ok(rnea_two_velocity(
            &self.robot,
            &mut self.ws,
            q,
            qd,
            v,
            a,
            out,
        )?)
    }

    /// The regressor `Y(q, qd, v, a)` of `M a + C(q, qd) v + G` into `y`.
    pub(crate) fn regressor(
        &mut self,
        state: &JointState<'_>,
        v: &[f64],
        a: &[f64],
        y: &mut DMatrix<f64>,
    ) -> Result<(), ControlError> {
        let (q, qd) = (state.q, state.qd);
        Ok(regressor(&self.robot, &mut self.ws, q, qd, v, a, y)?)
    }

    /// `G(q)` into `out`.
    pub(crate) fn gravity(&mut self, q: &[f64], out: &mut [f64]) -> Result<(), ControlError> {
        Ok(gravity_torques(&self.robot, &mut self.ws, q, out)?)
    }

    /// `C(q, qd) qd + G(q)` into `out`.
    pub(crate) fn nonlinear(
        &mut self,
        state: &JointState<'_>,
        out: &mut [f64],
    ) -> Result<(), ControlError> {
        Ok(nonlinear_effects(
            &self.robot,
            &mut self.ws,
            state.q,
            state.qd,
            out,
        )?)
    }

    /// Per joint the factor in (0, 1] that keeps the joint damping `damping` within the
    /// sampled-data margin at this step's configuration and period ([`crate::gain_sizing::damping_bound`]).
    pub(crate) fn damping_scales<'b>(
        &mut self,
        bound: &'b mut DampingBound,
        step: &Step<'_>,
        damping: &[f64],
    ) -> Result<&'b [f64], ControlError> {
        bound.diagonal_scales(&self.robot, &mut self.ws, step.state.q, damping, step.dt)
    }
}
