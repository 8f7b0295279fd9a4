//! A URDF parsed by urdf-rs and checked: unique names, existing links, a single tree, finite
//! numbers, physical inertials. Everything after this point may rely on those facts.

use std::collections::HashMap;

use nalgebra::{IsometryMatrix3, Matrix3, Rotation3, Translation3, Unit, Vector3};

use crate::error::name_list;
use crate::{urdf_errors, Friction, JointLimits, ModelError, RigidInertia};

/// The most links a description may have: far beyond any arm (a humanoid has about a hundred),
/// and a bound on the depth of the recursive walk over the tree.
pub const MAX_LINKS: usize = 1000;

/// Longest link or joint name accepted, bytes: names are identifiers (joint names travel in
/// every ROS message), and errors quote them.
pub const MAX_NAME_BYTES: usize = 256;

/// Relative size below which a negative principal moment counts as rounding.
const INERTIA_EIGEN_TOLERANCE: f64 = 1e-12;

/// A joint type a serial arm model can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TreeJointKind {
    Fixed,
    Revolute,
    Continuous,
    Prismatic,
}

impl TreeJointKind {
    pub(crate) fn is_moving(self) -> bool {
        self != TreeJointKind::Fixed
    }
}

#[derive(Debug, Clone)]
pub(crate) struct TreeLink {
    pub(crate) name: String,
    /// Inertial in the link frame.
    pub(crate) inertial: RigidInertia,
    pub(crate) parent_joint: Option<usize>,
    pub(crate) child_joints: Vec<usize>,
}

#[derive(Debug, Clone)]
pub(crate) struct TreeJoint {
    pub(crate) name: String,
    pub(crate) kind: TreeJointKind,
    /// Pose of the joint (= child link) frame in the parent link frame at q = 0.
    pub(crate) origin: IsometryMatrix3<f64>,
    /// Unit axis in the joint frame.
    pub(crate) axis: Unit<Vector3<f64>>,
    pub(crate) parent: usize,
    pub(crate) child: usize,
    /// The raw `<limit>` values (validated only for chain joints).
    pub(crate) limits: JointLimits,
    pub(crate) friction: Friction,
    /// `(mimicked joint, multiplier, offset)`.
    pub(crate) mimic: Option<(String, f64, f64)>,
}

impl TreeJoint {
    /// Motion of the child frame relative to the joint frame at position `q`.
    pub(crate) fn motion(&self, q: f64) -> IsometryMatrix3<f64> {
        match self.kind {
            TreeJointKind::Fixed => IsometryMatrix3::identity(),
            TreeJointKind::Revolute | TreeJointKind::Continuous => IsometryMatrix3::from_parts(
                Translation3::identity(),
                Rotation3::from_axis_angle(&self.axis, q),
            ),
            TreeJointKind::Prismatic => IsometryMatrix3::from_parts(
                Translation3::from(self.axis.into_inner() * q),
                Rotation3::identity(),
            ),
        }
    }
}

/// A checked URDF kinematic tree.
#[derive(Debug, Clone)]
pub(crate) struct UrdfTree {
    pub(crate) name: String,
    pub(crate) links: Vec<TreeLink>,
    pub(crate) joints: Vec<TreeJoint>,
    pub(crate) root: usize,
    link_index: HashMap<String, usize>,
    joint_index: HashMap<String, usize>,
}

impl UrdfTree {
    /// Parses and checks URDF text. Errors name the element at fault and, when it is in the
    /// text, its line.
    pub(crate) fn parse(text: &str) -> Result<Self, ModelError> {
        urdf_errors::refuse_deep_nesting(text)?;
        urdf_errors::refuse_xacro(text)?;
        let urdf = urdf_rs::read_from_string(text)
            .map_err(|e| urdf_errors::deserializer_error(text, &e))?;
        Self::from_urdf(&urdf)
    }

    pub(crate) fn link(&self, name: &str) -> Option<usize> {
        self.link_index.get(name).copied()
    }

    pub(crate) fn joint(&self, name: &str) -> Option<usize> {
        self.joint_index.get(name).copied()
    }

