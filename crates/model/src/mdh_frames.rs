//! Placing Craig's modified D-H frames on the axes of a chain (docs/theory.md section 1).
//!
//! Frame {i} has z on axis i and x on a common normal from axis i to axis i+1. Rules, in order:
//! 1. A URDF link frame that already is a valid MDH frame for its joint is kept, so a URDF
//!    written from a D-H table converts back to that table. The base link frame is kept as
//!    frame {0} when its x axis is a common normal to axis 1.
//! 2. Otherwise: skew axes - the unique common normal, x towards axis i+1 (`a >= 0`);
//!    intersecting axes - origin at the intersection, `x = z_i x z_{i+1}`; parallel and
//!    anti-parallel axes - the normal slides so that `d_i = 0`, `alpha` is 0 or pi;
//!    collinear axes - `a = 0`, `d_i = 0`, `x_i = x_{i-1}`; frame {0} coincides with
//!    frame {1} at q_1 = 0 (the rest goes into the base transform); frame {n} has
//!    `d_n = 0` and `x_n = x_{n-1}` at q_n = 0 (the rest goes into the tool transform).
//!
//! Axes count as parallel when the sine of their angle is below the tolerance, and as
//! intersecting or collinear when their distance is below it (metres).

use nalgebra::{IsometryMatrix3, Matrix3, Rotation3, Translation3, Unit, Vector3};

use crate::chain::ChainJoint;

/// How axis i relates to axis i+1, which fixes what of frame {i} (origin, x line) the
/// geometry determines. Each chain position has exactly one case: the last joint is [`Last`],
/// every other joint the one case of [`Neighbour::between`] its axis and the next.
///
/// [`Last`]: Neighbour::Last
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Neighbour {
    /// Unique common normal from `foot` (on axis i) along `normal`.
    Skew {
        foot: Vector3<f64>,
        normal: Unit<Vector3<f64>>,
    },
    /// Axes meet at `point`; `normal = z_i x z_{i+1}`.
    Intersecting {
        point: Vector3<f64>,
        normal: Unit<Vector3<f64>>,
    },
    /// Parallel or anti-parallel, `toward` points from axis i to axis i+1.
    Parallel { toward: Unit<Vector3<f64>> },
    /// Axis i+1 lies on axis i's line (same or opposite direction): neither the origin nor
    /// the x line of frame {i} is fixed by the pair.
    Collinear,
    /// Axis i is the last one (frame {n}): there is no axis i+1. Constrains frame {n} as
    /// little as `Collinear` does; the rules of frame {n} (`d_n = 0`, `x_n = x_{n-1}`) apply.
    Last,
}

impl Neighbour {
    /// Relation of axis `a` to axis `b`.
    pub(crate) fn between(a: &ChainJoint, b: &ChainJoint, tolerance: f64) -> Self {
        let (u, v) = (a.axis.into_inner(), b.axis.into_inner());
        let w = b.point - a.point;
        let cross = u.cross(&v);
        let sine = cross.norm();
        if sine < tolerance {
            let perpendicular = w - u * u.dot(&w);
            return match Unit::try_new(perpendicular, tolerance) {
                Some(toward) => Neighbour::Parallel { toward },
                None => Neighbour::Collinear,
            };
        }
        let normal = Unit::new_normalize(cross);
        // Closest points: a.point + s u and b.point + t v.
        let (uv, uw, vw) = (u.dot(&v), u.dot(&w), v.dot(&w));
        let s = (uw - uv * vw) / (1.0 - uv * uv);
        let t = (uv * uw - vw) / (1.0 - uv * uv);
        let foot = a.point + u * s;
        let gap = (b.point + v * t) - foot;
        if gap.norm() < tolerance {
            Neighbour::Intersecting {
                point: foot + gap * 0.5,
                normal,
            }
        } else {
            let normal = if gap.dot(&normal) < 0.0 {
                -normal
            } else {
                normal
            };
            Neighbour::Skew { foot, normal }
        }
    }

    /// The fixed origin and the x line of frame {i}, if the relation fixes them.
    fn constraints(&self) -> (Option<Vector3<f64>>, Option<Unit<Vector3<f64>>>) {
        match *self {
            Neighbour::Skew { foot, normal } => (Some(foot), Some(normal)),
            Neighbour::Intersecting { point, normal } => (Some(point), Some(normal)),
            Neighbour::Parallel { toward } => (None, Some(toward)),
            Neighbour::Collinear | Neighbour::Last => (None, None),
        }
    }
}

/// A frame from its origin, x and z axes (x is made exactly orthogonal to z).
fn frame(origin: Vector3<f64>, x: &Vector3<f64>, z: &Unit<Vector3<f64>>) -> IsometryMatrix3<f64> {
    let x = Unit::new_normalize(x - z.into_inner() * z.dot(x));
    let y = z.cross(&x);
    let r = Matrix3::from_columns(&[x.into_inner(), y, z.into_inner()]);
    IsometryMatrix3::from_parts(
        Translation3::from(origin),
        Rotation3::from_matrix_unchecked(r),
    )
}

/// A unit vector orthogonal to `z`, as close as possible to `hint`.
fn orthogonal_to(z: &Unit<Vector3<f64>>, hint: &Vector3<f64>) -> Vector3<f64> {
    let projected = hint - z.into_inner() * z.dot(hint);
    if projected.norm() > 1e-6 {
        projected.normalize()
    } else {
        // Any orthogonal vector: cross with the least aligned basis axis.
        let basis = if z.x.abs() < 0.9 {
            Vector3::x()
        } else {
            Vector3::y()
        };
        z.cross(&basis).normalize()
    }
}

