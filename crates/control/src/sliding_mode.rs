//! Sliding mode control with a boundary layer (docs/theory.md section 6):
//! `s = de + Lambda e`, `tau = M_hat (qdd_d + Lambda de + k sat(s / phi)) + C_hat qd + G_hat`
//! `= RNEA_hat(q, qd, qdd_d + Lambda de + k sat(s / phi))`, with `sat` clipping to [-1, 1].
//! Claim: with `k` above the model error (in acceleration), s reaches the layer `|s| <= phi`;
//! `phi = 0` is the pure switching law (`sgn(s)`), which chatters; a wider layer trades the
//! chattering for a residual error of order `phi / Lambda`.

use armctl_dynamics::{rnea, DynamicsWorkspace};
use armctl_model::Robot;

use crate::gains::{check_step, joint_gain};
use crate::{
    ControlError, Controller, JointReference, JointState, ParamKind, ParamSpec, ParamValue,
    ParameterSet,
};

/// Sliding mode on the model's dynamics.
#[derive(Debug, Clone)]
pub struct SlidingMode {
    robot: Robot,
    ws: DynamicsWorkspace,
    parameters: ParameterSet,
    acceleration: Vec<f64>,
}

impl SlidingMode {
    /// `Lambda = 20/s`, `k = 20 rad/s^2`, `phi = 0.1 rad/s` (inside the layer the gain on s is
    /// k/phi = 200/s, 0.2 per step at 1 kHz).
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let n = robot.dof();
        let parameters = ParameterSet::new(
            n,
            vec![
                (joint_gain("lambda", "Slope of the sliding surface s = de + lambda e per joint, 1/s.", 1e4), ParamValue::Vector(vec![20.0; n])),
                (joint_gain("k", "Switching gain per joint, rad/s^2: larger than the model error in acceleration.", 1e5), ParamValue::Vector(vec![20.0; n])),
                (
                    ParamSpec { name: "phi", description: "Boundary layer width on s, rad/s (0: pure switching).", kind: ParamKind::Scalar, min: 0.0, max: 1e3, live: true },
                    ParamValue::Scalar(0.1),
                ),
            ],
        )?;
        Ok(Self {
            ws: DynamicsWorkspace::new(robot),
            acceleration: vec![0.0; n],
            robot: robot.clone(),
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
    fn name(&self) -> &'static str {
        "sliding_mode"
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
        let (lambda, k, phi) = (
            self.parameters.values("lambda"),
            self.parameters.values("k"),
            self.parameters.values("phi")[0],
        );
        for i in 0..self.acceleration.len() {
            let (e, de) = (reference.q[i] - state.q[i], reference.qd[i] - state.qd[i]);
            let s = de + lambda[i] * e;
            self.acceleration[i] = reference.qdd[i] + lambda[i] * de + k[i] * saturated(s, phi);
        }
        rnea(
            &self.robot,
            &mut self.ws,
            state.q,
            state.qd,
            &self.acceleration,
            effort,
        )?;
        Ok(())
    }
}
