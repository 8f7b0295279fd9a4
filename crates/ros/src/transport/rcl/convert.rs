//! Conversions between armctl's messages ([`crate::msgs`]) and r2r's generated types, and the
//! [`RclMessage`] of each message type; every outgoing string passes [`text`].

use r2r::{
    builtin_interfaces, diagnostic_msgs, geometry_msgs, rcl_interfaces, rosgraph_msgs, sensor_msgs,
    std_msgs, trajectory_msgs,
};

use crate::msgs;

/// `s` as rcl can carry it: r2r copies strings into C strings and panics on a NUL byte, which
/// a peer's message or request can hold (joint names, parameter names echoed in replies): each
/// goes out as the two characters `\0`.
pub(super) fn text(s: &str) -> String {
    if s.contains('\0') {
        s.replace('\0', "\\0")
    } else {
        s.to_string()
    }
}

/// [`text`] for each string of a list.
pub(super) fn texts(list: &[String]) -> Vec<String> {
    list.iter().map(|s| text(s)).collect()
}

pub(super) fn time_in(t: &builtin_interfaces::msg::Time) -> msgs::Time {
    msgs::Time {
        sec: t.sec,
        nanosec: t.nanosec,
    }
}

pub(super) fn time_out(t: &msgs::Time) -> builtin_interfaces::msg::Time {
    builtin_interfaces::msg::Time {
        sec: t.sec,
        nanosec: t.nanosec,
    }
}

pub(super) fn duration_in(t: &builtin_interfaces::msg::Duration) -> msgs::Duration {
    msgs::Duration {
        sec: t.sec,
        nanosec: t.nanosec,
    }
}

pub(super) fn duration_out(t: &msgs::Duration) -> builtin_interfaces::msg::Duration {
    builtin_interfaces::msg::Duration {
        sec: t.sec,
        nanosec: t.nanosec,
    }
}

pub(super) fn header_in(h: &std_msgs::msg::Header) -> msgs::Header {
    msgs::Header {
        stamp: time_in(&h.stamp),
        frame_id: h.frame_id.clone(),
    }
}

pub(super) fn header_out(h: &msgs::Header) -> std_msgs::msg::Header {
    std_msgs::msg::Header {
        stamp: time_out(&h.stamp),
        frame_id: text(&h.frame_id),
    }
}

fn diagnostics_in(m: diagnostic_msgs::msg::DiagnosticArray) -> msgs::DiagnosticArray {
    let status = m.status.into_iter().map(|s| msgs::DiagnosticStatus {
        level: s.level,
        name: s.name,
        message: s.message,
        hardware_id: s.hardware_id,
        values: s
            .values
            .into_iter()
            .map(|kv| msgs::KeyValue {
                key: kv.key,
                value: kv.value,
            })
            .collect(),
    });
    msgs::DiagnosticArray {
        header: header_in(&m.header),
        status: status.collect(),
    }
}

fn diagnostics_out(m: &msgs::DiagnosticArray) -> diagnostic_msgs::msg::DiagnosticArray {
    let status = m
        .status
        .iter()
        .map(|s| diagnostic_msgs::msg::DiagnosticStatus {
            level: s.level,
            name: text(&s.name),
            message: text(&s.message),
            hardware_id: text(&s.hardware_id),
            values: s
                .values
                .iter()
                .map(|kv| diagnostic_msgs::msg::KeyValue {
                    key: text(&kv.key),
                    value: text(&kv.value),
                })
                .collect(),
        });
    diagnostic_msgs::msg::DiagnosticArray {
        header: header_out(&m.header),
        status: status.collect(),
    }
}

fn joint_state_in(m: sensor_msgs::msg::JointState) -> msgs::JointState {
    msgs::JointState {
        header: header_in(&m.header),
        name: m.name,
        position: m.position,
        velocity: m.velocity,
        effort: m.effort,
    }
}

fn joint_state_out(m: &msgs::JointState) -> sensor_msgs::msg::JointState {
    sensor_msgs::msg::JointState {
        header: header_out(&m.header),
        name: texts(&m.name),
        position: m.position.clone(),
        velocity: m.velocity.clone(),
        effort: m.effort.clone(),
    }
}

