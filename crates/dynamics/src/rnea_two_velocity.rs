//! The two-velocity form `M(q) a + C(q, qd) v + G(q)` that the Slotine-Li controller needs,
//! computed recursively with the Christoffel-consistent C (Niemeyer and Slotine).
//!
//! Spatial recursion in MDH frames with the actual velocity `(w, v_O)` from qd, a reference
//! angular velocity `w_r` from v, and spatial acceleration `(alpha, a_O)` from
//! `acc_i = X acc_{i-1} + S a_i + vel_i x S v_i` (base `a_O = -g`). With
//! `abar = a_O + w_r x v_O`, each link needs the force
//! `F = m abar + alpha x h + w_r x (w x h)` and moment
//! `N = I_O alpha + 1/2 (w x I_O w_r + w_r x I_O w - I_O (w x w_r)) + h x abar`,
//! which is `I acc + B(vel) vel_r` with `B = 1/2 (vel x* I - I vel x + (I vel) x-bar*)`
//! (see `coriolis_matrix`). With `v = qd`, `a = qdd` it is ordinary inverse dynamics.
//! The inward pass is RNEA's.

use armctl_model::{check_length, JointKind, Robot};
use nalgebra::{Matrix3, Vector3};

use crate::{DynamicsError, DynamicsWorkspace};

const Z: Vector3<f64> = Vector3::new(0.0, 0.0, 1.0);

/// `tau = M(q) a + C(q, qd) v + G(q)` plus armature times a.
pub fn rnea_two_velocity(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    q: &[f64],
    qd: &[f64],
    v: &[f64],
    a: &[f64],
    tau: &mut [f64],
) -> Result<(), DynamicsError> {
    ws.set_configuration(robot, q)?;
    for (what, len) in [
        ("qd", qd.len()),
        ("v", v.len()),
        ("a", a.len()),
        ("tau", tau.len()),
    ] {
        check_length(what, ws.n, len)?;
    }
    outward_two_velocity(robot, ws, (qd, v, Some(a)), -robot.gravity_in_frame0());
    for (i, l) in robot.link_parameters().iter().enumerate() {
        (ws.force[i], ws.moment[i]) =
            link_wrench(ws, i, (l.mass, &l.first_moment, &l.inertia_origin));
    }
    inward(robot, ws, a, tau);
    Ok(())
}

/// Link i's two-velocity force and moment (its frame, about its origin) for mass m, first
/// moment h and inertia `I_O`, after the outward pass.
pub(crate) fn link_wrench(
    ws: &DynamicsWorkspace,
    i: usize,
    (mass, h, i_o): (f64, &Vector3<f64>, &Matrix3<f64>),
) -> (Vector3<f64>, Vector3<f64>) {
    let (w, wr, alpha, abar) = (ws.w[i], ws.wr[i], ws.dw[i], ws.acc[i]);
    let force = abar * mass + alpha.cross(h) + wr.cross(&w.cross(h));
    let moment = i_o * alpha
        + (w.cross(&(i_o * wr)) + wr.cross(&(i_o * w)) - i_o * w.cross(&wr)) * 0.5
        + h.cross(&abar);
    (force, moment)
}

/// [`link_wrench`] after [`outward_at_rest`]: `F = m abar + alpha x h`,
/// `N = I_O alpha + h x abar`.
pub(crate) fn link_wrench_at_rest(
    ws: &DynamicsWorkspace,
    i: usize,
    (mass, h, i_o): (f64, &Vector3<f64>, &Matrix3<f64>),
) -> (Vector3<f64>, Vector3<f64>) {
    let (alpha, abar) = (ws.dw[i], ws.acc[i]);
    (abar * mass + alpha.cross(h), i_o * alpha + h.cross(&abar))
}

