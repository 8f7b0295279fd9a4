//! # armctl_runtime
//!
//! The controller as a node runs it, without any middleware: the controller core (newest
//! joint state in, safe effort out: joint mapping by name, references, hold and resume, the
//! safety layer), the node parameters declared once with their descriptions and bounds, ROS 2
//! parameter files and `--ros-args`, name resolution, the node clock and identified-model
//! parameters. `armctl_nodes` puts it on DDS or rcl; `armctl sim` runs it against the embedded
//! simulator; the C ABI of the ros2_control plugin wraps it.
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

pub mod configure;
pub mod controller_core;
pub mod declarations;
mod error;
pub mod frames;
pub mod group_loop;
pub mod inputs;
pub mod joint_map;
pub mod loop_timing;
pub mod model_parameters;
pub mod names;
pub mod node_clock;
pub mod node_configuration;
pub mod node_parameters;
pub mod parameter_reference;
pub mod parameter_services;
pub mod params_file;
pub mod payload_service;
pub mod ros_args;
pub mod scene;

pub mod settings;
pub mod simulated_loop;
pub mod startup;
pub mod trajectory_goal;

pub use error::RuntimeError;
