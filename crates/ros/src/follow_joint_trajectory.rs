//! control_msgs/action/FollowJointTrajectory (the same on Humble and Jazzy) and the
//! action_msgs types of its services, as plain structs with the fields in wire order, and what
//! a node exchanges with a backend that serves the action: [`ActionRequest`] in,
//! [`ActionResponse`] and [`ActionOutput`] out.

use serde::{Deserialize, Serialize};

use crate::msgs::{
    Duration, Header, JointTrajectory, JointTrajectoryPoint, MultiDofJointTrajectoryPoint, Time,
};

/// unique_identifier_msgs/UUID: a goal's id.
pub type GoalId = [u8; 16];

/// trajectory_msgs/MultiDOFJointTrajectory (refused when not empty: the arms are serial
/// chains of single-DOF joints).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MultiDofJointTrajectory {
    /// Header.
    pub header: Header,
    /// Joint names.
    pub joint_names: Vec<String>,
    /// Points.
    pub points: Vec<MultiDofJointTrajectoryPoint>,
}

/// control_msgs/JointTolerance: > 0 sets, 0 keeps the controller's default, -1 removes.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct JointTolerance {
    /// The joint.
    pub name: String,
    /// Position.
    pub position: f64,
    /// Velocity.
    pub velocity: f64,
    /// Acceleration.
    pub acceleration: f64,
}

/// control_msgs/JointComponentTolerance (for multi-DOF joints: refused when given).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct JointComponentTolerance {
    /// The joint.
    pub joint_name: String,
    /// Which component (X_AXIS 1 ... TRANSLATION 4, ROTATION 5).
    pub component: u16,
    /// Position.
    pub position: f64,
    /// Velocity.
    pub velocity: f64,
    /// Acceleration.
    pub acceleration: f64,
}

/// FollowJointTrajectory's goal.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Goal {
    /// The joint trajectory.
    pub trajectory: JointTrajectory,
    /// A multi-DOF trajectory.
    pub multi_dof_trajectory: MultiDofJointTrajectory,
    /// Tolerances while the trajectory runs.
    pub path_tolerance: Vec<JointTolerance>,
    /// Multi-DOF tolerances while it runs.
    pub component_path_tolerance: Vec<JointComponentTolerance>,
    /// Tolerances once it has ended.
    pub goal_tolerance: Vec<JointTolerance>,
    /// Multi-DOF tolerances once it has ended.
    pub component_goal_tolerance: Vec<JointComponentTolerance>,
    /// How long after the end the goal tolerances may take to be met (0: the default).
    pub goal_time_tolerance: Duration,
}

/// FollowJointTrajectory's result.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ActionResult {
    /// One of the codes below.
    pub error_code: i32,
    /// Why, in words.
    pub error_string: String,
}

impl ActionResult {
    /// Reached within the goal tolerances.
    pub const SUCCESSFUL: i32 = 0;
    /// The goal cannot be executed, or was cancelled by a newer one.
    pub const INVALID_GOAL: i32 = -1;
    /// The joint names do not match the controller's.
    pub const INVALID_JOINTS: i32 = -2;
    /// The trajectory's stamp puts every point in the past.
    pub const OLD_HEADER_TIMESTAMP: i32 = -3;
    /// A joint left its path tolerance.
    pub const PATH_TOLERANCE_VIOLATED: i32 = -4;
    /// The goal tolerances were not met within the goal time.
    pub const GOAL_TOLERANCE_VIOLATED: i32 = -5;
}

/// FollowJointTrajectory's feedback.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Feedback {
    /// Header (stamp: the node's clock).
    pub header: Header,
    /// The controller's joints.
    pub joint_names: Vec<String>,
    /// The reference.
    pub desired: JointTrajectoryPoint,
    /// The measured state.
    pub actual: JointTrajectoryPoint,
    /// desired - actual.
    pub error: JointTrajectoryPoint,
    /// Multi-DOF joints (none).
    pub multi_dof_joint_names: Vec<String>,
    /// Multi-DOF reference (empty).
    pub multi_dof_desired: MultiDofJointTrajectoryPoint,
    /// Multi-DOF measured state (empty).
    pub multi_dof_actual: MultiDofJointTrajectoryPoint,
    /// Multi-DOF error (empty).
    pub multi_dof_error: MultiDofJointTrajectoryPoint,
}

/// action_msgs/GoalInfo.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct GoalInfo {
    /// The goal.
    pub goal_id: GoalId,
    /// When it was accepted (in a cancel request: cancel those accepted at or before).
    pub stamp: Time,
}

/// action_msgs/GoalStatus's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i8)]
pub enum GoalStatus {
    /// Unknown (never accepted, or forgotten).
    Unknown = 0,
    /// Accepted, not started.
    Accepted = 1,
    /// Being executed.
    Executing = 2,
    /// Being cancelled.
    Canceling = 3,
    /// Reached.
    Succeeded = 4,
    /// Cancelled (by a cancel request or a newer goal).
    Canceled = 5,
    /// Given up by the controller.
    Aborted = 6,
}

/// action_msgs/CancelGoal's return codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i8)]
pub enum CancelCode {
    /// Goals are being cancelled.
    None = 0,
    /// Refused.
    Rejected = 1,
    /// No such goal.
    UnknownGoal = 2,
    /// The goal has ended already.
    GoalTerminated = 3,
}

/// A request to the action's services.
#[derive(Debug, Clone, PartialEq)]
pub enum ActionRequest {
    /// send_goal: a new goal.
    SendGoal(GoalId, Box<Goal>),
    /// cancel_goal: by id, by acceptance time, or all (action_msgs/CancelGoal's rules).
    Cancel(GoalInfo),
    /// get_result: answered when the goal ends.
    GetResult(GoalId),
}

/// A response of the action's services to the request of the same id.
#[derive(Debug, Clone, PartialEq)]
pub enum ActionResponse {
    /// To send_goal.
    Goal {
        /// Accepted.
        accepted: bool,
        /// When.
        stamp: Time,
    },
    /// To cancel_goal.
    Cancel {
        /// What happened.
        code: CancelCode,
        /// The goals now being cancelled.
        canceling: Vec<GoalInfo>,
    },
    /// To get_result.
    Result {
        /// The goal's final status.
        status: GoalStatus,
        /// Its result.
        result: ActionResult,
    },
}

/// What the action publishes.
#[derive(Debug, Clone, Copy)]
pub enum ActionOutput<'a> {
    /// On `<action>/_action/feedback`.
    Feedback(GoalId, &'a Feedback),
    /// On `<action>/_action/status` (transient local): every goal the server remembers.
    Status(&'a [(GoalInfo, GoalStatus)]),
}