/// [`outward_two_velocity`] for an arm at rest (`qd = v = 0`): only the accelerations
/// propagate, `w = w_r = 0` and `abar = a_O`. The mass-matrix products of the adaptive laws.
pub(crate) fn outward_at_rest(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    a: &[f64],
    base: Vector3<f64>,
) {
    let mut alpha = Vector3::zeros();
    let mut ao = base;
    for (i, &acceleration) in a.iter().enumerate().take(ws.n) {
        let rt = ws.rot[i].transpose();
        let za = Z * acceleration;
        let mut alpha_i = rt * alpha;
        let mut ao_i = rt * (ao + alpha.cross(&ws.pos[i]));
        match robot.joints()[i].kind {
            JointKind::Revolute => alpha_i += za,
            JointKind::Prismatic => ao_i += za,
        }
        ws.w[i] = Vector3::zeros();
        ws.wr[i] = Vector3::zeros();
        ws.dw[i] = alpha_i;
        ws.acc[i] = ao_i;
        (alpha, ao) = (alpha_i, ao_i);
    }
}

/// Fills `w` (actual), `wr` (reference), `dw` (spatial angular acceleration alpha) and `acc`
/// (`abar = a_O + w_r x v_O`) per link, in its frame. The origin velocity `v_O` is only
/// carried along the recursion. `base` is the base's linear acceleration (`-g` for gravity);
/// `a = None` means zero.
pub(crate) fn outward_two_velocity(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    (qd, v, a): (&[f64], &[f64], Option<&[f64]>),
    base: Vector3<f64>,
) {
    let mut w = Vector3::zeros();
    let mut wr = Vector3::zeros();
    let mut vo = Vector3::zeros();
    let mut alpha = Vector3::zeros();
    let mut ao = base;
    for i in 0..ws.n {
        let rt = ws.rot[i].transpose();
        let p = ws.pos[i];
        let zv = Z * v[i];
        let za = Z * a.map_or(0.0, |a| a[i]);
        let (mut w_i, mut wr_i) = (rt * w, rt * wr);
        let mut vo_i = rt * (vo + w.cross(&p));
        let mut alpha_i = rt * alpha;
        let mut ao_i = rt * (ao + alpha.cross(&p));
        match robot.joints()[i].kind {
            JointKind::Revolute => {
                w_i += Z * qd[i];
                wr_i += zv;
                alpha_i += za + w_i.cross(&zv);
                ao_i += vo_i.cross(&zv);
            }
            JointKind::Prismatic => {
                vo_i += Z * qd[i];
                ao_i += za + w_i.cross(&zv);
            }
        }
        ws.w[i] = w_i;
        ws.wr[i] = wr_i;
        ws.dw[i] = alpha_i;
        ws.acc[i] = ao_i + wr_i.cross(&vo_i);
        (w, wr, vo, alpha, ao) = (w_i, wr_i, vo_i, alpha_i, ao_i);
    }
}

/// RNEA's inward pass over `ws.force`/`ws.moment`, plus armature times `a`.
fn inward(robot: &Robot, ws: &DynamicsWorkspace, a: &[f64], tau: &mut [f64]) {
    transmitted_wrenches(ws, |i, f, m| {
        let joint = &robot.joints()[i];
        tau[i] = match joint.kind {
            JointKind::Revolute => m.z,
            JointKind::Prismatic => f.z,
        } + joint.armature * a[i];
    });
}

/// The force and moment transmitted to each link through its joint (links i..n, in frame
/// {i}), from `ws.force`/`ws.moment`, tip first: `each(i, f_i, m_i)`.
pub(crate) fn transmitted_wrenches(
    ws: &DynamicsWorkspace,
    mut each: impl FnMut(usize, &Vector3<f64>, &Vector3<f64>),
) {
    let mut f = Vector3::zeros();
    let mut m = Vector3::zeros();
    for i in (0..ws.n).rev() {
        if i + 1 < ws.n {
            let rf = ws.rot[i + 1] * f;
            m = ws.moment[i] + ws.rot[i + 1] * m + ws.pos[i + 1].cross(&rf);
            f = ws.force[i] + rf;
        } else {
            m = ws.moment[i];
            f = ws.force[i];
        }
        each(i, &f, &m);
    }
}
