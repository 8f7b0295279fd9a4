//! Adaptive computed torque (after Craig, Hsu and Sastry; docs/theory.md section 6):
//! `tau = M_hat a + C_hat qd + G_hat = Y(q, qd, qd, a) p_hat`, `a = qdd_d + Kd de + Kp e`.
//! With the arm's `Y(q, qd, qd, qdd) p = tau`, the model's error shows in the measured
//! acceleration: `M_hat (a - qdd) = Y(q, qd, qd, qdd) (p - p_hat)`, so `u = M_hat (a - qdd)`
//! is the torque the model got wrong, and the estimate follows the normalised, leaky, projected
//! gradient `Y(q, qd, qd, qdd)^T u` of [`crate::adaptation`].
//!
//! Craig's update uses the filtered error `M_hat^-1 (de + Psi e)` instead; its `M_hat^-1`
//! amplifies light links (on the PUMA 560 without rotor inertia, 4e-5 kg m^2 about joint 6, it
//! diverged at any useful rate) and it needs `M_hat` positive definite. The prediction error
//! needs neither: only the measured acceleration, here differences of qd low-pass filtered
//! with time constant `accel_filter`; the commanded acceleration passes through the same filter,
//! so both are compared at the same delay. While an effort reaches its limit the estimate is
//! held (the acceleration then reflects the saturation, not the model).
//!
//! Limitations: the PD part of the command is scaled by `M_hat`, which the estimate changes,
//! and near rest only gravity excites the estimate. With a model 50% off (masses and inertias
//! halved) and a 0.3 rad step, rates of 0.1/s and above fall into a slow limit cycle of about
//! 0.1-0.4 rad on the planar arm and the Panda; the default 0.03/s stays bounded and improves
//! on the fixed model only slowly. Slotine-Li adaptive learns such a model better: prefer it.

use armctl_dynamics::{regressor, DynamicsWorkspace};
use armctl_model::{Robot, PARAMS_PER_LINK};
use nalgebra::{DMatrix, DVector};

use crate::adaptation::{full_columns, saturates, Adaptation, Estimate};
use crate::computed_torque::{commanded_acceleration, error_dynamics_gains};
use crate::gains::PdGains;
use crate::{ControlError, Controller, Declaration, JointState, ParameterSet, Scalar, Step};

/// Default adaptation rate of every group, 1/s.
const DEFAULT_RATE: f64 = 0.03;

/// Adaptive computed torque.
#[derive(Debug, Clone)]
pub struct AdaptiveComputedTorque {
    robot: Robot,
    ws: DynamicsWorkspace,
    parameters: ParameterSet,
    gains: PdGains,
    accel_filter: Scalar,
    adaptation: Adaptation,
    estimate: Estimate,
    y: DMatrix<f64>,
    /// The model's torque error `M_hat (a_f - qdd_f)`.
    prediction_error: DVector<f64>,
    gravity: DVector<f64>,
    torque: DVector<f64>,
    command: Vec<f64>,
    zeros: Vec<f64>,
    qd_previous: Option<Vec<f64>>,
    /// Filtered measured acceleration.
    qdd: Vec<f64>,
    /// Filtered commanded acceleration, and the command of the last step.
    commanded: Vec<f64>,
    last_command: Vec<f64>,
    /// `a_f - qdd_f`.
    difference: Vec<f64>,
    /// Whether the last step's effort reached a limit.
    saturated: bool,
    /// `M_ii` of the model at mid-range, and per joint `1 / (M_ii kp_i)`.
    typical_inertia: Vec<f64>,
    weights: Vec<f64>,
}

