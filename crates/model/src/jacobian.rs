//! Geometric Jacobian of a frame: `[v; w] = J(q) qd`, with v the velocity of the frame origin
//! and w its angular velocity, both in base link axes (Pinocchio's LOCAL_WORLD_ALIGNED).
//!
//! Column j (joint j at or before the frame): revolute `[z_j x (p - o_j); z_j]`,
//! prismatic `[z_j; 0]`; later columns are zero.

use nalgebra::{IsometryMatrix3, Matrix3xX, Matrix6xX, Point3, Vector3};

use crate::error::check_length;
use crate::forward_kinematics::{frame_pose, update_frames};
use crate::{FrameId, FramePoses, Joint, JointKind, KinematicsWorkspace, ModelError, Robot};

/// Joint `joint`'s column `(linear, angular)` for point `p`, `f` the joint's frame.
fn column(
    joint: &Joint,
    f: &IsometryMatrix3<f64>,
    p: &Vector3<f64>,
) -> (Vector3<f64>, Vector3<f64>) {
    let z: Vector3<f64> = f.rotation * Vector3::z();
    match joint.kind {
        JointKind::Revolute => (z.cross(&(p - f.translation.vector)), z),
        JointKind::Prismatic => (z, Vector3::zeros()),
    }
}

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
        let (linear, angular) = column(joint, &ws.frames[j + 1], &p);
        out.fixed_view_mut::<3, 1>(0, j).copy_from(&linear);
        out.fixed_view_mut::<3, 1>(3, j).copy_from(&angular);
    }
    Ok(())
}

/// Writes the linear Jacobian (3 x n, base link axes) of a point fixed in `frame` at
/// `position` (that frame's coordinates) into `out`, from `poses` already computed at q (no
/// kinematics recomputed: contact points need several per step). Returns the point in the
/// base link frame.
pub fn point_jacobian(
    robot: &Robot,
    poses: &FramePoses<'_>,
    frame: FrameId,
    position: &Vector3<f64>,
    out: &mut Matrix3xX<f64>,
) -> Result<Vector3<f64>, ModelError> {
    let n = robot.dof();
    check_length("Jacobian columns", n, out.ncols())?;
    let last = match frame {
        FrameId::Mdh(i) => i,
        FrameId::Tip => n,
    };
    let pose = poses.get(frame).ok_or(ModelError::Dimension {
        what: "MDH frame index",
        expected: n,
        got: last,
    })?;
    let p = (pose * Point3::from(*position)).coords;
    out.fill(0.0);
    for (j, joint) in robot.joints().iter().enumerate().take(last) {
        out.set_column(j, &column(joint, &poses.mdh_frames()[j + 1], &p).0);
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_robots::mixed_arm;
    use crate::{forward_kinematics, FrameId};

    #[test]
    fn a_point_s_jacobian_is_the_frame_s_linear_rows_moved_to_the_point() {
        let robot = mixed_arm();
        let n = robot.dof();
        let q: Vec<f64> = (0..n).map(|i| 0.3 * i as f64 - 0.5).collect();
        let mut ws = KinematicsWorkspace::new(&robot);
        let mut full = Matrix6xX::zeros(n);
        jacobian(&robot, &mut ws, &q, FrameId::Tip, &mut full).unwrap();
        let mut point = Matrix3xX::zeros(n);
        let poses = forward_kinematics(&robot, &mut ws, &q).unwrap();
        point_jacobian(&robot, &poses, FrameId::Tip, &Vector3::zeros(), &mut point).unwrap();
        assert!((&point - full.fixed_rows::<3>(0)).abs().max() < 1e-12);
        let past = point_jacobian(
            &robot,
            &poses,
            FrameId::Mdh(n + 1),
            &Vector3::zeros(),
            &mut point,
        );
        assert!(past.is_err());
    }
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
