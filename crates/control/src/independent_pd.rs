//! Independent joint PD (docs/theory.md section 6): `tau = Kp e + Kd de`, no model.
//! Claim: under gravity the arm settles where `Kp e = G(q)`: a steady-state error
//! `e = Kp^-1 G(q)`.

use armctl_model::Robot;

use crate::gains::{PdGains, KP_DESCRIPTION};
use crate::{ControlError, Controller, ParameterSet, Step};

/// PD per joint.
#[derive(Debug, Clone)]
pub struct IndependentPd {
    parameters: ParameterSet,
    gains: PdGains,
}

impl IndependentPd {
    /// Default gains sized from the model's `M_ii` at mid-range (the law itself uses no model).
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let (parameters, gains) = PdGains::sized(robot, KP_DESCRIPTION)?;
        Ok(Self { parameters, gains })
    }
}

impl Controller for IndependentPd {
    law_accessors!("independent_pd");
    fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError> {
        self.gains.pd(&self.parameters, step);
        Ok(())
    }
}
