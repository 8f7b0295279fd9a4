//! The inertial-parameter regressor: `Y(q, qd, v, a) p = M(q) a + C(q, qd) v + G(q)`, n x 10n,
//! per link `p = [XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M]` about the MDH frame origin
//! (docs/theory.md section 2). Armature and friction are not in p.
//!
//! The two-velocity link force (`rnea_two_velocity`) is linear in p:
//! `F = [0 | S(alpha) + S(w_r) S(w) | abar] p`,
//! `N = [L(alpha) + 1/2 (S(w) L(w_r) + S(w_r) L(w) - L(w x w_r)) | -S(abar) | 0] p`,
//! where `L(x)` maps the six inertia elements to `I_O x`. Each link's 6 x 10 block is moved to
//! frame {0} once; `Y_ik = S_i^T block_k` for `i <= k`. Cost O(n) blocks plus O(n^2) dots.

use armctl_model::{check_length, Robot, PARAMS_PER_LINK};
use nalgebra::{DMatrix, Matrix3, SMatrix, Vector3};

use crate::rnea_two_velocity::outward_two_velocity;
use crate::spatial::skew;
use crate::{DynamicsError, DynamicsWorkspace};

/// `L(x)` with `L(x) [XX XY XZ YY YZ ZZ]^T = I x`.
fn inertia_map(x: &Vector3<f64>) -> SMatrix<f64, 3, 6> {
    SMatrix::<f64, 3, 6>::new(
        x.x, x.y, x.z, 0.0, 0.0, 0.0, //
        0.0, x.x, 0.0, x.y, x.z, 0.0, //
        0.0, 0.0, x.x, 0.0, x.y, x.z,
    )
}

/// Writes `Y(q, qd, v, a)` (n x 10n) into `out`.
pub fn regressor(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    q: &[f64],
    qd: &[f64],
    v: &[f64],
    a: &[f64],
    out: &mut DMatrix<f64>,
) -> Result<(), DynamicsError> {
    ws.set_configuration(robot, q)?;
    let n = ws.n;
    for (what, len) in [("qd", qd.len()), ("v", v.len()), ("a", a.len())] {
        check_length(what, n, len)?;
    }
    check_length("Y rows", n, out.nrows())?;
    check_length("Y columns", PARAMS_PER_LINK * n, out.ncols())?;
    outward_two_velocity(robot, ws, (qd, v, Some(a)), -robot.gravity_in_frame0());
    ws.update_world_frames(robot);
    for k in 0..n {
        ws.link_regressor[k] = link_block(ws, k);
    }
    let y = out.as_mut_slice();
    for k in 0..n {
        let block = &ws.link_regressor[k];
        // The inertia columns have no force part: their dot needs only the angular half of S.
        for c in 0..PARAMS_PER_LINK {
            let column = block.column(c);
            let base = (PARAMS_PER_LINK * k + c) * n;
            // Links before k do not move link k's parameters: rows below k are zero.
            y[base + k + 1..base + n].fill(0.0);
            if c < 6 {
                let moment = Vector3::new(column[0], column[1], column[2]);
                for (i, s) in ws.axis[..=k].iter().enumerate() {
                    y[base + i] = s[0] * moment.x + s[1] * moment.y + s[2] * moment.z;
                }
            } else {
                for (i, s) in ws.axis[..=k].iter().enumerate() {
                    y[base + i] = s.dot(&column);
                }
            }
        }
    }
    Ok(())
}

/// Link k's 6 x 10 block `[moment; force]`, moved to frame {0} about its origin.
pub(crate) fn link_block(ws: &DynamicsWorkspace, k: usize) -> SMatrix<f64, 6, 10> {
    let (w, wr, alpha, abar) = (ws.w[k], ws.wr[k], ws.dw[k], ws.acc[k]);
    let sw = skew(&w);
    let swr = skew(&wr);
    let inertia_part = inertia_map(&alpha)
        + (sw * inertia_map(&wr) + swr * inertia_map(&w) - inertia_map(&w.cross(&wr))) * 0.5;
    let moment_h = -skew(&abar);
    let force_h = skew(&alpha) + swr * sw;
    let r = &ws.world_rot[k];
    let so = skew(&ws.origin[k]);
    // Force columns in frame {0}: R F. Moment about the frame-{0} origin: R N + o x R F.
    let force_h_w: Matrix3<f64> = r * force_h;
    let force_m_w = r * abar;
    let mut block = SMatrix::<f64, 6, 10>::zeros();
    block
        .fixed_view_mut::<3, 6>(0, 0)
        .copy_from(&(r * inertia_part));
    block
        .fixed_view_mut::<3, 3>(0, 6)
        .copy_from(&(r * moment_h + so * force_h_w));
    block
        .fixed_view_mut::<3, 1>(0, 9)
        .copy_from(&(so * force_m_w));
    block.fixed_view_mut::<3, 3>(3, 6).copy_from(&force_h_w);
    block.fixed_view_mut::<3, 1>(3, 9).copy_from(&force_m_w);
    block
}
