//! The C ABI of armctl's controller runtime, for the ros2_control controller plugin
//! (`ros2_control/armctl_controllers`) and any other C or C++ host. It wraps
//! [`armctl_runtime::group_loop::GroupLoop`], the same runtime controller_node
//! runs (joint mapping, references and their checks, the safety layer, hold rules, node
//! parameters), so both paths behave the same. The header is `include/armctl.h`, generated
//! with cbindgen (`crates/capi/cbindgen.toml`; a test fails when it is stale).
//!
//! # Thread rules
//! - A handle is used by one thread at a time; nothing in it locks. In a ros2_control
//!   controller that thread is the real-time one: `armctl_update` runs there, and so do
//!   `armctl_set_parameter`, `armctl_set_trajectory`, `armctl_set_target_pose` and
//!   `armctl_set_external_wrench` (and their `_in` forms with a frame) when the plugin hands over what other threads prepared
//!   (through realtime_tools buffers), between two updates.
//! - `armctl_update` (and `armctl_update_partial`) allocates nothing and takes no lock, from
//!   the first call on, while it controls, holds (NaN, unreadable, implausible, stale states)
//!   or resumes; the one exception is a control law that fails, whose error text is
//!   allocated. It never unwinds into the caller.
//! - Handing over a change allocates on the calling thread, in proportion to its size
//!   (`tests/c_abi/update.rs` measures 2 blocks for a number, 5 for a 7-joint gain array, 36
//!   for a 2-point trajectory), as joint_trajectory_controller does when it takes a new trajectory
//!   in its update. `armctl_fault_text` allocates nothing. `armctl_validate_parameter` is
//!   meant for a non-real-time thread (with a handle of its own if `armctl_update` may run
//!   meanwhile, since a handle is not shared between threads).
//! - Every entry point catches a panic and returns [`ArmctlStatus::Panicked`]; after one the
//!   handle refuses everything but `armctl_safe_command` (which still tries the gravity hold),
//!   `armctl_last_error` and `armctl_free`.
//!
//! # Arrays and strings
//! Joint arrays (positions, velocities, efforts, trajectory points) have one value per joint
//! in the order given at creation (`ArmctlConfig::joints`). Strings are NUL-terminated UTF-8.
//! Strings the library returns live until the next call on the same handle.

// The entry points are the C ABI: their pointer contract is the header's documentation (null
// is checked, everything else is the C caller's promise), so they are not `unsafe fn` to Rust.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

mod estimates;
mod handle;
mod parameter_scope;
mod parameters;
mod reference;
mod status;
mod update;
mod values;

pub use estimates::{
    armctl_external_torque_bounds, armctl_external_torques, armctl_external_wrench,
};
pub use handle::ArmctlController;
pub use handle::{
    armctl_base_link, armctl_create, armctl_free, armctl_joint_count, armctl_last_error,
    armctl_tip_link, ArmctlConfig,
};
pub use parameter_scope::ArmctlParameterScope;
pub use parameters::{
    armctl_config_parameter_count, armctl_config_parameter_info, armctl_parameter_count,
    armctl_parameter_info, armctl_set_parameter, armctl_validate_parameter, ArmctlParameterInfo,
};
pub use reference::{
    armctl_set_external_wrench, armctl_set_external_wrench_in, armctl_set_target_pose,
    armctl_set_target_pose_in, armctl_set_trajectory, ArmctlTrajectoryPoint,
};
pub use status::{ArmctlFault, ArmctlStatus, ArmctlUpdateStatus};
pub use update::{
    armctl_fault_text, armctl_reset, armctl_safe_command, armctl_update, armctl_update_partial,
};
pub use values::{ArmctlNamedValue, ArmctlParameterType, ArmctlValue};
