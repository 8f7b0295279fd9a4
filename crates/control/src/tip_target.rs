//! The pose target of the task-space controllers: an interpolation towards the last goal, its
//! clock, and the tip pose and Jacobian measured at each update.

use armctl_model::{forward_kinematics, jacobian, FrameId, KinematicsWorkspace, ModelError, Robot};
use nalgebra::{IsometryMatrix3, Matrix6xX};

use crate::reference::{PoseInterpolation, PoseSample};
use crate::ControlError;

/// Target, clock and the last measurement.
#[derive(Debug, Clone)]
pub(crate) struct TipTarget {
    target: PoseInterpolation,
    elapsed: f64,
    kin: KinematicsWorkspace,
    /// Tip pose at the last measurement.
    pub(crate) pose: IsometryMatrix3<f64>,
    /// Tip Jacobian at the last measurement.
    pub(crate) jac: Matrix6xX<f64>,
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

    /// Moves to `goal` in `duration` seconds from the target in effect now.
    pub(crate) fn set(
        &mut self,
        goal: IsometryMatrix3<f64>,
        duration: f64,
    ) -> Result<(), ControlError> {
        let now = self.target.sample(self.elapsed).pose;
        self.target = PoseInterpolation::new(now, goal, duration)?;
        self.elapsed = 0.0;
        Ok(())
    }

    /// Advances the clock by `dt`, measures the tip pose and Jacobian at `q`, and returns the
    /// target in effect now.
    pub(crate) fn update(
        &mut self,
        robot: &Robot,
        q: &[f64],
        dt: f64,
    ) -> Result<PoseSample, ControlError> {
        self.elapsed += dt;
        self.pose = forward_kinematics(robot, &mut self.kin, q)
            .map_err(kinematics)?
            .tip();
        jacobian(robot, &mut self.kin, q, FrameId::Tip, &mut self.jac).map_err(kinematics)?;
        Ok(self.target.sample(self.elapsed))
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
}
