//! Independent joint PD (theory.md section 6): `tau = Kp e + Kd de`, no model.
//! Claim: under gravity the arm settles where `Kp e = G(q)`: a steady-state error
//! `e = Kp^-1 G(q)`.

use armctl_model::Robot;

use crate::gains::PdGains;
use crate::{ControlError, Controller, JointReference, JointState, ParameterSet};

/// PD per joint.
#[derive(Debug, Clone)]
pub struct IndependentPd {
    parameters: ParameterSet,
    gains: PdGains,
}

impl IndependentPd {
    /// Default gains sized from the model's `M_ii` at mid-range (the law itself uses no model).
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let mut parameters = ParameterSet::new(robot.dof());
        let gains = PdGains::sized(
            &mut parameters,
            robot,
            "Proportional gain per joint, N m/rad (N/m).",
        )?;
        Ok(Self { parameters, gains })
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
    fn compute(
        &mut self,
        state: &JointState<'_>,
        reference: &JointReference,
        _dt: f64,
        effort: &mut [f64],
    ) -> Result<(), ControlError> {
        self.gains.pd(&self.parameters, state, reference, effort);
        Ok(())
    }
}
