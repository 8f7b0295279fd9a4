//! The task-space inputs of the task-space controllers ([`TaskSpace`]): the pose target (an
//! interpolation towards the last goal, and its clock) and the measured tip wrench; and the tip
//! pose and Jacobian measured at each update, with the pose error and the products with J the
//! laws share.

use armctl_dynamics::Terms;
use armctl_model::{forward_kinematics, jacobian, FrameId, KinematicsWorkspace, ModelError, Robot};
use nalgebra::{IsometryMatrix3, Matrix3, Matrix6, Matrix6xX, Vector3, Vector6};

use crate::reference::{PoseInterpolation, PoseSample};
use crate::{ControlError, Declaration, JointReference, ParameterSet, ParameterValue, TaskSpace};

/// The parameter that says where a task-space law's target comes from.
const TARGET_SOURCE: &str = "target_source";

/// Declares `target_source`: `pose` (the pose target, `~/target_pose`) or `joint_reference`
/// (the joint reference through forward kinematics: its pose, `J qd_r` and
/// `J qdd_r + Jdot qd_r`).
pub(crate) fn declare_target_source(parameters: &mut ParameterSet) -> Result<(), ControlError> {
    parameters.declare(
        Declaration::string(
            TARGET_SOURCE,
            "pose",
            "Where the tip target comes from: 'pose' (the pose target, ~/target_pose) or 'joint_reference' (the joint reference, ~/reference, through forward kinematics).",
        )
        .choices(&["pose", "joint_reference"])
        .read_only(),
    )
}

/// The joint reference when `target_source` is `joint_reference`.
pub(crate) fn joint_target<'a>(
    parameters: &ParameterSet,
    reference: &'a JointReference,
) -> Option<&'a JointReference> {
    match parameters.get(TARGET_SOURCE) {
        Some(ParameterValue::String(source)) if source == "joint_reference" => Some(reference),
        _ => None,
    }
}

/// Target, clock, measured wrench and the last measurement.
#[derive(Debug, Clone)]
pub(crate) struct TipTarget {
    target: PoseInterpolation,
    elapsed: f64,
    kin: KinematicsWorkspace,
    /// Tip pose at the last measurement.
    pub(crate) pose: IsometryMatrix3<f64>,
    /// Tip Jacobian at the last measurement.
    pub(crate) jac: Matrix6xX<f64>,
    /// The wrench the environment applies to the tip, `[f; m]` (base link axes).
    pub(crate) external_wrench: Vector6<f64>,
    /// Seconds of updates since the last measured wrench (infinite before the first).
    pub(crate) wrench_age: f64,
    /// Whether the last update took its target from the joint reference (pose targets are
    /// then refused).
    follows_joints: bool,
}

/// `1/2 (n x n_d + o x o_d + a x a_d)`: the small rotation from `r` to `r_desired` (base
/// axes; Luh, Walker and Paul).
pub fn orientation_error(r: &Matrix3<f64>, r_desired: &Matrix3<f64>) -> Vector3<f64> {
    (0..3)
        .map(|c| r.column(c).cross(&r_desired.column(c)))
        .fold(Vector3::zeros(), |a, b| a + b)
        * 0.5
}

fn kinematics(e: ModelError) -> ControlError {
    ControlError::InvalidReference {
        reason: e.to_string(),
    }
}

impl TipTarget {
    pub(crate) fn new(robot: &Robot) -> Self {
        Self {
            target: PoseInterpolation::hold(IsometryMatrix3::identity()),
            elapsed: 0.0,
            kin: KinematicsWorkspace::new(robot),
            pose: IsometryMatrix3::identity(),
            jac: Matrix6xX::zeros(robot.dof()),
            external_wrench: Vector6::zeros(),
            wrench_age: f64::INFINITY,
            follows_joints: false,
        }
    }

    /// Holds the tip where it is at `q`.
    pub(crate) fn hold(&mut self, robot: &Robot, q: &[f64]) {
        if let Ok(poses) = forward_kinematics(robot, &mut self.kin, q) {
            self.pose = poses.tip();
            self.target = PoseInterpolation::hold(self.pose);
            self.elapsed = 0.0;
        }
    }

    /// Advances the target's clock by dt and returns the target in effect now (the pose target,
    /// or the joint reference through the kinematics); the tip pose and Jacobian come from the
    /// one pass at q.
    pub(crate) fn update_with(
        &mut self,
        robot: &Robot,
        terms: &mut Terms<'_>,
        dt: f64,
        joint: Option<&JointReference>,
    ) -> Result<PoseSample, ControlError> {
        let desired = self.advance(robot, dt, joint)?;
        self.pose = terms.tip_pose();
        terms.tip_jacobian(&mut self.jac)?;
        Ok(desired)
    }

    /// Advances the clocks by dt and returns the target in effect now.
    fn advance(
        &mut self,
        robot: &Robot,
        dt: f64,
        joint: Option<&JointReference>,
    ) -> Result<PoseSample, ControlError> {
        self.elapsed += dt;
        self.wrench_age += dt;
        self.follows_joints = joint.is_some();
        match joint {
            Some(reference) => self.through_kinematics(robot, reference),
            None => Ok(self.target.sample(self.elapsed)),
        }
    }

