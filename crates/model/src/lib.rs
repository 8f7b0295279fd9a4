//! # armctl_model
//!
//! A serial arm as a Craig modified Denavit-Hartenberg (MDH) model, converted from a URDF,
//! and its kinematics.
//!
//! ```
//! use armctl_model::{forward_kinematics, ChainOptions, KinematicsWorkspace, Robot};
//!
//! let urdf = r#"<robot name="one">
//!   <link name="base"/> <link name="arm"/> <link name="tip"/>
//!   <joint name="shoulder" type="revolute">
//!     <parent link="base"/> <child link="arm"/> <origin xyz="0 0 0.5"/> <axis xyz="0 0 1"/>
//!     <limit lower="-3" upper="3" effort="10" velocity="2"/>
//!   </joint>
//!   <joint name="flange" type="fixed">
//!     <parent link="arm"/> <child link="tip"/> <origin xyz="0.4 0 0"/>
//!   </joint>
//! </robot>"#;
//! let robot = Robot::from_urdf_str(urdf, &ChainOptions::default())?;
//! assert_eq!(robot.dof(), 1);
//! assert!((robot.joints()[0].mdh.d() - 0.5).abs() < 1e-12); // the base frame is kept as {0}
//! let mut ws = KinematicsWorkspace::new(&robot);
//! let tip = forward_kinematics(&robot, &mut ws, &[std::f64::consts::FRAC_PI_2])?.tip();
//! assert!((tip.translation.vector - nalgebra::Vector3::new(0.0, 0.4, 0.5)).norm() < 1e-12);
//! # Ok::<(), armctl_model::ModelError>(())
//! ```
//!
//! ## Limitations
//! - Serial chains of revolute, continuous and prismatic joints only; mimic joints are
//!   accepted off the chain (they are locked), refused on it; floating and planar joints are
//!   refused.
//! - Axes within the tolerance of parallel are treated as parallel; the converter reports the
//!   resulting tip-pose difference ([`ConversionReport::fk_residual`]).

#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

mod chain;
mod conversion;
mod error;
pub mod files;
mod forward_kinematics;
mod inertia;
mod jacobian;
mod jacobian_dot_qd;
mod joint;
mod kinematics_workspace;
mod mdh_frames;
mod payload;
mod robot;
#[cfg(test)]
mod test_robots;
#[cfg(feature = "test-support")]
pub mod test_support;
mod urdf_errors;
mod urdf_scan;
mod urdf_tree;
pub mod xacro;

pub use chain::{BranchPolicy, ChainOptions, ChainReport, MAX_DOF};
pub use conversion::{urdf_file_to_robot, urdf_to_robot, Conversion, ConversionReport, LinkFrame};
pub use error::{check_length, LengthMismatch, ModelError};
pub use forward_kinematics::{forward_kinematics, FrameId, FramePoses};
pub use inertia::{LinkParameters, RigidInertia, PARAMS_PER_LINK};
pub use jacobian::{jacobian, point_jacobian};
pub use jacobian_dot_qd::jacobian_dot_qd;
pub use joint::{Friction, Joint, JointKind, JointLimits, MdhParams, MAX_FRICTION_HARMONICS};
pub use kinematics_workspace::KinematicsWorkspace;
pub use payload::Payload;
pub use robot::{Robot, RobotParts, DEFAULT_GRAVITY};
pub use urdf_errors::MAX_XML_DEPTH;
pub use urdf_tree::{MAX_LINKS, MAX_NAME_BYTES};
