//! Analytical partial derivatives of inverse dynamics, `d tau / dq` and `d tau / dqd`, by
//! differentiating the Newton-Euler recursion of [`crate::rnea`] in the MDH frames, one joint
//! coordinate at a time (forward mode, exact to rounding; O(n^2)).
//!
//! Only the transform of joint k depends on q_k: for a revolute joint
//! `R_{k-1,k} = RotX(alpha) RotZ(theta)`, so `dR/dq = R [z]x` and `d(R^T x)/dq = (R^T x) x z`,
//! `d(R y)/dq = R (z x y)`; for a prismatic one the origin moves along `dp/dq = (0, -sa, ca)`.
//! A pass for q_k (or qd_k) carries the derivatives of the velocities, accelerations and link
//! wrenches outward from link k, then of the transmitted wrenches inward to the base. Forward
//! dynamics follows: `d qdd/dq = -M^-1 d tau/dq`, `d qdd/dqd = -M^-1 d tau/dqd`,
//! `d qdd/d tau = M^-1`, the derivatives taken at the forward dynamics' own `qdd`.

use armctl_model::{check_length, JointKind, Robot};
use nalgebra::{DMatrix, DVector, Vector3};

use crate::cholesky::cholesky_solve_in_place;
use crate::rnea_two_velocity::transmitted_wrenches;
use crate::{forward_dynamics, DynamicsError, DynamicsWorkspace};

const Z: Vector3<f64> = Vector3::new(0.0, 0.0, 1.0);

/// What a pass differentiates by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum By {
    /// Joint position k.
    Q(usize),
    /// Joint velocity k.
    Qd(usize),
}

/// A link's motion in its own frame: angular velocity and acceleration, origin acceleration
/// (gravity included as the base's upward acceleration).
#[derive(Debug, Clone, Copy, Default)]
struct Motion {
    w: Vector3<f64>,
    dw: Vector3<f64>,
    a: Vector3<f64>,
}

fn value(v: Option<&[f64]>, i: usize) -> f64 {
    v.map_or(0.0, |v| v[i])
}

/// The motion of link `i - 1` from the stored pass (the base for i = 0).
fn motion_before(robot: &Robot, ws: &DynamicsWorkspace, i: usize) -> Motion {
    match i {
        0 => Motion {
            a: -robot.gravity_in_frame0(),
            ..Motion::default()
        },
        _ => Motion {
            w: ws.w[i - 1],
            dw: ws.dw[i - 1],
            a: ws.acc[i - 1],
        },
    }
}

/// Newton-Euler as [`crate::rnea`], keeping every link's motion (`ws.w`, `ws.dw`, `ws.acc`),
/// wrench (`ws.force`, `ws.moment`) and transmitted wrench (`ws.f_total`, `ws.m_total`).
fn stored_pass(robot: &Robot, ws: &mut DynamicsWorkspace, qd: Option<&[f64]>, qdd: Option<&[f64]>) {
    for (i, l) in robot.link_parameters().iter().enumerate() {
        let prev = motion_before(robot, ws, i);
        let rt = ws.rot[i].transpose();
        let p = ws.pos[i];
        let (qdi, qddi) = (value(qd, i), value(qdd, i));
        let wp = rt * prev.w;
        let mut m = Motion {
            w: wp,
            dw: rt * prev.dw,
            a: rt * (prev.a + prev.dw.cross(&p) + prev.w.cross(&prev.w.cross(&p))),
        };
        match robot.joints()[i].kind {
            JointKind::Revolute => {
                m.w += Z * qdi;
                m.dw += wp.cross(&Z) * qdi + Z * qddi;
            }
            JointKind::Prismatic => m.a += wp.cross(&Z) * (2.0 * qdi) + Z * qddi,
        }
        let h = l.first_moment;
        let (w_cross_h, inertia_w) = (m.w.cross(&h), l.inertia_origin * m.w);
        ws.force[i] = m.a * l.mass + m.dw.cross(&h) + m.w.cross(&w_cross_h);
        ws.moment[i] = l.inertia_origin * m.dw + m.w.cross(&inertia_w) + h.cross(&m.a);
        (ws.w[i], ws.dw[i], ws.acc[i]) = (m.w, m.dw, m.a);
        // What every derivative pass reuses (`wrench_derivative`, `motion_derivative`).
        (ws.w_cross_h[i], ws.inertia_w[i]) = (w_cross_h, inertia_w);
        (ws.w_before[i], ws.w_before_cross_p[i]) = (wp, prev.w.cross(&p));
    }
    let (mut f_total, mut m_total) = (
        std::mem::take(&mut ws.f_total),
        std::mem::take(&mut ws.m_total),
    );
    transmitted_wrenches(ws, |i, f, m| (f_total[i], m_total[i]) = (*f, *m));
    (ws.f_total, ws.m_total) = (f_total, m_total);
}

