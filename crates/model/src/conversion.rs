//! URDF text -> [`Robot`]: parse and check the tree, cut out the chain, place the MDH frames,
//! read off the parameters, re-express the inertials, and check the result against the
//! URDF's own kinematics.

use std::path::Path;

use nalgebra::{IsometryMatrix3, Rotation3, Translation3, Vector3};

use crate::chain::{Chain, ChainJoint};
use crate::mdh_frames::{base_frame_is_valid, mdh_parameters, place_frame, Neighbour};
use crate::urdf_errors;
use crate::urdf_tree::UrdfTree;
use crate::{
    forward_kinematics, ChainOptions, ChainReport, Joint, JointKind, KinematicsWorkspace,
    MdhParams, ModelError, Robot, RobotParts, DEFAULT_GRAVITY,
};

/// Sine of the angle below which skew axes are reported as nearly parallel.
const NEARLY_PARALLEL: f64 = 1e-3;
/// Number of configurations the converted model is checked at.
const SELF_CHECK_SAMPLES: usize = 16;
/// Largest tolerance accepted (rad, m): beyond it, snapping axes to parallel or intersecting
/// moves the tip by more than a real arm's calibration error.
pub(crate) const MAX_TOLERANCE: f64 = 1e-2;
/// Largest tip-pose difference (elements of the 4x4 pose, m or unitless) between the model and
/// the URDF a conversion may keep: beyond it the model is a different arm.
pub(crate) const MAX_FK_RESIDUAL: f64 = 1e-3;

/// A converted model and what the conversion did.
#[derive(Debug, Clone)]
pub struct Conversion {
    /// The model.
    pub robot: Robot,
    /// What happened on the way.
    pub report: ConversionReport,
}

/// What the conversion did and how well the result matches the URDF.
#[derive(Debug, Clone, PartialEq)]
pub struct ConversionReport {
    /// Lumped, locked, dropped and static links.
    pub chain: ChainReport,
    /// For MDH frames {0}..{n}: whether the URDF link frame was kept (rule 1).
    pub urdf_frame_kept: Vec<bool>,
    /// Largest element-wise difference between the MDH tip pose and the URDF tip pose (4x4
    /// homogeneous matrices) over a set of configurations within the limits. Rounding-level for
    /// exact geometry; up to tolerance times the reach when axes were snapped to parallel.
    pub fk_residual: f64,
    /// Things a user should know: nearly parallel axes, unphysical inertias.
    pub warnings: Vec<String>,
    /// Where each URDF link of the chain (lumped and static ones included) sits on the model.
    pub link_frames: Vec<LinkFrame>,
}

/// A URDF link frame on the model: fixed in MDH frame `{frame}` at `pose`. Points given on a
/// URDF link (contact points, sensors) reach the model through it.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkFrame {
    /// The URDF link's name.
    pub link: String,
    /// The MDH frame it is fixed in: 0 for links fixed to the base, i for the link of joint i
    /// (1-based, as the MDH frames).
    pub frame: usize,
    /// The URDF link frame in that MDH frame.
    pub pose: IsometryMatrix3<f64>,
}

impl ConversionReport {
    /// The frame of URDF link `link`, if it is on the chain.
    pub fn link_frame(&self, link: &str) -> Option<&LinkFrame> {
        self.link_frames.iter().find(|f| f.link == link)
    }
}

/// Converts URDF text with the given options. An error about an element of the text says the
/// line it starts on.
pub fn urdf_to_robot(text: &str, options: &ChainOptions) -> Result<Conversion, ModelError> {
    let tree = UrdfTree::parse(text).map_err(|e| urdf_errors::with_line(text, e))?;
    convert_tree(&tree, options).map_err(|e| urdf_errors::with_line(text, e))
}

