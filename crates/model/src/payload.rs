//! A rigid payload held at the tip (a tool, a grasped part): its inertial in the tip link's
//! frame, checked as a body, and the models with it attached.

use nalgebra::{Matrix3, Vector3};

use crate::{ModelError, RigidInertia, Robot};

/// The heaviest payload taken, kg: well above any arm's rated payload (the heaviest
/// industrial arms carry about 2.3 t).
const MAX_MASS: f64 = 1e4;

/// The farthest a payload's centre of mass may lie from the tip frame, m.
const MAX_REACH: f64 = 100.0;

/// A rigid payload at the tip, in the tip link's frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Payload {
    /// kg.
    pub mass: f64,
    /// Centre of mass in the tip frame, m.
    pub com: Vector3<f64>,
    /// Inertia about the centre of mass, tip-frame axes, kg m^2.
    pub inertia: Matrix3<f64>,
}

impl Default for Payload {
    fn default() -> Self {
        Self::none()
    }
}

impl Payload {
    /// No payload.
    pub fn none() -> Self {
        Self {
            mass: 0.0,
            com: Vector3::zeros(),
            inertia: Matrix3::zeros(),
        }
    }

    /// A point mass at `com`.
    pub fn point(mass: f64, com: Vector3<f64>) -> Self {
        Self {
            mass,
            com,
            inertia: Matrix3::zeros(),
        }
    }

    /// From parameter arrays: `com` as `[x, y, z]` (m) and `inertia` as its upper triangle
    /// `[xx, xy, xz, yy, yz, zz]` (kg m^2); missing entries read 0.
    pub fn from_arrays(mass: f64, com: &[f64], inertia: &[f64]) -> Self {
        let at = |values: &[f64], k: usize| values.get(k).copied().unwrap_or(0.0);
        let (c, i) = (com, inertia);
        Self {
            mass,
            com: Vector3::new(at(c, 0), at(c, 1), at(c, 2)),
            inertia: Matrix3::new(
                at(i, 0),
                at(i, 1),
                at(i, 2),
                at(i, 1),
                at(i, 3),
                at(i, 4),
                at(i, 2),
                at(i, 4),
                at(i, 5),
            ),
        }
    }

    /// Whether it is no payload at all.
    pub fn is_none(&self) -> bool {
        *self == Self::none()
    }

    /// Why no real body has these values, naming the item: `mass`, `com` or `inertia` (a
    /// mass or a distance far beyond any arm's tool included: 1e30 kg once reached the
    /// dynamics and was refused as a joint that drives no mass).
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if !(self.mass.is_finite() && self.mass >= 0.0) {
            return Err((
                "mass",
                format!("{} must be finite and not negative", self.mass),
            ));
        }
        if self.mass > MAX_MASS {
            return Err((
                "mass",
                format!(
                    "{:e} kg is more than {MAX_MASS} kg: no arm carries that (a unit or a typo?)",
                    self.mass
                ),
            ));
        }
        if self.com.iter().any(|v| !v.is_finite()) {
            return Err(("com", "must be finite".into()));
        }
        if self.com.norm() > MAX_REACH {
            return Err((
                "com",
                format!(
                    "{:.3e} m from the tip frame is more than {MAX_REACH} m: no tool reaches that far (millimetres for metres?)",
                    self.com.norm()
                ),
            ));
        }
        let i = &self.inertia;
        if i.iter().any(|v| !v.is_finite()) {
            return Err(("inertia", "must be finite".into()));
        }
        let scale = i.abs().max();
        if (i - i.transpose()).abs().max() > 1e-12 * scale.max(1.0) {
            return Err(("inertia", "must be symmetric".into()));
        }
        let body = self.body();
        let smallest = body.min_principal_moment();
        if smallest < -1e-12 * scale.max(1e-12) {
            return Err((
                "inertia",
                format!("is not positive semi-definite (smallest principal moment {smallest:e})"),
            ));
        }
        if !body.satisfies_triangle_inequality(1e-9 * scale) {
            return Err((
                "inertia",
                "principal moments break the triangle inequality (no real body has them)".into(),
            ));
        }
        Ok(())
    }

    /// The payload as a body in the tip frame.
    pub fn body(&self) -> RigidInertia {
        RigidInertia {
            mass: self.mass,
            com: self.com,
            inertia_com: self.inertia,
        }
    }

    /// The body in the last link's MDH frame, where the model keeps that link's inertial.
    pub fn in_last_frame(&self, robot: &Robot) -> RigidInertia {
        self.body().transformed(robot.tool())
    }
}

