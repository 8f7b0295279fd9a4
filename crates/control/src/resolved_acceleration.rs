//! Resolved-acceleration control (docs/theory.md section 6):
//! `xdd* = xdd_d + Kd (xd_d - xd) + Kp x_err`, `qdd* = J# (xdd* - Jdot qd) + (I - J# J)(-k_n qd)`,
//! `tau = RNEA(q, qd, qdd*)`, with the tip Jacobian J (base link axes, `[v; w]`), the pose error
//! of [`crate::CartesianImpedance`] and the damped pseudo-inverse `J# = J^T (J J^T + l^2 I)^-1`
//! (the inverse of a square J when l is small; the nullspace term damps self-motion of a
//! redundant arm). Claim: with the exact model, `edd + Kd ed + Kp e = 0` in task space (up to
//! the damping l); it needs a non-singular J on the path.
//!
//! Targets come from [`Controller::set_target_pose`]; `reset` holds the current pose.

use armctl_dynamics::{rnea, DynamicsWorkspace};
use armctl_model::Robot;
use nalgebra::{IsometryMatrix3, Matrix6, Vector6};

use crate::cartesian_impedance::orientation_error;
use crate::gains::check_step;
use crate::tip_target::TipTarget;
use crate::{
    ControlError, Controller, JointReference, JointState, ParamKind, ParamSpec, ParamValue,
    ParameterSet,
};

/// Task-space computed torque through the pseudo-inverse.
#[derive(Debug, Clone)]
pub struct ResolvedAcceleration {
    robot: Robot,
    ws: DynamicsWorkspace,
    parameters: ParameterSet,
    acceleration: Vec<f64>,
    self_motion: Vec<f64>,
    tip: TipTarget,
}

impl ResolvedAcceleration {
    /// `Kp = 400`, `Kd = 40` (1/s^2, 1/s) in every direction, `l = 1e-3`, `k_n = 10/s`.
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let n = robot.dof();
        let cartesian = |name, description, value: f64| {
            (
                ParamSpec {
                    name,
                    description,
                    kind: ParamKind::Cartesian,
                    min: 0.0,
                    max: 1e6,
                    live: true,
                },
                ParamValue::Vector(vec![value; 6]),
            )
        };
        let scalar = |name, description, value: f64| {
            (
                ParamSpec {
                    name,
                    description,
                    kind: ParamKind::Scalar,
                    min: 0.0,
                    max: 1e4,
                    live: true,
                },
                ParamValue::Scalar(value),
            )
        };
        let parameters = ParameterSet::new(
            n,
            vec![
                cartesian(
                    "kp",
                    "Task-space stiffness of the error dynamics [x y z rx ry rz], 1/s^2.",
                    400.0,
                ),
                cartesian(
                    "kd",
                    "Task-space damping of the error dynamics [x y z rx ry rz], 1/s.",
                    40.0,
                ),
                scalar(
                    "pinv_damping",
                    "Damping l of the pseudo-inverse (m); small where J is far from singular.",
                    1e-3,
                ),
                scalar(
                    "nullspace_damping",
                    "Damping of self-motion k_n for redundant arms, 1/s.",
                    10.0,
                ),
            ],
        )?;
        Ok(Self {
            ws: DynamicsWorkspace::new(robot),
            parameters,
            acceleration: vec![0.0; n],
            self_motion: vec![0.0; n],
            tip: TipTarget::new(robot),
            robot: robot.clone(),
        })
    }

    /// The tip pose measured at the last update.
    pub fn tip_pose(&self) -> &IsometryMatrix3<f64> {
        &self.tip.pose
    }

    /// `J^T (J J^T + l^2 I)^-1 b`, or `None` where even the damped matrix is singular.
    fn pseudo_inverse_times(&self, b: &Vector6<f64>, l: f64) -> Option<Vector6<f64>> {
        let mut jjt = Matrix6::<f64>::from_fn(|r, c| self.tip.jac.row(r).dot(&self.tip.jac.row(c)));
        for k in 0..6 {
            jjt[(k, k)] += l * l;
        }
        jjt.cholesky().map(|c| c.solve(b))
    }
}

impl Controller for ResolvedAcceleration {
    fn name(&self) -> &'static str {
        "resolved_acceleration"
    }
    fn parameters(&self) -> &ParameterSet {
        &self.parameters
    }
    fn parameters_mut(&mut self) -> &mut ParameterSet {
        &mut self.parameters
    }
    fn reset(&mut self, state: &JointState<'_>) {
        self.parameters.settle();
        self.tip.hold(&self.robot, state.q);
    }
    fn set_target_pose(
        &mut self,
        goal: IsometryMatrix3<f64>,
        duration: f64,
    ) -> Result<(), ControlError> {
        self.tip.set(goal, duration)
    }
    fn update(
        &mut self,
        state: &JointState<'_>,
        reference: &JointReference,
        dt: f64,
        effort: &mut [f64],
    ) -> Result<(), ControlError> {
        let n = self.robot.dof();
        check_step(n, state, reference, effort)?;
        self.parameters.advance(dt);
        let desired = self.tip.update(&self.robot, state.q, dt)?;
        let bias = self.tip.jdot_qd(&self.robot, state.q, state.qd)?;
        let p = desired.pose.translation.vector - self.tip.pose.translation.vector;
        let o = orientation_error(
            self.tip.pose.rotation.matrix(),
            desired.pose.rotation.matrix(),
        );
        let error = Vector6::new(p.x, p.y, p.z, o.x, o.y, o.z);
        let velocity = Vector6::<f64>::from_fn(|r, _| {
            self.tip
                .jac
                .row(r)
                .iter()
                .zip(state.qd)
                .map(|(a, b)| a * b)
                .sum::<f64>()
        });
        let (kp, kd) = (self.parameters.values("kp"), self.parameters.values("kd"));
        let task = Vector6::from_fn(|i, _| {
            desired.acceleration[i] + kd[i] * (desired.twist[i] - velocity[i]) + kp[i] * error[i]
        }) - bias;
        let l = self.parameters.values("pinv_damping")[0];
        let y =
            self.pseudo_inverse_times(&task, l)
                .ok_or_else(|| ControlError::InvalidReference {
                    reason: "the tip Jacobian is singular".into(),
                })?;
        // Self-motion damping projected into the nullspace: z - J# (J z), z = -k_n qd.
        let k_n = self.parameters.values("nullspace_damping")[0];
        for (z, qd) in self.self_motion.iter_mut().zip(state.qd) {
            *z = -k_n * qd;
        }
        let jz = Vector6::<f64>::from_fn(|r, _| {
            self.tip
                .jac
                .row(r)
                .iter()
                .zip(&self.self_motion)
                .map(|(a, b)| a * b)
                .sum::<f64>()
        });
        let back = self
            .pseudo_inverse_times(&jz, l)
            .unwrap_or_else(Vector6::zeros);
        for (i, a) in self.acceleration.iter_mut().enumerate() {
            let column = self.tip.jac.column(i);
            *a = column.dot(&y) + self.self_motion[i] - column.dot(&back);
        }
        rnea(
            &self.robot,
            &mut self.ws,
            state.q,
            state.qd,
            &self.acceleration,
            effort,
        )?;
        Ok(())
    }
}
