"""ROS 2 message types as Cyclone DDS IDL structs, written by hand from the .msg, .srv and
.action files (field order is the wire order; DDS type names `<pkg>::msg::dds_::<Type>_`,
`<pkg>::srv::dds_::<Service>_Request_` and `<pkg>::action::dds_::<Action>_<Part>_`), shared by
the interop peers in this folder.

Service requests and replies come in two mappings with one DDS type name: the plain one (Fast
DDS's "enhanced" RPC mapping, the payload is the request itself) and the `Cyclone...` one
(rmw_cyclonedds: a `client_guid, sequence_number` header before the request)."""

from dataclasses import dataclass, field

from cyclonedds.idl import IdlStruct
from cyclonedds.idl.types import array, float64, int8, int32, int64, sequence, uint8, uint16, uint32, uint64


@dataclass
class Time(IdlStruct, typename="builtin_interfaces::msg::dds_::Time_"):
    sec: int32 = 0
    nanosec: uint32 = 0


@dataclass
class Header(IdlStruct, typename="std_msgs::msg::dds_::Header_"):
    stamp: Time = field(default_factory=Time)
    frame_id: str = ""


@dataclass
class String(IdlStruct, typename="std_msgs::msg::dds_::String_"):
    data: str = ""


@dataclass
class JointState(IdlStruct, typename="sensor_msgs::msg::dds_::JointState_"):
    header: Header = field(default_factory=Header)
    name: sequence[str] = field(default_factory=list)
    position: sequence[float64] = field(default_factory=list)
    velocity: sequence[float64] = field(default_factory=list)
    effort: sequence[float64] = field(default_factory=list)


@dataclass
class MultiArrayDimension(IdlStruct, typename="std_msgs::msg::dds_::MultiArrayDimension_"):
    label: str = ""
    size: uint32 = 0
    stride: uint32 = 0


@dataclass
class MultiArrayLayout(IdlStruct, typename="std_msgs::msg::dds_::MultiArrayLayout_"):
    dim: sequence[MultiArrayDimension] = field(default_factory=list)
    data_offset: uint32 = 0


@dataclass
class Float64MultiArray(IdlStruct, typename="std_msgs::msg::dds_::Float64MultiArray_"):
    layout: MultiArrayLayout = field(default_factory=MultiArrayLayout)
    data: sequence[float64] = field(default_factory=list)


@dataclass
class KeyValue(IdlStruct, typename="diagnostic_msgs::msg::dds_::KeyValue_"):
    key: str = ""
    value: str = ""


@dataclass
class DiagnosticStatus(IdlStruct, typename="diagnostic_msgs::msg::dds_::DiagnosticStatus_"):
    level: uint8 = 0
    name: str = ""
    message: str = ""
    hardware_id: str = ""
    values: sequence[KeyValue] = field(default_factory=list)


@dataclass
class DiagnosticArray(IdlStruct, typename="diagnostic_msgs::msg::dds_::DiagnosticArray_"):
    header: Header = field(default_factory=Header)
    status: sequence[DiagnosticStatus] = field(default_factory=list)


@dataclass
class Duration(IdlStruct, typename="builtin_interfaces::msg::dds_::Duration_"):
    sec: int32 = 0
    nanosec: uint32 = 0


@dataclass
class UUID(IdlStruct, typename="unique_identifier_msgs::msg::dds_::UUID_"):
    uuid: array[uint8, 16] = bytes(16)


@dataclass
class Vector3(IdlStruct, typename="geometry_msgs::msg::dds_::Vector3_"):
    x: float64 = 0.0
    y: float64 = 0.0
    z: float64 = 0.0


@dataclass
class Quaternion(IdlStruct, typename="geometry_msgs::msg::dds_::Quaternion_"):
    x: float64 = 0.0
    y: float64 = 0.0
    z: float64 = 0.0
    w: float64 = 1.0