impl Robot {
    /// This model with `payload` rigidly added to its last link.
    pub fn with_payload(&self, payload: &Payload) -> Result<Robot, ModelError> {
        let mut parts = self.to_parts();
        let added = payload.in_last_frame(self);
        if let Some(last) = parts.links.last_mut() {
            *last = last.combined(&added);
        }
        Robot::new(parts)
    }

    /// The payload alone on this chain's kinematics and gravity (every link massless, no
    /// friction or armature): its inverse dynamics is what the payload adds to the arm's,
    /// since the dynamics is linear in the inertials.
    pub fn payload_only(&self, payload: &Payload) -> Result<Robot, ModelError> {
        let mut parts = self.to_parts();
        for link in &mut parts.links {
            *link = RigidInertia::zero();
        }
        for joint in &mut parts.joints {
            joint.armature = 0.0;
            joint.friction = Default::default();
        }
        if let Some(last) = parts.links.last_mut() {
            *last = payload.in_last_frame(self);
        }
        Robot::new(parts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parameter arrays: com as [x, y, z], inertia as its upper triangle [xx, xy, xz, yy, yz,
    /// zz] mirrored; missing entries read 0.
    #[test]
    fn from_arrays_reads_the_upper_triangle() {
        let p = Payload::from_arrays(1.5, &[0.1, 0.2, 0.3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(p.mass, 1.5);
        assert_eq!(p.com, Vector3::new(0.1, 0.2, 0.3));
        let expected = Matrix3::new(1.0, 2.0, 3.0, 2.0, 4.0, 5.0, 3.0, 5.0, 6.0);
        assert_eq!(p.inertia, expected);
        assert_eq!(Payload::from_arrays(0.0, &[], &[]), Payload::none());
    }

    #[test]
    fn bodies_no_real_object_has_are_refused_naming_the_item() {
        let ok = Payload {
            mass: 1.0,
            com: Vector3::new(0.0, 0.02, 0.1),
            inertia: Matrix3::from_diagonal(&Vector3::new(1e-3, 1e-3, 1.5e-3)),
        };
        assert!(ok.check().is_ok());
        assert!(Payload::none().check().is_ok());
        let named = |p: Payload| p.check().unwrap_err().0;
        assert_eq!(named(Payload { mass: -1.0, ..ok }), "mass");
        assert_eq!(
            named(Payload {
                mass: f64::NAN,
                ..ok
            }),
            "mass"
        );
        let mut com = ok;
        com.com.x = f64::INFINITY;
        assert_eq!(named(com), "com");
        let mut flat = ok;
        flat.inertia = Matrix3::from_diagonal(&Vector3::new(1e-3, 1e-3, 3e-3));
        assert_eq!(named(flat), "inertia");
        let mut negative = ok;
        negative.inertia[(0, 0)] = -1e-3;
        assert_eq!(named(negative), "inertia");
        let mut skew = ok;
        skew.inertia[(0, 1)] = 1e-4;
        assert_eq!(named(skew), "inertia");
        let (item, reason) = Payload { mass: 1e30, ..ok }.check().unwrap_err();
        assert_eq!(item, "mass");
        assert!(
            reason.starts_with("1e30 kg is more than 10000 kg"),
            "{reason}"
        );
        let mut far = ok;
        far.com.z = 250.0;
        assert_eq!(named(far), "com");
    }
}
