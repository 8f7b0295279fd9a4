//! Slotine's sliding mode control (Slotine and Li, "Applied Nonlinear Control", ch. 7 and 9;
//! docs/theory.md section 6), next to [`crate::SlidingMode`]'s computed-torque form:
//! `qd_r = qd_d + Lambda e`, `qdd_r = qdd_d + Lambda de`, `s = de + Lambda e` (e = q_d - q),
//!
//! `tau = M_hat qdd_r + C_hat qd_r + G_hat + Kd s + k(q, qd) sat(s / phi)`,
//!
//! with the model terms by the two-velocity RNEA and the switching gain from bounds on the
//! inertial parameters: when each parameter is within `model_uncertainty` (a fraction) of the
//! model's `p_hat`, the model error `Y (p - p_hat)` is at most `rho sum_j |Y_ij p_hat_j|` per
//! joint, so `k_i = rho sum_j |Y_ij(q, qd, qd_r, qdd_r) p_hat_j| + eta_i` makes
//! `1/2 d/dt (s^T M s) <= -s^T Kd s - sum eta_i |s_i|` outside the layer (skew symmetry of
//! `Mdot - 2C`): s reaches the layer in finite time from anywhere, and the state-dependent k
//! is large only where the model torque is. Claim: `|s_i| <= phi` is reached, then
//! `|e_i| <= phi / lambda_i`.
//!
//! `model_free: true` is the same section's variant without a model: `tau = Kd s + k sat(s/phi)`
//! with the constant `k = eta`, which must then bound the whole dynamics (gravity included).

use armctl_model::Robot;
use nalgebra::DMatrix;

use crate::law_support::gains::joint_gain;
use crate::law_support::model_terms::ModelTerms;
use crate::laws::sliding_mode::saturated;
use crate::laws::slotine_li::{ReferenceTerms, SlotineLiGains};
use crate::{ControlError, Controller, Declaration, ParameterSet, ParameterValue, Scalar, Step};

/// Sliding mode in Slotine's form.
#[derive(Debug, Clone)]
pub struct SlotineSlidingMode {
    model: ModelTerms,
    parameters: ParameterSet,
    gains: SlotineLiGains,
    eta: crate::Array,
    uncertainty: Scalar,
    phi: Scalar,
    terms: ReferenceTerms,
    /// The model's inertial parameters `p_hat`.
    p_hat: Vec<f64>,
    regressor: DMatrix<f64>,
    switching: Vec<f64>,
    /// `|G|` at the middle of the joint ranges: what `eta` must exceed without a model.
    gravity_scale: Vec<f64>,
    warnings: Vec<String>,
    bound: crate::gain_sizing::damping_bound::DampingBound,
}