impl AdaptiveComputedTorque {
    /// `Kp = w^2`, `Kd = 2 w` (w up to 30 rad/s per joint, see [`crate::default_gains`]),
    /// acceleration filter 5 ms, adaptation rates 0.03/s (normalised).
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let n = robot.dof();
        let mut parameters = ParameterSet::new(n);
        let gains = error_dynamics_gains(&mut parameters, robot, "error dynamics", "")?;
        let accel_filter = parameters.declare_scalar(
            Declaration::double(
                "accel_filter",
                0.005,
                "Time constant of the acceleration estimate's low-pass filter, s.",
            )
            .range(0.0, 1.0),
        )?;
        let adaptation = Adaptation::declare(&mut parameters, DEFAULT_RATE, true)?;
        Ok(Self {
            estimate: Estimate::new(robot, robot.parameter_vector(), full_columns(n)),
            parameters,
            gains,
            accel_filter,
            adaptation,
            ws: DynamicsWorkspace::new(robot),
            y: DMatrix::zeros(n, PARAMS_PER_LINK * n),
            prediction_error: DVector::zeros(n),
            gravity: DVector::zeros(n),
            torque: DVector::zeros(n),
            command: vec![0.0; n],
            zeros: vec![0.0; n],
            qd_previous: None,
            qdd: vec![0.0; n],
            commanded: vec![0.0; n],
            last_command: vec![0.0; n],
            difference: vec![0.0; n],
            saturated: false,
            typical_inertia: crate::default_gains::InertiaBounds::of(robot)?.typical,
            weights: vec![0.0; n],
            robot: robot.clone(),
        })
    }

    /// The current estimate p_hat (10 per link).
    pub fn estimate(&self) -> &[f64] {
        self.estimate.values().as_slice()
    }

    /// Low-pass filters the finite difference of the measured velocity and, with the same
    /// filter, the acceleration commanded last step (the one that produced it).
    fn filter_accelerations(&mut self, qd: &[f64], dt: f64) {
        let tau = self.parameters[self.accel_filter];
        let alpha = if tau > 0.0 {
            (dt / (tau + dt)).clamp(0.0, 1.0)
        } else {
            1.0
        };
        let Some(previous) = &mut self.qd_previous else {
            return;
        };
        for i in 0..qd.len() {
            let raw = if dt > 0.0 {
                (qd[i] - previous[i]) / dt
            } else {
                0.0
            };
            self.qdd[i] += alpha * (raw - self.qdd[i]);
            self.commanded[i] += alpha * (self.last_command[i] - self.commanded[i]);
            self.difference[i] = self.commanded[i] - self.qdd[i];
            previous[i] = qd[i];
        }
    }

    /// `u = M_hat (a_f - qdd_f)`: `Y(q, 0, 0, a_f - qdd_f) p_hat - G_hat`.
    fn predict_error(&mut self, q: &[f64]) -> Result<(), ControlError> {
        let (robot, ws, zeros) = (&self.robot, &mut self.ws, &self.zeros);
        regressor(robot, ws, q, zeros, zeros, zeros, &mut self.y)?;
        self.gravity.gemv(1.0, &self.y, self.estimate.values(), 0.0);
        regressor(robot, ws, q, zeros, zeros, &self.difference, &mut self.y)?;
        self.prediction_error
            .gemv(1.0, &self.y, self.estimate.values(), 0.0);
        self.prediction_error -= &self.gravity;
        Ok(())
    }

    /// The update along `Y(q, qd, qd, qdd_f)^T u`, unless the last effort saturated.
    fn adapt(&mut self, state: &JointState<'_>, dt: f64) -> Result<(), ControlError> {
        if self.saturated || self.qd_previous.is_none() {
            return Ok(());
        }
        self.predict_error(state.q)?;
        regressor(
            &self.robot,
            &mut self.ws,
            state.q,
            state.qd,
            state.qd,
            &self.qdd,
            &mut self.y,
        )?;
        let kp = &self.parameters[self.gains.kp];
        for ((w, m), k) in self.weights.iter_mut().zip(&self.typical_inertia).zip(kp) {
            *w = 1.0 / (m * k).max(f64::MIN_POSITIVE);
        }
        self.estimate.update(
            self.adaptation,
            &self.parameters,
            (&self.y, &self.prediction_error),
            &self.weights,
            dt,
        );
        Ok(())
    }
}

impl Controller for AdaptiveComputedTorque {
    law_accessors!("adaptive_computed_torque");
    fn restart(&mut self, state: &JointState<'_>) {
        self.estimate.restart();
        self.qd_previous = Some(state.qd.to_vec());
        self.qdd.fill(0.0);
        self.commanded.fill(0.0);
        self.last_command.fill(0.0);
        self.saturated = false;
    }
    fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError> {
        let (state, reference, dt, effort) = (step.state, step.reference, step.dt, step.effort);
        self.filter_accelerations(state.qd, dt);
        self.adapt(state, dt)?;
        commanded_acceleration(
            &self.parameters,
            self.gains,
            state,
            reference,
            &mut self.command,
        );
        regressor(
            &self.robot,
            &mut self.ws,
            state.q,
            state.qd,
            state.qd,
            &self.command,
            &mut self.y,
        )?;
        self.torque.gemv(1.0, &self.y, self.estimate.values(), 0.0);
        effort.copy_from_slice(self.torque.as_slice());
        self.last_command.copy_from_slice(&self.command);
        self.saturated = saturates(&self.robot, effort);
        Ok(())
    }
    fn estimates(&self) -> &[f64] {
        self.estimate.values().as_slice()
    }
}
