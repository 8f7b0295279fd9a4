//! Slotine-Li adaptive control (docs/theory.md section 6):
//! `tau = Y(q, qd, qd_r, qdd_r) p_hat + Kd s`, with `qd_r`, `qdd_r`, `s` as in
//! [`crate::SlotineLi`] and Y the regressor of `M a + C(q, qd) v + G = Y(q, qd, v, a) p`
//! (10 parameters per link about the MDH origin). Needs no qdd measurement and no inverse of M.
//!
//! The estimate follows `Y^T W^2 Kd s`, the textbook's `Y^T s` weighted per joint: `Kd s` is
//! the torque the feedback adds, which at a slowly varying error equals the model's torque
//! error `Y p_tilde`, and `W = diag(1 / (Kd Lambda))` turns it into the position error it
//! causes; the update is a gradient on that error, normalised, leaky and projected onto a box
//! around the model ([`crate::law_support::adaptation`]). With `Kd = k I` and without
//! normalisation, leakage and box it is the textbook law (Lyapunov: e, de -> 0, p_hat bounded);
//! the normalisation bounds how fast an estimate can move (a saturated arm or a fast motion no
//! longer throws it away), the box and the leakage keep it bounded whatever the excitation.
//! p_hat -> p only with persistent excitation. While an effort reaches its limit the estimate
//! is held: the error then reflects the saturation, not the model.
//!
//! Links whose entry in `adapt` is 0 keep their model parameters (adapt only a payload, say: 1
//! for the last link; full parameters only: a base parameter counts as the link of its leading
//! link parameter, and the last link's mass is merged into base parameters led by earlier
//! links).

use armctl_dynamics::{BaseParameters, Gravity};
use armctl_model::{Robot, PARAMS_PER_LINK};
use nalgebra::{DMatrix, DVector};

use crate::law_support::adaptation::{full_columns, saturates, Adaptation, Estimate};
use crate::law_support::model_terms::ModelTerms;
use crate::laws::slotine_li::{ReferenceTerms, SlotineLiGains};
use crate::{ControlError, Controller, JointState, ParameterSet, ParameterValue, Step};

/// Default adaptation rate of every group, 1/s.
const DEFAULT_RATE: f64 = 2.0;

/// Adaptive Slotine-Li, on the full parameters or (see `slotine_li_adaptive_base`) on a set of
/// base parameters: `p` then stands for `p_b` and `Y` for `Y_b`.
#[derive(Debug, Clone)]
pub struct SlotineLiAdaptive {
    name: &'static str,
    robot: Robot,
    model: ModelTerms,
    parameters: ParameterSet,
    gains: SlotineLiGains,
    adaptation: Adaptation,
    /// The parameters adapted: all of them (identity map) or a base set.
    base: BaseParameters,
    estimate: Estimate,
    /// `Kd s`.
    feedback: DVector<f64>,
    /// Per joint `1 / (Kd Lambda)`, the inverse stiffness.
    weights: Vec<f64>,
    model_torque: DVector<f64>,
    terms: ReferenceTerms,
    bound: crate::gain_sizing::damping_bound::DampingBound,
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
        let adaptation = Adaptation::declare(&mut parameters, DEFAULT_RATE, !reduces)?;
        let initial: Vec<f64> = base
            .values(&robot.parameter_vector())?
            .iter()
            .copied()
            .collect();
        Ok(Self {
            name,
            estimate: Estimate::new(
                robot,
                initial,
                base.columns().to_vec(),
                base_names(&base, reduces, n),
            ),
            parameters,
            gains,
            adaptation,
            model: ModelTerms::new(robot),
            robot: robot.clone(),
            base,
            feedback: DVector::zeros(n),
            bound: crate::gain_sizing::damping_bound::DampingBound::new(n),
            weights: vec![0.0; n],
            model_torque: DVector::zeros(n),
            terms: ReferenceTerms::new(n),
        })
    }

    /// The current estimate p_hat (10 per link, or one per base parameter).
    pub fn estimate(&self) -> &[f64] {
        self.estimate.values().as_slice()
    }

    /// The parameters adapted (the identity on all of them, or a base set with its names).
    pub fn adapted_parameters(&self) -> &BaseParameters {
        &self.base
    }

    /// `tau = Y p_hat + c Kd s`, then the update along `Y^T c Kd s` unless an effort
    /// saturates; `c` (per joint, from the bound's last scales) keeps `Kd` within the
    /// sampled-data margin.
    fn command_and_adapt(
        &mut self,
        state: &JointState<'_>,
        dt: f64,
        effort: &mut [f64],
    ) -> Result<(), ControlError> {
        let terms = &self.terms;
        let reference = (state.qd, &terms.qd_r[..], &terms.qdd_r[..]);
        // One configuration and one outward pass for both products.
        let mut model = self.model.ws.update(&self.model.robot, state.q, state.qd)?;
        let mut regressor = model.regressor_pass(reference, Gravity::Included)?;
        let p = self.estimate.full_values();
        regressor.times(p, self.model_torque.as_mut_slice())?;
        let (kd, lambda) = (
            &self.parameters[self.gains.kd],
            &self.parameters[self.gains.lambda],
        );
        for (i, e) in effort.iter_mut().enumerate() {
            self.feedback[i] = self.bound.scales()[i] * kd[i] * self.terms.s[i];
            *e = self.model_torque[i] + self.feedback[i];
            self.weights[i] = 1.0 / (kd[i] * lambda[i]).max(f64::MIN_POSITIVE);
        }
        if saturates(&self.robot, effort) {
            return Ok(());
        }
        self.estimate.update(
            self.adaptation,
            &self.parameters,
            (&self.feedback, &self.weights, dt),
            |x, w, out| Ok(regressor.transpose_products((x, w), out)?),
        )
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
    fn damping_parameter(&self) -> Option<&'static str> {
        Some("kd")
    }
    /// `gamma` is checked against the estimate's names.
    fn set_parameter(&mut self, name: &str, value: ParameterValue) -> Result<(), ControlError> {
        self.estimate
            .set_parameter(&mut self.parameters, name, value)
    }
    fn restart(&mut self, _state: &JointState<'_>) {
        self.estimate.restart();
    }
    fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError> {
        let (p, gains) = (&self.parameters, self.gains);
        self.model
            .damping_scales(&mut self.bound, &step, &p[gains.kd])?;
        let (state, reference, dt, effort) = (step.state, step.reference, step.dt, step.effort);
        gains.reference_terms(p, state, reference, &mut self.terms);
        self.command_and_adapt(state, dt, effort)
    }
    fn estimates(&self) -> &[f64] {
        self.estimate.values().as_slice()
    }
}

/// The adapted parameters' names: `XX1 .. M<n>`, or the base parameters' combinations.
fn base_names(base: &BaseParameters, reduces: bool, dof: usize) -> Vec<String> {
    if reduces {
        base.names()
    } else {
        crate::law_support::adaptation::full_names(dof)
    }
}
