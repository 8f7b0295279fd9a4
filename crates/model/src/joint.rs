//! One joint of the chain: its type, its modified D-H (Craig) parameters, limits and friction.
//!
//! `T_{i-1,i} = RotX(alpha_{i-1}) TransX(a_{i-1}) RotZ(theta_i) TransZ(d_i)`; a revolute
//! joint turns by `theta + q`, a prismatic joint slides by `d + q`.

use nalgebra::{IsometryMatrix3, Matrix3, Rotation3, Translation3, Vector3};

/// The two joint types of a serial arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JointKind {
    /// Rotation about z_i by `theta + q`.
    Revolute,
    /// Translation along z_i by `d + q`.
    Prismatic,
}

impl JointKind {
    /// `sigma_i` of the Newton-Euler equations: 1 for prismatic, 0 for revolute.
    pub fn sigma(self) -> f64 {
        match self {
            JointKind::Revolute => 0.0,
            JointKind::Prismatic => 1.0,
        }
    }

    /// The lower-case name used in tables and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            JointKind::Revolute => "revolute",
            JointKind::Prismatic => "prismatic",
        }
    }
}

/// Craig's modified D-H parameters of joint i. `a` and `alpha` are `a_{i-1}`, `alpha_{i-1}`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MdhParams {
    a: f64,
    alpha: f64,
    d: f64,
    theta: f64,
    cos_alpha: f64,
    sin_alpha: f64,
}

impl MdhParams {
    /// Parameters with `theta` the revolute offset (or the constant angle of a prismatic
    /// joint) and `d` the prismatic offset (or the constant length of a revolute joint).
    pub fn new(a: f64, alpha: f64, d: f64, theta: f64) -> Self {
        let (sin_alpha, cos_alpha) = alpha.sin_cos();
        Self {
            a,
            alpha,
            d,
            theta,
            cos_alpha,
            sin_alpha,
        }
    }

    /// `a_{i-1}`: distance from z_{i-1} to z_i along x_{i-1}.
    pub fn a(&self) -> f64 {
        self.a
    }
    /// `alpha_{i-1}`: angle from z_{i-1} to z_i about x_{i-1}.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    /// `d_i` at q = 0.
    pub fn d(&self) -> f64 {
        self.d
    }
    /// `theta_i` at q = 0.
    pub fn theta(&self) -> f64 {
        self.theta
    }
    /// `cos(alpha_{i-1})`, precomputed.
    pub fn cos_alpha(&self) -> f64 {
        self.cos_alpha
    }
    /// `sin(alpha_{i-1})`, precomputed.
    pub fn sin_alpha(&self) -> f64 {
        self.sin_alpha
    }

    /// `(theta_i, d_i)` at joint position `q`.
    #[inline]
    pub fn theta_d(&self, kind: JointKind, q: f64) -> (f64, f64) {
        match kind {
            JointKind::Revolute => (self.theta + q, self.d),
            JointKind::Prismatic => (self.theta, self.d + q),
        }
    }

    /// Rotation `R_{i-1,i}` for a joint angle `theta` given as `(sin, cos)`.
    #[inline]
    pub fn rotation(&self, sin_theta: f64, cos_theta: f64) -> Matrix3<f64> {
        let (ca, sa) = (self.cos_alpha, self.sin_alpha);
        Matrix3::new(
            cos_theta,
            -sin_theta,
            0.0,
            sin_theta * ca,
            cos_theta * ca,
            -sa,
            sin_theta * sa,
            cos_theta * sa,
            ca,
        )
    }

    /// Origin of frame {i} seen from {i-1}: `p_i = [a, -d sin(alpha), d cos(alpha)]`.
    #[inline]
    pub fn origin(&self, d: f64) -> Vector3<f64> {
        Vector3::new(self.a, -d * self.sin_alpha, d * self.cos_alpha)
    }

