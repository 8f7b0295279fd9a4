//! Robust computed torque (Spong, docs/theory.md section 6): `v = qdd_d + Kd de + Kp e + dv`,
//! `tau = M_hat v + C_hat qd + G_hat = RNEA_hat(q, qd, v)`, with
//! `dv = rho w / max(||w||, eps)`, `w = B^T P x`, `x = [e; de]`, `B = [0; I]` and P solving
//! `A^T P + P A = -Q` for `A = [[0, I], [-Kp, -Kd]]`, `Q = diag(I, q_v I)`. With diagonal gains
//! P is block-diagonal per joint: `p12 = 1/(2 kp)`, `p22 = (p12 + q_v/2)/kd`, so
//! `w_i = p12 e_i + p22 de_i`. A small `q_v` weights e and de like a sliding variable; with
//! `Q = I` w is almost all velocity error and a steady offset is hardly corrected.
//! Claim: if the model error in acceleration stays below rho, the error is uniformly
//! ultimately bounded (the bound shrinks with eps).

use armctl_model::Robot;

use crate::law_support::gains::{errors, PdGains};
use crate::law_support::model_terms::ModelTerms;
use crate::laws::computed_torque::{commanded_acceleration, error_dynamics_gains};
use crate::{ControlError, Controller, Declaration, ParameterSet, Scalar, Step};

/// Largest default `rho`, rad/s^2.
const RHO_MAX: f64 = 50.0;

/// Share of each effort limit the robust term may take on its own (on top of the error
/// dynamics' step share).
const RHO_EFFORT_SHARE: f64 = 0.2;

/// Default `(rho, eps)`: `rho` up to [`RHO_MAX`] but at most what every joint can add with
/// [`RHO_EFFORT_SHARE`] of its effort limit; `eps = rho / (2 min kp^2)`, so that in the linear
/// region (`||w|| < eps`, `w_i ~ e_i / (2 kp_i)`) the term adds at most the nominal stiffness
/// `kp` of any joint instead of a stiffness no discrete loop can hold.
fn robust_defaults(robot: &Robot, kp: &[f64]) -> Result<(f64, f64), ControlError> {
    let capacity =
        crate::gain_sizing::default_gains::acceleration_capacity(robot, RHO_EFFORT_SHARE)?;
    let rho = capacity.iter().copied().fold(RHO_MAX, f64::min);
    let kp_min = kp.iter().copied().fold(f64::INFINITY, f64::min).max(1e-6);
    Ok((rho, (rho / (2.0 * kp_min * kp_min)).clamp(1e-12, 1e3)))
}

/// Computed torque with Spong's robustifying term.
#[derive(Debug, Clone)]
pub struct Robust {
    model: ModelTerms,
    parameters: ParameterSet,
    gains: PdGains,
    rho: Scalar,
    eps: Scalar,
    q_velocity: Scalar,
    acceleration: Vec<f64>,
    w: Vec<f64>,
}

impl Robust {
    /// `Kp = w^2`, `Kd = 2 w` (w up to 30 rad/s per joint, see [`crate::gain_sizing::default_gains`]),
    /// `q_v = 1e-3`; `rho` and `eps` from [`robust_defaults`].
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let n = robot.dof();
        let mut parameters = ParameterSet::new(n);
        let gains = error_dynamics_gains(
            &mut parameters,
            robot,
            "nominal error dynamics",
            " (must be positive)",
        )?;
        let (default_rho, default_eps) = robust_defaults(robot, &parameters[gains.kp])?;
        let mut scalar = |name, default, description, min, max| {
            parameters
                .declare_scalar(Declaration::double(name, default, description).range(min, max))
        };
        let rho = scalar(
            "rho",
            default_rho,
            "Bound on the model error in acceleration, rad/s^2.",
            0.0,
            1e5,
        )?;
        let eps = scalar("eps", default_eps, "Width below which the robust term is linear in w (avoids chattering); w is about e / (2 kp).", 1e-12, 1e3)?;
        let q_velocity = scalar(
            "q_velocity",
            1e-3,
            "Weight q_v of the velocity error in the Lyapunov matrix Q = diag(I, q_v I).",
            1e-9,
            1e3,
        )?;
        Ok(Self {
            model: ModelTerms::new(robot),
            acceleration: vec![0.0; n],
            w: vec![0.0; n],
            parameters,
            gains,
            rho,
            eps,
            q_velocity,
        })
    }
}

impl Controller for Robust {
    law_accessors!("robust");
    fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError> {
        let p = &self.parameters;
        let (kp, kd) = (&p[self.gains.kp], &p[self.gains.kd]);
        let (rho, eps, q_v) = (p[self.rho], p[self.eps], p[self.q_velocity]);
        for (i, (e, de)) in errors(step.state, step.reference).enumerate() {
            let p12 = 0.5 / kp[i].max(1e-12);
            let p22 = (p12 + 0.5 * q_v) / kd[i].max(1e-12);
            self.w[i] = p12 * e + p22 * de;
        }
        commanded_acceleration(
            p,
            self.gains,
            step.state,
            step.reference,
            &mut self.acceleration,
        );
        let norm = self.w.iter().map(|w| w * w).sum::<f64>().sqrt();
        for (a, w) in self.acceleration.iter_mut().zip(&self.w) {
            *a += rho * w / norm.max(eps);
        }
        self.model
            .inverse_dynamics(step.state, &self.acceleration, step.effort)
    }
}
