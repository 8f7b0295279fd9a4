//! The FollowJointTrajectory action on DDS: ros2-client's action server gives the three
//! services (`send_goal`, `cancel_goal`, `get_result`) and two topics (`feedback`, `status`)
//! their ROS 2 names, types and QoS; the node answers each request itself
//! ([`crate::nodes::trajectory_action`]), kept until then by [`ActionServices`].

use std::future::Future;
use std::task::{Context, Poll};

use byteorder::LittleEndian;
use ros2_client::action::{
    ActionServer, CancelGoalRequest, GetResultRequest, GetResultResponse, GoalStatusEnum,
    SendGoalRequest, SendGoalResponse,
};
use ros2_client::action_msgs::{
    CancelGoalResponse, CancelGoalResponseEnum, GoalStatus as RosGoalStatus, GoalStatusArray,
};
use ros2_client::builtin_interfaces::Time as RosTime;
use ros2_client::qos::{Durability, History};
use ros2_client::service::RmwRequestId;
use ros2_client::unique_identifier_msgs::UUID;
use ros2_client::{ActionTypeName, Name, Node, QosProfile, ServiceMapping};
use serde::Deserialize;

use crate::follow_joint_trajectory::{
    ActionOutput, ActionRequest, ActionResponse, ActionResult, CancelCode, Feedback, Goal, GoalId,
    GoalInfo, GoalStatus,
};
use crate::msgs::Time;
use crate::services::action::ActionServices;
use crate::RosError;

impl ros2_client::Message for Goal {}
impl ros2_client::Message for ActionResult {}
impl ros2_client::Message for Feedback {}

fn transport(e: impl std::fmt::Debug) -> RosError {
    RosError::Transport {
        reason: format!("follow_joint_trajectory action: {e:?}"),
    }
}

/// A node's FollowJointTrajectory action server.
pub(crate) struct TrajectoryActionServer {
    server: ActionServer<Goal, ActionResult, Feedback>,
    /// Each waiting request's id on the service it came on.
    services: ActionServices<RmwRequestId>,
}

fn ros_time(t: Time) -> RosTime {
    RosTime::from_nanos(t.sec as i64 * 1_000_000_000 + t.nanosec as i64)
}

fn ros_info(info: &GoalInfo) -> ros2_client::action::GoalInfo {
    ros2_client::action::GoalInfo {
        goal_id: uuid(&info.goal_id),
        stamp: ros_time(info.stamp),
    }
}

fn uuid(id: &GoalId) -> UUID {
    UUID {
        uuid: uuid::Uuid::from_bytes(*id),
    }
}

fn ros_status(status: GoalStatus) -> GoalStatusEnum {
    match status {
        GoalStatus::Unknown => GoalStatusEnum::Unknown,
        GoalStatus::Accepted => GoalStatusEnum::Accepted,
        GoalStatus::Executing => GoalStatusEnum::Executing,
        GoalStatus::Canceling => GoalStatusEnum::Canceling,
        GoalStatus::Succeeded => GoalStatusEnum::Succeeded,
        GoalStatus::Canceled => GoalStatusEnum::Canceled,
        GoalStatus::Aborted => GoalStatusEnum::Aborted,
    }
}

fn cancel_code(code: CancelCode) -> CancelGoalResponseEnum {
    match code {
        CancelCode::None => CancelGoalResponseEnum::None,
        CancelCode::Rejected => CancelGoalResponseEnum::Rejected,
        CancelCode::UnknownGoal => CancelGoalResponseEnum::UnknownGoal,
        CancelCode::GoalTerminated => CancelGoalResponseEnum::GoalTerminated,
    }
}

/// What a cancel request asks for. ros2-client keeps its field private; its CDR form is
/// action_msgs/CancelGoal's request, which is read back here.
fn cancel_target(request: &CancelGoalRequest) -> Option<GoalInfo> {
    #[derive(Deserialize)]
    struct Fields {
        goal_info: GoalInfo,
    }
    let bytes = cdr_encoding::to_vec::<_, LittleEndian>(request).ok()?;
    let (fields, _) = cdr_encoding::from_bytes::<Fields, LittleEndian>(&bytes).ok()?;
    Some(fields.goal_info)
}

/// One poll of a fresh future: the DDS reader keeps the waker, so nothing is lost when the
/// future is dropped unfinished (as [`super::TypedInput`] polls subscriptions).
fn poll_once<F: Future>(future: F, cx: &mut Context<'_>) -> Poll<F::Output> {
    std::pin::pin!(future).poll(cx)
}

