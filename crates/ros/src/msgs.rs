//! The ROS 2 messages the nodes use, as plain structs with the `.msg` fields in order (CDR
//! is field-order serde). DDS type names: `<pkg>::msg::dds_::<Type>_`.

use serde::{Deserialize, Serialize};

/// builtin_interfaces/Time.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Time {
    /// Seconds.
    pub sec: i32,
    /// Nanoseconds.
    pub nanosec: u32,
}

impl Time {
    /// From seconds.
    pub fn from_seconds(t: f64) -> Self {
        let sec = t.floor();
        Self {
            sec: sec as i32,
            nanosec: ((t - sec) * 1e9).round().min(999_999_999.0) as u32,
        }
    }
    /// The wall-clock time now, as ROS stamps wall-clock messages.
    pub fn now() -> Self {
        let since_epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Self::from_seconds(since_epoch.as_secs_f64())
    }
    /// As seconds.
    pub fn seconds(&self) -> f64 {
        self.sec as f64 + self.nanosec as f64 * 1e-9
    }
}

/// builtin_interfaces/Duration.
pub type Duration = Time;

/// std_msgs/Header.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Header {
    /// Stamp.
    pub stamp: Time,
    /// Frame.
    pub frame_id: String,
}

/// sensor_msgs/JointState.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct JointState {
    /// Header.
    pub header: Header,
    /// Joint names.
    pub name: Vec<String>,
    /// Positions.
    pub position: Vec<f64>,
    /// Velocities.
    pub velocity: Vec<f64>,
    /// Efforts.
    pub effort: Vec<f64>,
}

/// std_msgs/MultiArrayDimension.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MultiArrayDimension {
    /// Label.
    pub label: String,
    /// Size.
    pub size: u32,
    /// Stride.
    pub stride: u32,
}

/// std_msgs/MultiArrayLayout.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MultiArrayLayout {
    /// Dimensions.
    pub dim: Vec<MultiArrayDimension>,
    /// Offset of the first element.
    pub data_offset: u32,
}

/// std_msgs/Float64MultiArray.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Float64MultiArray {
    /// Layout.
    pub layout: MultiArrayLayout,
    /// Data.
    pub data: Vec<f64>,
}

/// trajectory_msgs/JointTrajectoryPoint.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct JointTrajectoryPoint {
    /// Positions.
    pub positions: Vec<f64>,
    /// Velocities (may be empty).
    pub velocities: Vec<f64>,
    /// Accelerations (may be empty).
    pub accelerations: Vec<f64>,
    /// Efforts (ignored).
    pub effort: Vec<f64>,
    /// Time from the start of the trajectory.
    pub time_from_start: Duration,
}

/// trajectory_msgs/JointTrajectory.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct JointTrajectory {
    /// Header.
    pub header: Header,
    /// Joint names.
    pub joint_names: Vec<String>,
    /// Points.
    pub points: Vec<JointTrajectoryPoint>,
}

/// geometry_msgs/Point and Vector3 (same layout).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Vector3 {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
    /// z.
    pub z: f64,
}

/// geometry_msgs/Quaternion.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Quaternion {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
    /// z.
    pub z: f64,
    /// w.
    pub w: f64,
}

/// geometry_msgs/Transform.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Transform {
    /// Translation.
    pub translation: Vector3,
    /// Rotation.
    pub rotation: Quaternion,
}

/// geometry_msgs/Twist.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Twist {
    /// Linear.
    pub linear: Vector3,
    /// Angular.
    pub angular: Vector3,
}

/// trajectory_msgs/MultiDOFJointTrajectoryPoint.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MultiDofJointTrajectoryPoint {
    /// Transforms.
    pub transforms: Vec<Transform>,
    /// Velocities.
    pub velocities: Vec<Twist>,
    /// Accelerations.
    pub accelerations: Vec<Twist>,
    /// Time from the start.
    pub time_from_start: Duration,
}

/// geometry_msgs/Pose.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Pose {
    /// Position.
    pub position: Vector3,
    /// Orientation.
    pub orientation: Quaternion,
}

impl Pose {
    /// The pose as an isometry; refused when a value is not finite or the quaternion is zero.
    pub fn to_isometry(&self) -> Result<nalgebra::IsometryMatrix3<f64>, String> {
        let (p, o) = (self.position, self.orientation);
        armctl_runtime::inputs::pose_from_parts([p.x, p.y, p.z], [o.x, o.y, o.z, o.w])
    }
}