/// Frame {i} for `joint`, given its relation to the next axis and frame {i-1} when known.
/// Returns the frame and whether the URDF frame was kept.
pub(crate) fn place_frame(
    joint: &ChainJoint,
    next: &Neighbour,
    previous: Option<&IsometryMatrix3<f64>>,
    tolerance: f64,
) -> (IsometryMatrix3<f64>, bool) {
    let z = joint.axis;
    let (fixed_origin, x_line) = next.constraints();
    if urdf_frame_is_valid(joint, fixed_origin, x_line, tolerance) {
        return (joint.urdf_frame, true);
    }
    let origin = fixed_origin.unwrap_or_else(|| match previous {
        // Where the x_{i-1} line meets this axis: d_i = 0.
        Some(p) => joint.point + z.into_inner() * z.dot(&(p.translation.vector - joint.point)),
        None => joint.point,
    });
    let x = match (x_line, previous) {
        (Some(line), _) => line.into_inner(),
        (None, Some(p)) => orthogonal_to(&z, &(p.rotation * Vector3::x())),
        (None, None) => orthogonal_to(&z, &(joint.urdf_frame.rotation * Vector3::x())),
    };
    (frame(origin, &x, &z), false)
}

fn urdf_frame_is_valid(
    joint: &ChainJoint,
    fixed_origin: Option<Vector3<f64>>,
    x_line: Option<Unit<Vector3<f64>>>,
    tolerance: f64,
) -> bool {
    let f = &joint.urdf_frame;
    let fz = f.rotation * Vector3::z();
    let fx = f.rotation * Vector3::x();
    let z_ok = (fz - joint.axis.into_inner()).norm() < tolerance;
    let origin_ok = fixed_origin.is_none_or(|o| (f.translation.vector - o).norm() < tolerance);
    let x_ok = x_line.is_none_or(|n| {
        (fx - n.into_inner()).norm() < tolerance || (fx + n.into_inner()).norm() < tolerance
    });
    z_ok && origin_ok && x_ok
}

/// Whether the base link frame (identity) can be frame {0}: its x axis must be orthogonal to
/// axis 1 and meet it.
pub(crate) fn base_frame_is_valid(first: &ChainJoint, tolerance: f64) -> bool {
    let u = first.axis.into_inner();
    let x = Vector3::x();
    if x.dot(&u).abs() >= tolerance {
        return false;
    }
    let normal = x.cross(&u).normalize();
    normal.dot(&first.point).abs() < tolerance
}

/// The MDH parameters `(a, alpha, d, theta)` of `t = T_{i-1,i}` at q = 0. Exact when `t` is
/// of the MDH form; otherwise the projection onto it.
pub(crate) fn mdh_parameters(t: &IsometryMatrix3<f64>) -> [f64; 4] {
    let r = t.rotation.matrix();
    let p = t.translation.vector;
    let alpha = (-r[(1, 2)]).atan2(r[(2, 2)]);
    let theta = (-r[(0, 1)]).atan2(r[(0, 0)]);
    let (sa, ca) = alpha.sin_cos();
    let d = -p.y * sa + p.z * ca;
    [clean(p.x), clean_angle(alpha), clean(d), clean_angle(theta)]
}

/// Rounding noise below this is written as an exact zero, so tables read as they were meant.
const ROUNDING: f64 = 1e-12;

fn clean(v: f64) -> f64 {
    if v.abs() < ROUNDING {
        0.0
    } else {
        v
    }
}

/// An angle in (-pi, pi], with rounding noise removed.
fn clean_angle(v: f64) -> f64 {
    if (v + std::f64::consts::PI).abs() < ROUNDING {
        std::f64::consts::PI
    } else {
        clean(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Friction, JointKind, JointLimits};

    fn joint(point: [f64; 3], axis: [f64; 3]) -> ChainJoint {
        ChainJoint {
            name: "j".into(),
            kind: JointKind::Revolute,
            point: Vector3::from(point),
            axis: Unit::new_normalize(Vector3::from(axis)),
            urdf_frame: IsometryMatrix3::identity(),
            limits: JointLimits {
                lower: -1.0,
                upper: 1.0,
                velocity: 1.0,
                effort: 1.0,
            },
            friction: Friction::default(),
        }
    }

    #[test]
    fn each_pair_of_axes_has_one_case() {
        let tol = 1e-9;
        let z = joint([0.0, 0.0, 0.0], [0.0, 0.0, 1.0]);
        let on_line = joint([0.0, 0.0, 0.7], [0.0, 0.0, -2.0]);
        assert_eq!(Neighbour::between(&z, &on_line, tol), Neighbour::Collinear);
        let beside = joint([0.3, 0.0, 0.7], [0.0, 0.0, 1.0]);
        assert!(matches!(
            Neighbour::between(&z, &beside, tol),
            Neighbour::Parallel { toward } if (toward.into_inner() - Vector3::x()).norm() < 1e-12
        ));
        let crossing = joint([0.0, 0.0, 0.5], [1.0, 0.0, 0.0]);
        assert!(matches!(
            Neighbour::between(&z, &crossing, tol),
            Neighbour::Intersecting { point, .. } if (point - Vector3::new(0.0, 0.0, 0.5)).norm() < 1e-12
        ));
        let skew = joint([0.0, 0.2, 0.5], [1.0, 0.0, 0.0]);
        assert!(matches!(
            Neighbour::between(&z, &skew, tol),
            Neighbour::Skew { normal, .. } if (normal.into_inner() - Vector3::y()).norm() < 1e-12
        ));
        // Collinear and Last fix nothing of the frame; only Last means there is no next axis.
        assert_eq!(Neighbour::Collinear.constraints(), (None, None));
        assert_eq!(Neighbour::Last.constraints(), (None, None));
    }
}
