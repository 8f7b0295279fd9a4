//! Adaptive computed torque (Craig, Hsu and Sastry; docs/theory.md section 6):
//! `tau = M_hat a + C_hat qd + G_hat = Y(q, qd, qd, a) p_hat`, `a = qdd_d + Kd de + Kp e`, and
//! `d p_hat / dt = Gamma^-1 Y(q, qd, qd, qdd)^T M_hat^-1 e1`, `e1 = de + Psi e`, from
//! `edd + Kd de + Kp e = M_hat^-1 Y(q, qd, qd, qdd) (p - p_hat)`.
//! Needs the measured acceleration qdd (here: differences of qd, low-pass filtered with time
//! constant `accel_filter`) and an invertible `M_hat` (built column by column from the regressor
//! and the estimate; where it is not positive definite the step skips adaptation). Rates
//! (default 0.01), projection and per-link mask as in [`crate::SlotineLiAdaptive`].
//!
//! Limitations: `M_hat^-1` amplifies the update of light links. On the Panda the defaults learn
//! (the tracking error falls 4.6x below the fixed model's in 30 s); on the PUMA 560 without
//! rotor inertia (4e-5 kg m^2 about joint 6) it is unstable at 1e-3 and bounded at 1e-4, where
//! it learns little: use Slotine-Li adaptive there, which needs neither `M_hat^-1` nor qdd.

use armctl_dynamics::{regressor, DynamicsWorkspace};
use armctl_model::{Robot, PARAMS_PER_LINK};
use nalgebra::{Cholesky, DMatrix, DVector};

use crate::adaptation::{full_columns, parameter_scales, Adaptation};
use crate::computed_torque::{commanded_acceleration, error_dynamics_gains};
use crate::gains::{errors, joint_gain, PdGains};
use crate::{Array, ControlError, Controller, Declaration, JointState, ParameterSet, Scalar, Step};

/// Adaptive computed torque.
#[derive(Debug, Clone)]
pub struct AdaptiveComputedTorque {
    robot: Robot,
    ws: DynamicsWorkspace,
    parameters: ParameterSet,
    gains: PdGains,
    psi: Array,
    accel_filter: Scalar,
    adaptation: Adaptation,
    initial: Vec<f64>,
    scale: Vec<f64>,
    /// Regressor column of each parameter (all of them, in order).
    columns: Vec<usize>,
    estimate: DVector<f64>,
    y: DMatrix<f64>,
    mass: DMatrix<f64>,
    column: DVector<f64>,
    gravity: DVector<f64>,
    direction: DVector<f64>,
    e1: DVector<f64>,
    command: Vec<f64>,
    unit: Vec<f64>,
    zeros: Vec<f64>,
    qd_previous: Option<Vec<f64>>,
    qdd: Vec<f64>,
}

