//! PD with online gravity compensation (docs/theory.md section 6):
//! `tau = Kp e + Kd de + G(q)`, `e = q_d - q`, `de = qd_d - qd`.
//! Claim: regulation to a set point is globally asymptotically stable for any positive
//! diagonal gains (with the exact G).

use armctl_dynamics::{gravity_torques, DynamicsWorkspace};
use armctl_model::Robot;

use crate::gains::{check_step, joint_gain, joint_inertias, pd, sized_gains, DEFAULT_BANDWIDTH};
use crate::{ControlError, Controller, JointReference, JointState, ParamValue, ParameterSet};

/// PD plus online gravity compensation.
#[derive(Debug, Clone)]
pub struct PdGravity {
    robot: Robot,
    ws: DynamicsWorkspace,
    parameters: ParameterSet,
    gravity: Vec<f64>,
}

impl PdGravity {
    /// The controller for `robot` (its model: G) with default gains
    /// `Kp = (20 rad/s)^2 M_ii`, `Kd = 2 (20 rad/s) M_ii` at mid-range.
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let (kp, kd) = sized_gains(&joint_inertias(robot)?, DEFAULT_BANDWIDTH);
        let parameters = ParameterSet::new(
            robot.dof(),
            vec![
                (
                    joint_gain("kp", "Proportional gain per joint, N m/rad (N/m).", 1e6),
                    ParamValue::Vector(kp),
                ),
                (
                    joint_gain("kd", "Derivative gain per joint, N m s/rad (N s/m).", 1e5),
                    ParamValue::Vector(kd),
                ),
            ],
        )?;
        Ok(Self {
            ws: DynamicsWorkspace::new(robot),
            gravity: vec![0.0; robot.dof()],
            robot: robot.clone(),
            parameters,
        })
    }
}

impl Controller for PdGravity {
    fn name(&self) -> &'static str {
        "pd_gravity"
    }
    fn parameters(&self) -> &ParameterSet {
        &self.parameters
    }
    fn parameters_mut(&mut self) -> &mut ParameterSet {
        &mut self.parameters
    }
    fn update(
        &mut self,
        state: &JointState<'_>,
        reference: &JointReference,
        dt: f64,
        effort: &mut [f64],
    ) -> Result<(), ControlError> {
        check_step(self.robot.dof(), state, reference, effort)?;
        self.parameters.advance(dt);
        gravity_torques(&self.robot, &mut self.ws, state.q, &mut self.gravity)?;
        pd(
            self.parameters.values("kp"),
            self.parameters.values("kd"),
            state,
            reference,
            effort,
        );
        for (e, g) in effort.iter_mut().zip(&self.gravity) {
            *e += g;
        }
        Ok(())
    }
}
