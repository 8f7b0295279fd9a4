//! The immutable robot model: modified D-H joints, link inertials, base and tool transforms,
//! gravity. Algorithms take `&Robot` and a separate mutable workspace.

use nalgebra::{IsometryMatrix3, Vector3};

use crate::{Joint, LinkParameters, ModelError, RigidInertia, PARAMS_PER_LINK};

/// Default gravity in the base link frame, m/s^2.
pub const DEFAULT_GRAVITY: [f64; 3] = [0.0, 0.0, -9.81];

/// A serial arm as a modified D-H chain.
///
/// `T_tip(q) = base * T_1(q_1) * ... * T_n(q_n) * tool`, with `base` the pose of MDH frame
/// {0} in the base link frame. Link i's inertial is expressed in MDH frame {i}.
#[derive(Debug, Clone, PartialEq)]
pub struct Robot {
    name: String,
    base_link: String,
    tip_link: String,
    joints: Vec<Joint>,
    links: Vec<RigidInertia>,
    link_parameters: Vec<LinkParameters>,
    base: IsometryMatrix3<f64>,
    tool: IsometryMatrix3<f64>,
    gravity: Vector3<f64>,
}

/// The parts of a [`Robot`], for building one by hand (from a D-H table) or changing one.
#[derive(Debug, Clone, PartialEq)]
pub struct RobotParts {
    /// Robot name.
    pub name: String,
    /// Name of the base link (frame the base transform and gravity are given in).
    pub base_link: String,
    /// Name of the tip link.
    pub tip_link: String,
    /// Joints, base to tip.
    pub joints: Vec<Joint>,
    /// Inertial of link i in MDH frame {i}, one per joint.
    pub links: Vec<RigidInertia>,
    /// Pose of MDH frame {0} in the base link frame.
    pub base: IsometryMatrix3<f64>,
    /// Pose of the tip in MDH frame {n}.
    pub tool: IsometryMatrix3<f64>,
    /// Gravity in the base link frame.
    pub gravity: Vector3<f64>,
}

impl Robot {
    /// Checks the parts and builds the model.
    pub fn new(parts: RobotParts) -> Result<Self, ModelError> {
        let invalid = |reason: String| Err(ModelError::InvalidModel { reason });
        if parts.joints.is_empty() {
            return invalid("a robot needs at least one joint".into());
        }
        if parts.joints.len() != parts.links.len() {
            return invalid(format!(
                "{} joints but {} link inertials",
                parts.joints.len(),
                parts.links.len()
            ));
        }
        for (joint, link) in parts.joints.iter().zip(&parts.links) {
            let m = &joint.mdh;
            let numbers = [m.a(), m.alpha(), m.d(), m.theta(), joint.armature];
            if numbers.iter().any(|v| !v.is_finite()) || !link.is_finite() {
                return invalid(format!("joint '{}' has a non-finite value", joint.name));
            }
            if link.mass < 0.0 {
                return invalid(format!("link of joint '{}' has negative mass", joint.name));
            }
            let l = &joint.limits;
            let ordered = l.lower <= l.upper;
            if l.effort.is_nan() || l.effort <= 0.0 || !ordered {
                return invalid(format!("joint '{}' has invalid limits", joint.name));
            }
        }
        let transforms_finite = [&parts.base, &parts.tool]
            .iter()
            .all(|t| t.to_homogeneous().iter().all(|v| v.is_finite()));
        if !transforms_finite || parts.gravity.iter().any(|v| !v.is_finite()) {
            return invalid("base, tool or gravity has a non-finite value".into());
        }
        Ok(Self {
            name: parts.name,
            base_link: parts.base_link,
            tip_link: parts.tip_link,
            joints: parts.joints,
            link_parameters: parts
                .links
                .iter()
                .map(LinkParameters::from_inertia)
                .collect(),
            links: parts.links,
            base: parts.base,
            tool: parts.tool,
            gravity: parts.gravity,
        })
    }

    /// The parts, to change some and build a new model.
    pub fn to_parts(&self) -> RobotParts {
        RobotParts {
            name: self.name.clone(),
            base_link: self.base_link.clone(),
            tip_link: self.tip_link.clone(),
            joints: self.joints.clone(),
            links: self.links.clone(),
            base: self.base,
            tool: self.tool,
            gravity: self.gravity,
        }
    }

