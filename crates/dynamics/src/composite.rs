//! Composite spatial inertias `I^c_j = sum_{k >= j} I_k` in frame {0}, shared by the mass
//! matrix, the Coriolis matrix and the derivatives, and for a moving arm their rates
//! `Idot^c_j`, the momenta `p^c_j = sum_{k >= j} I_k v_k` and the Newton-Euler forces
//! `F^c_j = sum_{k >= j} (I_k a_k + v_k x* I_k v_k)`. Needs `update_world_frames`.

use armctl_model::Robot;
use nalgebra::{Matrix3, Vector3, Vector6};

use crate::spatial::{cross_force, inertia_rate, inertia_times, world_inertia};
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

/// As [`update_composites`], and from the link velocities `ws.velocity`, `c_inertia_rate`,
/// `c_first_moment_rate`, `c_momentum`; with `forces`, also `c_force` from the link
/// accelerations `ws.acceleration`.
pub(crate) fn update_moving_composites(robot: &Robot, ws: &mut DynamicsWorkspace, forces: bool) {
    let (mut inertia_c, mut h_c, mut m_c) = (Matrix3::zeros(), Vector3::zeros(), 0.0);
    let (mut idot_c, mut hdot_c) = (Matrix3::zeros(), Vector3::zeros());
    let (mut momentum_c, mut force_c) = (Vector6::zeros(), Vector6::zeros());
    for i in (0..ws.n).rev() {
        let (inertia, h, m) =
            world_inertia(&robot.link_parameters()[i], &ws.world_rot[i], &ws.origin[i]);
        let v = ws.velocity[i];
        let momentum = inertia_times(&inertia, &h, m, &v);
        if forces {
            force_c += inertia_times(&inertia, &h, m, &ws.acceleration[i]);
            force_c += cross_force(&v, &momentum);
            ws.c_force[i] = force_c;
        }
        let (idot, hdot) = inertia_rate(&inertia, &h, m, &v);
        (idot_c, hdot_c, momentum_c) = (idot_c + idot, hdot_c + hdot, momentum_c + momentum);
        (inertia_c, h_c, m_c) = (inertia_c + inertia, h_c + h, m_c + m);
        (ws.c_inertia[i], ws.c_first_moment[i], ws.c_mass[i]) = (inertia_c, h_c, m_c);
        (ws.c_inertia_rate[i], ws.c_first_moment_rate[i]) = (idot_c, hdot_c);
        ws.c_momentum[i] = momentum_c;
    }
}

/// `I^c_j u`.
#[inline]
pub(crate) fn composite_times(ws: &DynamicsWorkspace, j: usize, u: &Vector6<f64>) -> Vector6<f64> {
    inertia_times(&ws.c_inertia[j], &ws.c_first_moment[j], ws.c_mass[j], u)
}

/// `Idot^c_j u + sign (u x* p^c_j)`: with sign +1 the composite of `B_k u = Idot_k u +
/// u x* I_k v_k`, with sign -1 its transpose's.
#[inline]
pub(crate) fn rate_times(
    ws: &DynamicsWorkspace,
    j: usize,
    u: &Vector6<f64>,
    sign: f64,
) -> Vector6<f64> {
    let idot_u = inertia_times(&ws.c_inertia_rate[j], &ws.c_first_moment_rate[j], 0.0, u);
    idot_u + cross_force(u, &ws.c_momentum[j]) * sign
}
