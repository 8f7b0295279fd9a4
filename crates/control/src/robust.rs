//! Robust computed torque (Spong, docs/theory.md section 6): `v = qdd_d + Kd de + Kp e + dv`,
//! `tau = M_hat v + C_hat qd + G_hat = RNEA_hat(q, qd, v)`, with
//! `dv = rho w / max(||w||, eps)`, `w = B^T P x`, `x = [e; de]`, `B = [0; I]` and P solving
//! `A^T P + P A = -Q` for `A = [[0, I], [-Kp, -Kd]]`, `Q = diag(I, q_v I)`. With diagonal gains
//! P is block-diagonal per joint: `p12 = 1/(2 kp)`, `p22 = (p12 + q_v/2)/kd`, so
//! `w_i = p12 e_i + p22 de_i`. A small `q_v` weights e and de like a sliding variable; with
//! `Q = I` w is almost all velocity error and a steady offset is hardly corrected.
//! Claim: if the model error in acceleration stays below rho, the error is uniformly
//! ultimately bounded (the bound shrinks with eps).

use armctl_dynamics::{rnea, DynamicsWorkspace};
use armctl_model::Robot;

use crate::gains::{check_step, joint_gain};
use crate::{
    ControlError, Controller, JointReference, JointState, ParamKind, ParamSpec, ParamValue,
    ParameterSet,
};

/// Computed torque with Spong's robustifying term.
#[derive(Debug, Clone)]
pub struct Robust {
    robot: Robot,
    ws: DynamicsWorkspace,
    parameters: ParameterSet,
    acceleration: Vec<f64>,
    w: Vec<f64>,
}

fn scalar(name: &'static str, description: &'static str, min: f64, max: f64) -> ParamSpec {
    ParamSpec {
        name,
        description,
        kind: ParamKind::Scalar,
        min,
        max,
        live: true,
    }
}

impl Robust {
    /// `Kp = 900`, `Kd = 60` (1/s^2, 1/s), `rho = 50 rad/s^2`, `eps = 1e-5`, `q_v = 1e-3`: in the
    /// linear region the term adds about 2800/s^2 of stiffness and 90/s of damping.
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let n = robot.dof();
        let parameters = ParameterSet::new(
            n,
            vec![
                (joint_gain("kp", "Stiffness of the nominal error dynamics per joint, 1/s^2.", 1e6), ParamValue::Vector(vec![900.0; n])),
                (joint_gain("kd", "Damping of the nominal error dynamics per joint, 1/s (must be positive).", 1e4), ParamValue::Vector(vec![60.0; n])),
                (scalar("rho", "Bound on the model error in acceleration, rad/s^2.", 0.0, 1e5), ParamValue::Scalar(50.0)),
                (scalar("eps", "Width below which the robust term is linear in w (avoids chattering); w is about e / (2 kp).", 1e-12, 1e3), ParamValue::Scalar(1e-5)),
                (scalar("q_velocity", "Weight q_v of the velocity error in the Lyapunov matrix Q = diag(I, q_v I).", 1e-9, 1e3), ParamValue::Scalar(1e-3)),
            ],
        )?;
        Ok(Self {
            ws: DynamicsWorkspace::new(robot),
            acceleration: vec![0.0; n],
            w: vec![0.0; n],
            robot: robot.clone(),
            parameters,
        })
    }
}

impl Controller for Robust {
    fn name(&self) -> &'static str {
        "robust"
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
        let (kp, kd) = (self.parameters.values("kp"), self.parameters.values("kd"));
        let (rho, eps) = (
            self.parameters.values("rho")[0],
            self.parameters.values("eps")[0],
        );
        let q_v = self.parameters.values("q_velocity")[0];
        for i in 0..self.w.len() {
            let (e, de) = (reference.q[i] - state.q[i], reference.qd[i] - state.qd[i]);
            let p12 = 0.5 / kp[i].max(1e-12);
            let p22 = (p12 + 0.5 * q_v) / kd[i].max(1e-12);
            self.w[i] = p12 * e + p22 * de;
            self.acceleration[i] = reference.qdd[i] + kd[i] * de + kp[i] * e;
        }
        let norm = self.w.iter().map(|w| w * w).sum::<f64>().sqrt();
        for (a, w) in self.acceleration.iter_mut().zip(&self.w) {
            *a += rho * w / norm.max(eps);
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