fn convert_tree(tree: &UrdfTree, options: &ChainOptions) -> Result<Conversion, ModelError> {
    let tolerance = checked_tolerance(options.tolerance)?;
    let chain = Chain::extract(tree, options)?;
    let n = chain.joints.len();
    let neighbours: Vec<Neighbour> = (0..n)
        .map(|i| match chain.joints.get(i + 1) {
            Some(next) => Neighbour::between(&chain.joints[i], next, tolerance),
            None => Neighbour::Last,
        })
        .collect();
    let (frames, kept) = place_frames(&chain.joints, &neighbours, tolerance);
    let robot = build_robot(&chain, &frames)?;
    let mut warnings = nearly_parallel_warnings(&chain.joints, &neighbours);
    warnings.extend(inertia_warnings(tree));
    let fk_residual = checked_residual(self_check(&robot, &chain), tolerance)?;
    let link_frames = chain
        .link_poses
        .iter()
        .map(|(link, body, pose)| {
            let frame = body.map_or(0, |b| b + 1);
            LinkFrame {
                link: link.clone(),
                frame,
                pose: frames[frame].inverse() * pose,
            }
        })
        .collect();
    Ok(Conversion {
        robot,
        report: ConversionReport {
            chain: chain.report,
            urdf_frame_kept: kept,
            fk_residual,
            warnings,
            link_frames,
        },
    })
}

fn checked_tolerance(tolerance: f64) -> Result<f64, ModelError> {
    if tolerance > 0.0 && tolerance <= MAX_TOLERANCE {
        return Ok(tolerance);
    }
    Err(ModelError::InvalidModel {
        reason: format!(
            "tolerance {tolerance:e} is outside (0, {MAX_TOLERANCE:e}] (rad, m): a larger one \
             snaps axes that are not parallel or intersecting and moves the tip"
        ),
    })
}

fn checked_residual(fk_residual: f64, tolerance: f64) -> Result<f64, ModelError> {
    if fk_residual <= MAX_FK_RESIDUAL {
        return Ok(fk_residual);
    }
    Err(ModelError::InvalidModel {
        reason: format!(
            "the converted model's tip pose differs from the URDF's by {fk_residual:.3e} \
             (at most {MAX_FK_RESIDUAL:e} is kept): tolerance {tolerance:e} treats axes that \
             are not parallel or intersecting as if they were; use a smaller tolerance"
        ),
    })
}

/// Reads and converts a URDF file.
pub fn urdf_file_to_robot(path: &Path, options: &ChainOptions) -> Result<Conversion, ModelError> {
    if crate::xacro::is_xacro(path) {
        let text = crate::xacro::expand(path, &options.xacro_args)?;
        return urdf_to_robot(&text, options);
    }
    let text =
        crate::files::read_text_bounded(path, crate::files::MAX_URDF_BYTES).map_err(|reason| {
            ModelError::Io {
                path: path.display().to_string(),
                reason,
            }
        })?;
    urdf_to_robot(&text, options)
}

impl Robot {
    /// Converts URDF text (for example the `robot_description` parameter).
    pub fn from_urdf_str(text: &str, options: &ChainOptions) -> Result<Robot, ModelError> {
        urdf_to_robot(text, options).map(|c| c.robot)
    }

    /// Reads and converts a URDF file.
    pub fn from_urdf_file(
        path: impl AsRef<Path>,
        options: &ChainOptions,
    ) -> Result<Robot, ModelError> {
        urdf_file_to_robot(path.as_ref(), options).map(|c| c.robot)
    }
}

/// MDH frames {0}..{n} in the base link frame at q = 0, and which were URDF frames.
fn place_frames(
    joints: &[ChainJoint],
    neighbours: &[Neighbour],
    tolerance: f64,
) -> (Vec<IsometryMatrix3<f64>>, Vec<bool>) {
    let mut frames = Vec::with_capacity(joints.len() + 1);
    let mut kept = Vec::with_capacity(joints.len() + 1);
    if base_frame_is_valid(&joints[0], tolerance) {
        frames.push(IsometryMatrix3::identity());
        kept.push(true);
    }
    for (i, joint) in joints.iter().enumerate() {
        let (frame, urdf) = place_frame(joint, &neighbours[i], frames.last(), tolerance);
        if frames.is_empty() {
            // Frame {0} coincides with frame {1} at q_1 = 0.
            frames.push(frame);
            kept.push(false);
        }
        frames.push(frame);
        kept.push(urdf);
    }
    (frames, kept)
}