fn array_in(m: std_msgs::msg::Float64MultiArray) -> msgs::Float64MultiArray {
    let dim = m
        .layout
        .dim
        .into_iter()
        .map(|d| msgs::MultiArrayDimension {
            label: d.label,
            size: d.size,
            stride: d.stride,
        })
        .collect();
    msgs::Float64MultiArray {
        layout: msgs::MultiArrayLayout {
            dim,
            data_offset: m.layout.data_offset,
        },
        data: m.data,
    }
}

fn array_out(m: &msgs::Float64MultiArray) -> std_msgs::msg::Float64MultiArray {
    let dim = m
        .layout
        .dim
        .iter()
        .map(|d| std_msgs::msg::MultiArrayDimension {
            label: text(&d.label),
            size: d.size,
            stride: d.stride,
        })
        .collect();
    std_msgs::msg::Float64MultiArray {
        layout: std_msgs::msg::MultiArrayLayout {
            dim,
            data_offset: m.layout.data_offset,
        },
        data: m.data.clone(),
    }
}

pub(super) fn point_in(
    p: trajectory_msgs::msg::JointTrajectoryPoint,
) -> msgs::JointTrajectoryPoint {
    msgs::JointTrajectoryPoint {
        time_from_start: duration_in(&p.time_from_start),
        positions: p.positions,
        velocities: p.velocities,
        accelerations: p.accelerations,
        effort: p.effort,
    }
}

pub(super) fn point_out(
    p: &msgs::JointTrajectoryPoint,
) -> trajectory_msgs::msg::JointTrajectoryPoint {
    trajectory_msgs::msg::JointTrajectoryPoint {
        positions: p.positions.clone(),
        velocities: p.velocities.clone(),
        accelerations: p.accelerations.clone(),
        effort: p.effort.clone(),
        time_from_start: duration_out(&p.time_from_start),
    }
}

pub(super) fn trajectory_in(m: trajectory_msgs::msg::JointTrajectory) -> msgs::JointTrajectory {
    let points = m.points.into_iter().map(point_in).collect();
    msgs::JointTrajectory {
        header: header_in(&m.header),
        joint_names: m.joint_names,
        points,
    }
}

fn trajectory_out(m: &msgs::JointTrajectory) -> trajectory_msgs::msg::JointTrajectory {
    let points = m.points.iter().map(point_out).collect();
    trajectory_msgs::msg::JointTrajectory {
        header: header_out(&m.header),
        joint_names: texts(&m.joint_names),
        points,
    }
}

pub(super) fn vector_in(v: &geometry_msgs::msg::Vector3) -> msgs::Vector3 {
    msgs::Vector3 {
        x: v.x,
        y: v.y,
        z: v.z,
    }
}

pub(super) fn vector_out(v: &msgs::Vector3) -> geometry_msgs::msg::Vector3 {
    geometry_msgs::msg::Vector3 {
        x: v.x,
        y: v.y,
        z: v.z,
    }
}

fn pose_in(m: geometry_msgs::msg::PoseStamped) -> msgs::PoseStamped {
    let (p, o) = (&m.pose.position, &m.pose.orientation);
    msgs::PoseStamped {
        header: header_in(&m.header),
        pose: msgs::Pose {
            position: msgs::Vector3 {
                x: p.x,
                y: p.y,
                z: p.z,
            },
            orientation: msgs::Quaternion {
                x: o.x,
                y: o.y,
                z: o.z,
                w: o.w,
            },
        },
    }
}

fn pose_out(m: &msgs::PoseStamped) -> geometry_msgs::msg::PoseStamped {
    let (p, o) = (&m.pose.position, &m.pose.orientation);
    geometry_msgs::msg::PoseStamped {
        header: header_out(&m.header),
        pose: geometry_msgs::msg::Pose {
            position: geometry_msgs::msg::Point {
                x: p.x,
                y: p.y,
                z: p.z,
            },
            orientation: geometry_msgs::msg::Quaternion {
                x: o.x,
                y: o.y,
                z: o.z,
                w: o.w,
            },
        },
    }
}

fn wrench_in(m: geometry_msgs::msg::WrenchStamped) -> msgs::WrenchStamped {
    msgs::WrenchStamped {
        header: header_in(&m.header),
        wrench: msgs::Wrench {
            force: vector_in(&m.wrench.force),
            torque: vector_in(&m.wrench.torque),
        },
    }
}