    /// The frame `(R, o)` of joint i from its parent's `(R_p, o_p)` (both in one outer frame),
    /// with `(sin, cos)` of theta and d: `R_p R_{i-1,i}` and `o_p + R_p p_i` without forming
    /// `R_{i-1,i}`. With `R_{i-1,i} = [[ct, -st, 0], [st ca, ct ca, -sa], [st sa, ct sa, ca]]`
    /// and the parent's columns `r0, r1, r2`: `u = ca r1 + sa r2`, the new z is
    /// `ca r2 - sa r1`, the new columns are `[ct r0 + st u, -st r0 + ct u, z]`, and the origin
    /// moves by `a r0 + d z`.
    #[inline(always)]
    pub fn child_frame(
        &self,
        (r, o): (&Matrix3<f64>, &Vector3<f64>),
        (sin_theta, cos_theta): (f64, f64),
        d: f64,
    ) -> (Matrix3<f64>, Vector3<f64>) {
        let (ca, sa) = (self.cos_alpha, self.sin_alpha);
        let (r0, r1, r2) = (
            r.column(0).into_owned(),
            r.column(1).into_owned(),
            r.column(2).into_owned(),
        );
        let u = r1 * ca + r2 * sa;
        let z = r2 * ca - r1 * sa;
        let origin = o + r0 * self.a + z * d;
        let x = r0 * cos_theta + u * sin_theta;
        let y = u * cos_theta - r0 * sin_theta;
        (Matrix3::from_columns(&[x, y, z]), origin)
    }

    /// `T_{i-1,i}` at joint position `q`.
    #[inline]
    pub fn transform(&self, kind: JointKind, q: f64) -> IsometryMatrix3<f64> {
        let (theta, d) = self.theta_d(kind, q);
        let (st, ct) = theta.sin_cos();
        IsometryMatrix3::from_parts(
            Translation3::from(self.origin(d)),
            Rotation3::from_matrix_unchecked(self.rotation(st, ct)),
        )
    }
}

/// Position, velocity and effort limits. A continuous joint has infinite position limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JointLimits {
    /// Lower position limit (rad or m).
    pub lower: f64,
    /// Upper position limit (rad or m).
    pub upper: f64,
    /// Velocity limit (rad/s or m/s).
    pub velocity: f64,
    /// Effort limit (N m or N); every command is saturated to it.
    pub effort: f64,
}

impl JointLimits {
    /// Whether the joint has position limits (false for continuous joints).
    pub fn is_bounded(&self) -> bool {
        self.lower.is_finite() && self.upper.is_finite()
    }

    /// The middle of the range (0 for continuous joints): a safe start configuration.
    pub fn middle(&self) -> f64 {
        if self.is_bounded() {
            0.5 * (self.lower + self.upper)
        } else {
            0.0
        }
    }
}

/// Joint friction: `F(q, qd) = viscous qd + coulomb(q) sgn(qd) + offset |sgn(qd)|` (URDF
/// `<dynamics damping friction>`; the ripple and the offset come from identification).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Friction {
    /// Viscous coefficient (N m s/rad or N s/m).
    pub viscous: f64,
    /// Coulomb friction (N m or N), its mean over the joint's position.
    pub coulomb: f64,
    /// The Coulomb level's harmonics over the position (a geared joint's eccentricity):
    /// `coulomb(q) = coulomb + sum_k (ripple_cos[k] cos((k + 1) q) + ripple_sin[k] sin((k + 1) q))`.
    pub ripple_cos: [f64; MAX_FRICTION_HARMONICS],
    /// See `ripple_cos`.
    pub ripple_sin: [f64; MAX_FRICTION_HARMONICS],
    /// The Coulomb level's asymmetry (Gautier's `Off_j`): sliding positively the joint meets
    /// `coulomb + offset`, negatively `coulomb - offset`; nothing at rest, where friction holds
    /// rather than pushes. At most the lowest Coulomb level, so friction never drives the joint.
    pub offset: f64,
}

