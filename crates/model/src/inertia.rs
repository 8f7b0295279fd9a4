//! Rigid-body inertial parameters: mass, centre of mass and inertia about the centre of mass.
//!
//! The inertia tensor is the usual one (`I_xy = -integral(x y dm)`), as in URDF. The
//! parallel-axis theorem moves it to another point: `I_A = I_C + m (c^T c I3 - c c^T)`.

use nalgebra::{IsometryMatrix3, Matrix3, Point3, SymmetricEigen, Vector3};

/// Number of inertial parameters per link: `[XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M]`.
pub const PARAMS_PER_LINK: usize = 10;

/// Mass, centre of mass and inertia about the centre of mass, all in one frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RigidInertia {
    /// Mass in kg.
    pub mass: f64,
    /// Centre of mass in the frame, m.
    pub com: Vector3<f64>,
    /// Inertia tensor about the centre of mass, with the frame's axes, kg m^2.
    pub inertia_com: Matrix3<f64>,
}

impl Default for RigidInertia {
    fn default() -> Self {
        Self::zero()
    }
}

impl RigidInertia {
    /// A massless body.
    pub fn zero() -> Self {
        Self {
            mass: 0.0,
            com: Vector3::zeros(),
            inertia_com: Matrix3::zeros(),
        }
    }

    /// The same body seen from another frame: `pose` places the current frame in the new one.
    pub fn transformed(&self, pose: &IsometryMatrix3<f64>) -> Self {
        let r = pose.rotation.matrix();
        Self {
            mass: self.mass,
            com: (pose * Point3::from(self.com)).coords,
            inertia_com: r * self.inertia_com * r.transpose(),
        }
    }

    /// The rigid union of two bodies given in the same frame.
    pub fn combined(&self, other: &Self) -> Self {
        let mass = self.mass + other.mass;
        if mass <= 0.0 {
            // Massless bodies can still carry inertia (a rotor modelled as pure inertia).
            return Self {
                mass: 0.0,
                com: Vector3::zeros(),
                inertia_com: self.inertia_about(&Vector3::zeros())
                    + other.inertia_about(&Vector3::zeros()),
            };
        }
        let com = (self.com * self.mass + other.com * other.mass) / mass;
        Self {
            mass,
            com,
            inertia_com: self.inertia_about(&com) + other.inertia_about(&com),
        }
    }

    /// Inertia tensor about `point` (parallel-axis theorem).
    pub fn inertia_about(&self, point: &Vector3<f64>) -> Matrix3<f64> {
        let c = self.com - point;
        self.inertia_com + self.mass * (Matrix3::identity() * c.dot(&c) - c * c.transpose())
    }

    /// The ten parameters `[XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M]`: inertia tensor about the
    /// frame origin, first moment of mass `m c`, mass.
    pub fn parameters(&self) -> [f64; PARAMS_PER_LINK] {
        let i = self.inertia_about(&Vector3::zeros());
        let mc = self.com * self.mass;
        [
            i[(0, 0)],
            i[(0, 1)],
            i[(0, 2)],
            i[(1, 1)],
            i[(1, 2)],
            i[(2, 2)],
            mc.x,
            mc.y,
            mc.z,
            self.mass,
        ]
    }

    /// Smallest principal moment of the inertia about the centre of mass.
    pub fn min_principal_moment(&self) -> f64 {
        let sym = (self.inertia_com + self.inertia_com.transpose()) * 0.5;
        SymmetricEigen::new(sym).eigenvalues.min()
    }

    /// Whether the principal moments satisfy the triangle inequality (`I1 + I2 >= I3`) that
    /// every real body does. Models that put a rotor inertia on a massless link break it.
    pub fn satisfies_triangle_inequality(&self, tolerance: f64) -> bool {
        let sym = (self.inertia_com + self.inertia_com.transpose()) * 0.5;
        let e = SymmetricEigen::new(sym).eigenvalues;
        let sum = e.sum();
        e.iter().all(|&ei| sum - ei >= ei - tolerance)
    }

    /// Whether every value is finite.
    pub fn is_finite(&self) -> bool {
        self.mass.is_finite()
            && self.com.iter().all(|v| v.is_finite())
            && self.inertia_com.iter().all(|v| v.is_finite())
    }
}

/// The inertial parameters in the form the dynamics is linear in: inertia tensor about the
/// frame origin, first moment of mass `h = m c`, mass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkParameters {
    /// Inertia tensor about the frame origin (`XX XY XZ; XY YY YZ; XZ YZ ZZ`).
    pub inertia_origin: Matrix3<f64>,
    /// First moment of mass `[MX, MY, MZ]`.
    pub first_moment: Vector3<f64>,
    /// Mass `M`.
    pub mass: f64,
}

impl LinkParameters {
    /// The parameters of a body.
    pub fn from_inertia(body: &RigidInertia) -> Self {
        Self::from_vector(&body.parameters())
    }

