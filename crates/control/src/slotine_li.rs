//! Slotine-Li with a known model (docs/theory.md section 6):
//! `qd_r = qd_d + Lambda e`, `qdd_r = qdd_d + Lambda de`, `s = de + Lambda e`,
//! `tau = M(q) qdd_r + C(q, qd) qd_r + G(q) + Kd s`, the two-velocity RNEA with
//! `v = qd_r`, `a = qdd_r`. Claim: with the Christoffel C, `M sdot + (C + Kd) s = 0` and
//! e, de -> 0.

use armctl_dynamics::{rnea_two_velocity, DynamicsWorkspace};
use armctl_model::Robot;

use crate::gains::{check_step, effective_inertias, joint_gain};
use crate::{ControlError, Controller, JointReference, JointState, ParamValue, ParameterSet};

/// Default sliding-surface slope, 1/s, and decay rate of s, 1/s (`Kd = rate / (M^-1)_ii`).
pub(crate) const DEFAULT_LAMBDA: f64 = 20.0;
pub(crate) const DEFAULT_S_RATE: f64 = 100.0;

/// Reference velocity, acceleration and sliding variable: `(qd_r, qdd_r, s)` into the buffers.
pub(crate) fn reference_terms(
    lambda: &[f64],
    state: &JointState<'_>,
    reference: &JointReference,
    qd_r: &mut [f64],
    qdd_r: &mut [f64],
    s: &mut [f64],
) {
    for i in 0..s.len() {
        let (e, de) = (reference.q[i] - state.q[i], reference.qd[i] - state.qd[i]);
        qd_r[i] = reference.qd[i] + lambda[i] * e;
        qdd_r[i] = reference.qdd[i] + lambda[i] * de;
        s[i] = de + lambda[i] * e;
    }
}

/// The gains `lambda` and `kd` shared by both Slotine-Li controllers.
pub(crate) fn slotine_li_gains(
    robot: &Robot,
) -> Result<Vec<(crate::ParamSpec, ParamValue)>, ControlError> {
    let n = robot.dof();
    let kd = effective_inertias(robot)?
        .iter()
        .map(|m| DEFAULT_S_RATE * m)
        .collect();
    Ok(vec![
        (
            joint_gain(
                "lambda",
                "Slope Lambda of the sliding surface s = de + Lambda e per joint, 1/s.",
                1e4,
            ),
            ParamValue::Vector(vec![DEFAULT_LAMBDA; n]),
        ),
        (
            joint_gain("kd", "Gain Kd on s per joint, N m s/rad (N s/m).", 1e5),
            ParamValue::Vector(kd),
        ),
    ])
}

/// Slotine-Li with the model's parameters.
#[derive(Debug, Clone)]
pub struct SlotineLi {
    robot: Robot,
    ws: DynamicsWorkspace,
    parameters: ParameterSet,
    qd_r: Vec<f64>,
    qdd_r: Vec<f64>,
    s: Vec<f64>,
}

impl SlotineLi {
    /// The controller with `robot` as its model; `Lambda = 20/s`, `Kd = 100/s` times the
    /// effective joint inertia `1/(M^-1)_ii` at mid-range.
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let n = robot.dof();
        Ok(Self {
            parameters: ParameterSet::new(n, slotine_li_gains(robot)?)?,
            ws: DynamicsWorkspace::new(robot),
            robot: robot.clone(),
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
    fn update(
        &mut self,
        state: &JointState<'_>,
        reference: &JointReference,
        dt: f64,
        effort: &mut [f64],
    ) -> Result<(), ControlError> {
        check_step(self.robot.dof(), state, reference, effort)?;
        self.parameters.advance(dt);
        reference_terms(
            self.parameters.values("lambda"),
            state,
            reference,
            &mut self.qd_r,
            &mut self.qdd_r,
            &mut self.s,
        );
        rnea_two_velocity(
            &self.robot,
            &mut self.ws,
            state.q,
            state.qd,
            &self.qd_r,
            &self.qdd_r,
            effort,
        )?;
        for ((e, kd), s) in effort
            .iter_mut()
            .zip(self.parameters.values("kd"))
            .zip(&self.s)
        {
            *e += kd * s;
        }
        Ok(())
    }
}