    fn from_urdf(urdf: &urdf_rs::Robot) -> Result<Self, ModelError> {
        if urdf.links.len() > MAX_LINKS {
            return Err(ModelError::TooLarge {
                what: "links",
                count: urdf.links.len(),
                limit: MAX_LINKS,
            });
        }
        check_name_lengths(urdf)?;
        let mut link_index = HashMap::new();
        let mut links = Vec::with_capacity(urdf.links.len());
        for link in &urdf.links {
            if link_index.insert(link.name.clone(), links.len()).is_some() {
                return Err(ModelError::DuplicateName {
                    kind: "link",
                    name: link.name.clone(),
                });
            }
            links.push(TreeLink {
                name: link.name.clone(),
                inertial: checked_inertial(link)?,
                parent_joint: None,
                child_joints: Vec::new(),
            });
        }
        let mut joint_index = HashMap::new();
        let mut joints = Vec::with_capacity(urdf.joints.len());
        for joint in &urdf.joints {
            if joint_index
                .insert(joint.name.clone(), joints.len())
                .is_some()
            {
                return Err(ModelError::DuplicateName {
                    kind: "joint",
                    name: joint.name.clone(),
                });
            }
            joints.push(checked_joint(joint, &link_index)?);
        }
        for (j, joint) in joints.iter().enumerate() {
            let child = &mut links[joint.child];
            if let Some(other) = child.parent_joint {
                return Err(ModelError::MultipleParents {
                    link: child.name.clone(),
                    joints: format!("{}, {}", joints[other].name, joint.name),
                });
            }
            child.parent_joint = Some(j);
            links[joint.parent].child_joints.push(j);
        }
        let root = find_root(&links, &joints)?;
        Ok(Self {
            name: urdf.name.clone(),
            links,
            joints,
            root,
            link_index,
            joint_index,
        })
    }
}

/// Refuses names over [`MAX_NAME_BYTES`], before any error quotes one. A joint's own name is
/// checked before the names it refers to, so that it can name the joint.
fn check_name_lengths(urdf: &urdf_rs::Robot) -> Result<(), ModelError> {
    for link in &urdf.links {
        check_name_length(&link.name, || "link".into())?;
    }
    for joint in &urdf.joints {
        check_name_length(&joint.name, || "joint".into())?;
        let mimic = joint.mimic.as_ref().map_or("", |m| m.joint.as_str());
        let references = [
            ("parent link", joint.parent.link.as_str()),
            ("child link", joint.child.link.as_str()),
            ("mimic", mimic),
        ];
        for (role, name) in references {
            check_name_length(name, || format!("joint '{}' {role}", joint.name))?;
        }
    }
    Ok(())
}

fn check_name_length(name: &str, element: impl FnOnce() -> String) -> Result<(), ModelError> {
    if name.len() <= MAX_NAME_BYTES {
        return Ok(());
    }
    Err(ModelError::NameTooLong {
        element: element(),
        bytes: name.len(),
        start: name.chars().take(20).collect(),
        limit: MAX_NAME_BYTES,
    })
}

/// The single root; links unreachable from it sit on a cycle.
fn find_root(links: &[TreeLink], joints: &[TreeJoint]) -> Result<usize, ModelError> {
    let roots: Vec<usize> = (0..links.len())
        .filter(|&l| links[l].parent_joint.is_none())
        .collect();
    let names = |ids: &[usize]| name_list(ids.iter().map(|&l| links[l].name.as_str()));
    let unreached = |start: Option<usize>| {
        let mut seen = vec![false; links.len()];
        let mut stack: Vec<usize> = start.into_iter().collect();
        while let Some(l) = stack.pop() {
            seen[l] = true;
            stack.extend(links[l].child_joints.iter().map(|&j| joints[j].child));
        }
        (0..links.len()).filter(|&l| !seen[l]).collect::<Vec<_>>()
    };
    match roots.as_slice() {
        [] if links.is_empty() => Err(ModelError::Roots {
            roots: "none (no links)".into(),
        }),
        [] => Err(ModelError::Cycle {
            links: names(&unreached(None)),
        }),
        [root] => {
            let lost = unreached(Some(*root));
            if lost.is_empty() {
                Ok(*root)
            } else {
                Err(ModelError::Cycle {
                    links: names(&lost),
                })
            }
        }
        _ => Err(ModelError::Roots {
            roots: names(&roots),
        }),
    }
}

fn finite(element: &str, field: &'static str, values: &[f64]) -> Result<(), ModelError> {
    if values.iter().all(|v| v.is_finite()) {
        Ok(())
    } else {
        Err(ModelError::NonFinite {
            element: element.to_string(),
            field,
            value: format!("{values:?}"),
        })
    }
}

fn pose(element: &str, origin: &urdf_rs::Pose) -> Result<IsometryMatrix3<f64>, ModelError> {
    finite(element, "origin xyz", &origin.xyz.0)?;
    finite(element, "origin rpy", &origin.rpy.0)?;
    let [x, y, z] = origin.xyz.0;
    let [roll, pitch, yaw] = origin.rpy.0;
    Ok(IsometryMatrix3::from_parts(
        Translation3::new(x, y, z),
        Rotation3::from_euler_angles(roll, pitch, yaw),
    ))
}