@dataclass
class Transform(IdlStruct, typename="geometry_msgs::msg::dds_::Transform_"):
    translation: Vector3 = field(default_factory=Vector3)
    rotation: Quaternion = field(default_factory=Quaternion)


@dataclass
class Twist(IdlStruct, typename="geometry_msgs::msg::dds_::Twist_"):
    linear: Vector3 = field(default_factory=Vector3)
    angular: Vector3 = field(default_factory=Vector3)


@dataclass
class JointTrajectoryPoint(IdlStruct, typename="trajectory_msgs::msg::dds_::JointTrajectoryPoint_"):
    positions: sequence[float64] = field(default_factory=list)
    velocities: sequence[float64] = field(default_factory=list)
    accelerations: sequence[float64] = field(default_factory=list)
    effort: sequence[float64] = field(default_factory=list)
    time_from_start: Duration = field(default_factory=Duration)


@dataclass
class JointTrajectory(IdlStruct, typename="trajectory_msgs::msg::dds_::JointTrajectory_"):
    header: Header = field(default_factory=Header)
    joint_names: sequence[str] = field(default_factory=list)
    points: sequence[JointTrajectoryPoint] = field(default_factory=list)


@dataclass
class MultiDOFJointTrajectoryPoint(IdlStruct, typename="trajectory_msgs::msg::dds_::MultiDOFJointTrajectoryPoint_"):
    transforms: sequence[Transform] = field(default_factory=list)
    velocities: sequence[Twist] = field(default_factory=list)
    accelerations: sequence[Twist] = field(default_factory=list)
    time_from_start: Duration = field(default_factory=Duration)


@dataclass
class MultiDOFJointTrajectory(IdlStruct, typename="trajectory_msgs::msg::dds_::MultiDOFJointTrajectory_"):
    header: Header = field(default_factory=Header)
    joint_names: sequence[str] = field(default_factory=list)
    points: sequence[MultiDOFJointTrajectoryPoint] = field(default_factory=list)


@dataclass
class JointTolerance(IdlStruct, typename="control_msgs::msg::dds_::JointTolerance_"):
    name: str = ""
    position: float64 = 0.0
    velocity: float64 = 0.0
    acceleration: float64 = 0.0


@dataclass
class JointComponentTolerance(IdlStruct, typename="control_msgs::msg::dds_::JointComponentTolerance_"):
    joint_name: str = ""
    component: uint16 = 0
    position: float64 = 0.0
    velocity: float64 = 0.0
    acceleration: float64 = 0.0


@dataclass
class FollowJointTrajectoryGoal(IdlStruct, typename="control_msgs::action::dds_::FollowJointTrajectory_Goal_"):
    trajectory: JointTrajectory = field(default_factory=JointTrajectory)
    multi_dof_trajectory: MultiDOFJointTrajectory = field(default_factory=MultiDOFJointTrajectory)
    path_tolerance: sequence[JointTolerance] = field(default_factory=list)
    component_path_tolerance: sequence[JointComponentTolerance] = field(default_factory=list)
    goal_tolerance: sequence[JointTolerance] = field(default_factory=list)
    component_goal_tolerance: sequence[JointComponentTolerance] = field(default_factory=list)
    goal_time_tolerance: Duration = field(default_factory=Duration)


@dataclass
class FollowJointTrajectoryResult(IdlStruct, typename="control_msgs::action::dds_::FollowJointTrajectory_Result_"):
    error_code: int32 = 0
    error_string: str = ""


