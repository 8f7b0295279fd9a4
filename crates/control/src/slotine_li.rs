//! Slotine-Li with a known model (docs/theory.md section 6):
//! `qd_r = qd_d + Lambda e`, `qdd_r = qdd_d + Lambda de`, `s = de + Lambda e`,
//! `tau = M(q) qdd_r + C(q, qd) qd_r + G(q) + Kd s`, the two-velocity RNEA with
//! `v = qd_r`, `a = qdd_r`. Claim: with the Christoffel C, `M sdot + (C + Kd) s = 0` and
//! e, de -> 0.

use armctl_model::Robot;
use nalgebra::DVector;

use crate::gains::{effective_inertias, errors, joint_gain};
use crate::model_terms::ModelTerms;
use crate::{Array, ControlError, Controller, JointReference, JointState, ParameterSet, Step};

/// Default sliding-surface slope, 1/s, and decay rate of s, 1/s (`Kd = rate / (M^-1)_ii`).
pub(crate) const DEFAULT_LAMBDA: f64 = 20.0;
pub(crate) const DEFAULT_S_RATE: f64 = 100.0;

/// The gains `lambda` and `kd` shared by both Slotine-Li controllers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SlotineLiGains {
    pub(crate) lambda: Array,
    pub(crate) kd: Array,
}

impl SlotineLiGains {
    /// Declares `lambda = 20/s` and `kd = 100/s` times the effective joint inertia.
    pub(crate) fn declare(
        parameters: &mut ParameterSet,
        robot: &Robot,
    ) -> Result<Self, ControlError> {
        let n = robot.dof();
        let kd = effective_inertias(robot)?
            .iter()
            .map(|m| DEFAULT_S_RATE * m)
            .collect();
        Ok(Self {
            lambda: parameters.declare_array(joint_gain(
                "lambda",
                vec![DEFAULT_LAMBDA; n],
                "Slope Lambda of the sliding surface s = de + Lambda e per joint, 1/s.",
                1e4,
            ))?,
            kd: parameters.declare_array(joint_gain(
                "kd",
                kd,
                "Gain Kd on s per joint, N m s/rad (N s/m).",
                1e5,
            ))?,
        })
    }

    /// Reference velocity, acceleration and sliding variable of this step into `terms`.
    pub(crate) fn reference_terms(
        self,
        parameters: &ParameterSet,
        state: &JointState<'_>,
        reference: &JointReference,
        terms: &mut ReferenceTerms,
    ) {
        let lambda = &parameters[self.lambda];
        for (i, (e, de)) in errors(state, reference).enumerate() {
            terms.qd_r[i] = reference.qd[i] + lambda[i] * e;
            terms.qdd_r[i] = reference.qdd[i] + lambda[i] * de;
            terms.s[i] = de + lambda[i] * e;
        }
    }
}

/// `qd_r = qd_d + Lambda e`, `qdd_r = qdd_d + Lambda de`, `s = de + Lambda e` of one step.
#[derive(Debug, Clone)]
pub(crate) struct ReferenceTerms {
    pub(crate) qd_r: Vec<f64>,
    pub(crate) qdd_r: Vec<f64>,
    pub(crate) s: DVector<f64>,
}

impl ReferenceTerms {
    pub(crate) fn new(n: usize) -> Self {
        Self {
            qd_r: vec![0.0; n],
            qdd_r: vec![0.0; n],
            s: DVector::zeros(n),
        }
    }
}

/// Slotine-Li with the model's parameters.
#[derive(Debug, Clone)]
pub struct SlotineLi {
    model: ModelTerms,
    parameters: ParameterSet,
    gains: SlotineLiGains,
    terms: ReferenceTerms,
}

impl SlotineLi {
    /// The controller with `robot` as its model; `Lambda = 20/s`, `Kd = 100/s` times the
    /// effective joint inertia `1/(M^-1)_ii` at mid-range.
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let n = robot.dof();
        let mut parameters = ParameterSet::new(n);
        Ok(Self {
            gains: SlotineLiGains::declare(&mut parameters, robot)?,
            parameters,
            model: ModelTerms::new(robot),
            terms: ReferenceTerms::new(n),
        })
    }
}

impl Controller for SlotineLi {
    law_accessors!("slotine_li");
    fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError> {
        let terms = &mut self.terms;
        self.gains
            .reference_terms(&self.parameters, step.state, step.reference, terms);
        self.model
            .two_velocity(step.state, &terms.qd_r, &terms.qdd_r, step.effort)?;
        let kd = &self.parameters[self.gains.kd];
        for ((e, kd), s) in step.effort.iter_mut().zip(kd).zip(&self.terms.s) {
            *e += kd * s;
        }
        Ok(())
    }
}