    /// Takes the axes whose stiffness is zero out of the task: their rows of J are zeroed.
    pub(crate) fn leave_out_axes(&mut self, stiffness: &[f64]) {
        for (i, &k) in stiffness.iter().enumerate() {
            if k == 0.0 {
                self.jac.row_mut(i).fill(0.0);
            }
        }
    }

    /// Measures the tip pose and Jacobian at `q`.
    pub(crate) fn measure(&mut self, robot: &Robot, q: &[f64]) -> Result<(), ControlError> {
        self.pose = forward_kinematics(robot, &mut self.kin, q)
            .map_err(kinematics)?
            .tip();
        jacobian(robot, &mut self.kin, q, FrameId::Tip, &mut self.jac).map_err(kinematics)
    }

    /// The tip's pose, twist `J qd_r` and acceleration `J qdd_r + Jdot qd_r` at the joint
    /// reference (using `jac` as scratch: it is measured again after).
    fn through_kinematics(
        &mut self,
        robot: &Robot,
        reference: &JointReference,
    ) -> Result<PoseSample, ControlError> {
        let pose = forward_kinematics(robot, &mut self.kin, &reference.q)
            .map_err(kinematics)?
            .tip();
        jacobian(
            robot,
            &mut self.kin,
            &reference.q,
            FrameId::Tip,
            &mut self.jac,
        )
        .map_err(kinematics)?;
        let twist = self.times(&reference.qd);
        let bias = self.jdot_qd(robot, &reference.q, &reference.qd)?;
        let acceleration = self.times(&reference.qdd) + bias;
        Ok(PoseSample {
            pose,
            twist,
            acceleration,
        })
    }

    /// `Jdot qd` of the tip.
    pub(crate) fn jdot_qd(
        &mut self,
        robot: &Robot,
        q: &[f64],
        qd: &[f64],
    ) -> Result<nalgebra::Vector6<f64>, ControlError> {
        armctl_model::jacobian_dot_qd(robot, &mut self.kin, q, qd, FrameId::Tip).map_err(kinematics)
    }

    /// The target in effect now.
    pub(crate) fn sample(&self) -> PoseSample {
        self.target.sample(self.elapsed)
    }

    /// The pose error `[p_d - p; e_o]` of the last measurement against `desired`.
    pub(crate) fn error(&self, desired: &PoseSample) -> Vector6<f64> {
        let p = desired.pose.translation.vector - self.pose.translation.vector;
        let o = orientation_error(self.pose.rotation.matrix(), desired.pose.rotation.matrix());
        Vector6::new(p.x, p.y, p.z, o.x, o.y, o.z)
    }

    /// `J v` (the tip twist for joint velocities v).
    pub(crate) fn times(&self, v: &[f64]) -> Vector6<f64> {
        Vector6::<f64>::from_fn(|r, _| {
            self.jac
                .row(r)
                .iter()
                .zip(v)
                .map(|(a, b)| a * b)
                .sum::<f64>()
        })
    }

    /// Joint accelerations for the task acceleration `b` (`xdd* - Jdot qd`):
    /// `qdd = J# b + z - J# J z` with `z = -k_n qd` (self-motion damped in the nullspace) and
    /// the damped pseudo-inverse `J# = J^T (J J^T + l^2 I)^-1`, `(l, k_n)` = `damping`;
    /// `self_motion` is scratch. An error where even the damped `J J^T` is singular.
    pub(crate) fn resolve(
        &self,
        b: &Vector6<f64>,
        qd: &[f64],
        damping: (f64, f64),
        self_motion: &mut [f64],
        qdd: &mut [f64],
    ) -> Result<(), ControlError> {
        let (l, k_n) = damping;
        let gram =
            self.damped_gram(l)
                .cholesky()
                .ok_or_else(|| ControlError::InvalidReference {
                    reason: "the tip Jacobian is singular".into(),
                })?;
        let y = gram.solve(b);
        for (z, qd) in self_motion.iter_mut().zip(qd) {
            *z = -k_n * qd;
        }
        let back = gram.solve(&self.times(self_motion));
        for (i, a) in qdd.iter_mut().enumerate() {
            let column = self.jac.column(i);
            *a = column.dot(&y) + self_motion[i] - column.dot(&back);
        }
        Ok(())
    }

    /// `J J^T + l^2 I`.
    pub(crate) fn damped_gram(&self, l: f64) -> Matrix6<f64> {
        let mut jjt = Matrix6::<f64>::from_fn(|r, c| self.jac.row(r).dot(&self.jac.row(c)));
        for k in 0..6 {
            jjt[(k, k)] += l * l;
        }
        jjt
    }
}

impl TaskSpace for TipTarget {
    /// Moves to `goal` in `duration` seconds from the target in effect now.
    fn set_target_pose(
        &mut self,
        goal: IsometryMatrix3<f64>,
        duration: f64,
    ) -> Result<(), ControlError> {
        if self.follows_joints {
            return Err(ControlError::InvalidReference {
                reason: "target_source is 'joint_reference': the tip follows the joint reference; set target_source: pose for pose targets".into(),
            });
        }
        let now = self.target.sample(self.elapsed).pose;
        self.target = PoseInterpolation::new(now, goal, duration)?;
        self.elapsed = 0.0;
        Ok(())
    }

    fn set_external_wrench(&mut self, wrench: &[f64; 6]) {
        if wrench.iter().all(|v| v.is_finite()) {
            self.external_wrench = Vector6::from_column_slice(wrench);
            self.wrench_age = 0.0;
        }
    }
}