    /// Number of joints (degrees of freedom).
    pub fn dof(&self) -> usize {
        self.joints.len()
    }
    /// Robot name from the URDF.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Base link name.
    pub fn base_link(&self) -> &str {
        &self.base_link
    }
    /// Tip link name.
    pub fn tip_link(&self) -> &str {
        &self.tip_link
    }
    /// Joints, base to tip.
    pub fn joints(&self) -> &[Joint] {
        &self.joints
    }
    /// The middle of every joint's range (0 for continuous joints).
    pub fn middle_configuration(&self) -> Vec<f64> {
        self.joints.iter().map(|j| j.limits.middle()).collect()
    }
    /// Link inertials in their MDH frames.
    pub fn links(&self) -> &[RigidInertia] {
        &self.links
    }
    /// Link inertials as `(inertia about the frame origin, m c, m)`, precomputed.
    pub fn link_parameters(&self) -> &[LinkParameters] {
        &self.link_parameters
    }
    /// The stacked parameter vector p (10 per link, `[XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M]`)
    /// with `Y(q, qd, v, a) p = M a + C v + G`.
    pub fn parameter_vector(&self) -> Vec<f64> {
        self.link_parameters
            .iter()
            .flat_map(|l| l.to_vector())
            .collect()
    }
    /// Pose of MDH frame {0} in the base link frame.
    pub fn base(&self) -> &IsometryMatrix3<f64> {
        &self.base
    }
    /// Pose of the tip in MDH frame {n}.
    pub fn tool(&self) -> &IsometryMatrix3<f64> {
        &self.tool
    }
    /// Gravity in the base link frame.
    pub fn gravity(&self) -> &Vector3<f64> {
        &self.gravity
    }
    /// Gravity in MDH frame {0}, the frame the recursive algorithms start from.
    pub fn gravity_in_frame0(&self) -> Vector3<f64> {
        self.base.rotation.inverse() * self.gravity
    }
    /// Joint names, base to tip.
    pub fn joint_names(&self) -> impl Iterator<Item = &str> {
        self.joints.iter().map(|j| j.name.as_str())
    }
    /// Index of the joint called `name`.
    pub fn joint_index(&self, name: &str) -> Option<usize> {
        self.joints.iter().position(|j| j.name == name)
    }
    /// The model with another gravity vector (base link frame).
    pub fn with_gravity(&self, gravity: Vector3<f64>) -> Result<Self, ModelError> {
        if gravity.iter().any(|v| !v.is_finite()) {
            return Err(ModelError::InvalidModel {
                reason: "gravity has a non-finite value".into(),
            });
        }
        Ok(Self {
            gravity,
            ..self.clone()
        })
    }

    /// The model with the Coulomb friction rippling over each joint's position: per joint,
    /// `[c_1, s_1, c_2, s_2, ..]`, the cosine and sine coefficients of harmonics 1, 2, ..
    /// (at most [`crate::MAX_FRICTION_HARMONICS`]; empty: none). The Coulomb level may not
    /// go below zero anywhere: each joint's `sum_k sqrt(c_k^2 + s_k^2)` is at most its Coulomb
    /// friction, else the joint is named.
    pub fn with_friction_ripple(&self, ripple: &[Vec<f64>]) -> Result<Self, ModelError> {
        let n = self.dof();
        let invalid = |reason: String| Err(ModelError::InvalidModel { reason });
        if ripple.len() != n {
            return invalid(format!(
                "friction ripple needs {n} lists (one per joint), got {}",
                ripple.len()
            ));
        }
        let mut joints = self.joints.clone();
        for (joint, harmonics) in joints.iter_mut().zip(ripple) {
            let fits = harmonics.len() % 2 == 0
                && harmonics.len() <= 2 * crate::MAX_FRICTION_HARMONICS
                && harmonics.iter().all(|v| v.is_finite());
            if !fits {
                return invalid(format!(
                    "joint '{}': friction ripple needs cosine, sine pairs of at most {} harmonics, finite",
                    joint.name,
                    crate::MAX_FRICTION_HARMONICS
                ));
            }
            let friction = &mut joint.friction;
            friction.ripple_cos = [0.0; crate::MAX_FRICTION_HARMONICS];
            friction.ripple_sin = [0.0; crate::MAX_FRICTION_HARMONICS];
            for (k, pair) in harmonics.chunks(2).enumerate() {
                friction.ripple_cos[k] = pair[0];
                friction.ripple_sin[k] = pair[1];
            }
            if friction.ripple_bound() + friction.offset.abs() > friction.coulomb * (1.0 + 1e-12) {
                return invalid(format!(
                    "joint '{}': the friction ripple (up to {:.4}) with its offset {:.4} exceeds its Coulomb friction {:.4}: the friction would push somewhere",
                    joint.name,
                    friction.ripple_bound(),
                    friction.offset,
                    friction.coulomb
                ));
            }
        }
        Ok(Self {
            joints,
            ..self.clone()
        })
    }