@dataclass
class FollowJointTrajectoryFeedback(IdlStruct, typename="control_msgs::action::dds_::FollowJointTrajectory_Feedback_"):
    header: Header = field(default_factory=Header)
    joint_names: sequence[str] = field(default_factory=list)
    desired: JointTrajectoryPoint = field(default_factory=JointTrajectoryPoint)
    actual: JointTrajectoryPoint = field(default_factory=JointTrajectoryPoint)
    error: JointTrajectoryPoint = field(default_factory=JointTrajectoryPoint)
    multi_dof_joint_names: sequence[str] = field(default_factory=list)
    multi_dof_desired: MultiDOFJointTrajectoryPoint = field(default_factory=MultiDOFJointTrajectoryPoint)
    multi_dof_actual: MultiDOFJointTrajectoryPoint = field(default_factory=MultiDOFJointTrajectoryPoint)
    multi_dof_error: MultiDOFJointTrajectoryPoint = field(default_factory=MultiDOFJointTrajectoryPoint)


@dataclass
class FollowJointTrajectoryFeedbackMessage(IdlStruct, typename="control_msgs::action::dds_::FollowJointTrajectory_FeedbackMessage_"):
    goal_id: UUID = field(default_factory=UUID)
    feedback: FollowJointTrajectoryFeedback = field(default_factory=FollowJointTrajectoryFeedback)


@dataclass
class GoalInfo(IdlStruct, typename="action_msgs::msg::dds_::GoalInfo_"):
    goal_id: UUID = field(default_factory=UUID)
    stamp: Time = field(default_factory=Time)


@dataclass
class GoalStatus(IdlStruct, typename="action_msgs::msg::dds_::GoalStatus_"):
    goal_info: GoalInfo = field(default_factory=GoalInfo)
    status: int8 = 0


@dataclass
class GoalStatusArray(IdlStruct, typename="action_msgs::msg::dds_::GoalStatusArray_"):
    status_list: sequence[GoalStatus] = field(default_factory=list)


# The three services of the FollowJointTrajectory action, each request and reply in both mappings.
@dataclass
class FollowJointTrajectorySendGoalRequest(IdlStruct, typename="control_msgs::action::dds_::FollowJointTrajectory_SendGoal_Request_"):
    goal_id: UUID = field(default_factory=UUID)
    goal: FollowJointTrajectoryGoal = field(default_factory=FollowJointTrajectoryGoal)