fn build_robot(chain: &Chain, frames: &[IsometryMatrix3<f64>]) -> Result<Robot, ModelError> {
    let joints = chain
        .joints
        .iter()
        .enumerate()
        .map(|(i, cj)| {
            let [a, alpha, d, theta] = mdh_parameters(&(frames[i].inverse() * frames[i + 1]));
            Joint {
                name: cj.name.clone(),
                kind: cj.kind,
                mdh: MdhParams::new(a, alpha, d, theta),
                limits: cj.limits,
                friction: cj.friction,
                armature: 0.0,
            }
        })
        .collect();
    let links = chain
        .bodies
        .iter()
        .zip(&frames[1..])
        .map(|(body, frame)| body.transformed(&frame.inverse()))
        .collect();
    Robot::new(RobotParts {
        name: chain.robot_name.clone(),
        base_link: chain.base_link.clone(),
        tip_link: chain.tip_link.clone(),
        joints,
        links,
        base: frames[0],
        tool: frames[frames.len() - 1].inverse() * chain.tip_pose,
        gravity: Vector3::from(DEFAULT_GRAVITY),
    })
}

fn nearly_parallel_warnings(joints: &[ChainJoint], neighbours: &[Neighbour]) -> Vec<String> {
    joints
        .windows(2)
        .zip(neighbours)
        .filter_map(|(pair, relation)| {
            let sine = pair[0].axis.cross(&pair[1].axis).norm();
            match relation {
                Neighbour::Skew { .. } | Neighbour::Intersecting { .. } if sine < NEARLY_PARALLEL => Some(format!(
                    "axes of joints '{}' and '{}' are nearly parallel (angle {:.3e} rad) but not within the tolerance: \
                     their common normal is far from the arm and the table is ill-conditioned; \
                     tolerance {:.0e} treats them as parallel",
                    pair[0].name,
                    pair[1].name,
                    sine.asin(),
                    sine * 10.0
                )),
                _ => None,
            }
        })
        .collect()
}

/// Every URDF link whose own inertial breaks the triangle inequality, named with the joint
/// that moves it: checked on the links as written, since a fixed joint merges a light broken
/// link into a heavier body that hides it.
fn inertia_warnings(tree: &UrdfTree) -> Vec<String> {
    tree.links
        .iter()
        .filter(|link| {
            let body = &link.inertial;
            !body.satisfies_triangle_inequality(1e-9 * body.inertia_com.abs().max())
        })
        .map(|link| {
            let joint = link
                .parent_joint
                .map_or_else(String::new, |j| format!(" (child of joint '{}')", tree.joints[j].name));
            format!(
                "link '{}'{joint}: principal moments break the triangle inequality (no real body has them; \
                 common for links that carry only a rotor inertia)",
                link.name
            )
        })
        .collect()
}

/// Rigid motion of joint `j` by `q` about or along its axis (base link frame, q = 0 geometry).
fn screw_motion(j: &ChainJoint, q: f64) -> IsometryMatrix3<f64> {
    match j.kind {
        JointKind::Revolute => {
            let r = Rotation3::from_axis_angle(&j.axis, q);
            IsometryMatrix3::from_parts(Translation3::from(j.point - r * j.point), r)
        }
        JointKind::Prismatic => IsometryMatrix3::from_parts(
            Translation3::from(j.axis.into_inner() * q),
            Rotation3::identity(),
        ),
    }
}

/// The tip pose by the product of exponentials of the URDF axes: independent of the MDH frames.
pub(crate) fn urdf_tip_pose(chain: &Chain, q: &[f64]) -> IsometryMatrix3<f64> {
    chain
        .joints
        .iter()
        .zip(q)
        .fold(IsometryMatrix3::identity(), |t, (j, &qi)| {
            t * screw_motion(j, qi)
        })
        * chain.tip_pose
}

/// Largest tip-pose difference between the MDH model and the URDF over sample configurations.
fn self_check(robot: &Robot, chain: &Chain) -> f64 {
    let mut ws = KinematicsWorkspace::new(robot);
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut unit = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut worst = 0.0f64;
    for _ in 0..SELF_CHECK_SAMPLES {
        let q: Vec<f64> = robot
            .joints()
            .iter()
            .map(|j| j.limits.position_at(unit()))
            .collect();
        let Ok(poses) = forward_kinematics(robot, &mut ws, &q) else {
            return f64::INFINITY;
        };
        let mdh = poses.tip();
        let urdf = urdf_tip_pose(chain, &q);
        worst = worst.max((mdh.to_homogeneous() - urdf.to_homogeneous()).abs().max());
    }
    worst
}