fn wrench_out(m: &msgs::WrenchStamped) -> geometry_msgs::msg::WrenchStamped {
    geometry_msgs::msg::WrenchStamped {
        header: header_out(&m.header),
        wrench: geometry_msgs::msg::Wrench {
            force: vector_out(&m.wrench.force),
            torque: vector_out(&m.wrench.torque),
        },
    }
}

fn log_in(m: rcl_interfaces::msg::Log) -> msgs::Log {
    msgs::Log {
        stamp: time_in(&m.stamp),
        level: m.level,
        name: m.name,
        msg: m.msg,
        file: m.file,
        function: m.function,
        line: m.line,
    }
}

fn log_out(m: &msgs::Log) -> rcl_interfaces::msg::Log {
    rcl_interfaces::msg::Log {
        stamp: time_out(&m.stamp),
        level: m.level,
        name: text(&m.name),
        msg: text(&m.msg),
        file: text(&m.file),
        function: text(&m.function),
        line: m.line,
    }
}

/// A message type as rcl carries it: r2r's generated type and the conversions.
pub trait RclMessage: Sized {
    /// r2r's type.
    type Rcl: r2r::WrappedTypesupport + Send + 'static;
    /// Whether rcl carries it here: without control_msgs installed when r2r generated its
    /// bindings, or with Humble's controller state (build.rs), the DDS backend publishes it.
    const CARRIED: bool = true;
    /// From rcl.
    fn from_rcl(m: Self::Rcl) -> Self;
    /// To rcl.
    fn to_rcl(&self) -> Self::Rcl;
}

macro_rules! rcl_messages {
    ($($ty:ident = $rcl:ty, $from:expr, $to:expr;)*) => {
        $(impl RclMessage for msgs::$ty {
            type Rcl = $rcl;
            fn from_rcl(m: Self::Rcl) -> Self {
                $from(m)
            }
            fn to_rcl(&self) -> Self::Rcl {
                $to(self)
            }
        })*
    };
}

rcl_messages! {
    JointState = sensor_msgs::msg::JointState, joint_state_in, joint_state_out;
    Float64MultiArray = std_msgs::msg::Float64MultiArray, array_in, array_out;
    JointTrajectory = trajectory_msgs::msg::JointTrajectory, trajectory_in, trajectory_out;
    PoseStamped = geometry_msgs::msg::PoseStamped, pose_in, pose_out;
    WrenchStamped = geometry_msgs::msg::WrenchStamped, wrench_in, wrench_out;
    DiagnosticArray = diagnostic_msgs::msg::DiagnosticArray, diagnostics_in, diagnostics_out;
    StringMsg = std_msgs::msg::String,
        |m: std_msgs::msg::String| msgs::StringMsg { data: m.data },
        |m: &msgs::StringMsg| std_msgs::msg::String { data: text(&m.data) };
    Clock = rosgraph_msgs::msg::Clock,
        |c: rosgraph_msgs::msg::Clock| msgs::Clock { clock: time_in(&c.clock) },
        |c: &msgs::Clock| rosgraph_msgs::msg::Clock { clock: time_out(&c.clock) };
    Log = rcl_interfaces::msg::Log, log_in, log_out;
}

/// A type rcl does not carry here ([`RclMessage::CARRIED`]): its topic is refused when
/// subscribed and not published; the conversions are never used.
macro_rules! not_carried {
    ($($ty:ident),*) => {
        $(impl RclMessage for msgs::$ty {
            type Rcl = std_msgs::msg::Empty;
            const CARRIED: bool = false;
            fn from_rcl(_: Self::Rcl) -> Self {
                Self::default()
            }
            fn to_rcl(&self) -> Self::Rcl {
                std_msgs::msg::Empty {}
            }
        })*
    };
}

#[cfg(not(ros_controller_state_jazzy))]
not_carried!(ControllerState, ControllerStateHumble);
// The layout r2r binds is the installed control_msgs's: Jazzy's here (see build.rs).
#[cfg(ros_controller_state_jazzy)]
not_carried!(ControllerStateHumble);
