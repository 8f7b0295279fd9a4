//! Recursive Newton-Euler inverse dynamics in MDH frames (docs/theory.md section 3):
//! `tau = M(q) qdd + C(q, qd) qd + G(q)` (+ armature `qdd`), with an optional wrench on the
//! tool. Gravity enters as the base acceleration `a_0 = -g`.
//!
//! Outward, with `R = R_{i-1,i}`, `p = p_i`, link parameters `(I_O, h = m c, m)` about O_i:
//! `w_i = R^T w_{i-1} + (1 - sigma) qd z`,
//! `dw_i = R^T dw_{i-1} + (1 - sigma)(R^T w_{i-1} x qd z + qdd z)`,
//! `a_i = R^T (a_{i-1} + dw_{i-1} x p + w_{i-1} x (w_{i-1} x p)) + sigma (2 w_i x qd z + qdd z)`,
//! `F_i = m a_i + dw_i x h + w_i x (w_i x h)`, `N_i = I_O dw_i + w_i x I_O w_i + h x a_i`.
//! Inward: `f_i = F_i + R_{i,i+1} f_{i+1}`, `n_i = N_i + R_{i,i+1} n_{i+1} + p_{i+1} x R_{i,i+1} f_{i+1}`,
//! `tau_i = z . ((1 - sigma) n_i + sigma f_i)`. Cost O(n). Reference: Khalil and Dombre,
//! Modeling, Identification and Control of Robots, chapter 9.

use armctl_model::{check_length, JointKind, Robot};
use nalgebra::Vector3;

use crate::{DynamicsError, DynamicsWorkspace};

/// A wrench applied **to** the robot at the tip (tool frame origin), in base link axes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Wrench {
    /// Force, N.
    pub force: Vector3<f64>,
    /// Moment about the tip, N m.
    pub torque: Vector3<f64>,
}

const Z: Vector3<f64> = Vector3::new(0.0, 0.0, 1.0);

/// `tau = M(q) qdd + C(q, qd) qd + G(q)` plus armature times qdd.
pub fn rnea(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    q: &[f64],
    qd: &[f64],
    qdd: &[f64],
    tau: &mut [f64],
) -> Result<(), DynamicsError> {
    ws.set_configuration(robot, q)?;
    check_lengths(ws.n, qd, Some(qdd), tau)?;
    newton_euler(robot, ws, qd, Some(qdd), None, tau);
    Ok(())
}

/// [`rnea`] while the environment applies `wrench` to the tip: the torques that produce the
/// motion against it (statically `G - J^T wrench`).
pub fn rnea_with_wrench(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    q: &[f64],
    qd: &[f64],
    qdd: &[f64],
    wrench: &Wrench,
    tau: &mut [f64],
) -> Result<(), DynamicsError> {
    ws.set_configuration(robot, q)?;
    check_lengths(ws.n, qd, Some(qdd), tau)?;
    let tip = tip_reaction(robot, ws, wrench);
    newton_euler(robot, ws, qd, Some(qdd), Some(tip), tau);
    Ok(())
}

/// Nonlinear effects `C(q, qd) qd + G(q)` (RNEA with zero acceleration).
pub fn nonlinear_effects(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    q: &[f64],
    qd: &[f64],
    out: &mut [f64],
) -> Result<(), DynamicsError> {
    ws.set_configuration(robot, q)?;
    check_lengths(ws.n, qd, None, out)?;
    newton_euler(robot, ws, qd, None, None, out);
    Ok(())
}

fn check_lengths(
    n: usize,
    qd: &[f64],
    qdd: Option<&[f64]>,
    tau: &[f64],
) -> Result<(), DynamicsError> {
    check_length("qd", n, qd.len())?;
    if let Some(qdd) = qdd {
        check_length("qdd", n, qdd.len())?;
    }
    Ok(check_length("tau", n, tau.len())?)
}

/// Force and moment the tip exerts on the environment, in frame {n} about O_n.
fn tip_reaction(
    robot: &Robot,
    ws: &DynamicsWorkspace,
    wrench: &Wrench,
) -> (Vector3<f64>, Vector3<f64>) {
    let r_base_n = ws
        .rot
        .iter()
        .fold(*robot.base().rotation.matrix(), |r, ri| r * ri);
    let to_n = r_base_n.transpose();
    let force = -(to_n * wrench.force);
    let torque = -(to_n * wrench.torque);
    let p_tip = robot.tool().translation.vector;
    (force, torque + p_tip.cross(&force))
}

/// The recursion, gravity included; sizes already checked, `ws.rot`/`ws.pos` set.
/// `qdd = None` means zero.
pub(crate) fn newton_euler(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    qd: &[f64],
    qdd: Option<&[f64]>,
    tip: Option<(Vector3<f64>, Vector3<f64>)>,
    tau: &mut [f64],
) {
    let n = ws.n;
    let mut w = Vector3::zeros();
    let mut dw = Vector3::zeros();
    let mut a = -robot.gravity_in_frame0();
    let params = robot.link_parameters();
    for i in 0..n {
        let rt = ws.rot[i].transpose();
        let p = ws.pos[i];
        let acc = qdd.map_or(0.0, |v| v[i]);
        let mut a_i = rt * (a + dw.cross(&p) + w.cross(&w.cross(&p)));
        let w_prev = rt * w;
        let (w_i, dw_i) = match robot.joints()[i].kind {
            JointKind::Revolute => {
                let zq = Z * qd[i];
                (w_prev + zq, rt * dw + w_prev.cross(&zq) + Z * acc)
            }
            JointKind::Prismatic => {
                a_i += 2.0 * w_prev.cross(&(Z * qd[i])) + Z * acc;
                (w_prev, rt * dw)
            }
        };
        let l = &params[i];
        let h = l.first_moment;
        ws.force[i] = a_i * l.mass + dw_i.cross(&h) + w_i.cross(&w_i.cross(&h));
        ws.moment[i] =
            l.inertia_origin * dw_i + w_i.cross(&(l.inertia_origin * w_i)) + h.cross(&a_i);
        w = w_i;
        dw = dw_i;
        a = a_i;
    }
    let (mut f, mut m) = tip.unwrap_or_default();
    let mut p_next = Vector3::zeros();
    let mut r_next = nalgebra::Matrix3::identity();
    for i in (0..n).rev() {
        let rf = r_next * f;
        m = ws.moment[i] + r_next * m + p_next.cross(&rf);
        f = ws.force[i] + rf;
        let joint = &robot.joints()[i];
        tau[i] = match joint.kind {
            JointKind::Revolute => m.z,
            JointKind::Prismatic => f.z,
        } + joint.armature * qdd.map_or(0.0, |v| v[i]);
        r_next = ws.rot[i];
        p_next = ws.pos[i];
    }
}
