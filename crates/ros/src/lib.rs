//! # armctl_nodes
//!
//! The ROS 2 side of armctl: the nodes `controller_node` and `sim_node` ([`nodes`]) on the
//! [`transport::Transport`] trait, with the DDS backend (ros2-client, default feature `dds`)
//! and the rcl backend (r2r, feature `r2r`); the parameter services; rosbag2 joint-state logs.
//! What a node does without a middleware (the controller core, parameters, parameter files,
//! `--ros-args`) is in `armctl_runtime`.
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

pub mod bag;
#[cfg(feature = "dds")]
pub mod demo;
mod error;
pub mod follow_joint_trajectory;
#[cfg(any(feature = "dds", feature = "r2r"))]
pub mod launch;
pub mod msgs;
pub mod nodes;
pub use armctl_runtime::parameter_services;
pub mod realtime;
pub mod services;
pub mod ticker;
pub mod transport;

pub use error::RosError;
