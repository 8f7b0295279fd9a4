//! Slotine-Li adaptive control (docs/theory.md section 6):
//! `tau = Y(q, qd, qd_r, qdd_r) p_hat + Kd s`, `d p_hat / dt = Gamma^-1 Y^T s`, with
//! `qd_r`, `qdd_r`, `s` as in [`crate::SlotineLi`] and Y the regressor of
//! `M a + C(q, qd) v + G = Y(q, qd, v, a) p` (10 parameters per link about the MDH origin).
//! Claim: e, de -> 0 and p_hat stays bounded; p_hat -> p only with persistent excitation.
//! Needs no qdd measurement and no inverse of M.
//!
//! `Gamma^-1` is diagonal, `Gamma^-1_k = gamma_group sigma_k`: a rate per group (the six
//! inertia elements, the first moments, the mass) times the parameter's scale `sigma_k`, the
//! largest initial magnitude in its group on its link. Parameters of a 0.1 kg wrist and a 5 kg
//! shoulder then adapt at comparable relative speeds (with one rate for all, the wrist of a
//! PUMA 560 goes unstable; with `sigma_k^2` it learns too slowly). The update is explicit Euler
//! at the control rate. Projection keeps the estimates physically meaningful to
//! the extent documented: each link's mass stays at or above `min_mass`. Links whose entry in
//! `adapt` is 0 keep their model parameters (adapt only a payload, say: 1 for the last link;
//! full parameters only: a base parameter counts as the link of its leading link parameter, and
//! the last link's mass is merged into base parameters led by earlier links).

use armctl_dynamics::BaseParameters;
use armctl_model::{Robot, PARAMS_PER_LINK};
use nalgebra::{DMatrix, DVector};

use crate::adaptation::{full_columns, parameter_scales, Adaptation};
use crate::model_terms::ModelTerms;
use crate::slotine_li::{ReferenceTerms, SlotineLiGains};
use crate::{ControlError, Controller, JointState, ParameterSet, Step};

/// Adaptive Slotine-Li, on the full parameters or (see `slotine_li_adaptive_base`) on a set of
/// base parameters: `p` then stands for `p_b` and `Y` for `Y_b`.
#[derive(Debug, Clone)]
pub struct SlotineLiAdaptive {
    name: &'static str,
    model: ModelTerms,
    parameters: ParameterSet,
    gains: SlotineLiGains,
    adaptation: Adaptation,
    /// The parameters adapted: all of them (identity map) or a base set.
    base: BaseParameters,
    /// Whether `Y` is reduced to the base columns (not for the full set).
    reduces: bool,
    initial: Vec<f64>,
    /// `sigma_k` per parameter.
    scale: Vec<f64>,
    estimate: DVector<f64>,
    y: DMatrix<f64>,
    y_b: DMatrix<f64>,
    y_t_s: DVector<f64>,
    model_torque: DVector<f64>,
    terms: ReferenceTerms,
}

impl SlotineLiAdaptive {
    /// The controller starting from `robot`'s parameters (the initial estimate).
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let count = PARAMS_PER_LINK * robot.dof();
        let all = BaseParameters::new(full_columns(robot.dof()), DMatrix::identity(count, count));
        Self::adapting(robot, all, "slotine_li_adaptive")
    }

    /// The controller adapting the parameters of `base` (their values for `robot`'s inertials
    /// are the initial estimate); the mass projection applies only to the full set.
    pub(crate) fn adapting(
        robot: &Robot,
        base: BaseParameters,
        name: &'static str,
    ) -> Result<Self, ControlError> {
        let n = robot.dof();
        let reduces = base.count() != PARAMS_PER_LINK * n;
        let mut parameters = ParameterSet::new(n);
        let gains = SlotineLiGains::declare(&mut parameters, robot)?;
        let adaptation = Adaptation::declare(&mut parameters, 1.0, !reduces)?;
        let initial: Vec<f64> = base
            .values(&robot.parameter_vector())?
            .iter()
            .copied()
            .collect();
        let b = base.count();
        Ok(Self {
            name,
            scale: parameter_scales(&initial, base.columns()),
            parameters,
            gains,
            adaptation,
            model: ModelTerms::new(robot),
            estimate: DVector::from_column_slice(&initial),
            initial,
            base,
            reduces,
            y: DMatrix::zeros(n, PARAMS_PER_LINK * n),
            y_b: DMatrix::zeros(n, if reduces { b } else { 0 }),
            y_t_s: DVector::zeros(b),
            model_torque: DVector::zeros(n),
            terms: ReferenceTerms::new(n),
        })
    }

    /// The current estimate p_hat (10 per link, or one per base parameter).
    pub fn estimate(&self) -> &[f64] {
        self.estimate.as_slice()
    }

    /// The parameters adapted (the identity on all of them, or a base set with its names).
    pub fn adapted_parameters(&self) -> &BaseParameters {
        &self.base
    }

    /// `tau = Y p_hat + Kd s`, then `p_hat += dt Gamma^-1 Y^T s` on adapted links.
    fn command_and_adapt(&mut self, dt: f64, effort: &mut [f64]) -> Result<(), ControlError> {
        let y = if self.reduces {
            self.base.select(&self.y, &mut self.y_b)?;
            &self.y_b
        } else {
            &self.y
        };
        self.model_torque.gemv(1.0, y, &self.estimate, 0.0);
        let kd = &self.parameters[self.gains.kd];
        for (i, e) in effort.iter_mut().enumerate() {
            *e = self.model_torque[i] + kd[i] * self.terms.s[i];
        }
        self.y_t_s.gemv_tr(1.0, y, &self.terms.s, 0.0);
        self.adaptation.adapt(
            &self.parameters,
            self.base.columns(),
            &self.scale,
            &self.y_t_s,
            dt,
            &mut self.estimate,
        );
        Ok(())
    }
}

impl Controller for SlotineLiAdaptive {
    fn name(&self) -> &'static str {
        self.name
    }
    fn parameters(&self) -> &ParameterSet {
        &self.parameters
    }
    fn parameters_mut(&mut self) -> &mut ParameterSet {
        &mut self.parameters
    }
    fn restart(&mut self, _state: &JointState<'_>) {
        self.estimate.copy_from_slice(&self.initial);
    }
    fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError> {
        let (state, reference, dt, effort) = (step.state, step.reference, step.dt, step.effort);
        let terms = &mut self.terms;
        self.gains
            .reference_terms(&self.parameters, state, reference, terms);
        self.model
            .regressor(state, &terms.qd_r, &terms.qdd_r, &mut self.y)?;
        self.command_and_adapt(dt, effort)
    }
    fn estimates(&self) -> &[f64] {
        self.estimate.as_slice()
    }
}
