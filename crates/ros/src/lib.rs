//! # armctl_ros
//!
//! The ROS 2 side of armctl: `controller_node` and `sim_node`, their parameters (declared
//! once, shared by both middleware backends), and the transport trait with the DDS backend
//! (ros2-client, default) and the rcl backend (r2r, feature `r2r`).
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

pub mod bag;
pub mod controller_core;
pub mod controller_node;
#[cfg(feature = "dds")]
pub mod dds;
#[cfg(feature = "dds")]
mod dds_parameters;
pub mod declarations;
#[cfg(feature = "dds")]
pub mod demo;
mod error;
pub mod joint_map;
#[cfg(any(feature = "dds", feature = "r2r"))]
pub mod launch;
pub mod model_parameters;
pub mod msgs;
pub mod names;
pub mod node_clock;
pub mod node_parameters;
pub mod parameter_services;
pub mod params_file;
#[cfg(feature = "r2r")]
pub mod rcl;
pub mod ros_args;
pub mod sim_node;
pub mod startup;
pub mod ticker;
pub mod transport;

pub use error::RosError;
