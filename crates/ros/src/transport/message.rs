//! What every message type the transports carry is: its ROS package and name, and what the
//! enabled backends need of it.

use serde::Serialize;

use crate::msgs::{
    Clock, ControllerState, ControllerStateHumble, DiagnosticArray, Float64MultiArray, JointState,
    JointTrajectory, Log, PoseStamped, StringMsg, WrenchStamped,
};
use crate::services::parameter_msgs::ParameterEvent;

/// A ROS message type: its package and name (the DDS type is
/// `<package>::msg::dds_::<name>_`, the CDR payload its fields in order), and whatever the
/// enabled backends need to carry it ([`BackendMessage`]).
pub trait Message:
    Serialize
    + serde::de::DeserializeOwned
    + Clone
    + std::fmt::Debug
    + Send
    + Sync
    + 'static
    + BackendMessage
{
    /// The package, e.g. `sensor_msgs`.
    const PACKAGE: &'static str;
    /// The type name, e.g. `JointState`.
    const NAME: &'static str;
}

macro_rules! message_types {
    ($($ty:ident = $package:literal / $name:literal),* $(,)?) => {
        $(impl Message for $ty {
            const PACKAGE: &'static str = $package;
            const NAME: &'static str = $name;
        })*
    };
}

message_types! {
    JointState = "sensor_msgs" / "JointState",
    Float64MultiArray = "std_msgs" / "Float64MultiArray",
    JointTrajectory = "trajectory_msgs" / "JointTrajectory",
    PoseStamped = "geometry_msgs" / "PoseStamped",
    WrenchStamped = "geometry_msgs" / "WrenchStamped",
    Clock = "rosgraph_msgs" / "Clock",
    Log = "rcl_interfaces" / "Log",
    StringMsg = "std_msgs" / "String",
    DiagnosticArray = "diagnostic_msgs" / "DiagnosticArray",
    ControllerState = "control_msgs" / "JointTrajectoryControllerState",
    ControllerStateHumble = "control_msgs" / "JointTrajectoryControllerState",
    ParameterEvent = "rcl_interfaces" / "ParameterEvent",
}

/// What a backend needs of every message type besides [`Message`]: with `r2r`, the conversion
/// to and from rcl's generated types.
#[cfg(feature = "r2r")]
pub use super::rcl::RclMessage as BackendMessage;

/// What a backend needs of every message type besides [`Message`] (nothing without `r2r`).
#[cfg(not(feature = "r2r"))]
pub trait BackendMessage {}

#[cfg(not(feature = "r2r"))]
impl<T> BackendMessage for T {}