/// geometry_msgs/PoseStamped.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PoseStamped {
    /// Header.
    pub header: Header,
    /// Pose.
    pub pose: Pose,
}

/// geometry_msgs/Wrench.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Wrench {
    /// Force.
    pub force: Vector3,
    /// Torque.
    pub torque: Vector3,
}

/// geometry_msgs/WrenchStamped.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct WrenchStamped {
    /// Header.
    pub header: Header,
    /// Wrench.
    pub wrench: Wrench,
}

/// control_msgs/JointTrajectoryControllerState as Jazzy's control_msgs has it (5.3 on; JTC's
/// `~/controller_state`): what PlotJuggler and rqt plot per named joint.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ControllerState {
    /// Header (stamp: the step's time).
    pub header: Header,
    /// The controlled joints.
    pub joint_names: Vec<String>,
    /// The reference: positions, velocities, accelerations.
    pub reference: JointTrajectoryPoint,
    /// The measured state: positions, velocities.
    pub feedback: JointTrajectoryPoint,
    /// reference - feedback: positions, velocities.
    pub error: JointTrajectoryPoint,
    /// The command: efforts.
    pub output: JointTrajectoryPoint,
    /// Multi-DOF joints (none).
    pub multi_dof_joint_names: Vec<String>,
    /// Multi-DOF reference (empty).
    pub multi_dof_reference: MultiDofJointTrajectoryPoint,
    /// Multi-DOF feedback (empty).
    pub multi_dof_feedback: MultiDofJointTrajectoryPoint,
    /// Multi-DOF error (empty).
    pub multi_dof_error: MultiDofJointTrajectoryPoint,
    /// Multi-DOF output (empty).
    pub multi_dof_output: MultiDofJointTrajectoryPoint,
    /// Speed scaling (always 1: the trajectory runs at its own speed).
    pub speed_scaling_factor: f64,
}

/// control_msgs/JointTrajectoryControllerState as Humble's control_msgs has it (4.4 on):
/// [`ControllerState`]'s fields without the speed scaling, plus the deprecated `desired` and
/// `actual` (copies of `reference` and `feedback`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ControllerStateHumble {
    /// Header.
    pub header: Header,
    /// The controlled joints.
    pub joint_names: Vec<String>,
    /// The reference.
    pub reference: JointTrajectoryPoint,
    /// The measured state.
    pub feedback: JointTrajectoryPoint,
    /// reference - feedback.
    pub error: JointTrajectoryPoint,
    /// The command.
    pub output: JointTrajectoryPoint,
    /// Deprecated: the reference.
    pub desired: JointTrajectoryPoint,
    /// Deprecated: the measured state.
    pub actual: JointTrajectoryPoint,
    /// Multi-DOF joints (none).
    pub multi_dof_joint_names: Vec<String>,
    /// Multi-DOF reference (empty).
    pub multi_dof_reference: MultiDofJointTrajectoryPoint,
    /// Multi-DOF feedback (empty).
    pub multi_dof_feedback: MultiDofJointTrajectoryPoint,
    /// Multi-DOF error (empty).
    pub multi_dof_error: MultiDofJointTrajectoryPoint,
    /// Multi-DOF output (empty).
    pub multi_dof_output: MultiDofJointTrajectoryPoint,
    /// Deprecated multi-DOF reference (empty).
    pub multi_dof_desired: MultiDofJointTrajectoryPoint,
    /// Deprecated multi-DOF feedback (empty).
    pub multi_dof_actual: MultiDofJointTrajectoryPoint,
}

impl ControllerStateHumble {
    /// Takes the values of `s` (buffers reused: a steady shape allocates nothing).
    pub fn copy_from(&mut self, s: &ControllerState) {
        self.header.clone_from(&s.header);
        self.joint_names.clone_from(&s.joint_names);
        self.reference.clone_from(&s.reference);
        self.feedback.clone_from(&s.feedback);
        self.error.clone_from(&s.error);
        self.output.clone_from(&s.output);
        self.desired.clone_from(&s.reference);
        self.actual.clone_from(&s.feedback);
    }
}

/// rosgraph_msgs/Clock.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Clock {
    /// Time.
    pub clock: Time,
}

