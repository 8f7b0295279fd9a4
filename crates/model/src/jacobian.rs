//! Geometric Jacobian of a frame: `[v; w] = J(q) qd`, with v the velocity of the frame origin
//! and w its angular velocity, both in base link axes (Pinocchio's LOCAL_WORLD_ALIGNED).
//!
//! Column j (joint j at or before the frame): revolute `[z_j x (p - o_j); z_j]`,
//! prismatic `[z_j; 0]`; later columns are zero.

use nalgebra::{Matrix6xX, Vector3};

use crate::error::check_length;
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
    check_length("q", n, q.len())?;
    check_length("workspace", n, ws.dof())?;
    check_length("Jacobian columns", n, out.ncols())?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_robots::mixed_arm;
    use crate::{forward_kinematics, FrameId};
    use nalgebra::Vector6;

    /// Twist of `frame` by central differences of forward kinematics along `qd`.
    fn numeric_twist(robot: &Robot, q: &[f64], qd: &[f64], frame: FrameId) -> Vector6<f64> {
        let h = 1e-6;
        let mut ws = KinematicsWorkspace::new(robot);
        let step = |s: f64| -> Vec<f64> { q.iter().zip(qd).map(|(a, b)| a + s * h * b).collect() };
        let plus = forward_kinematics(robot, &mut ws, &step(1.0))
            .unwrap()
            .get(frame)
            .unwrap();
        let minus = forward_kinematics(robot, &mut ws, &step(-1.0))
            .unwrap()
            .get(frame)
            .unwrap();
        let v = (plus.translation.vector - minus.translation.vector) / (2.0 * h);
        // The skew part of the small relative rotation: accurate where acos-based angles are not.
        let d = plus.rotation.matrix() * minus.rotation.matrix().transpose();
        let w = Vector3::new(
            d[(2, 1)] - d[(1, 2)],
            d[(0, 2)] - d[(2, 0)],
            d[(1, 0)] - d[(0, 1)],
        ) / (4.0 * h);
        Vector6::new(v.x, v.y, v.z, w.x, w.y, w.z)
    }

    #[test]
    fn jacobian_matches_finite_differences() {
        let robot = mixed_arm();
        let q = [0.3, -0.5, 0.1, 1.2, -0.7];
        let qd = [0.4, 0.9, -0.3, 0.2, -1.1];
        let mut ws = KinematicsWorkspace::new(&robot);
        let mut j = Matrix6xX::zeros(robot.dof());
        for frame in [FrameId::Tip, FrameId::Mdh(3), FrameId::Mdh(0)] {
            jacobian(&robot, &mut ws, &q, frame, &mut j).unwrap();
            let twist = &j * nalgebra::DVector::from_column_slice(&qd);
            let err = (twist - numeric_twist(&robot, &q, &qd, frame)).abs().max();
            assert!(err < 1e-8, "{frame:?}: {err:e}");
        }
    }

    #[test]
    fn wrong_sizes_are_errors() {
        let robot = mixed_arm();
        let mut ws = KinematicsWorkspace::new(&robot);
        let mut j = Matrix6xX::zeros(robot.dof());
        assert!(jacobian(&robot, &mut ws, &[0.0; 3], FrameId::Tip, &mut j).is_err());
        assert!(jacobian(&robot, &mut ws, &[0.0; 5], FrameId::Mdh(9), &mut j).is_err());
        let mut short = Matrix6xX::zeros(2);
        assert!(jacobian(&robot, &mut ws, &[0.0; 5], FrameId::Tip, &mut short).is_err());
    }
}
