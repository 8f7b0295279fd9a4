//! Resolved-acceleration control (docs/theory.md section 6):
//! `xdd* = xdd_d + Kd (xd_d - xd) + Kp x_err`, `qdd* = J# (xdd* - Jdot qd) + (I - J# J)(-k_n qd)`,
//! `tau = RNEA(q, qd, qdd*)`, with the tip Jacobian J (base link axes, `[v; w]`), the pose error
//! of [`crate::CartesianImpedance`] and the damped pseudo-inverse `J# = J^T (J J^T + l^2 I)^-1`
//! (the inverse of a square J when l is small; the nullspace term damps self-motion of a
//! redundant arm). Claim: with the exact model, `edd + Kd ed + Kp e = 0` in task space (up to
//! the damping l); it needs a non-singular J on the path. `gain_design` places the poles of
//! each task axis or makes it LQR-optimal (see `gain_design`).
//!
//! Targets come from [`crate::TaskSpace::set_target_pose`]; `reset` holds the current pose.

use armctl_model::Robot;
use nalgebra::{IsometryMatrix3, Vector6};

use crate::gain_sizing::gain_design::{Form, GainDesign};
use crate::law_support::gains::cartesian_gain;
use crate::law_support::model_terms::ModelTerms;
use crate::law_support::tip_target::{declare_target_source, joint_target, TipTarget};
use crate::{
    Array, ControlError, Controller, Declaration, JointState, ParameterSet, ParameterValue, Scalar,
    Step, TaskSpace,
};

/// Task-space computed torque through the pseudo-inverse.
#[derive(Debug, Clone)]
pub struct ResolvedAcceleration {
    model: ModelTerms,
    parameters: ParameterSet,
    kp: Array,
    kd: Array,
    design: GainDesign,
    pinv_damping: Scalar,
    nullspace_damping: Scalar,
    acceleration: Vec<f64>,
    self_motion: Vec<f64>,
    tip: TipTarget,
}

impl ResolvedAcceleration {
    /// `Kp = 400`, `Kd = 40` (1/s^2, 1/s) in every direction, `l = 1e-3`, `k_n = 10/s`.
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let n = robot.dof();
        let mut parameters = ParameterSet::new(n);
        let design =
            GainDesign::declare(&mut parameters, &[(400.0, 40.0); 6], ["kp", "kd"], Form::Pd)?;
        let mut cartesian = |name, description, value: f64| {
            parameters.declare_array(cartesian_gain(name, vec![value; 6], description, 1e6))
        };
        let kp = cartesian(
            "kp",
            "Task-space stiffness of the error dynamics [x y z rx ry rz], 1/s^2.",
            400.0,
        )?;
        let kd = cartesian(
            "kd",
            "Task-space damping of the error dynamics [x y z rx ry rz], 1/s.",
            40.0,
        )?;
        let mut scalar = |name, description, value: f64| {
            parameters.declare_scalar(Declaration::double(name, value, description).range(0.0, 1e4))
        };
        let pinv_damping = scalar(
            "pinv_damping",
            "Damping l of the pseudo-inverse (m); small where J is far from singular.",
            1e-3,
        )?;
        let nullspace_damping = scalar(
            "nullspace_damping",
            "Damping of self-motion k_n for redundant arms, 1/s.",
            10.0,
        )?;
        declare_target_source(&mut parameters)?;
        Ok(Self {
            design,
            model: ModelTerms::new(robot),
            parameters,
            kp,
            kd,
            pinv_damping,
            nullspace_damping,
            acceleration: vec![0.0; n],
            self_motion: vec![0.0; n],
            tip: TipTarget::new(robot),
        })
    }

    /// The tip pose measured at the last update.
    pub fn tip_pose(&self) -> &IsometryMatrix3<f64> {
        &self.tip.pose
    }
}

impl Controller for ResolvedAcceleration {
    law_accessors!("resolved_acceleration");
    /// `kp`, `kd` as set, or designed per task axis from `poles` or the LQR weights
    /// (`gain_design`).
    fn set_parameter(&mut self, name: &str, value: ParameterValue) -> Result<(), ControlError> {
        self.design.set(&mut self.parameters, name, value)
    }
    fn restart(&mut self, state: &JointState<'_>) {
        self.tip.hold(&self.model.robot, state.q);
    }
    fn task_space(&mut self) -> Option<&mut dyn TaskSpace> {
        Some(&mut self.tip)
    }
    fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError> {
        let (state, dt, effort) = (step.state, step.dt, step.effort);
        let joint_target = joint_target(&self.parameters, step.reference);
        // One pass at (q, qd) for the tip, Jdot qd and the inverse dynamics.
        let (robot, ws) = (&self.model.robot, &mut self.model.ws);
        let mut terms = ws.update(robot, state.q, state.qd)?;
        let desired = self.tip.update_with(robot, &mut terms, dt, joint_target)?;
        let bias = terms.tip_jacobian_dot_qd();
        let error = self.tip.error(&desired);
        let velocity = self.tip.times(state.qd);
        let p = &self.parameters;
        let (kp, kd) = (&p[self.kp], &p[self.kd]);
        let task = Vector6::from_fn(|i, _| {
            desired.acceleration[i] + kd[i] * (desired.twist[i] - velocity[i]) + kp[i] * error[i]
        }) - bias;
        let (l, k_n) = (p[self.pinv_damping], p[self.nullspace_damping]);
        self.tip.resolve(
            &task,
            state.qd,
            (l, k_n),
            &mut self.self_motion,
            &mut self.acceleration,
        )?;
        Ok(terms.inverse_dynamics(&self.acceleration, effort)?)
    }
}