impl AdaptiveComputedTorque {
    /// `Kp = w^2`, `Kd = 2 w` (w up to 30 rad/s per joint, see [`crate::default_gains`]), `Psi = 10/s`, acceleration filter 5 ms, adaptation rates 0.01.
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let n = robot.dof();
        let mut parameters = ParameterSet::new(n);
        let gains = error_dynamics_gains(&mut parameters, robot, "error dynamics", "")?;
        let psi = parameters.declare_array(joint_gain(
            "psi",
            vec![10.0; n],
            "Filtered error e1 = de + psi e, per joint, 1/s.",
            1e4,
        ))?;
        let accel_filter = parameters.declare_scalar(
            Declaration::double(
                "accel_filter",
                0.005,
                "Time constant of the acceleration estimate's low-pass filter, s.",
            )
            .range(0.0, 1.0),
        )?;
        let adaptation = Adaptation::declare(&mut parameters, 0.01, true)?;
        let initial = robot.parameter_vector();
        let p = PARAMS_PER_LINK * n;
        Ok(Self {
            scale: parameter_scales(&initial, &full_columns(n)),
            columns: full_columns(n),
            estimate: DVector::from_vec(initial.clone()),
            initial,
            parameters,
            gains,
            psi,
            accel_filter,
            adaptation,
            ws: DynamicsWorkspace::new(robot),
            y: DMatrix::zeros(n, p),
            mass: DMatrix::zeros(n, n),
            column: DVector::zeros(n),
            gravity: DVector::zeros(n),
            direction: DVector::zeros(p),
            e1: DVector::zeros(n),
            command: vec![0.0; n],
            unit: vec![0.0; n],
            zeros: vec![0.0; n],
            qd_previous: None,
            qdd: vec![0.0; n],
            robot: robot.clone(),
        })
    }

    /// The current estimate p_hat (10 per link).
    pub fn estimate(&self) -> &[f64] {
        self.estimate.as_slice()
    }

    /// Filtered finite difference of the measured velocity.
    fn estimate_acceleration(&mut self, qd: &[f64], dt: f64) {
        let tau = self.parameters[self.accel_filter];
        let alpha = if tau > 0.0 {
            (dt / (tau + dt)).clamp(0.0, 1.0)
        } else {
            1.0
        };
        if let Some(previous) = &mut self.qd_previous {
            for ((a, p), v) in self.qdd.iter_mut().zip(previous.iter_mut()).zip(qd) {
                let raw = if dt > 0.0 { (v - *p) / dt } else { 0.0 };
                *a += alpha * (raw - *a);
                *p = *v;
            }
        }
    }

    /// `M_hat` from the regressor: column j is `Y(q, 0, 0, e_j) p_hat - G_hat`.
    fn model_mass_matrix(&mut self, q: &[f64]) -> Result<(), ControlError> {
        regressor(
            &self.robot,
            &mut self.ws,
            q,
            &self.zeros,
            &self.zeros,
            &self.zeros,
            &mut self.y,
        )?;
        self.gravity.gemv(1.0, &self.y, &self.estimate, 0.0);
        for j in 0..self.robot.dof() {
            self.unit.fill(0.0);
            self.unit[j] = 1.0;
            regressor(
                &self.robot,
                &mut self.ws,
                q,
                &self.zeros,
                &self.zeros,
                &self.unit,
                &mut self.y,
            )?;
            self.column.gemv(1.0, &self.y, &self.estimate, 0.0);
            self.column -= &self.gravity;
            self.mass.set_column(j, &self.column);
        }
        Ok(())
    }

    /// `p_hat += dt Gamma^-1 Y(q, qd, qd, qdd)^T M_hat^-1 e1` (skipped if M_hat is not PD).
    fn adapt(&mut self, state: &JointState<'_>, dt: f64) -> Result<(), ControlError> {
        self.model_mass_matrix(state.q)?;
        let m = std::mem::replace(&mut self.mass, DMatrix::zeros(0, 0));
        match Cholesky::new(m) {
            Some(cholesky) => {
                cholesky.solve_mut(&mut self.e1);
                self.mass = cholesky.unpack();
            }
            None => {
                self.mass = DMatrix::zeros(self.robot.dof(), self.robot.dof());
                return Ok(());
            }
        }
        regressor(
            &self.robot,
            &mut self.ws,
            state.q,
            state.qd,
            state.qd,
            &self.qdd,
            &mut self.y,
        )?;
        self.direction.gemv_tr(1.0, &self.y, &self.e1, 0.0);
        self.adaptation.adapt(
            &self.parameters,
            &self.columns,
            &self.scale,
            &self.direction,
            dt,
            &mut self.estimate,
        );
        Ok(())
    }
}

impl Controller for AdaptiveComputedTorque {
    law_accessors!("adaptive_computed_torque");
    fn restart(&mut self, state: &JointState<'_>) {
        self.estimate.copy_from_slice(&self.initial);
        self.qd_previous = Some(state.qd.to_vec());
        self.qdd.fill(0.0);
    }
    fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError> {
        let (state, reference, dt, effort) = (step.state, step.reference, step.dt, step.effort);
        self.estimate_acceleration(state.qd, dt);
        commanded_acceleration(
            &self.parameters,
            self.gains,
            state,
            reference,
            &mut self.command,
        );
        let psi = &self.parameters[self.psi];
        for (i, (e, de)) in errors(state, reference).enumerate() {
            self.e1[i] = de + psi[i] * e;
        }
        regressor(
            &self.robot,
            &mut self.ws,
            state.q,
            state.qd,
            state.qd,
            &self.command,
            &mut self.y,
        )?;
        self.column.gemv(1.0, &self.y, &self.estimate, 0.0);
        effort.copy_from_slice(self.column.as_slice());
        self.adapt(state, dt)
    }
    fn estimates(&self) -> &[f64] {
        self.estimate.as_slice()
    }
}
