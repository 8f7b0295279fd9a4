//! PD with online gravity compensation (theory.md section 6):
//! `tau = Kp e + Kd de + G(q)`, `e = q_d - q`, `de = qd_d - qd`.
//! Claim: regulation to a set point is globally asymptotically stable for any positive
//! diagonal gains (with the exact G).

use armctl_model::Robot;

use crate::gains::PdGains;
use crate::model_terms::ModelTerms;
use crate::{ControlError, Controller, JointReference, JointState, ParameterSet};

/// PD plus online gravity compensation.
#[derive(Debug, Clone)]
pub struct PdGravity {
    model: ModelTerms,
    parameters: ParameterSet,
    gains: PdGains,
    gravity: Vec<f64>,
}

impl PdGravity {
    /// The controller for `robot` (its model: G) with default gains
    /// `Kp = (20 rad/s)^2 M_ii`, `Kd = 2 (20 rad/s) M_ii` at mid-range.
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let mut parameters = ParameterSet::new(robot.dof());
        let gains = PdGains::sized(
            &mut parameters,
            robot,
            "Proportional gain per joint, N m/rad (N/m).",
        )?;
        Ok(Self {
            model: ModelTerms::new(robot),
            gravity: vec![0.0; robot.dof()],
            parameters,
            gains,
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
    fn compute(
        &mut self,
        state: &JointState<'_>,
        reference: &JointReference,
        _dt: f64,
        effort: &mut [f64],
    ) -> Result<(), ControlError> {
        self.model.gravity(state.q, &mut self.gravity)?;
        self.gains
            .pd_plus(&self.parameters, state, reference, &self.gravity, effort);
        Ok(())
    }
}