/// `dp_i/dq_i` of a prismatic joint (the origin moves along z_i, seen from {i-1}).
fn slide(robot: &Robot, i: usize) -> Vector3<f64> {
    let mdh = &robot.joints()[i].mdh;
    Vector3::new(0.0, -mdh.sin_alpha(), mdh.cos_alpha())
}

/// The derivative of link i's motion, given link i-1's (`d_prev`).
fn motion_derivative(
    robot: &Robot,
    ws: &DynamicsWorkspace,
    i: usize,
    d_prev: &Motion,
    by: By,
    qd: Option<&[f64]>,
) -> Motion {
    let prev = motion_before(robot, ws, i);
    let r = &ws.rot[i];
    let kind = robot.joints()[i].kind;
    if qd.is_none() {
        return still_motion_derivative(
            r,
            &prev.a,
            d_prev,
            by == By::Q(i) && kind == JointKind::Revolute,
        );
    }
    let p = ws.pos[i];
    let qdi = value(qd, i);
    let mut du = d_prev.a
        + d_prev.dw.cross(&p)
        + d_prev.w.cross(&ws.w_before_cross_p[i])
        + prev.w.cross(&d_prev.w.cross(&p));
    let turns = by == By::Q(i) && kind == JointKind::Revolute;
    if by == By::Q(i) && kind == JointKind::Prismatic {
        let dp = slide(robot, i);
        du += prev.dw.cross(&dp) + prev.w.cross(&prev.w.cross(&dp));
    }
    let wp = ws.w_before[i];
    let mut d = Motion {
        w: r.tr_mul(&d_prev.w),
        dw: r.tr_mul(&d_prev.dw),
        a: r.tr_mul(&du),
    };
    if turns {
        // d(R^T x)/dq = (R^T x) x z for each rotated vector.
        let u = prev.a + prev.dw.cross(&p) + prev.w.cross(&prev.w.cross(&p));
        d.w += wp.cross(&Z);
        d.dw += r.tr_mul(&prev.dw).cross(&Z);
        d.a += r.tr_mul(&u).cross(&Z);
    }
    let rate = if by == By::Qd(i) { 1.0 } else { 0.0 };
    match kind {
        JointKind::Revolute => {
            d.dw += d.w.cross(&Z) * qdi + wp.cross(&Z) * rate;
            d.w += Z * rate;
        }
        JointKind::Prismatic => d.a += (d.w.cross(&Z) * qdi + wp.cross(&Z) * rate) * 2.0,
    }
    d
}

/// [`motion_derivative`] of a still arm (no velocity, no acceleration: gravity alone), where
/// only the origin's acceleration varies: `a_i = R^T a_{i-1}`.
fn still_motion_derivative(
    r: &nalgebra::Matrix3<f64>,
    a_prev: &Vector3<f64>,
    d_prev: &Motion,
    turns: bool,
) -> Motion {
    let mut a = r.tr_mul(&d_prev.a);
    if turns {
        a += r.tr_mul(a_prev).cross(&Z);
    }
    Motion {
        a,
        ..Motion::default()
    }
}

/// Link i's wrench derivative from its motion's.
fn wrench_derivative(
    robot: &Robot,
    ws: &DynamicsWorkspace,
    i: usize,
    d: &Motion,
    still: bool,
) -> (Vector3<f64>, Vector3<f64>) {
    let l = &robot.link_parameters()[i];
    let (h, inertia) = (l.first_moment, l.inertia_origin);
    if still {
        return (d.a * l.mass, h.cross(&d.a));
    }
    let w = ws.w[i];
    let force =
        d.a * l.mass + d.dw.cross(&h) + d.w.cross(&ws.w_cross_h[i]) + w.cross(&d.w.cross(&h));
    let moment =
        inertia * d.dw + d.w.cross(&ws.inertia_w[i]) + w.cross(&(inertia * d.w)) + h.cross(&d.a);
    (force, moment)
}