    /// The model with other joint friction: viscous and Coulomb coefficients, one per joint
    /// (any ripple over the position and offset are dropped; see
    /// [`Robot::with_friction_ripple`], [`Robot::with_friction_offset`]).
    pub fn with_friction(&self, viscous: &[f64], coulomb: &[f64]) -> Result<Self, ModelError> {
        let n = self.dof();
        let valid = |v: &[f64]| v.len() == n && v.iter().all(|x| x.is_finite() && *x >= 0.0);
        if !valid(viscous) || !valid(coulomb) {
            return Err(ModelError::InvalidModel {
                reason: format!(
                    "friction needs {n} finite, non-negative viscous and Coulomb values"
                ),
            });
        }
        let mut joints = self.joints.clone();
        for ((joint, &v), &c) in joints.iter_mut().zip(viscous).zip(coulomb) {
            joint.friction = crate::Friction {
                viscous: v,
                coulomb: c,
                ..crate::Friction::default()
            };
        }
        Ok(Self {
            joints,
            ..self.clone()
        })
    }

    /// The model with each joint's Coulomb asymmetry `offset` (N m or N, one per joint; see
    /// [`crate::Friction::offset`]). Sliding either way must still meet friction: each
    /// `|offset|` plus the ripple is at most the joint's Coulomb level, else the joint is named.
    pub fn with_friction_offset(&self, offset: &[f64]) -> Result<Self, ModelError> {
        let n = self.dof();
        let invalid = |reason: String| Err(ModelError::InvalidModel { reason });
        if offset.len() != n || offset.iter().any(|v| !v.is_finite()) {
            return invalid(format!(
                "friction offset needs {n} finite values (one per joint), got {}",
                offset.len()
            ));
        }
        let mut joints = self.joints.clone();
        for (joint, &value) in joints.iter_mut().zip(offset) {
            let friction = &mut joint.friction;
            friction.offset = value;
            if friction.peak() > 2.0 * friction.coulomb * (1.0 + 1e-12) {
                return invalid(format!(
                    "joint '{}': the friction offset {value:.4} and ripple {:.4} exceed its Coulomb friction {:.4}: the friction would push it one way",
                    joint.name,
                    friction.ripple_bound(),
                    friction.coulomb
                ));
            }
        }
        Ok(Self {
            joints,
            ..self.clone()
        })
    }

    /// The model with other effort limits, one positive finite value per joint (N m or N).
    pub fn with_effort_limits(&self, efforts: &[f64]) -> Result<Self, ModelError> {
        let n = self.dof();
        if efforts.len() != n || !efforts.iter().all(|e| e.is_finite() && *e > 0.0) {
            return Err(ModelError::InvalidModel {
                reason: format!("effort limits need {n} positive, finite values"),
            });
        }
        let mut joints = self.joints.clone();
        for (joint, &effort) in joints.iter_mut().zip(efforts) {
            joint.limits.effort = effort;
        }
        Ok(Self {
            joints,
            ..self.clone()
        })
    }

    /// The model with the inertial parameter vector `p` (10 per link, as
    /// [`Robot::parameter_vector`]): what the dynamics computes with. `p` need not describe
    /// physical bodies (identified base parameters spread over the links rarely do); the
    /// per-link [`RigidInertia`] shown by [`Robot::links`] is then the nearest description
    /// (centre of mass `h / m` when `m > 0`, else at the frame origin).
    pub fn with_parameter_vector(&self, p: &[f64]) -> Result<Self, ModelError> {
        let n = self.dof();
        if p.len() != PARAMS_PER_LINK * n || p.iter().any(|v| !v.is_finite()) {
            return Err(ModelError::InvalidModel {
                reason: format!(
                    "a parameter vector needs {} finite values, got {}",
                    PARAMS_PER_LINK * n,
                    p.len()
                ),
            });
        }
        let link_parameters: Vec<LinkParameters> = p
            .chunks_exact(PARAMS_PER_LINK)
            .map(|c| {
                let mut values = [0.0; PARAMS_PER_LINK];
                values.copy_from_slice(c);
                LinkParameters::from_vector(&values)
            })
            .collect();
        let links = link_parameters
            .iter()
            .map(LinkParameters::nearest_body)
            .collect();
        Ok(Self {
            links,
            link_parameters,
            ..self.clone()
        })
    }
}