impl SlotineSlidingMode {
    /// Slotine-Li's `Lambda`, `Kd`; `eta_i = k_i M_ii` at the middle of the joint ranges with
    /// [`crate::SlidingMode`]'s default `k` (the same reaching acceleration as its
    /// computed-torque form), `model_uncertainty = 0.2`, `phi = 0.2 rad/s`.
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let n = robot.dof();
        let mut parameters = ParameterSet::new(n);
        let gains = SlotineLiGains::declare(&mut parameters, robot)?;
        let (_, k, _) = crate::laws::sliding_mode::default_gains(robot)?;
        let mut mass = DMatrix::zeros(n, n);
        let middle = robot.middle_configuration();
        let mut ws = armctl_dynamics::DynamicsWorkspace::new(robot);
        armctl_dynamics::mass_matrix(robot, &mut ws, &middle, &mut mass)?;
        let eta_default: Vec<f64> = k
            .iter()
            .enumerate()
            .map(|(i, k)| k * mass[(i, i)])
            .collect();
        let eta = parameters.declare_array(joint_gain(
            "eta",
            eta_default,
            "Reaching margin per joint, N m (N): the switching gain's constant part (its whole with model_free).",
            1e4,
        ))?;
        let uncertainty = parameters.declare_scalar(
            Declaration::double("model_uncertainty", 0.2, "Bound on each inertial parameter's relative error, as a fraction of the model's value: sizes the state-dependent switching gain.")
                .range(0.0, 10.0),
        )?;
        let phi = parameters.declare_scalar(
            Declaration::double(
                "phi",
                0.2,
                "Boundary layer width on s, rad/s (0: pure switching).",
            )
            .range(0.0, 1e3),
        )?;
        parameters.declare(
            Declaration::bool(
                "model_free",
                false,
                "The variant without a model: tau = Kd s + eta sat(s/phi).",
            )
            .read_only(),
        )?;
        Ok(Self {
            model: ModelTerms::new(robot),
            gains,
            eta,
            uncertainty,
            phi,
            terms: ReferenceTerms::new(n),
            p_hat: robot.parameter_vector(),
            regressor: DMatrix::zeros(n, 10 * n),
            switching: vec![0.0; n],
            gravity_scale: gravity_at(robot, &middle)?,
            warnings: Vec::new(),
            bound: crate::gain_sizing::damping_bound::DampingBound::new(n),
            parameters,
        })
    }

    /// Without a model, `eta` below the gravity torque at mid-range cannot hold the arm.
    fn check_model_free(&mut self) {
        self.warnings.clear();
        if !self.model_free() {
            return;
        }
        let eta = self.parameters.target(self.eta);
        let short: Vec<String> = eta
            .iter()
            .zip(&self.gravity_scale)
            .enumerate()
            .filter(|(_, (eta, g))| eta <= g)
            .map(|(i, (eta, g))| format!("joint {}: eta {eta:.3} <= |G| {g:.3}", i + 1))
            .collect();
        if !short.is_empty() {
            self.warnings.push(format!(
                "model-free sliding mode: eta must bound the dynamics, gravity included ({}); the arm may sag",
                short.join(", ")
            ));
        }
    }

    fn model_free(&self) -> bool {
        self.parameters.get("model_free") == Some(&ParameterValue::Bool(true))
    }

    /// The switching gain per joint into `switching`: `rho sum_j |Y_ij p_hat_j| + eta_i`.
    fn switching_gain(&mut self, step: &Step<'_>) -> Result<(), ControlError> {
        let (rho, eta) = (
            self.parameters[self.uncertainty],
            &self.parameters[self.eta],
        );
        self.switching.copy_from_slice(eta);
        if rho == 0.0 || self.model_free() {
            return Ok(());
        }
        let terms = &self.terms;
        self.model
            .regressor(step.state, &terms.qd_r, &terms.qdd_r, &mut self.regressor)?;
        for (i, k) in self.switching.iter_mut().enumerate() {
            let row = self.regressor.row(i);
            *k += rho
                * row
                    .iter()
                    .zip(&self.p_hat)
                    .map(|(y, p)| (y * p).abs())
                    .sum::<f64>();
        }
        Ok(())
    }
}

impl Controller for SlotineSlidingMode {
    law_accessors!("slotine_sliding_mode", damping = "kd");
    fn parameters_changed(&mut self) {
        self.check_model_free();
    }
    fn warnings(&self) -> &[String] {
        &self.warnings
    }
    fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError> {
        let (p, gains) = (&self.parameters, self.gains);
        self.model
            .damping_scales(&mut self.bound, &step, &p[gains.kd])?;
        self.gains.reference_terms(
            &self.parameters,
            step.state,
            step.reference,
            &mut self.terms,
        );
        if self.model_free() {
            step.effort.fill(0.0);
        } else {
            let terms = &self.terms;
            self.model
                .two_velocity(step.state, &terms.qd_r, &terms.qdd_r, step.effort)?;
        }
        self.switching_gain(&step)?;
        let (kd, phi) = (&self.parameters[self.gains.kd], self.parameters[self.phi]);
        for (i, effort) in step.effort.iter_mut().enumerate() {
            let s = self.terms.s[i];
            let c = self.bound.scales()[i];
            *effort += c * kd[i] * s + self.switching[i] * saturated(s, phi);
        }
        Ok(())
    }
}

/// `|G(q)|` per joint.
fn gravity_at(robot: &Robot, q: &[f64]) -> Result<Vec<f64>, ControlError> {
    let mut g = vec![0.0; robot.dof()];
    armctl_dynamics::gravity_torques(
        robot,
        &mut armctl_dynamics::DynamicsWorkspace::new(robot),
        q,
        &mut g,
    )?;
    Ok(g.iter().map(|g| g.abs()).collect())
}