/// One column of the derivative: `out[i] = d tau_i / d by` (after [`stored_pass`], with the
/// world frames updated).
fn derivative_column(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    by: By,
    qd: Option<&[f64]>,
    out: &mut [f64],
) {
    let (By::Q(k) | By::Qd(k)) = by;
    let mut d = Motion::default();
    for i in k..ws.n {
        d = motion_derivative(robot, ws, i, &d, by, qd);
        (ws.d_force[i], ws.d_moment[i]) = wrench_derivative(robot, ws, i, &d, qd.is_none());
    }
    // Inward, in the link frames, down to link k - 1 (the last that sees joint k's transform
    // change); links below add nothing, so their derivatives are the same wrench seen from
    // each joint: the spatial force in frame {0} against each joint's axis.
    let lowest = k.saturating_sub(1);
    let (mut df, mut dm) = (ws.d_force[ws.n - 1], ws.d_moment[ws.n - 1]);
    out[ws.n - 1] = joint_component(robot, ws.n - 1, &df, &dm);
    for i in (lowest..ws.n - 1).rev() {
        let (f_link, m_link) = if i >= k {
            (ws.d_force[i], ws.d_moment[i])
        } else {
            (Vector3::zeros(), Vector3::zeros())
        };
        (df, dm) = transmitted_derivative(robot, ws, i, by, (&df, &dm), (f_link, m_link));
        out[i] = joint_component(robot, i, &df, &dm);
    }
    let force = ws.world_rot[lowest] * df;
    let moment = ws.world_rot[lowest] * dm + ws.origin[lowest].cross(&force);
    let spatial = nalgebra::Vector6::new(moment.x, moment.y, moment.z, force.x, force.y, force.z);
    for (i, o) in out.iter_mut().enumerate().take(lowest) {
        *o = ws.axis[i].dot(&spatial);
    }
}

/// The derivative of the wrench transmitted to link i through its joint, from link i + 1's
/// (`(df, dm)`, in frame {i+1}) and link i's own (`link`, in frame {i}).
fn transmitted_derivative(
    robot: &Robot,
    ws: &DynamicsWorkspace,
    i: usize,
    by: By,
    (df, dm): (&Vector3<f64>, &Vector3<f64>),
    link: (Vector3<f64>, Vector3<f64>),
) -> (Vector3<f64>, Vector3<f64>) {
    let (r, p) = (&ws.rot[i + 1], &ws.pos[i + 1]);
    let (f_next, m_next) = (&ws.f_total[i + 1], &ws.m_total[i + 1]);
    let (mut drf, mut drm) = (r * df, r * dm);
    let mut dp = Vector3::zeros();
    match (by == By::Q(i + 1), robot.joints()[i + 1].kind) {
        // d(R y)/dq = R (z x y).
        (true, JointKind::Revolute) => {
            drf += r * Z.cross(f_next);
            drm += r * Z.cross(m_next);
        }
        (true, JointKind::Prismatic) => dp = slide(robot, i + 1),
        (false, _) => {}
    }
    let dm = link.1 + drm + dp.cross(&(r * f_next)) + p.cross(&drf);
    (link.0 + drf, dm)
}

/// A joint's share of a wrench in its own frame: the moment about z (revolute) or the force
/// along z (prismatic).
fn joint_component(robot: &Robot, i: usize, df: &Vector3<f64>, dm: &Vector3<f64>) -> f64 {
    match robot.joints()[i].kind {
        JointKind::Revolute => dm.z,
        JointKind::Prismatic => df.z,
    }
}

/// An n x n output (its rows and columns checked under its name).
fn check_square(name: &'static str, n: usize, m: &DMatrix<f64>) -> Result<(), DynamicsError> {
    check_length(name, n, m.nrows())?;
    Ok(check_length(name, n, m.ncols())?)
}

/// Both derivative matrices at the stored pass; `qd = None` is zero velocity.
fn fill_derivatives(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    qd: Option<&[f64]>,
    dtau_dq: &mut DMatrix<f64>,
    dtau_dqd: Option<&mut DMatrix<f64>>,
) {
    ws.update_world_frames(robot);
    let mut column = std::mem::replace(&mut ws.rhs, DVector::zeros(0));
    for k in 0..ws.n {
        derivative_column(robot, ws, By::Q(k), qd, column.as_mut_slice());
        dtau_dq.set_column(k, &column);
    }
    if let Some(dtau_dqd) = dtau_dqd {
        for k in 0..ws.n {
            derivative_column(robot, ws, By::Qd(k), qd, column.as_mut_slice());
            dtau_dqd.set_column(k, &column);
        }
    }
    ws.rhs = column;
}

