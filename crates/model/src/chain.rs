//! Choosing the serial chain in a URDF tree and lumping everything rigidly attached to each
//! moving link into one body, all expressed in the base link frame at q = 0.
//!
//! Fixed-joint children are lumped into the nearest moving ancestor. Moving joints off the
//! chain (grippers, fingers) are locked at given positions with their mass kept
//! ([`BranchPolicy::Lock`], the default) or dropped with their subtree ([`BranchPolicy::Drop`]).
//! Links fixed to the base before the first moving joint do not move and are left out.

use std::collections::BTreeMap;

use nalgebra::{IsometryMatrix3, Unit, Vector3};

use crate::error::name_list;
use crate::urdf_tree::{TreeJointKind, UrdfTree};
use crate::{Friction, JointKind, JointLimits, ModelError, RigidInertia};

/// The most moving joints a chain may have (the base parameters of a chain allocate in the
/// square of its length).
pub const MAX_DOF: usize = 64;

/// What happens to moving joints that are not on the base-to-tip chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BranchPolicy {
    /// Lock them at [`ChainOptions::locked_positions`] (0, or the nearest limit, when not
    /// given; a mimic joint follows its locked master) and keep their mass on the chain link
    /// they hang from.
    #[default]
    Lock,
    /// Drop them and everything below them.
    Drop,
}

impl BranchPolicy {
    /// Lower-case name used by the CLI.
    pub fn as_str(self) -> &'static str {
        match self {
            BranchPolicy::Lock => "lock",
            BranchPolicy::Drop => "drop",
        }
    }
}

/// How to cut a serial chain out of a URDF and convert it.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainOptions {
    /// Base link; the root link when `None`.
    pub base_link: Option<String>,
    /// Tip link; when `None`, the only leaf below the base reached through a moving joint.
    pub tip_link: Option<String>,
    /// What to do with moving joints off the chain.
    pub branches: BranchPolicy,
    /// Positions of off-chain joints for [`BranchPolicy::Lock`].
    pub locked_positions: BTreeMap<String, f64>,
    /// Geometric tolerance (rad for angles, m for distances) below which axes count as
    /// parallel, intersecting or collinear and URDF frames count as valid MDH frames.
    pub tolerance: f64,
    /// Arguments (`name:=value`) for the `xacro` program when the file is a `.xacro`.
    pub xacro_args: Vec<String>,
}

impl Default for ChainOptions {
    fn default() -> Self {
        Self {
            base_link: None,
            tip_link: None,
            branches: BranchPolicy::Lock,
            locked_positions: BTreeMap::new(),
            tolerance: 1e-9,
            xacro_args: Vec::new(),
        }
    }
}

/// What the chain extraction did with the links and joints that are not chain joints.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChainReport {
    /// `(link, chain joint)`: links whose inertial was lumped into the link of that joint.
    pub lumped: Vec<(String, String)>,
    /// `(joint, position)`: off-chain joints locked, with their position.
    pub locked: Vec<(String, f64)>,
    /// Links dropped with their off-chain joint.
    pub dropped: Vec<String>,
    /// Links fixed to the base before the first moving joint (they do not move).
    pub static_links: Vec<String>,
}

/// One moving joint of the chain, in the base link frame at q = 0.
#[derive(Debug, Clone)]
pub(crate) struct ChainJoint {
    pub(crate) name: String,
    pub(crate) kind: JointKind,
    /// A point on the joint axis (the URDF joint origin).
    pub(crate) point: Vector3<f64>,
    /// Unit axis direction.
    pub(crate) axis: Unit<Vector3<f64>>,
    /// Pose of the URDF joint frame (the child link frame at q = 0).
    pub(crate) urdf_frame: IsometryMatrix3<f64>,
    pub(crate) limits: JointLimits,
    pub(crate) friction: Friction,
}