fn checked_inertial(link: &urdf_rs::Link) -> Result<RigidInertia, ModelError> {
    let element = format!("link '{}' inertial", link.name);
    let inertial = &link.inertial;
    let frame = pose(&element, &inertial.origin)?;
    let i = &inertial.inertia;
    finite(&element, "mass", &[inertial.mass.value])?;
    finite(
        &element,
        "inertia",
        &[i.ixx, i.ixy, i.ixz, i.iyy, i.iyz, i.izz],
    )?;
    if inertial.mass.value < 0.0 {
        return Err(ModelError::NegativeMass {
            link: link.name.clone(),
            mass: inertial.mass.value,
        });
    }
    let body = RigidInertia {
        mass: inertial.mass.value,
        com: Vector3::zeros(),
        inertia_com: Matrix3::new(
            i.ixx, i.ixy, i.ixz, i.ixy, i.iyy, i.iyz, i.ixz, i.iyz, i.izz,
        ),
    };
    let smallest = body.min_principal_moment();
    let scale = body.inertia_com.abs().max();
    if smallest < -INERTIA_EIGEN_TOLERANCE * scale.max(1e-300) {
        return Err(ModelError::InertiaNotPositive {
            link: link.name.clone(),
            eigenvalue: smallest,
        });
    }
    Ok(body.transformed(&frame))
}

fn checked_joint(
    joint: &urdf_rs::Joint,
    link_index: &HashMap<String, usize>,
) -> Result<TreeJoint, ModelError> {
    use urdf_rs::JointType as J;
    let element = format!("joint '{}'", joint.name);
    let kind = match joint.joint_type {
        J::Fixed => TreeJointKind::Fixed,
        J::Revolute => TreeJointKind::Revolute,
        J::Continuous => TreeJointKind::Continuous,
        J::Prismatic => TreeJointKind::Prismatic,
        ref other => {
            return Err(ModelError::UnsupportedJoint {
                joint: joint.name.clone(),
                kind: format!("{other:?}").to_lowercase(),
            })
        }
    };
    let find = |role: &'static str, link: &str| {
        link_index
            .get(link)
            .copied()
            .ok_or_else(|| ModelError::MissingLink {
                joint: joint.name.clone(),
                role,
                link: link.to_string(),
            })
    };
    let parent = find("parent", &joint.parent.link)?;
    let child = find("child", &joint.child.link)?;
    let origin = pose(&element, &joint.origin)?;
    finite(&element, "axis xyz", &joint.axis.xyz.0)?;
    let axis_vector = Vector3::from(joint.axis.xyz.0);
    let axis = match Unit::try_new(axis_vector, 1e-12) {
        Some(axis) => axis,
        None if kind.is_moving() => {
            return Err(ModelError::ZeroAxis {
                joint: joint.name.clone(),
            })
        }
        None => Vector3::x_axis(),
    };
    let l = &joint.limit;
    // Limits may be +-inf for URDF 1.2 "no limit"; NaN never.
    if [l.lower, l.upper, l.effort, l.velocity]
        .iter()
        .any(|v| v.is_nan())
    {
        return Err(ModelError::NonFinite {
            element,
            field: "limit",
            value: format!("{:?}", [l.lower, l.upper, l.effort, l.velocity]),
        });
    }
    let (lower, upper) = if kind == TreeJointKind::Continuous {
        (f64::NEG_INFINITY, f64::INFINITY)
    } else {
        (l.lower, l.upper)
    };
    // A continuous joint may omit <limit> (it reads as zeros): its effort and velocity limits
    // are unknown, infinite here; whoever commands it must be given them.
    let unknown = kind == TreeJointKind::Continuous && l.effort == 0.0 && l.velocity == 0.0;
    let (effort, velocity) = if unknown {
        (f64::INFINITY, f64::INFINITY)
    } else {
        (l.effort, l.velocity)
    };
    let friction = match &joint.dynamics {
        Some(d) => {
            finite(&element, "dynamics", &[d.damping, d.friction])?;
            Friction {
                viscous: d.damping,
                coulomb: d.friction,
                ..Friction::default()
            }
        }
        None => Friction::default(),
    };
    let mimic = match &joint.mimic {
        Some(m) => {
            let multiplier = m.multiplier.unwrap_or(1.0);
            let offset = m.offset.unwrap_or(0.0);
            finite(&element, "mimic", &[multiplier, offset])?;
            Some((m.joint.clone(), multiplier, offset))
        }
        None => None,
    };
    Ok(TreeJoint {
        name: joint.name.clone(),
        kind,
        origin,
        axis,
        parent,
        child,
        limits: JointLimits {
            lower,
            upper,
            velocity,
            effort,
        },
        friction,
        mimic,
    })
}
