//! Sliding mode control with a boundary layer (docs/theory.md section 6):
//! `s = de + Lambda e`, `tau = M_hat (qdd_d + Lambda de + k sat(s / phi)) + C_hat qd + G_hat`
//! `= RNEA_hat(q, qd, qdd_d + Lambda de + k sat(s / phi))`, with `sat` clipping to [-1, 1].
//! Claim: with `k` above the model error (in acceleration), s reaches the layer `|s| <= phi`;
//! `phi = 0` is the pure switching law (`sgn(s)`), which chatters; a wider layer trades the
//! chattering for a residual error of order `phi / Lambda`.

use armctl_model::Robot;

use crate::gains::{errors, joint_gain};
use crate::model_terms::ModelTerms;
use crate::{Array, ControlError, Controller, Declaration, ParameterSet, Scalar, Step};

/// Sliding mode on the model's dynamics.
#[derive(Debug, Clone)]
pub struct SlidingMode {
    model: ModelTerms,
    parameters: ParameterSet,
    lambda: Array,
    k: Array,
    phi: Scalar,
    acceleration: Vec<f64>,
}

impl SlidingMode {
    /// `Lambda = 20/s`, `k = 20 rad/s^2`, `phi = 0.1 rad/s` (inside the layer the gain on s is
    /// k/phi = 200/s, 0.2 per step at 1 kHz).
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let n = robot.dof();
        let mut parameters = ParameterSet::new(n);
        Ok(Self {
            lambda: parameters.declare_array(joint_gain(
                "lambda",
                vec![20.0; n],
                "Slope of the sliding surface s = de + lambda e per joint, 1/s.",
                1e4,
            ))?,
            k: parameters.declare_array(joint_gain(
                "k",
                vec![20.0; n],
                "Switching gain per joint, rad/s^2: larger than the model error in acceleration.",
                1e5,
            ))?,
            phi: parameters.declare_scalar(
                Declaration::double(
                    "phi",
                    0.1,
                    "Boundary layer width on s, rad/s (0: pure switching).",
                )
                .range(0.0, 1e3),
            )?,
            model: ModelTerms::new(robot),
            acceleration: vec![0.0; n],
            parameters,
        })
    }
}

/// `sat(s / phi)`; `sgn(s)` for `phi = 0`.
fn saturated(s: f64, phi: f64) -> f64 {
    if phi > 0.0 {
        (s / phi).clamp(-1.0, 1.0)
    } else if s == 0.0 {
        0.0
    } else {
        s.signum()
    }
}

impl Controller for SlidingMode {
    law_accessors!("sliding_mode");
    fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError> {
        let p = &self.parameters;
        let (lambda, k, phi) = (&p[self.lambda], &p[self.k], p[self.phi]);
        for (i, (e, de)) in errors(step.state, step.reference).enumerate() {
            let s = de + lambda[i] * e;
            self.acceleration[i] =
                step.reference.qdd[i] + lambda[i] * de + k[i] * saturated(s, phi);
        }
        self.model
            .inverse_dynamics(step.state, &self.acceleration, step.effort)
    }
}
