//! Joint impedance (docs/theory.md section 6):
//! `tau = K (q_d - q) + D (qd_d - qd) + G(q)` (+ `C(q, qd) qd` when `coriolis` is 1).
//! Where `D` would pass the sampled-data margin at the arm's configuration, `K` and `D` are
//! scaled (`s^2 K`, `s D`: [`crate::gain_sizing::damping_bound`]).
//! Claim: the arm behaves as a spring-damper about q_d; a constant external torque `tau_ext`
//! deflects it statically by `K^-1 tau_ext` (for a tip wrench F, `K^-1 J^T F`).

use armctl_model::Robot;

use crate::gain_sizing::damping_bound::DampingBound;
use crate::law_support::gains::{joint_gain, PdGains};
use crate::law_support::model_terms::ModelTerms;
use crate::{ControlError, Controller, Declaration, ParameterSet, Scalar, Step};

/// Natural frequency of the default impedance, rad/s.
const DEFAULT_FREQUENCY: f64 = 10.0;

/// Joint-space spring-damper with gravity (and optionally Coriolis) compensation.
#[derive(Debug, Clone)]
pub struct JointImpedance {
    model: ModelTerms,
    parameters: ParameterSet,
    gains: PdGains,
    coriolis: Scalar,
    model_terms: Vec<f64>,
    bound: DampingBound,
}

impl JointImpedance {
    /// The controller with default stiffness and damping derived for natural frequencies up
    /// to 10 rad/s, critically damped (see [`crate::gain_sizing::default_gains`]).
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let design = crate::gain_sizing::default_gains::pd_design(robot, DEFAULT_FREQUENCY)?;
        let description = format!(
            "Joint stiffness K per joint, N m/rad (N/m). {}",
            design.describe(robot)
        );
        let (k, d) = (design.kp, design.kd);
        let mut parameters = ParameterSet::new(robot.dof());
        let gains = PdGains {
            kp: parameters.declare_array(joint_gain("stiffness", k, &description, 1e6))?,
            kd: parameters.declare_array(joint_gain(
                "damping",
                d,
                "Joint damping D per joint, N m s/rad (N s/m).",
                1e5,
            ))?,
        };
        let coriolis = parameters.declare_scalar(
            Declaration::double(
                "coriolis",
                1.0,
                "1 to add the Coriolis and centrifugal torques C(q, qd) qd, 0 for gravity only.",
            )
            .range(0.0, 1.0)
            .read_only(),
        )?;
        Ok(Self {
            model: ModelTerms::new(robot),
            model_terms: vec![0.0; robot.dof()],
            bound: DampingBound::new(robot.dof()),
            parameters,
            gains,
            coriolis,
        })
    }
}

impl Controller for JointImpedance {
    law_accessors!("joint_impedance", damping = "damping");
    fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError> {
        let (p, gains) = (&self.parameters, self.gains);
        let s = self
            .model
            .damping_scales(&mut self.bound, &step, &p[gains.kd])?;
        if self.parameters[self.coriolis] >= 0.5 {
            self.model.nonlinear(step.state, &mut self.model_terms)?;
        } else {
            self.model.gravity(step.state.q, &mut self.model_terms)?;
        }
        self.gains.pd_plus(p, step, &self.model_terms, s);
        Ok(())
    }
}