@dataclass
class CycloneFollowJointTrajectorySendGoalRequest(IdlStruct, typename="control_msgs::action::dds_::FollowJointTrajectory_SendGoal_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    goal_id: UUID = field(default_factory=UUID)
    goal: FollowJointTrajectoryGoal = field(default_factory=FollowJointTrajectoryGoal)


@dataclass
class FollowJointTrajectorySendGoalResponse(IdlStruct, typename="control_msgs::action::dds_::FollowJointTrajectory_SendGoal_Response_"):
    accepted: bool = False
    stamp: Time = field(default_factory=Time)


@dataclass
class CycloneFollowJointTrajectorySendGoalResponse(IdlStruct, typename="control_msgs::action::dds_::FollowJointTrajectory_SendGoal_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    accepted: bool = False
    stamp: Time = field(default_factory=Time)


@dataclass
class FollowJointTrajectoryGetResultRequest(IdlStruct, typename="control_msgs::action::dds_::FollowJointTrajectory_GetResult_Request_"):
    goal_id: UUID = field(default_factory=UUID)


@dataclass
class CycloneFollowJointTrajectoryGetResultRequest(IdlStruct, typename="control_msgs::action::dds_::FollowJointTrajectory_GetResult_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    goal_id: UUID = field(default_factory=UUID)


@dataclass
class FollowJointTrajectoryGetResultResponse(IdlStruct, typename="control_msgs::action::dds_::FollowJointTrajectory_GetResult_Response_"):
    status: int8 = 0
    result: FollowJointTrajectoryResult = field(default_factory=FollowJointTrajectoryResult)


@dataclass
class CycloneFollowJointTrajectoryGetResultResponse(IdlStruct, typename="control_msgs::action::dds_::FollowJointTrajectory_GetResult_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    status: int8 = 0
    result: FollowJointTrajectoryResult = field(default_factory=FollowJointTrajectoryResult)


@dataclass
class CancelGoalRequest(IdlStruct, typename="action_msgs::srv::dds_::CancelGoal_Request_"):
    goal_info: GoalInfo = field(default_factory=GoalInfo)


@dataclass
class CycloneCancelGoalRequest(IdlStruct, typename="action_msgs::srv::dds_::CancelGoal_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    goal_info: GoalInfo = field(default_factory=GoalInfo)


@dataclass
class CancelGoalResponse(IdlStruct, typename="action_msgs::srv::dds_::CancelGoal_Response_"):
    return_code: int8 = 0
    goals_canceling: sequence[GoalInfo] = field(default_factory=list)


@dataclass
class CycloneCancelGoalResponse(IdlStruct, typename="action_msgs::srv::dds_::CancelGoal_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    return_code: int8 = 0
    goals_canceling: sequence[GoalInfo] = field(default_factory=list)


# control_msgs/JointTrajectoryControllerState: its layout changed between distributions.
@dataclass
class JointTrajectoryControllerStateJazzy(IdlStruct, typename="control_msgs::msg::dds_::JointTrajectoryControllerState_"):
    header: Header = field(default_factory=Header)
    joint_names: sequence[str] = field(default_factory=list)
    reference: JointTrajectoryPoint = field(default_factory=JointTrajectoryPoint)
    feedback: JointTrajectoryPoint = field(default_factory=JointTrajectoryPoint)
    error: JointTrajectoryPoint = field(default_factory=JointTrajectoryPoint)
    output: JointTrajectoryPoint = field(default_factory=JointTrajectoryPoint)
    multi_dof_joint_names: sequence[str] = field(default_factory=list)
    multi_dof_reference: MultiDOFJointTrajectoryPoint = field(default_factory=MultiDOFJointTrajectoryPoint)
    multi_dof_feedback: MultiDOFJointTrajectoryPoint = field(default_factory=MultiDOFJointTrajectoryPoint)
    multi_dof_error: MultiDOFJointTrajectoryPoint = field(default_factory=MultiDOFJointTrajectoryPoint)
    multi_dof_output: MultiDOFJointTrajectoryPoint = field(default_factory=MultiDOFJointTrajectoryPoint)
    speed_scaling_factor: float64 = 0.0


@dataclass
class JointTrajectoryControllerStateHumble(IdlStruct, typename="control_msgs::msg::dds_::JointTrajectoryControllerState_"):
    header: Header = field(default_factory=Header)
    joint_names: sequence[str] = field(default_factory=list)
    reference: JointTrajectoryPoint = field(default_factory=JointTrajectoryPoint)
    feedback: JointTrajectoryPoint = field(default_factory=JointTrajectoryPoint)
    error: JointTrajectoryPoint = field(default_factory=JointTrajectoryPoint)
    output: JointTrajectoryPoint = field(default_factory=JointTrajectoryPoint)
    desired: JointTrajectoryPoint = field(default_factory=JointTrajectoryPoint)
    actual: JointTrajectoryPoint = field(default_factory=JointTrajectoryPoint)
    multi_dof_joint_names: sequence[str] = field(default_factory=list)
    multi_dof_reference: MultiDOFJointTrajectoryPoint = field(default_factory=MultiDOFJointTrajectoryPoint)
    multi_dof_feedback: MultiDOFJointTrajectoryPoint = field(default_factory=MultiDOFJointTrajectoryPoint)
    multi_dof_error: MultiDOFJointTrajectoryPoint = field(default_factory=MultiDOFJointTrajectoryPoint)
    multi_dof_output: MultiDOFJointTrajectoryPoint = field(default_factory=MultiDOFJointTrajectoryPoint)
    multi_dof_desired: MultiDOFJointTrajectoryPoint = field(default_factory=MultiDOFJointTrajectoryPoint)
    multi_dof_actual: MultiDOFJointTrajectoryPoint = field(default_factory=MultiDOFJointTrajectoryPoint)
