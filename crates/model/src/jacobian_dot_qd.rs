//! `Jdot(q, qd) qd`: the acceleration of a frame when `qdd = 0`, `[a; dw]` with a the
//! classical linear acceleration of the frame origin, in base link axes. Task-space laws use
//! it as `xdd = J qdd + Jdot qd`.
//!
//! Outward recursion in base link axes with `r_i = o_i - o_{i-1}` (frame origins):
//! `w_i = w_{i-1} + (1 - sigma_i) qd_i z_i`,
//! `dw_i = dw_{i-1} + (1 - sigma_i) w_{i-1} x qd_i z_i`,
//! `a_i = a_{i-1} + dw_{i-1} x r_i + w_{i-1} x (w_{i-1} x r_i) + sigma_i 2 w_{i-1} x qd_i z_i`,
//! then the frame point `p` on link k: `a = a_k + dw_k x r + w_k x (w_k x r)`, `r = p - o_k`.

use nalgebra::{Vector3, Vector6};

use crate::error::check_length;
use crate::forward_kinematics::{frame_pose, update_frames};
use crate::{FrameId, KinematicsWorkspace, ModelError, Robot};

/// `Jdot qd` of `frame` at `(q, qd)`, as `[linear; angular]` in base link axes.
pub fn jacobian_dot_qd(
    robot: &Robot,
    ws: &mut KinematicsWorkspace,
    q: &[f64],
    qd: &[f64],
    frame: FrameId,
) -> Result<Vector6<f64>, ModelError> {
    let n = robot.dof();
    check_length("q", n, q.len())?;
    check_length("qd", n, qd.len())?;
    check_length("workspace", n, ws.dof())?;
    update_frames(robot, ws, q);
    let (last, pose) = frame_pose(robot, ws, frame)?;
    let (mut w, mut dw, mut a) = (Vector3::zeros(), Vector3::zeros(), Vector3::zeros());
    for (i, joint) in robot.joints().iter().enumerate().take(last) {
        let f = &ws.frames[i + 1];
        let r = f.translation.vector - ws.frames[i].translation.vector;
        let zqd = (f.rotation * Vector3::z()) * qd[i];
        a += dw.cross(&r) + w.cross(&w.cross(&r));
        let sigma = joint.kind.sigma();
        a += 2.0 * sigma * w.cross(&zqd);
        dw += (1.0 - sigma) * w.cross(&zqd);
        w += (1.0 - sigma) * zqd;
        ws.omega[i + 1] = w;
    }
    let r = pose.translation.vector - ws.frames[last].translation.vector;
    a += dw.cross(&r) + w.cross(&w.cross(&r));
    Ok(Vector6::new(a.x, a.y, a.z, dw.x, dw.y, dw.z))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jacobian;
    use crate::test_robots::mixed_arm;
    use nalgebra::{DVector, Matrix6xX};

    #[test]
    fn equals_time_derivative_of_jacobian_times_qd() {
        let robot = mixed_arm();
        let q = [0.3, -0.5, 0.1, 1.2, -0.7];
        let qd = [0.4, 0.9, -0.3, 0.2, -1.1];
        let mut ws = KinematicsWorkspace::new(&robot);
        let h = 1e-6;
        for frame in [FrameId::Tip, FrameId::Mdh(4), FrameId::Mdh(2)] {
            let mut jac = |s: f64| {
                let qs: Vec<f64> = q.iter().zip(&qd).map(|(a, b)| a + s * h * b).collect();
                let mut j = Matrix6xX::zeros(robot.dof());
                jacobian(&robot, &mut ws, &qs, frame, &mut j).unwrap();
                j
            };
            let jdot = (jac(1.0) - jac(-1.0)) / (2.0 * h);
            let want = jdot * DVector::from_column_slice(&qd);
            let got = jacobian_dot_qd(&robot, &mut ws, &q, &qd, frame).unwrap();
            let err = (got - want).abs().max();
            assert!(err < 1e-7, "{frame:?}: {err:e}\n{got}\n{want}");
        }
    }
}
