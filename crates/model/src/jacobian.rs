//! Geometric Jacobian of a frame: `[v; w] = J(q) qd`, with v the velocity of the frame origin
//! and w its angular velocity, both in base link axes (Pinocchio's LOCAL_WORLD_ALIGNED).
//!
//! Column j (joint j at or before the frame): revolute `[z_j x (p - o_j); z_j]`,
//! prismatic `[z_j; 0]`; later columns are zero.

use nalgebra::{Matrix6xX, Vector3};

use crate::forward_kinematics::{frame_pose, update_frames};
use crate::{FrameId, JointKind, KinematicsWorkspace, ModelError, Robot};

/// Writes the 6 x n geometric Jacobian of `frame` at `q` into `out`.
pub fn jacobian(
    robot: &Robot,
    ws: &mut KinematicsWorkspace,
    q: &[f64],
    frame: FrameId,
    out: &mut Matrix6xX<f64>,
) -> Result<(), ModelError> {
    let n = robot.dof();
    ModelError::check_len("q", n, q.len())?;
    ModelError::check_len("workspace", n, ws.dof())?;
    ModelError::check_len("Jacobian columns", n, out.ncols())?;
    update_frames(robot, ws, q);
    let (last, pose) = frame_pose(robot, ws, frame)?;
    let p = pose.translation.vector;
    out.fill(0.0);
    for (j, joint) in robot.joints().iter().enumerate().take(last) {
        let f = &ws.frames[j + 1];
        let z: Vector3<f64> = f.rotation * Vector3::z();
        let (linear, angular) = match joint.kind {
            JointKind::Revolute => (z.cross(&(p - f.translation.vector)), z),
            JointKind::Prismatic => (z, Vector3::zeros()),
        };
        out.fixed_view_mut::<3, 1>(0, j).copy_from(&linear);
        out.fixed_view_mut::<3, 1>(3, j).copy_from(&angular);
    }
    Ok(())
}
