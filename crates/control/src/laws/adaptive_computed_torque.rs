//! Adaptive computed torque (after Craig, Hsu and Sastry; docs/theory.md section 6):
//! `tau = M_hat qdd_d + C_hat qd + G_hat + M_0 v = Y(q, qd, qd, qdd_d) p_hat + M_0 v`, with the
//! feedback `v = Kd de + Kp e` scaled by the model's own mass matrix `M_0` (the estimate's
//! `M_hat` would make the feedback gain depend on the estimate; with it the Panda and the planar
//! arm with a 50%-wrong model crept away from the set point while learning). With the arm's
//! `Y(q, qd, qd, qdd) p = tau`, the model's error shows in the measured acceleration:
//! `u = tau - Y(q, qd, qd, qdd) p_hat = M_hat (qdd_d - qdd) + M_0 v = Y(q, qd, qd, qdd) p_tilde`
//! is the torque the model got wrong, and the estimate follows the normalised, leaky, projected
//! gradient `Y(q, qd, qd, qdd)^T u` of [`crate::law_support::adaptation`].
//!
//! Craig's update uses the filtered error `M_hat^-1 (de + Psi e)` instead; its `M_hat^-1`
//! amplifies light links (on the PUMA 560 without rotor inertia, 4e-5 kg m^2 about joint 6, it
//! diverged at any useful rate) and it needs `M_hat` positive definite. The prediction error
//! needs neither: only the measured acceleration, here differences of qd low-pass filtered
//! with time constant `accel_filter`; `qdd_d` and `v` pass through the same filter, so all are
//! compared at the same delay. While an effort reaches its limit the estimate is held (the
//! acceleration then reflects the saturation, not the model).
//!
//! Limitation: at rest the prediction error cannot tell friction the model lacks from gravity;
//! on arms with unmodelled URDF friction a joint may first swing up to about the size of a
//! 0.1 rad step further away before the estimate settles (tests/default_gains.rs). Slotine-Li
//! adaptive, which adapts on the tracking error, does not: prefer it on such arms.

use armctl_dynamics::{DynamicsWorkspace, Gravity, Terms};
use armctl_model::Robot;
use nalgebra::DVector;

use crate::law_support::adaptation::{full_columns, full_names, saturates, Adaptation, Estimate};
use crate::law_support::gains::PdGains;
use crate::laws::computed_torque::{commanded_acceleration, error_dynamics_gains};
use crate::{
    ControlError, Controller, Declaration, JointState, ParameterSet, ParameterValue, Scalar, Step,
};

/// Default adaptation rate of every group, 1/s: with a model 50% off it converges on every
/// bundled arm within 3 s of a 0.1 rad step; 0.1-1/s crept away on the Panda first.
const DEFAULT_RATE: f64 = 3.0;

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
    torques: ModelTorques,
    qd_previous: Option<Vec<f64>>,
    /// Filtered measured acceleration.
    qdd: Vec<f64>,
    /// Filtered desired acceleration `qdd_d`, and that of the last step.
    desired: Vec<f64>,
    last_desired: Vec<f64>,
    /// Filtered feedback acceleration `v = Kd de + Kp e`, that of the last step, this step's.
    feedback: Vec<f64>,
    last_feedback: Vec<f64>,
    command: Vec<f64>,
    /// `a_f - qdd_f`.
    difference: Vec<f64>,
    /// Whether the last step's effort reached a limit.
    saturated: bool,
    /// `M_ii` of the model at mid-range, and per joint `1 / (M_ii kp_i)`.
    typical_inertia: Vec<f64>,
    weights: Vec<f64>,
}

/// The torques of one step's model passes, all at one configuration.
#[derive(Debug, Clone)]
struct ModelTorques {
    /// The model's parameters (the feedback's inertia).
    model_parameters: DVector<f64>,
    zeros: Vec<f64>,
    /// The model's torque error `M_hat (a_f - qdd_f) + M_0 v_f`.
    prediction_error: DVector<f64>,
    /// The command.
    torque: DVector<f64>,
}

impl ModelTorques {
    fn new(robot: &Robot) -> Self {
        let n = robot.dof();
        Self {
            model_parameters: DVector::from_vec(robot.parameter_vector()),
            zeros: vec![0.0; n],
            prediction_error: DVector::zeros(n),
            torque: DVector::zeros(n),
        }
    }

    /// `u = M_hat (qdd_d,f - qdd_f) + M_0 v_f`, the filtered command minus the estimate's
    /// prediction of it from the measured acceleration.
    fn predict_error(
        &mut self,
        model: &mut Terms<'_>,
        p_hat: &[f64],
        (difference, feedback): (&[f64], &[f64]),
    ) -> Result<(), ControlError> {
        let (zeros, p0) = (&self.zeros[..], self.model_parameters.as_slice());
        let terms = [
            ((zeros, zeros, difference), Gravity::Excluded, p_hat),
            ((zeros, zeros, feedback), Gravity::Excluded, p0),
        ];
        Ok(model.regressor_times_sum(terms, self.prediction_error.as_mut_slice())?)
    }