/// The most harmonics of friction over a joint's position.
pub const MAX_FRICTION_HARMONICS: usize = 4;

impl Friction {
    /// The Coulomb level at position `q`.
    pub fn coulomb_at(&self, q: f64) -> f64 {
        let mut level = self.coulomb;
        for (k, (c, s)) in self.ripple_cos.iter().zip(&self.ripple_sin).enumerate() {
            if *c != 0.0 || *s != 0.0 {
                let (sin, cos) = ((k + 1) as f64 * q).sin_cos();
                level += c * cos + s * sin;
            }
        }
        level
    }

    /// The sliding friction's level at position `q` for a motion whose sign rule gives `sign`
    /// (-1 to 1): `coulomb(q) sign + offset |sign|`.
    pub fn sliding(&self, q: f64, sign: f64) -> f64 {
        self.coulomb_at(q) * sign + self.offset * sign.abs()
    }

    /// The largest sliding friction anywhere, either way: `coulomb + ripple + |offset|`.
    pub fn peak(&self) -> f64 {
        self.coulomb.abs() + self.ripple_bound() + self.offset.abs()
    }

    /// The largest the harmonics can add or take, `sum_k sqrt(c_k^2 + s_k^2)`.
    pub fn ripple_bound(&self) -> f64 {
        self.ripple_cos
            .iter()
            .zip(&self.ripple_sin)
            .map(|(c, s)| c.hypot(*s))
            .sum()
    }
}

/// One joint of the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Joint {
    /// The URDF joint name.
    pub name: String,
    /// Revolute or prismatic.
    pub kind: JointKind,
    /// Craig's modified D-H parameters.
    pub mdh: MdhParams,
    /// Limits from the URDF.
    pub limits: JointLimits,
    /// Friction from the URDF `<dynamics>`.
    pub friction: Friction,
    /// Reflected rotor inertia `k_r^2 J_m`, added to the diagonal of M.
    pub armature: f64,
}

impl JointLimits {
    /// The position range clipped to half a turn either side of zero (a continuous joint:
    /// one turn), where configurations are sampled.
    pub fn within_half_turn(&self) -> (f64, f64) {
        let pi = std::f64::consts::PI;
        (self.lower.max(-pi), self.upper.min(pi))
    }

    /// The position `fraction` (0 to 1) of the way across [`Self::within_half_turn`].
    pub fn position_at(&self, fraction: f64) -> f64 {
        let (lo, hi) = self.within_half_turn();
        lo + (hi - lo) * fraction
    }
}

#[cfg(test)]
mod tests {
    use crate::{ChainOptions, Robot};

