//! Spatial (6-D) vector helpers in Featherstone's convention: motion `[w; v_O]`, force
//! `[n_O; f]`, both about the origin of frame {0}. A spatial inertia is kept as its blocks
//! `(I_O, h, m)`: `[[I_O, S(h)], [S(h)^T, m 1]]`.

use armctl_model::LinkParameters;
use nalgebra::{Matrix3, Vector3, Vector6};

/// `S(v)` with `S(v) w = v x w`.
#[inline]
pub(crate) fn skew(v: &Vector3<f64>) -> Matrix3<f64> {
    Matrix3::new(0.0, -v.z, v.y, v.z, 0.0, -v.x, -v.y, v.x, 0.0)
}

#[inline]
pub(crate) fn top(v: &Vector6<f64>) -> Vector3<f64> {
    Vector3::new(v[0], v[1], v[2])
}

#[inline]
pub(crate) fn bottom(v: &Vector6<f64>) -> Vector3<f64> {
    Vector3::new(v[3], v[4], v[5])
}

#[inline]
pub(crate) fn join(a: &Vector3<f64>, b: &Vector3<f64>) -> Vector6<f64> {
    Vector6::new(a.x, a.y, a.z, b.x, b.y, b.z)
}

/// `r m r^T` for a symmetric m, computing one triangle.
#[inline]
fn rotate_symmetric(r: &Matrix3<f64>, m: &Matrix3<f64>) -> Matrix3<f64> {
    let a = r * m;
    let mut out = Matrix3::zeros();
    for i in 0..3 {
        for j in i..3 {
            let v = a[(i, 0)] * r[(j, 0)] + a[(i, 1)] * r[(j, 1)] + a[(i, 2)] * r[(j, 2)];
            out[(i, j)] = v;
            out[(j, i)] = v;
        }
    }
    out
}

/// A link's spatial inertia in frame {0} about its origin, from its parameters (inertia about
/// the link frame origin, first moment, mass) and the link frame's rotation `r` and origin `o`:
/// `(I_0, h = m c, m)`. Linear in the parameters, so it holds for any parameter vector:
/// `I_0 = R I_i R^T - m S(o)^2 - S(o) S(h') - S(h') S(o)` with `h' = R h_i`. Since
/// `S(a) S(b) = b a^T - (a . b) I`, the last three terms are `2 (o . c) I - o c^T - c o^T`
/// with `c = h' + m o / 2`: six entries, not three 3x3 products of skew matrices.
// Always inlined: with four callers the compiler stopped inlining it, and the native
// build's mass matrix took 15 % longer (320 -> 380 ns on the Panda).
#[inline(always)]
pub(crate) fn world_inertia(
    link: &LinkParameters,
    r: &Matrix3<f64>,
    o: &Vector3<f64>,
) -> (Matrix3<f64>, Vector3<f64>, f64) {
    let m = link.mass;
    let h_rotated = r * link.first_moment;
    let c = h_rotated + o * (0.5 * m);
    let mut inertia = rotate_symmetric(r, &link.inertia_origin);
    let trace_part = 2.0 * o.dot(&c);
    for i in 0..3 {
        for j in i..3 {
            let shift = if i == j { trace_part } else { 0.0 } - o[i] * c[j] - c[i] * o[j];
            inertia[(i, j)] += shift;
            if i != j {
                inertia[(j, i)] += shift;
            }
        }
    }
    (inertia, h_rotated + o * m, m)
}

/// Spatial inertia times a motion vector: `[I_O w + h x v; m v - h x w]`.
#[inline]
pub(crate) fn inertia_times(
    inertia: &Matrix3<f64>,
    h: &Vector3<f64>,
    m: f64,
    u: &Vector6<f64>,
) -> Vector6<f64> {
    let (w, v) = (top(u), bottom(u));
    join(&(inertia * w + h.cross(&v)), &(v * m - h.cross(&w)))
}

/// Motion cross product `v x u`: `[w x w_u; w x v_u + v x w_u]`.
#[inline]
pub(crate) fn cross_motion(v: &Vector6<f64>, u: &Vector6<f64>) -> Vector6<f64> {
    let (w, vo, wu, vu) = (top(v), bottom(v), top(u), bottom(u));
    join(&w.cross(&wu), &(w.cross(&vu) + vo.cross(&wu)))
}

/// Force cross product `v x* f`: `[w x n + v x f; w x f]`.
#[inline]
pub(crate) fn cross_force(v: &Vector6<f64>, f: &Vector6<f64>) -> Vector6<f64> {
    let (w, vo, n, fl) = (top(v), bottom(v), top(f), bottom(f));
    join(&(w.cross(&n) + vo.cross(&fl)), &w.cross(&fl))
}

/// The time derivative of a link's spatial inertia `(I_O, h, m)` moving with velocity
/// `vel = [w; v_O]`, as its blocks `(Idot_O, hdot)` (the mass does not change):
/// `Idot_O = S(w) I_O - I_O S(w) - S(v) S(h) - S(h) S(v)`, `hdot = w x h + m v`.
#[inline]
pub(crate) fn inertia_rate(
    inertia: &Matrix3<f64>,
    h: &Vector3<f64>,
    m: f64,
    vel: &Vector6<f64>,
) -> (Matrix3<f64>, Vector3<f64>) {
    let (w, v) = (top(vel), bottom(vel));
    // S(w) I - I S(w) = A + A^T with A = S(w) I; S(v)S(h) + S(h)S(v) = h v^T + v h^T - 2 (v.h) 1.
    let a = skew(&w) * inertia;
    let mut rate = a + a.transpose() - (h * v.transpose() + v * h.transpose());
    let vh = 2.0 * v.dot(h);
    for k in 0..3 {
        rate[(k, k)] += vh;
    }
    (rate, w.cross(h) + v * m)
}