/// The chain: joints, lumped bodies and tip pose, all in the base link frame at q = 0.
#[derive(Debug, Clone)]
pub(crate) struct Chain {
    pub(crate) robot_name: String,
    pub(crate) base_link: String,
    pub(crate) tip_link: String,
    pub(crate) joints: Vec<ChainJoint>,
    /// Body i moves with joint i; base link frame, q = 0.
    pub(crate) bodies: Vec<RigidInertia>,
    pub(crate) tip_pose: IsometryMatrix3<f64>,
    /// Every walked URDF link: name, the chain body it moves with (none: fixed to the base),
    /// its frame in the base link frame at q = 0.
    pub(crate) link_poses: Vec<(String, Option<usize>, IsometryMatrix3<f64>)>,
    pub(crate) report: ChainReport,
}

impl Chain {
    pub(crate) fn extract(tree: &UrdfTree, options: &ChainOptions) -> Result<Self, ModelError> {
        let base = match &options.base_link {
            Some(name) => lookup_link(tree, "base", name)?,
            None => tree.root,
        };
        let tip = match &options.tip_link {
            Some(name) => lookup_link(tree, "tip", name)?,
            None => default_tip(tree, base)?,
        };
        let path = path_joints(tree, base, tip)?;
        let moving = path
            .iter()
            .filter(|&&j| tree.joints[j].kind.is_moving())
            .count();
        if moving > MAX_DOF {
            return Err(ModelError::TooLarge {
                what: "moving joints in the chain",
                count: moving,
                limit: MAX_DOF,
            });
        }
        let mut builder = ChainBuilder::new(tree, options, &path)?;
        builder.walk(base, IsometryMatrix3::identity(), None, None);
        let ChainBuilder {
            joints,
            bodies,
            report,
            tip_pose,
            link_poses,
            ..
        } = builder;
        if joints.is_empty() {
            return Err(ModelError::NoMovingJoint {
                base: tree.links[base].name.clone(),
                tip: tree.links[tip].name.clone(),
            });
        }
        Ok(Chain {
            robot_name: tree.name.clone(),
            base_link: tree.links[base].name.clone(),
            tip_link: tree.links[tip].name.clone(),
            joints,
            bodies,
            tip_pose: tip_pose.unwrap_or_else(IsometryMatrix3::identity),
            link_poses,
            report,
        })
    }
}

fn lookup_link(tree: &UrdfTree, role: &'static str, name: &str) -> Result<usize, ModelError> {
    tree.link(name).ok_or_else(|| ModelError::UnknownLink {
        role,
        link: name.to_string(),
    })
}

/// The only leaf below `base` whose path from `base` crosses a moving joint.
fn default_tip(tree: &UrdfTree, base: usize) -> Result<usize, ModelError> {
    let mut leaves = Vec::new();
    let mut stack = vec![(base, false)];
    while let Some((link, moved)) = stack.pop() {
        let children = &tree.links[link].child_joints;
        if children.is_empty() && moved {
            leaves.push(link);
        }
        for &j in children {
            let joint = &tree.joints[j];
            stack.push((joint.child, moved || joint.kind.is_moving()));
        }
    }
    match leaves.as_slice() {
        [tip] => Ok(*tip),
        [] => Err(ModelError::NoMovingJoint {
            base: tree.links[base].name.clone(),
            tip: "(any leaf)".into(),
        }),
        _ => {
            let mut names: Vec<&str> = leaves
                .iter()
                .map(|&l| tree.links[l].name.as_str())
                .collect();
            names.sort_unstable();
            Err(ModelError::AmbiguousTip {
                candidates: name_list(names.into_iter()),
            })
        }
    }
}

/// Joints from `base` down to `tip`, in that order.
fn path_joints(tree: &UrdfTree, base: usize, tip: usize) -> Result<Vec<usize>, ModelError> {
    let mut path = Vec::new();
    let mut link = tip;
    while link != base {
        match tree.links[link].parent_joint {
            Some(j) => {
                path.push(j);
                link = tree.joints[j].parent;
            }
            None => {
                return Err(ModelError::TipNotBelowBase {
                    base: tree.links[base].name.clone(),
                    tip: tree.links[tip].name.clone(),
                })
            }
        }
    }
    path.reverse();
    Ok(path)
}