    /// `tau = Y(q, qd, qd, qdd_d) p_hat + M_0(q) v` into `torque`.
    fn command(
        &mut self,
        model: &mut Terms<'_>,
        p_hat: &[f64],
        (qd, desired, v): (&[f64], &[f64], &[f64]),
    ) -> Result<(), ControlError> {
        let (zeros, p0) = (&self.zeros[..], self.model_parameters.as_slice());
        let terms = [
            ((zeros, zeros, v), Gravity::Excluded, p0),
            ((qd, qd, desired), Gravity::Included, p_hat),
        ];
        Ok(model.regressor_times_sum(terms, self.torque.as_mut_slice())?)
    }
}

impl AdaptiveComputedTorque {
    /// `Kp = w^2`, `Kd = 2 w` (w up to 30 rad/s per joint, see [`crate::gain_sizing::default_gains`]),
    /// acceleration filter 5 ms, adaptation rates 3/s (normalised).
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
            estimate: Estimate::new(
                robot,
                robot.parameter_vector(),
                full_columns(n),
                full_names(n),
            ),
            parameters,
            gains,
            accel_filter,
            adaptation,
            ws: DynamicsWorkspace::new(robot),
            torques: ModelTorques::new(robot),
            command: vec![0.0; n],
            qd_previous: None,
            qdd: vec![0.0; n],
            desired: vec![0.0; n],
            last_desired: vec![0.0; n],
            feedback: vec![0.0; n],
            last_feedback: vec![0.0; n],
            difference: vec![0.0; n],
            saturated: false,
            typical_inertia: crate::gain_sizing::default_gains::InertiaBounds::of(robot)?.typical,
            weights: vec![0.0; n],
            robot: robot.clone(),
        })
    }

    /// The current estimate p_hat (10 per link).
    pub fn estimate(&self) -> &[f64] {
        self.estimate.values().as_slice()
    }

    /// Low-pass filters the finite difference of the measured velocity and, with the same
    /// filter, the desired and feedback accelerations of last step's command (which produced
    /// it).
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
            self.desired[i] += alpha * (self.last_desired[i] - self.desired[i]);
            self.feedback[i] += alpha * (self.last_feedback[i] - self.feedback[i]);
            self.difference[i] = self.desired[i] - self.qdd[i];
            previous[i] = qd[i];
        }
    }

    /// The update along `Y(q, qd, qd, qdd_f)^T u` unless the last effort saturated, then the
    /// command into `torques`: every model pass at one configuration.
    fn adapt_and_command(
        &mut self,
        state: &JointState<'_>,
        desired: &[f64],
        dt: f64,
    ) -> Result<(), ControlError> {
        let adapting = !self.saturated && self.qd_previous.is_some();
        let mut model = self.ws.update(&self.robot, state.q, state.qd)?;
        if adapting {
            let filtered = (&self.difference[..], &self.feedback[..]);
            let p_hat = self.estimate.full_values();
            self.torques.predict_error(&mut model, p_hat, filtered)?;
            let point = (state.qd, state.qd, &self.qdd[..]);
            self.estimate.update(
                self.adaptation,
                &self.parameters,
                (&self.torques.prediction_error, &self.weights, dt),
                |x, w, out| {
                    Ok(
                        model.regressor_transpose_products(
                            point,
                            Gravity::Included,
                            (x, w),
                            out,
                        )?,
                    )
                },
            )?;
        }
        let command = (state.qd, desired, &self.command[..]);
        let p_hat = self.estimate.full_values();
        self.torques.command(&mut model, p_hat, command)
    }

    /// Per joint `1 / (M_ii kp_i)`, the inverse stiffness the update weighs errors by.
    fn update_weights(&mut self) {
        let kp = &self.parameters[self.gains.kp];
        for ((w, m), k) in self.weights.iter_mut().zip(&self.typical_inertia).zip(kp) {
            *w = 1.0 / (m * k).max(f64::MIN_POSITIVE);
        }
    }
}

impl Controller for AdaptiveComputedTorque {
    law_accessors!("adaptive_computed_torque");
    /// `gamma` is checked against the estimate's names.
    fn set_parameter(&mut self, name: &str, value: ParameterValue) -> Result<(), ControlError> {
        self.estimate
            .set_parameter(&mut self.parameters, name, value)
    }
    fn restart(&mut self, state: &JointState<'_>) {
        self.estimate.restart();
        self.qd_previous = Some(state.qd.to_vec());
        self.qdd.fill(0.0);
        for buffer in [
            &mut self.desired,
            &mut self.last_desired,
            &mut self.feedback,
            &mut self.last_feedback,
        ] {
            buffer.fill(0.0);
        }
        self.saturated = false;
    }
    fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError> {
        let (state, reference, dt, effort) = (step.state, step.reference, step.dt, step.effort);
        self.filter_accelerations(state.qd, dt);
        commanded_acceleration(
            &self.parameters,
            self.gains,
            state,
            reference,
            &mut self.command,
        );
        for (a, qdd_d) in self.command.iter_mut().zip(&reference.qdd) {
            *a -= qdd_d;
        }
        self.update_weights();
        self.adapt_and_command(state, &reference.qdd, dt)?;
        effort.copy_from_slice(self.torques.torque.as_slice());
        self.last_desired.copy_from_slice(&reference.qdd);
        self.last_feedback.copy_from_slice(&self.command);
        self.saturated = saturates(&self.robot, effort);
        Ok(())
    }
    fn estimates(&self) -> &[f64] {
        self.estimate.values().as_slice()
    }
}
