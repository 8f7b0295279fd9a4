//! PD with online gravity compensation (docs/theory.md section 6):
//! `tau = Kp e + Kd de + G(q)`, `e = q_d - q`, `de = qd_d - qd`.
//! Claim: regulation to a set point is globally asymptotically stable for any positive
//! diagonal gains (with the exact G).

use armctl_model::Robot;

use crate::gains::{PdGains, KP_DESCRIPTION};
use crate::model_terms::ModelTerms;
use crate::{ControlError, Controller, ParameterSet, Step};

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
        let (parameters, gains) = PdGains::sized(robot, KP_DESCRIPTION)?;
        Ok(Self {
            model: ModelTerms::new(robot),
            gravity: vec![0.0; robot.dof()],
            parameters,
            gains,
        })
    }
}

impl Controller for PdGravity {
    law_accessors!("pd_gravity");
    fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError> {
        self.model.gravity(step.state.q, &mut self.gravity)?;
        self.gains.pd_plus(&self.parameters, step, &self.gravity);
        Ok(())
    }
}
