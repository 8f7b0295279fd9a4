//! Spatial (6-D) vector helpers in Featherstone's convention: motion `[w; v_O]`, force
//! `[n_O; f]`, both about the origin of the frame they are written in.

use armctl_model::LinkParameters;
use nalgebra::{Matrix3, Matrix6, Vector3, Vector6};

/// `S(v)` with `S(v) w = v x w`.
#[inline]
pub(crate) fn skew(v: &Vector3<f64>) -> Matrix3<f64> {
    Matrix3::new(0.0, -v.z, v.y, v.z, 0.0, -v.x, -v.y, v.x, 0.0)
}

/// Link parameters moved to frame {0}: rotation `r` and origin `o` of the link frame.
/// Returns (inertia about the frame-{0} origin, first moment, mass).
#[inline]
pub(crate) fn to_world(
    p: &LinkParameters,
    r: &Matrix3<f64>,
    o: &Vector3<f64>,
) -> (Matrix3<f64>, Vector3<f64>, f64) {
    let m = p.mass;
    let h_rot = r * p.first_moment;
    // Parallel axis with a first moment: I_A = I_B - m S(o)^2 - S(o) S(h) - S(h) S(o).
    let so = skew(o);
    let sh = skew(&h_rot);
    let inertia = r * p.inertia_origin * r.transpose() - so * (so * m + sh) - sh * so;
    (inertia, h_rot + o * m, m)
}

/// The 6x6 spatial inertia `[[I, S(h)], [S(h)^T, m 1]]`.
#[inline]
pub(crate) fn spatial_inertia(inertia: &Matrix3<f64>, h: &Vector3<f64>, m: f64) -> Matrix6<f64> {
    let sh = skew(h);
    let mut out = Matrix6::zeros();
    out.fixed_view_mut::<3, 3>(0, 0).copy_from(inertia);
    out.fixed_view_mut::<3, 3>(0, 3).copy_from(&sh);
    out.fixed_view_mut::<3, 3>(3, 0).copy_from(&sh.transpose());
    out.fixed_view_mut::<3, 3>(3, 3)
        .copy_from(&(Matrix3::identity() * m));
    out
}

/// `v x` for a motion vector: `[[S(w), 0], [S(v), S(w)]]`.
#[inline]
pub(crate) fn motion_cross(v: &Vector6<f64>) -> Matrix6<f64> {
    let sw = skew(&v.fixed_rows::<3>(0).into_owned());
    let sv = skew(&v.fixed_rows::<3>(3).into_owned());
    let mut out = Matrix6::zeros();
    out.fixed_view_mut::<3, 3>(0, 0).copy_from(&sw);
    out.fixed_view_mut::<3, 3>(3, 0).copy_from(&sv);
    out.fixed_view_mut::<3, 3>(3, 3).copy_from(&sw);
    out
}

/// `f x-bar*`, defined by `(f x-bar*) v = v x* f`: `[[-S(n), -S(f)], [-S(f), 0]]`.
#[inline]
pub(crate) fn force_cross_bar(f: &Vector6<f64>) -> Matrix6<f64> {
    let sn = skew(&f.fixed_rows::<3>(0).into_owned());
    let sf = skew(&f.fixed_rows::<3>(3).into_owned());
    let mut out = Matrix6::zeros();
    out.fixed_view_mut::<3, 3>(0, 0).copy_from(&(-sn));
    out.fixed_view_mut::<3, 3>(0, 3).copy_from(&(-sf));
    out.fixed_view_mut::<3, 3>(3, 0).copy_from(&(-sf));
    out
}
