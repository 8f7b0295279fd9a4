//! Composite spatial inertias `I^c_j = sum_{k >= j} I_k` in frame {0}, shared by the mass
//! matrix and the Coriolis matrix. Needs `update_world_frames`.

use armctl_model::Robot;
use nalgebra::{Matrix3, Vector3};

use crate::spatial::world_inertia;
use crate::DynamicsWorkspace;

/// Fills `c_inertia`, `c_first_moment`, `c_mass`.
pub(crate) fn update_composites(robot: &Robot, ws: &mut DynamicsWorkspace) {
    let (mut inertia, mut h, mut m) = (Matrix3::zeros(), Vector3::zeros(), 0.0);
    for i in (0..ws.n).rev() {
        let (ii, hi, mi) =
            world_inertia(&robot.link_parameters()[i], &ws.world_rot[i], &ws.origin[i]);
        inertia += ii;
        h += hi;
        m += mi;
        ws.c_inertia[i] = inertia;
        ws.c_first_moment[i] = h;
        ws.c_mass[i] = m;
    }
}
