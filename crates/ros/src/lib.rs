//! # armctl_ros
//!
//! The ROS 2 side of armctl: `controller_node` and `sim_node`.
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

pub mod controller_core;
mod error;
pub mod joint_map;
pub mod node_parameters;
pub mod params_file;
pub mod ros_args;

pub use error::RosError;
