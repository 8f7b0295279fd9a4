//! Independent joint PD (docs/theory.md section 6): `tau = Kp e + Kd de`, no model in the law
//! (the model only scales the gains where the damping would pass the sampled-data margin,
//! [`crate::gain_sizing::damping_bound`]).
//! Claim: under gravity the arm settles where `Kp e = G(q)`: a steady-state error
//! `e = Kp^-1 G(q)`.

use armctl_model::Robot;

use crate::gain_sizing::damping_bound::DampingBound;
use crate::law_support::gains::{PdGains, KP_DESCRIPTION};
use crate::law_support::model_terms::ModelTerms;
use crate::{ControlError, Controller, ParameterSet, Step};

/// PD per joint.
#[derive(Debug, Clone)]
pub struct IndependentPd {
    parameters: ParameterSet,
    gains: PdGains,
    model: ModelTerms,
    bound: DampingBound,
}

impl IndependentPd {
    /// Default gains sized from the model's `M_ii` at mid-range (the law itself uses no model).
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let (parameters, gains) = PdGains::sized(robot, KP_DESCRIPTION)?;
        Ok(Self {
            parameters,
            gains,
            model: ModelTerms::new(robot),
            bound: DampingBound::new(robot.dof()),
        })
    }
}

impl Controller for IndependentPd {
    law_accessors!("independent_pd", damping = "kd");
    fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError> {
        let (p, gains) = (&self.parameters, self.gains);
        let s = self
            .model
            .damping_scales(&mut self.bound, &step, &p[gains.kd])?;
        gains.pd_plus(p, step, &[], s);
        Ok(())
    }
}
