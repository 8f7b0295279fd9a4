//! PD with online gravity compensation (docs/theory.md section 6):
//! `tau = Kp e + Kd de + G(q)`, `e = q_d - q`, `de = qd_d - qd`.
//! Claim: regulation to a set point is globally asymptotically stable for any positive
//! diagonal gains (with the exact G). Sampled at `dt`, the gains are scaled where the damping
//! would pass the sampled-data margin ([`crate::gain_sizing::damping_bound`]).

use armctl_model::Robot;

use crate::gain_sizing::damping_bound::DampingBound;
use crate::law_support::gains::{PdGains, KP_DESCRIPTION};
use crate::law_support::model_terms::ModelTerms;
use crate::{ControlError, Controller, ParameterSet, Step};

/// PD plus online gravity compensation.
#[derive(Debug, Clone)]
pub struct PdGravity {
    model: ModelTerms,
    parameters: ParameterSet,
    gains: PdGains,
    gravity: Vec<f64>,
    bound: DampingBound,
}

impl PdGravity {
    /// The controller for `robot` (its model: G) with default gains
    /// `Kp = (20 rad/s)^2 M_ii`, `Kd = 2 (20 rad/s) M_ii` at mid-range.
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let (parameters, gains) = PdGains::sized(robot, KP_DESCRIPTION)?;
        Ok(Self {
            model: ModelTerms::new(robot),
            gravity: vec![0.0; robot.dof()],
            bound: DampingBound::new(robot.dof()),
            parameters,
            gains,
        })
    }
}

impl Controller for PdGravity {
    law_accessors!("pd_gravity", damping = "kd");
    fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError> {
        let (p, gains) = (&self.parameters, self.gains);
        let s = self
            .model
            .damping_scales(&mut self.bound, &step, &p[gains.kd])?;
        self.model.gravity(step.state.q, &mut self.gravity)?;
        gains.pd_plus(p, step, &self.gravity, s);
        Ok(())
    }
}
