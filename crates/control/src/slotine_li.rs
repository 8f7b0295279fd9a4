//! Slotine-Li with a known model (theory.md section 6):
//! `qd_r = qd_d + Lambda e`, `qdd_r = qdd_d + Lambda de`, `s = de + Lambda e`,
//! `tau = M(q) qdd_r + C(q, qd) qd_r + G(q) + Kd s`, the two-velocity RNEA with
//! `v = qd_r`, `a = qdd_r`. Claim: with the Christoffel C, `M sdot + (C + Kd) s = 0` and
//! e, de -> 0.

use armctl_dynamics::rnea_two_velocity;
use armctl_model::Robot;

use crate::gains::{effective_inertias, errors, joint_gain};
use crate::model_terms::ModelTerms;
use crate::{Array, ControlError, Controller, JointReference, JointState, ParameterSet};

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

    /// Reference velocity, acceleration and sliding variable: `(qd_r, qdd_r, s)` into the
    /// buffers.
    pub(crate) fn reference_terms(
        self,
        parameters: &ParameterSet,
        state: &JointState<'_>,
        reference: &JointReference,
        qd_r: &mut [f64],
        qdd_r: &mut [f64],
        s: &mut [f64],
    ) {
        let lambda = &parameters[self.lambda];
        for (i, (e, de)) in errors(state, reference).enumerate() {
            qd_r[i] = reference.qd[i] + lambda[i] * e;
            qdd_r[i] = reference.qdd[i] + lambda[i] * de;
            s[i] = de + lambda[i] * e;
        }
    }
}

/// Slotine-Li with the model's parameters.
#[derive(Debug, Clone)]
pub struct SlotineLi {
    model: ModelTerms,
    parameters: ParameterSet,
    gains: SlotineLiGains,
    qd_r: Vec<f64>,
    qdd_r: Vec<f64>,
    s: Vec<f64>,
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
            qd_r: vec![0.0; n],
            qdd_r: vec![0.0; n],
            s: vec![0.0; n],
        })
    }
}

impl Controller for SlotineLi {
    fn name(&self) -> &'static str {
        "slotine_li"
    }
    fn parameters(&self) -> &ParameterSet {
        &self.parameters
    }
    fn parameters_mut(&mut self) -> &mut ParameterSet {
        &mut self.parameters
    }
    fn compute(
        &mut self,
        state: &JointState<'_>,
        reference: &JointReference,
        _dt: f64,
        effort: &mut [f64],
    ) -> Result<(), ControlError> {
        self.gains.reference_terms(
            &self.parameters,
            state,
            reference,
            &mut self.qd_r,
            &mut self.qdd_r,
            &mut self.s,
        );
        let ModelTerms { robot, ws } = &mut self.model;
        rnea_two_velocity(
            robot,
            ws,
            state.q,
            state.qd,
            &self.qd_r,
            &self.qdd_r,
            effort,
        )?;
        let kd = &self.parameters[self.gains.kd];
        for ((e, kd), s) in effort.iter_mut().zip(kd).zip(&self.s) {
            *e += kd * s;
        }
        Ok(())
    }
}