    #[test]
    fn the_coulomb_level_ripples_with_its_harmonics_and_may_not_go_negative() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/planar_2link.urdf");
        let robot = Robot::from_urdf_file(path, &ChainOptions::default())
            .unwrap()
            .with_friction(&[0.1, 0.1], &[1.0, 0.5])
            .unwrap();
        let rippled = robot
            .with_friction_ripple(&[vec![0.2, 0.1, 0.0, 0.3], vec![]])
            .unwrap();
        let f = &rippled.joints()[0].friction;
        let q: f64 = 0.7;
        let expected = 1.0 + 0.2 * q.cos() + 0.1 * q.sin() + 0.3 * (2.0 * q).sin();
        assert!((f.coulomb_at(q) - expected).abs() < 1e-15);
        assert_eq!(rippled.joints()[1].friction.coulomb_at(q), 0.5);
        // Replacing the friction drops the ripple.
        let flat = rippled.with_friction(&[0.1, 0.1], &[1.0, 0.5]).unwrap();
        assert_eq!(flat.joints()[0].friction.coulomb_at(q), 1.0);
        let error =
            |ripple: &[Vec<f64>]| robot.with_friction_ripple(ripple).unwrap_err().to_string();
        assert!(error(&[vec![0.4, 0.3], vec![0.4, 0.4]]).contains("joint 'joint2'"));
        assert!(error(&[vec![0.4, 0.3], vec![0.4, 0.4]]).contains("exceeds its Coulomb friction"));
        assert!(error(&[vec![0.1], vec![]]).contains("cosine, sine pairs"));
        assert!(error(&[vec![0.01; 10], vec![]]).contains("at most 4 harmonics"));
        assert!(error(&[vec![f64::NAN, 0.0], vec![]]).contains("finite"));
        assert!(error(&[vec![]]).contains("2 lists"));
    }

    #[test]
    fn the_friction_offset_slides_one_way_harder_and_never_drives_the_joint() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/planar_2link.urdf");
        let robot = Robot::from_urdf_file(path, &ChainOptions::default())
            .unwrap()
            .with_friction(&[0.1, 0.1], &[1.0, 0.5])
            .unwrap();
        let skewed = robot.with_friction_offset(&[0.2, -0.5]).unwrap();
        let f = &skewed.joints()[0].friction;
        assert_eq!(f.sliding(0.3, 1.0), 1.2);
        assert_eq!(f.sliding(0.3, -1.0), -0.8);
        assert_eq!(f.sliding(0.3, 0.0), 0.0);
        assert_eq!(f.peak(), 1.2);
        // Joint 2 meets no friction moving positively, 1.0 negatively.
        assert_eq!(skewed.joints()[1].friction.sliding(0.0, 1.0), 0.0);
        let rippled = robot
            .with_friction_ripple(&[vec![0.5, 0.0], vec![]])
            .unwrap();
        let e = rippled.with_friction_offset(&[0.6, 0.0]).unwrap_err();
        assert!(e.to_string().contains("joint 'joint1'"), "{e}");
        let e = robot.with_friction_offset(&[0.0, f64::NAN]).unwrap_err();
        assert!(e.to_string().contains("finite"), "{e}");
    }

    use super::*;

    /// Craig's closed form of `T_{i-1,i}`, written out element by element.
    fn craig(a: f64, alpha: f64, d: f64, theta: f64) -> [[f64; 4]; 3] {
        let (st, ct) = theta.sin_cos();
        let (sa, ca) = alpha.sin_cos();
        [
            [ct, -st, 0.0, a],
            [st * ca, ct * ca, -sa, -d * sa],
            [st * sa, ct * sa, ca, d * ca],
        ]
    }

    #[test]
    fn transform_matches_craig_closed_form() {
        let p = MdhParams::new(0.3, -0.9, 0.2, 0.4);
        for (kind, q) in [(JointKind::Revolute, 0.7), (JointKind::Prismatic, -0.1)] {
            let t = p.transform(kind, q).to_homogeneous();
            let (theta, d) = p.theta_d(kind, q);
            let want = craig(0.3, -0.9, d, theta);
            for (r, row) in want.iter().enumerate() {
                for (c, v) in row.iter().enumerate() {
                    assert!((t[(r, c)] - v).abs() < 1e-15, "{kind:?} ({r},{c})");
                }
            }
        }
    }

    #[test]
    fn transform_is_rotx_transx_rotz_transz() {
        let p = MdhParams::new(-0.2, 1.1, 0.5, -0.3);
        let t = p.transform(JointKind::Revolute, 0.25);
        let x = Vector3::x_axis();
        let z = Vector3::z_axis();
        let product = IsometryMatrix3::from_parts(
            Translation3::identity(),
            Rotation3::from_axis_angle(&x, 1.1),
        ) * IsometryMatrix3::from_parts(
            Translation3::new(-0.2, 0.0, 0.0),
            Rotation3::identity(),
        ) * IsometryMatrix3::from_parts(
            Translation3::identity(),
            Rotation3::from_axis_angle(&z, -0.05),
        ) * IsometryMatrix3::from_parts(
            Translation3::new(0.0, 0.0, 0.5),
            Rotation3::identity(),
        );
        assert!((t.to_homogeneous() - product.to_homogeneous()).norm() < 1e-15);
    }
}
