//! Slotine-Li adaptive control of the base parameters (theory.md sections 5 and 6):
//! `tau = Y_b(q, qd, qd_r, qdd_r) p_b_hat + Kd s`, `d p_b_hat / dt = Gamma^-1 Y_b^T s`, with
//! `qd_r`, `qdd_r`, `s` as in [`crate::SlotineLi`] and `Y_b` the base regressor (the columns
//! of the full regressor that make a base set, `Y p = Y_b p_b`).
//!
//! Why base parameters: the torques depend on the inertials only through `p_b`, so adapting
//! the full `p` moves it along directions no torque can see; with `p_b` the estimate is
//! unique, converges to the true `p_b` under persistent excitation, and is exactly what
//! `armctl identify` produces: start from an identified model (controller_node's `model_*`
//! parameters) and adapt from there. The Lyapunov argument is that of the full controller
//! (`Y p = Y_b p_b` with any positive-definite `Gamma`): e, de -> 0 and `p_b_hat` bounded.
//!
//! `Gamma^-1_k = gamma_group sigma_k` as in [`crate::SlotineLiAdaptive`], each base parameter
//! in the link and group of its leading link parameter. There is no mass projection: a base
//! parameter is a combination (of several links' masses, moments and inertias), not a mass.

use armctl_dynamics::{numeric_base_parameters, regressor, BaseParameters, DynamicsWorkspace};
use armctl_model::{Robot, PARAMS_PER_LINK};
use nalgebra::{DMatrix, DVector};

use crate::adaptation::{adapt, adaptation_parameters, parameter_scales};
use crate::gains::check_step;
use crate::slotine_li::{reference_terms, slotine_li_gains};
use crate::{ControlError, Controller, JointReference, JointState, ParameterSet};

/// Adaptive Slotine-Li on the base parameters.
#[derive(Debug, Clone)]
pub struct SlotineLiAdaptiveBase {
    robot: Robot,
    ws: DynamicsWorkspace,
    parameters: ParameterSet,
    base: BaseParameters,
    initial: Vec<f64>,
    /// `sigma_k` per base parameter.
    scale: Vec<f64>,
    estimate: DVector<f64>,
    y: DMatrix<f64>,
    y_b: DMatrix<f64>,
    y_b_t_s: DVector<f64>,
    model_torque: DVector<f64>,
    qd_r: Vec<f64>,
    qdd_r: Vec<f64>,
    s: DVector<f64>,
}

impl SlotineLiAdaptiveBase {
    /// The controller starting from the base parameters of `robot`'s inertials (an identified
    /// model applied to the URDF, or the URDF's own).
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let n = robot.dof();
        let mut declared = slotine_li_gains(robot)?;
        declared.extend(adaptation_parameters(n, 1.0, false));
        let base = numeric_base_parameters(robot)?;
        let initial: Vec<f64> = base
            .values(&robot.parameter_vector())
            .iter()
            .copied()
            .collect();
        let b = base.count();
        Ok(Self {
            scale: parameter_scales(&initial, base.columns()),
            parameters: ParameterSet::new(n, declared)?,
            ws: DynamicsWorkspace::new(robot),
            estimate: DVector::from_column_slice(&initial),
            initial,
            base,
            y: DMatrix::zeros(n, PARAMS_PER_LINK * n),
            y_b: DMatrix::zeros(n, b),
            y_b_t_s: DVector::zeros(b),
            model_torque: DVector::zeros(n),
            qd_r: vec![0.0; n],
            qdd_r: vec![0.0; n],
            s: DVector::zeros(n),
            robot: robot.clone(),
        })
    }

    /// The base parameters estimated, named as [`BaseParameters::names`] names them.
    pub fn base_parameters(&self) -> &BaseParameters {
        &self.base
    }
}

impl Controller for SlotineLiAdaptiveBase {
    fn name(&self) -> &'static str {
        "slotine_li_adaptive_base"
    }
    fn parameters(&self) -> &ParameterSet {
        &self.parameters
    }
    fn parameters_mut(&mut self) -> &mut ParameterSet {
        &mut self.parameters
    }
    fn reset(&mut self, _state: &JointState<'_>) {
        self.parameters.settle();
        self.estimate.copy_from_slice(&self.initial);
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
            self.s.as_mut_slice(),
        );
        regressor(
            &self.robot,
            &mut self.ws,
            state.q,
            state.qd,
            &self.qd_r,
            &self.qdd_r,
            &mut self.y,
        )?;
        self.base.select(&self.y, &mut self.y_b);
        self.model_torque.gemv(1.0, &self.y_b, &self.estimate, 0.0);
        let kd = self.parameters.values("kd");
        for (i, e) in effort.iter_mut().enumerate() {
            *e = self.model_torque[i] + kd[i] * self.s[i];
        }
        self.y_b_t_s.gemv_tr(1.0, &self.y_b, &self.s, 0.0);
        adapt(
            &self.parameters,
            self.base.columns(),
            &self.scale,
            &self.y_b_t_s,
            dt,
            &mut self.estimate,
        );
        Ok(())
    }
    fn estimates(&self) -> &[f64] {
        self.estimate.as_slice()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SlotineLiAdaptive;
    use armctl_model::ChainOptions;

    fn panda() -> Robot {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/panda.urdf");
        Robot::from_urdf_file(path, &ChainOptions::default()).unwrap()
    }

    #[test]
    fn first_command_equals_the_full_parameter_controller() {
        // Same model, same state: Y_b p_b = Y p, so the first torque is the same.
        let robot = panda();
        let mut base = SlotineLiAdaptiveBase::new(&robot).unwrap();
        let mut full = SlotineLiAdaptive::new(&robot).unwrap();
        let q = [0.1, -0.4, 0.2, -2.0, 0.3, 1.6, 0.5];
        let qd = [0.2, -0.1, 0.3, 0.1, -0.2, 0.4, -0.3];
        let state = JointState { q: &q, qd: &qd };
        let mut reference = JointReference::hold(&[0.0; 7]);
        reference
            .q
            .copy_from_slice(&[0.15, -0.35, 0.1, -1.9, 0.2, 1.7, 0.6]);
        reference.qd.copy_from_slice(&[0.1; 7]);
        reference.qdd.copy_from_slice(&[-0.5; 7]);
        let (mut a, mut b) = ([0.0; 7], [0.0; 7]);
        base.reset(&state);
        full.reset(&state);
        base.update(&state, &reference, 1e-3, &mut a).unwrap();
        full.update(&state, &reference, 1e-3, &mut b).unwrap();
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() < 1e-9 * y.abs().max(1.0), "{a:?} vs {b:?}");
        }
        assert_eq!(base.estimates().len(), 43);
        assert_eq!(base.base_parameters().count(), 43);
    }
}