impl TrajectoryActionServer {
    /// The action `name` (resolved) on `node`.
    pub(crate) fn new(
        node: &mut Node,
        mapping: ServiceMapping,
        name: &str,
    ) -> Result<Self, RosError> {
        // rcl_action's defaults: services reliable, volatile, keep last 10; the status
        // topic transient local, keep last 1, so a late client sees the goals' states.
        let services = QosProfile::publisher_default().history(History::KeepLast { depth: 10 });
        let status = QosProfile::publisher_default()
            .durability(Durability::TransientLocal)
            .history(History::KeepLast { depth: 1 });
        let qos = ros2_client::action::ActionServerQosPolicies {
            goal_service: services.clone(),
            result_service: services.clone(),
            cancel_service: services.clone(),
            feedback_publisher: services,
            status_publisher: status,
        };
        let parsed = Name::parse(name).map_err(|e| RosError::Transport {
            reason: format!("action '{name}': {e}"),
        })?;
        let type_name = ActionTypeName::new("control_msgs", "FollowJointTrajectory");
        let server = node
            .create_action_server(mapping, &parsed, &type_name, qos)
            .map_err(transport)?;
        Ok(Self {
            server,
            services: ActionServices::default(),
        })
    }

    fn number(&mut self, rmw: RmwRequestId, request: ActionRequest) -> (u64, ActionRequest) {
        (self.services.receive(rmw, &request), request)
    }

    /// The next request waiting on any of the three services (`Some(None)`: an unreadable
    /// one, skipped).
    pub(crate) fn poll_request(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<(u64, ActionRequest)>> {
        if let Poll::Ready(r) = poll_once(self.server.goal_server().async_receive_request(), cx) {
            return Poll::Ready(
                r.ok()
                    .map(|(rmw, q): (RmwRequestId, SendGoalRequest<Goal>)| {
                        let id = *q.goal_id.uuid.as_bytes();
                        self.number(rmw, ActionRequest::SendGoal(id, Box::new(q.goal)))
                    }),
            );
        }
        if let Poll::Ready(r) = poll_once(self.server.cancel_server().async_receive_request(), cx) {
            return Poll::Ready(r.ok().and_then(|(rmw, q)| {
                let target = cancel_target(&q)?;
                Some(self.number(rmw, ActionRequest::Cancel(target)))
            }));
        }
        if let Poll::Ready(r) = poll_once(self.server.result_server().async_receive_request(), cx) {
            return Poll::Ready(r.ok().map(|(rmw, q): (RmwRequestId, GetResultRequest)| {
                let id = *q.goal_id.uuid.as_bytes();
                self.number(rmw, ActionRequest::GetResult(id))
            }));
        }
        Poll::Pending
    }

    /// Answers request `id` on its service.
    pub(crate) fn respond(&mut self, id: u64, response: ActionResponse) -> Result<(), String> {
        let Some(rmw) = self.services.answer(id, &response)? else {
            return Ok(());
        };
        let sent = match response {
            ActionResponse::Goal { accepted, stamp } => {
                let stamp = ros_time(stamp);
                self.server
                    .send_goal_response(rmw, SendGoalResponse { accepted, stamp })
            }
            ActionResponse::Cancel { code, canceling } => {
                let response = CancelGoalResponse {
                    return_code: cancel_code(code),
                    goals_canceling: canceling.iter().map(ros_info).collect(),
                };
                self.server.send_cancel_response(rmw, response)
            }
            ActionResponse::Result { status, result } => {
                let status = ros_status(status);
                self.server
                    .send_result(rmw, GetResultResponse { status, result })
            }
        };
        sent.map_err(|e| format!("action response {id}: {e:?}"))
    }

    /// Publishes feedback or the goal statuses.
    pub(crate) fn publish(&mut self, output: ActionOutput<'_>) -> Result<(), String> {
        match output {
            ActionOutput::Feedback(goal_id, feedback) => self
                .server
                .send_feedback(uuid(&goal_id), feedback.clone())
                .map_err(|e| format!("action feedback: {e:?}")),
            ActionOutput::Status(goals) => {
                let status_list = goals
                    .iter()
                    .map(|(info, status)| RosGoalStatus {
                        goal_info: ros_info(info),
                        status: ros_status(*status),
                    })
                    .collect();
                self.server
                    .send_goal_statuses(GoalStatusArray { status_list })
                    .map_err(|e| format!("action status: {e:?}"))
            }
        }
    }
}