    /// From `[XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M]`.
    pub fn from_vector(p: &[f64; PARAMS_PER_LINK]) -> Self {
        Self {
            inertia_origin: Matrix3::new(p[0], p[1], p[2], p[1], p[3], p[4], p[2], p[4], p[5]),
            first_moment: Vector3::new(p[6], p[7], p[8]),
            mass: p[9],
        }
    }

    /// The body with these parameters (the inverse of [`RigidInertia::parameters`]): centre of
    /// mass `h / m` and the inertia moved to it when `m > 0`; a massless body keeps the tensor
    /// about the origin at the origin (a first moment without mass has no rigid-body meaning
    /// and is dropped).
    pub fn nearest_body(&self) -> RigidInertia {
        if self.mass <= 0.0 {
            return RigidInertia {
                mass: self.mass,
                com: Vector3::zeros(),
                inertia_com: self.inertia_origin,
            };
        }
        let com = self.first_moment / self.mass;
        let shift = self.mass * (Matrix3::identity() * com.dot(&com) - com * com.transpose());
        RigidInertia {
            mass: self.mass,
            com,
            inertia_com: self.inertia_origin - shift,
        }
    }

    /// As `[XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M]`.
    pub fn to_vector(&self) -> [f64; PARAMS_PER_LINK] {
        let i = &self.inertia_origin;
        let h = &self.first_moment;
        [
            i[(0, 0)],
            i[(0, 1)],
            i[(0, 2)],
            i[(1, 1)],
            i[(1, 2)],
            i[(2, 2)],
            h.x,
            h.y,
            h.z,
            self.mass,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Rotation3, Translation3};

    fn body() -> RigidInertia {
        RigidInertia {
            mass: 2.0,
            com: Vector3::new(0.1, -0.2, 0.3),
            inertia_com: Matrix3::new(0.3, 0.01, 0.02, 0.01, 0.4, 0.03, 0.02, 0.03, 0.5),
        }
    }

    #[test]
    fn parameters_round_trip() {
        let b = body();
        let back = LinkParameters::from_vector(&b.parameters()).nearest_body();
        assert!((back.com - b.com).norm() < 1e-15);
        assert!((back.inertia_com - b.inertia_com).norm() < 1e-15);
        assert_eq!(back.mass, b.mass);
        assert_eq!(LinkParameters::from_inertia(&b).to_vector(), b.parameters());
    }

    #[test]
    fn massless_parameters_keep_the_tensor_and_drop_the_first_moment() {
        let mut p = body().parameters();
        p[9] = 0.0;
        let back = LinkParameters::from_vector(&p).nearest_body();
        assert_eq!(back.mass, 0.0);
        assert_eq!(back.com, Vector3::zeros());
        assert_eq!(
            back.inertia_com,
            Matrix3::new(p[0], p[1], p[2], p[1], p[3], p[4], p[2], p[4], p[5])
        );
    }

    #[test]
    fn point_mass_inertia_about_origin() {
        let p = RigidInertia {
            mass: 3.0,
            com: Vector3::new(2.0, 0.0, 0.0),
            inertia_com: Matrix3::zeros(),
        };
        let i = p.inertia_about(&Vector3::zeros());
        assert_eq!(i, Matrix3::from_diagonal(&Vector3::new(0.0, 12.0, 12.0)));
    }

    #[test]
    fn combining_split_body_gives_whole() {
        // Two point masses at +-1 on x: inertia about the centre is 2 m about y and z.
        let half = |x: f64| RigidInertia {
            mass: 1.0,
            com: Vector3::new(x, 0.0, 0.0),
            inertia_com: Matrix3::zeros(),
        };
        let whole = half(1.0).combined(&half(-1.0));
        assert_eq!(whole.mass, 2.0);
        assert_eq!(whole.com, Vector3::zeros());
        assert_eq!(
            whole.inertia_com,
            Matrix3::from_diagonal(&Vector3::new(0.0, 2.0, 2.0))
        );
    }

    #[test]
    fn transform_preserves_inertia_about_moved_point() {
        let b = body();
        let pose = IsometryMatrix3::from_parts(
            Translation3::new(0.5, 0.2, -0.1),
            Rotation3::from_euler_angles(0.3, -0.7, 1.1),
        );
        let moved = b.transformed(&pose);
        // Inertia about the new origin, rotated back, equals inertia about the old point.
        let r = pose.rotation.matrix();
        let old_point = pose.inverse() * nalgebra::Point3::origin();
        let expected = b.inertia_about(&old_point.coords);
        let got = r.transpose() * moved.inertia_about(&Vector3::zeros()) * r;
        assert!((expected - got).norm() < 1e-14);
    }

    #[test]
    fn rotor_only_link_breaks_triangle_inequality() {
        let rotor = RigidInertia {
            mass: 0.0,
            com: Vector3::zeros(),
            inertia_com: Matrix3::from_diagonal(&Vector3::new(0.0, 0.0, 0.35)),
        };
        assert!(!rotor.satisfies_triangle_inequality(1e-12));
        assert!(body().satisfies_triangle_inequality(1e-12));
        assert!(rotor.min_principal_moment() >= 0.0);
    }
}
