//! Products with the regressor `Y(q, qd, v, a)` (see `regressor`) without forming it, for the
//! adaptive laws, which need `Y p_hat`, `Y^T x` and the weighted column norms each step:
//!
//! - `Y p` is the two-velocity Newton-Euler recursion with the link parameters taken from p
//!   (the force and moment are linear in them): O(n).
//! - `Y^T x` and `sum_i w_i Y_ic^2` come from each link's 6 x 10 block in frame {0}
//!   (`Y_ic = S_i^T block_c`), consumed as it is made instead of written to an n x 10n matrix.
//!
//! Without gravity, `Y(q, 0, 0, a) p` is `M_p(q) a`, the mass matrix of the parameters p
//! times a (armature, which is not in p, aside).

use armctl_model::{check_length, JointKind, Robot, PARAMS_PER_LINK};
use nalgebra::{Matrix3, Vector3, Vector6};

use crate::regressor::link_block;
use crate::rnea_two_velocity::{
    link_wrench, link_wrench_at_rest, outward_at_rest, outward_two_velocity, transmitted_wrenches,
};
use crate::{DynamicsError, DynamicsWorkspace};

/// Whether the regressor includes gravity (`G` in `M a + C v + G`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gravity {
    /// `Y p = M a + C v + G`.
    Included,
    /// `Y p = M a + C v`.
    Excluded,
}

/// The point `(q, qd, v, a)` a regressor is evaluated at.
pub type RegressorPoint<'a> = (&'a [f64], &'a [f64], &'a [f64], &'a [f64]);

/// `Y^T x` and the weighted squared column norms `sum_i w_i Y_ic^2`, each 10n long.
#[derive(Debug)]
pub struct TransposeProducts<'a> {
    /// `Y^T x`.
    pub transpose_times: &'a mut [f64],
    /// `sum_i w_i Y_ic^2`.
    pub weighted_squares: &'a mut [f64],
}

/// The velocities and acceleration `(qd, v, a)` of a regressor point, without q.
pub type RegressorMotion<'a> = (&'a [f64], &'a [f64], &'a [f64]);

/// After the configuration is set: checks the lengths and runs the outward pass; true when
/// the arm is at rest (`qd = v = 0`, the cheaper pass).
pub(crate) fn outward_for(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    (qd, v, a): RegressorMotion<'_>,
    gravity: Gravity,
) -> Result<bool, DynamicsError> {
    for (what, len) in [("qd", qd.len()), ("v", v.len()), ("a", a.len())] {
        check_length(what, ws.n, len)?;
    }
    let base = match gravity {
        Gravity::Included => -robot.gravity_in_frame0(),
        Gravity::Excluded => Vector3::zeros(),
    };
    let at_rest = qd.iter().chain(v).all(|&x| x == 0.0);
    if at_rest {
        outward_at_rest(robot, ws, a, base);
    } else {
        outward_two_velocity(robot, ws, (qd, v, Some(a)), base);
    }
    Ok(at_rest)
}

/// `Y(q, qd, v, a) p` into `out` (p: 10 per link, see `regressor`).
pub fn regressor_times(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    (q, qd, v, a): RegressorPoint<'_>,
    gravity: Gravity,
    p: &[f64],
    out: &mut [f64],
) -> Result<(), DynamicsError> {
    ws.set_configuration(robot, q)?;
    let at_rest = outward_for(robot, ws, (qd, v, a), gravity)?;
    times_after_outward(robot, ws, at_rest, (p, out))
}

/// `Y p` after [`outward_for`] (`at_rest`: what it returned).
pub(crate) fn times_after_outward(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    at_rest: bool,
    (p, out): (&[f64], &mut [f64]),
) -> Result<(), DynamicsError> {
    check_length("out", ws.n, out.len())?;
    link_wrenches(ws, at_rest, p, false)?;
    joint_torques(robot, ws, out);
    Ok(())
}

