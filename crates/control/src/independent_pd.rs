//! Independent joint PD (docs/theory.md section 6): `tau = Kp e + Kd de`, no model.
//! Claim: under gravity the arm settles where `Kp e = G(q)`: a steady-state error
//! `e = Kp^-1 G(q)`.

use armctl_model::Robot;

use crate::gains::{check_step, joint_gain, joint_inertias, pd, sized_gains, DEFAULT_BANDWIDTH};
use crate::{ControlError, Controller, JointReference, JointState, ParamValue, ParameterSet};

/// PD per joint.
#[derive(Debug, Clone)]
pub struct IndependentPd {
    dof: usize,
    parameters: ParameterSet,
}

impl IndependentPd {
    /// Default gains sized from the model's `M_ii` at mid-range (the law itself uses no model).
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
            dof: robot.dof(),
            parameters,
        })
    }
}

impl Controller for IndependentPd {
    fn name(&self) -> &'static str {
        "independent_pd"
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
        check_step(self.dof, state, reference, effort)?;
        self.parameters.advance(dt);
        pd(
            self.parameters.values("kp"),
            self.parameters.values("kd"),
            state,
            reference,
            effort,
        );
        Ok(())
    }
}