fn checked_limits(name: &str, kind: TreeJointKind, l: &JointLimits) -> Result<(), ModelError> {
    let fail = |reason: &str| {
        Err(ModelError::InvalidLimit {
            joint: name.to_string(),
            reason: reason.to_string(),
        })
    };
    // Infinite: a continuous joint without <limit> (unknown; the controller needs it given).
    let unknown = kind == TreeJointKind::Continuous && l.effort == f64::INFINITY;
    if !unknown && (!l.effort.is_finite() || l.effort <= 0.0) {
        return fail("effort must be positive and finite: every command is saturated to it");
    }
    let velocity_known = l.velocity.is_finite() && l.velocity > 0.0;
    if !(unknown || velocity_known) {
        return fail("velocity must be positive and finite: the over-speed and plausibility checks, the default gains and the reference checks use it");
    }
    let ordered = l.lower < l.upper;
    if kind != TreeJointKind::Continuous && !ordered {
        return fail("lower must be below upper (use type continuous for an unlimited joint)");
    }
    Ok(())
}

struct ChainBuilder<'a> {
    tree: &'a UrdfTree,
    options: &'a ChainOptions,
    /// Chain index of each moving path joint; `usize::MAX` for fixed path joints.
    on_path: BTreeMap<usize, usize>,
    tip: usize,
    joints: Vec<ChainJoint>,
    bodies: Vec<RigidInertia>,
    report: ChainReport,
    tip_pose: Option<IsometryMatrix3<f64>>,
    link_poses: Vec<(String, Option<usize>, IsometryMatrix3<f64>)>,
    locked: BTreeMap<usize, f64>,
}

impl<'a> ChainBuilder<'a> {
    fn new(
        tree: &'a UrdfTree,
        options: &'a ChainOptions,
        path: &[usize],
    ) -> Result<Self, ModelError> {
        let mut on_path = BTreeMap::new();
        let mut n = 0;
        for &j in path {
            let joint = &tree.joints[j];
            if joint.kind.is_moving() {
                if let Some((mimicked, _, _)) = &joint.mimic {
                    return Err(ModelError::MimicOnChain {
                        joint: joint.name.clone(),
                        mimicked: mimicked.clone(),
                    });
                }
                checked_limits(&joint.name, joint.kind, &joint.limits)?;
                on_path.insert(j, n);
                n += 1;
            } else {
                on_path.insert(j, usize::MAX);
            }
        }
        let tip = path.last().map_or(tree.root, |&j| tree.joints[j].child);
        let locked = locked_positions(tree, options, &on_path)?;
        Ok(Self {
            tree,
            options,
            on_path,
            tip,
            joints: Vec::new(),
            bodies: Vec::new(),
            report: ChainReport::default(),
            tip_pose: None,
            link_poses: Vec::new(),
            locked,
        })
    }

    /// Depth-first walk from `link` at `pose`; `body` is the chain body it belongs to.
    fn walk(
        &mut self,
        link: usize,
        pose: IsometryMatrix3<f64>,
        body: Option<usize>,
        via: Option<usize>,
    ) {
        let tree = self.tree;
        self.add_link(link, &pose, body, via);
        if link == self.tip {
            self.tip_pose = Some(pose);
        }
        for &j in &tree.links[link].child_joints {
            let joint = &tree.joints[j];
            let frame = pose * joint.origin;
            match (self.on_path.get(&j).copied(), joint.kind.is_moving()) {
                (Some(index), true) => {
                    self.push_chain_joint(j, index, &frame);
                    self.walk(joint.child, frame, Some(index), Some(j));
                }
                (_, false) => self.walk(joint.child, frame, body, via),
                (None, true) => match self.options.branches {
                    BranchPolicy::Drop => self.drop_subtree(joint.child),
                    BranchPolicy::Lock => {
                        let q = self.locked.get(&j).copied().unwrap_or(0.0);
                        self.report.locked.push((joint.name.clone(), q));
                        self.walk(joint.child, frame * joint.motion(q), body, via);
                    }
                },
            }
        }
    }