/// rcl_interfaces/Log, what `/rosout` carries.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Log {
    /// When.
    pub stamp: Time,
    /// Severity: 10 debug, 20 info, 30 warn, 40 error, 50 fatal.
    pub level: u8,
    /// Logger (node) name.
    pub name: String,
    /// Text.
    pub msg: String,
    /// Source file.
    pub file: String,
    /// Function.
    pub function: String,
    /// Line.
    pub line: u32,
}

/// std_msgs/String: how robot_state_publisher publishes the URDF on `/robot_description`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StringMsg {
    /// The text.
    pub data: String,
}

/// diagnostic_msgs/KeyValue.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct KeyValue {
    /// Key.
    pub key: String,
    /// Value.
    pub value: String,
}

/// diagnostic_msgs/DiagnosticStatus.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DiagnosticStatus {
    /// [`DiagnosticStatus::OK`], `WARN`, `ERROR` or `STALE`.
    pub level: u8,
    /// What is reported on ("controller_node: control loop").
    pub name: String,
    /// A one-line summary.
    pub message: String,
    /// The hardware (the robot's name).
    pub hardware_id: String,
    /// The values.
    pub values: Vec<KeyValue>,
}

impl DiagnosticStatus {
    /// Level: all is well.
    pub const OK: u8 = 0;
    /// Level: a warning.
    pub const WARN: u8 = 1;
    /// Level: an error.
    pub const ERROR: u8 = 2;
    /// Level: no recent data.
    pub const STALE: u8 = 3;
}

/// diagnostic_msgs/DiagnosticArray, what `/diagnostics` carries.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DiagnosticArray {
    /// Header.
    pub header: Header,
    /// One status per reported item.
    pub status: Vec<DiagnosticStatus>,
}

/// `~/state` as a labelled Float64MultiArray: one dimension per block, `size` values each
/// (labels are rewritten only when they change, so a steady shape allocates nothing).
pub fn labelled_array(blocks: &[(&str, &[f64])], out: &mut Float64MultiArray) {
    out.layout.dim.truncate(blocks.len());
    out.layout.data_offset = 0;
    out.data.clear();
    for (k, (label, values)) in blocks.iter().enumerate() {
        if k == out.layout.dim.len() {
            out.layout.dim.push(MultiArrayDimension::default());
        }
        let dim = &mut out.layout.dim[k];
        if dim.label != *label {
            dim.label.clear();
            dim.label.push_str(label);
        }
        dim.size = values.len() as u32;
        dim.stride = values.len() as u32;
        out.data.extend_from_slice(values);
    }
}

/// The block labelled `label` of a [`labelled_array`] (none when absent or inconsistent).
pub fn labelled_block<'a>(msg: &'a Float64MultiArray, label: &str) -> Option<&'a [f64]> {
    let mut start = msg.layout.data_offset as usize;
    for dim in &msg.layout.dim {
        let end = start + dim.size as usize;
        if dim.label == label {
            return msg.data.get(start..end);
        }
        start = end;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labelled_blocks_round_trip_and_reuse_labels() {
        let mut msg = Float64MultiArray::default();
        labelled_array(&[("a", &[1.0, 2.0]), ("b", &[]), ("c", &[3.0])], &mut msg);
        assert_eq!(labelled_block(&msg, "a"), Some(&[1.0, 2.0][..]));
        assert_eq!(labelled_block(&msg, "b"), Some(&[][..]));
        assert_eq!(labelled_block(&msg, "c"), Some(&[3.0][..]));
        assert_eq!(labelled_block(&msg, "d"), None);
        let label_buffer = msg.layout.dim[0].label.as_ptr();
        labelled_array(&[("a", &[5.0, 6.0]), ("c", &[7.0])], &mut msg);
        assert_eq!(msg.layout.dim[0].label.as_ptr(), label_buffer);
        assert_eq!(labelled_block(&msg, "c"), Some(&[7.0][..]));
        assert_eq!(msg.data, vec![5.0, 6.0, 7.0]);
    }

    #[test]
    fn time_round_trips_through_seconds() {
        let t = Time::from_seconds(12.345_678_9);
        assert_eq!((t.sec, t.nanosec), (12, 345_678_900));
        assert!((t.seconds() - 12.345_678_9).abs() < 1e-9);
    }
}
