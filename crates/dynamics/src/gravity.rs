//! Gravity torques `G(q)`, the torques that hold the arm still: from composite masses and
//! first moments in frame {0}, `G_i = -S_i^T [h_i x g; m_i g]` with `(h_i, m_i)` the first
//! moment (about the frame-{0} origin) and mass of links i..n. Cost O(n), no velocities.

use armctl_model::{check_length, Robot};
use nalgebra::Vector3;

use crate::{DynamicsError, DynamicsWorkspace};

/// `G(q)`.
pub fn gravity_torques(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    q: &[f64],
    out: &mut [f64],
) -> Result<(), DynamicsError> {
    ws.set_configuration(robot, q)?;
    check_length("G", ws.n, out.len())?;
    ws.update_world_frames(robot);
    gravity_from_frames(robot, ws, out);
    Ok(())
}

/// `G` from the frame-{0} frames already in `ws`; `out` sized.
pub(crate) fn gravity_from_frames(robot: &Robot, ws: &DynamicsWorkspace, out: &mut [f64]) {
    let g = robot.gravity_in_frame0();
    let mut h = Vector3::zeros();
    let mut m = 0.0;
    for i in (0..ws.n).rev() {
        let l = &robot.link_parameters()[i];
        h += ws.world_rot[i] * l.first_moment + ws.origin[i] * l.mass;
        m += l.mass;
        let s = &ws.axis[i];
        let moment = h.cross(&g);
        let force = g * m;
        out[i] = -(s.fixed_rows::<3>(0).dot(&moment) + s.fixed_rows::<3>(3).dot(&force));
    }
}