    fn add_link(
        &mut self,
        link: usize,
        pose: &IsometryMatrix3<f64>,
        body: Option<usize>,
        via: Option<usize>,
    ) {
        let tree = self.tree;
        let name = tree.links[link].name.clone();
        self.link_poses.push((name.clone(), body, *pose));
        match (body, via) {
            (Some(b), Some(j)) => {
                let inertial = tree.links[link].inertial.transformed(pose);
                self.bodies[b] = self.bodies[b].combined(&inertial);
                if tree.joints[j].child != link {
                    self.report.lumped.push((name, tree.joints[j].name.clone()));
                }
            }
            _ => self.report.static_links.push(name),
        }
    }

    fn push_chain_joint(&mut self, j: usize, index: usize, frame: &IsometryMatrix3<f64>) {
        debug_assert_eq!(index, self.joints.len());
        let joint = &self.tree.joints[j];
        self.joints.push(ChainJoint {
            name: joint.name.clone(),
            kind: match joint.kind {
                TreeJointKind::Prismatic => JointKind::Prismatic,
                _ => JointKind::Revolute,
            },
            point: frame.translation.vector,
            axis: Unit::new_normalize(frame.rotation * joint.axis.into_inner()),
            urdf_frame: *frame,
            limits: joint.limits,
            friction: joint.friction,
        });
        self.bodies.push(RigidInertia::zero());
    }

    fn drop_subtree(&mut self, link: usize) {
        let mut stack = vec![link];
        while let Some(l) = stack.pop() {
            self.report.dropped.push(self.tree.links[l].name.clone());
            stack.extend(
                self.tree.links[l]
                    .child_joints
                    .iter()
                    .map(|&j| self.tree.joints[j].child),
            );
        }
    }
}

/// Positions of every off-chain moving joint under [`BranchPolicy::Lock`].
fn locked_positions(
    tree: &UrdfTree,
    options: &ChainOptions,
    on_path: &BTreeMap<usize, usize>,
) -> Result<BTreeMap<usize, f64>, ModelError> {
    let invalid = |joint: &str, reason: &str| ModelError::InvalidLock {
        joint: joint.to_string(),
        reason: reason.to_string(),
    };
    let mut locked = BTreeMap::new();
    for (name, &q) in &options.locked_positions {
        let j = tree
            .joint(name)
            .ok_or_else(|| invalid(name, "no such joint"))?;
        if on_path.contains_key(&j) || !tree.joints[j].kind.is_moving() {
            return Err(invalid(
                name,
                "only moving joints off the chain can be locked",
            ));
        }
        if !q.is_finite() {
            return Err(invalid(name, "position is not finite"));
        }
        locked.insert(j, q);
    }
    for (j, joint) in tree.joints.iter().enumerate() {
        if on_path.contains_key(&j) || !joint.kind.is_moving() || locked.contains_key(&j) {
            continue;
        }
        let q = match &joint.mimic {
            Some((master, multiplier, offset)) => {
                let m = tree
                    .joint(master)
                    .ok_or_else(|| invalid(&joint.name, "mimics a joint that does not exist"))?;
                if on_path.contains_key(&m) {
                    return Err(invalid(&joint.name, "it mimics a chain joint"));
                }
                let master_q = options
                    .locked_positions
                    .get(master)
                    .copied()
                    .unwrap_or_else(|| nearest_in_limits(0.0, &tree.joints[m].limits));
                multiplier * master_q + offset
            }
            None => nearest_in_limits(0.0, &joint.limits),
        };
        locked.insert(j, q);
    }
    Ok(locked)
}

fn nearest_in_limits(q: f64, limits: &JointLimits) -> f64 {
    if limits.lower <= limits.upper {
        q.clamp(limits.lower, limits.upper)
    } else {
        q
    }
}