/// Each link's force and moment for the parameters p after [`outward_for`], into
/// `ws.force`/`ws.moment`, or added to them (`add`).
pub(crate) fn link_wrenches(
    ws: &mut DynamicsWorkspace,
    at_rest: bool,
    p: &[f64],
    add: bool,
) -> Result<(), DynamicsError> {
    check_length("p", PARAMS_PER_LINK * ws.n, p.len())?;
    for (i, link) in p.chunks_exact(PARAMS_PER_LINK).enumerate() {
        let inertia = Matrix3::new(
            link[0], link[1], link[2], //
            link[1], link[3], link[4], //
            link[2], link[4], link[5],
        );
        let first_moment = Vector3::new(link[6], link[7], link[8]);
        let parameters = (link[9], &first_moment, &inertia);
        let (force, moment) = if at_rest {
            link_wrench_at_rest(ws, i, parameters)
        } else {
            link_wrench(ws, i, parameters)
        };
        if add {
            ws.force[i] += force;
            ws.moment[i] += moment;
        } else {
            (ws.force[i], ws.moment[i]) = (force, moment);
        }
    }
    Ok(())
}

/// The joint torques of the link wrenches in `ws.force`/`ws.moment` (the inward pass).
pub(crate) fn joint_torques(robot: &Robot, ws: &DynamicsWorkspace, out: &mut [f64]) {
    transmitted_wrenches(ws, |i, f, m| {
        out[i] = match robot.joints()[i].kind {
            JointKind::Revolute => m.z,
            JointKind::Prismatic => f.z,
        };
    });
}

/// `Y(q, qd, v, a)^T x` and `sum_i w_i Y_ic^2` per column c into `out`.
pub fn regressor_transpose_products(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    (q, qd, v, a): RegressorPoint<'_>,
    gravity: Gravity,
    (x, w): (&[f64], &[f64]),
    out: TransposeProducts<'_>,
) -> Result<(), DynamicsError> {
    ws.set_configuration(robot, q)?;
    outward_for(robot, ws, (qd, v, a), gravity)?;
    ws.update_world_frames(robot);
    transpose_after_outward(ws, (x, w), out)
}

/// `Y^T x` and the column norms after [`outward_for`] and `update_world_frames`.
pub(crate) fn transpose_after_outward(
    ws: &DynamicsWorkspace,
    (x, w): (&[f64], &[f64]),
    out: TransposeProducts<'_>,
) -> Result<(), DynamicsError> {
    let n = ws.n;
    check_length("x", n, x.len())?;
    check_length("w", n, w.len())?;
    check_length("Y^T x", PARAMS_PER_LINK * n, out.transpose_times.len())?;
    check_length("squares", PARAMS_PER_LINK * n, out.weighted_squares.len())?;
    // `Y^T x` for link k is `block_k^T mu_k` with `mu_k = sum_{i <= k} x_i S_i`.
    let mut mu = Vector6::zeros();
    let columns = out
        .transpose_times
        .chunks_exact_mut(PARAMS_PER_LINK)
        .zip(out.weighted_squares.chunks_exact_mut(PARAMS_PER_LINK));
    for (k, (product, squares)) in columns.enumerate() {
        let block = link_block(ws, k);
        let b = block.as_slice();
        mu += ws.axis[k] * x[k];
        let mut sums = [0.0; PARAMS_PER_LINK];
        // Links before k do not move link k's parameters: only joints 0..=k see them.
        for (s, &weight) in ws.axis[..=k].iter().zip(w) {
            for (c, sum) in sums.iter_mut().enumerate() {
                let y = column_dot(c, s.as_slice(), b);
                *sum += weight * y * y;
            }
        }
        for (c, (p, square)) in product.iter_mut().zip(squares).enumerate() {
            *p = column_dot(c, mu.as_slice(), b);
            *square = sums[c];
        }
    }
    Ok(())
}

/// `v . column c` of a 6 x 10 block (column-major); the inertia columns (c < 6) have no force
/// part.
#[inline(always)]
fn column_dot(c: usize, v: &[f64], block: &[f64]) -> f64 {
    let column = &block[6 * c..6 * c + 6];
    let moment = v[0] * column[0] + v[1] * column[1] + v[2] * column[2];
    if c < 6 {
        moment
    } else {
        moment + v[3] * column[3] + v[4] * column[4] + v[5] * column[5]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panda() -> Robot {
        armctl_model::test_support::bundled_robot("panda.urdf")
    }

    #[test]
    fn lengths_are_checked() {
        let robot = panda();
        let mut ws = DynamicsWorkspace::new(&robot);
        let s = [0.0; 7];
        let point = (&s[..], &s[..], &s[..], &s[..]);
        let mut out = [0.0; 7];
        let err = regressor_times(
            &robot,
            &mut ws,
            point,
            Gravity::Included,
            &[0.0; 60],
            &mut out,
        );
        assert!(err.unwrap_err().to_string().contains('p'));
    }
}