/// `d tau / dq` and `d tau / dqd` of inverse dynamics ([`crate::rnea`]) at `(q, qd, qdd)`;
/// entry `(i, j)` is `d tau_i / d q_j` (`d tau / d qdd` is the mass matrix).
pub fn rnea_derivatives(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    (q, qd, qdd): (&[f64], &[f64], &[f64]),
    dtau_dq: &mut DMatrix<f64>,
    dtau_dqd: &mut DMatrix<f64>,
) -> Result<(), DynamicsError> {
    ws.set_configuration(robot, q)?;
    check_length("qd", ws.n, qd.len())?;
    check_length("qdd", ws.n, qdd.len())?;
    check_square("dtau_dq", ws.n, dtau_dq)?;
    check_square("dtau_dqd", ws.n, dtau_dqd)?;
    stored_pass(robot, ws, Some(qd), Some(qdd));
    fill_derivatives(robot, ws, Some(qd), dtau_dq, Some(dtau_dqd));
    Ok(())
}

/// `d G / dq` of the gravity torques ([`crate::gravity_torques`]) at `q`.
pub fn gravity_derivatives(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    q: &[f64],
    dg_dq: &mut DMatrix<f64>,
) -> Result<(), DynamicsError> {
    ws.set_configuration(robot, q)?;
    check_square("dg_dq", ws.n, dg_dq)?;
    stored_pass(robot, ws, None, None);
    fill_derivatives(robot, ws, None, dg_dq, None);
    Ok(())
}

/// The derivatives of forward dynamics ([`crate::forward_dynamics`]) at `(q, qd, tau)`.
pub struct ForwardDerivatives<'a> {
    /// `qdd` itself.
    pub qdd: &'a mut [f64],
    /// `d qdd / dq`.
    pub dqdd_dq: &'a mut DMatrix<f64>,
    /// `d qdd / dqd`.
    pub dqdd_dqd: &'a mut DMatrix<f64>,
    /// `d qdd / d tau = M^-1`.
    pub dqdd_dtau: &'a mut DMatrix<f64>,
}

/// Forward dynamics at `(q, qd, tau)` and its derivatives, into `out`.
pub fn forward_dynamics_derivatives(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    (q, qd, tau): (&[f64], &[f64], &[f64]),
    out: ForwardDerivatives<'_>,
) -> Result<(), DynamicsError> {
    for (name, m) in [
        ("dqdd_dq", &*out.dqdd_dq),
        ("dqdd_dqd", &*out.dqdd_dqd),
        ("dqdd_dtau", &*out.dqdd_dtau),
    ] {
        check_square(name, ws.n, m)?;
    }
    // Leaves M's Cholesky factor in `ws.mass_matrix`.
    forward_dynamics(robot, ws, q, qd, tau, out.qdd)?;
    stored_pass(robot, ws, Some(qd), Some(out.qdd));
    fill_derivatives(robot, ws, Some(qd), out.dqdd_dq, Some(out.dqdd_dqd));
    inverse_from_factor(ws, out.dqdd_dtau)?;
    // d qdd = -M^-1 d tau: through the factor's scratch (no longer needed).
    let mut scratch = std::mem::replace(&mut ws.mass_matrix, DMatrix::zeros(0, 0));
    for derivative in [out.dqdd_dq, out.dqdd_dqd] {
        scratch.copy_from(derivative);
        negated_product(out.dqdd_dtau, &scratch, derivative);
    }
    ws.mass_matrix = scratch;
    Ok(())
}

/// `out = -a b` for square matrices, without allocating (nalgebra's `gemm` packs through a
/// buffer it allocates).
fn negated_product(a: &DMatrix<f64>, b: &DMatrix<f64>, out: &mut DMatrix<f64>) {
    for (j, b_column) in b.column_iter().enumerate() {
        let mut column = out.column_mut(j);
        column.fill(0.0);
        for (k, b_kj) in b_column.iter().enumerate() {
            column.axpy(-b_kj, &a.column(k), 1.0);
        }
    }
}

/// `M^-1` from the Cholesky factor in `ws.mass_matrix`, one column at a time.
fn inverse_from_factor(
    ws: &mut DynamicsWorkspace,
    inverse: &mut DMatrix<f64>,
) -> Result<(), DynamicsError> {
    let mut column = std::mem::replace(&mut ws.rhs, DVector::zeros(0));
    let mut result = Ok(());
    for k in 0..ws.n {
        column.fill(0.0);
        column[k] = 1.0;
        result = cholesky_solve_in_place(&ws.mass_matrix, &mut column);
        if result.is_err() {
            break;
        }
        inverse.set_column(k, &column);
    }
    ws.rhs = column;
    result
}
