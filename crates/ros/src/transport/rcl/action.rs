//! The FollowJointTrajectory action on rcl, when control_msgs was installed as r2r generated
//! its bindings (`ros_control_msgs`, build.rs): the action's three services and two topics,
//! created under the names, types and QoS rcl_action gives them (`<action>/_action/send_goal`,
//! `cancel_goal`, `get_result`, `feedback`, `status`), so that any ROS 2 action client
//! (MoveIt, rclpy's ActionClient) talks to it. The node answers each request itself, as on DDS
//! ([`crate::nodes::trajectory_action`] holds JTC's rules once for both backends); r2r's own
//! action server is not used, since it accepts and stamps goals by itself and keeps every
//! result for ever.

use futures::stream::{select_all, BoxStream, StreamExt};
use r2r::action_msgs::msg as action_wire;
use r2r::action_msgs::srv::CancelGoal;
use r2r::control_msgs::action::FollowJointTrajectory as Fjt;
use r2r::unique_identifier_msgs::msg::UUID;
use r2r::{QosProfile, ServiceRequest};

use super::control_msgs::{feedback_out, goal_in, result_out};
use super::convert::time_out;
use super::{rcl, serve, Pump};
use crate::follow_joint_trajectory::{
    ActionOutput, ActionRequest, ActionResponse, GoalId, GoalInfo,
};
use crate::msgs::Time;
use crate::services::action::ActionServices;
use crate::RosError;

/// A request waiting for the node's answer, on the service it came on.
enum Pending {
    /// Boxed: a goal request holds the whole trajectory message.
    Goal(Box<ServiceRequest<Fjt::SendGoal::Service>>),
    Cancel(ServiceRequest<CancelGoal::Service>),
    Result(ServiceRequest<Fjt::GetResult::Service>),
}

impl Pending {
    fn request(&self) -> ActionRequest {
        match self {
            Pending::Goal(r) => ActionRequest::SendGoal(
                goal_id(&r.message.goal_id),
                Box::new(goal_in(r.message.goal.clone())),
            ),
            Pending::Cancel(r) => ActionRequest::Cancel(GoalInfo {
                goal_id: goal_id(&r.message.goal_info.goal_id),
                stamp: Time {
                    sec: r.message.goal_info.stamp.sec,
                    nanosec: r.message.goal_info.stamp.nanosec,
                },
            }),
            Pending::Result(r) => ActionRequest::GetResult(goal_id(&r.message.goal_id)),
        }
    }
}

/// unique_identifier_msgs/UUID is a fixed array of 16 bytes in C, so r2r always gives 16.
fn goal_id(uuid: &UUID) -> GoalId {
    let mut id = GoalId::default();
    for (to, from) in id.iter_mut().zip(&uuid.uuid) {
        *to = *from;
    }
    id
}

fn uuid(id: &GoalId) -> UUID {
    UUID { uuid: id.to_vec() }
}

fn goal_info(info: &GoalInfo) -> action_wire::GoalInfo {
    action_wire::GoalInfo {
        goal_id: uuid(&info.goal_id),
        stamp: time_out(&info.stamp),
    }
}

/// A node's FollowJointTrajectory action server on rcl.
pub(super) struct TrajectoryActionServer {
    requests: BoxStream<'static, Pending>,
    feedback: r2r::Publisher<Fjt::FeedbackMessage>,
    status: r2r::Publisher<action_wire::GoalStatusArray>,
    services: ActionServices<Pending>,
}

impl TrajectoryActionServer {
    /// The action `name` (resolved) on `node`, with the [`Pump`]s of its services.
    pub(super) fn new(
        node: &mut r2r::Node,
        name: &str,
    ) -> Result<Option<(Self, Vec<Pump>)>, RosError> {
        // rcl_action's defaults: services reliable, volatile, keep last 10; feedback the
        // default profile (the same); the status topic transient local, keep last 1, so a late
        // client sees the goals' states.
        let services = QosProfile::services_default();
        let channels = vec![
            serve(
                node,
                &format!("{name}/_action/send_goal"),
                services.clone(),
                |r| Pending::Goal(Box::new(r)),
            )?,
            serve(
                node,
                &format!("{name}/_action/cancel_goal"),
                services.clone(),
                Pending::Cancel,
            )?,
            serve(
                node,
                &format!("{name}/_action/get_result"),
                services,
                Pending::Result,
            )?,
        ];
        let (streams, pumps): (Vec<_>, Vec<_>) = channels.into_iter().unzip();
        let feedback = node
            .create_publisher(&format!("{name}/_action/feedback"), QosProfile::default())
            .map_err(rcl)?;
        let status_qos = QosProfile::default()
            .reliable()
            .transient_local()
            .keep_last(1);
        let status = node
            .create_publisher(&format!("{name}/_action/status"), status_qos)
            .map_err(rcl)?;
        let server = Self {
            requests: select_all(streams).boxed(),
            feedback,
            status,
            services: ActionServices::default(),
        };
        Ok(Some((server, pumps)))
    }

    /// The next request, numbered for [`TrajectoryActionServer::respond`] (`None`: the
    /// services ended with the node).
    pub(super) async fn next(&mut self) -> Option<(u64, ActionRequest)> {
        let pending = self.requests.next().await?;
        let request = pending.request();
        Some((self.services.receive(pending, &request), request))
    }

    /// Answers request `id` on its service.
    pub(super) fn respond(&mut self, id: u64, response: ActionResponse) -> Result<(), String> {
        let Some(pending) = self.services.answer(id, &response)? else {
            return Ok(());
        };
        let sent = match (pending, response) {
            (Pending::Goal(r), ActionResponse::Goal { accepted, stamp }) => {
                r.respond(Fjt::SendGoal::Response {
                    accepted,
                    stamp: time_out(&stamp),
                })
            }
            (Pending::Cancel(r), ActionResponse::Cancel { code, canceling }) => {
                r.respond(CancelGoal::Response {
                    return_code: code as i8,
                    goals_canceling: canceling.iter().map(goal_info).collect(),
                })
            }
            (Pending::Result(r), ActionResponse::Result { status, result }) => {
                r.respond(Fjt::GetResult::Response {
                    status: status as i8,
                    result: result_out(&result),
                })
            }
            // ActionServices::answer gave the token of the service this response answers.
            _ => {
                return Err(format!(
                    "action request {id}: a response of another service"
                ))
            }
        };
        sent.map_err(|e| format!("action response {id}: {e}"))
    }

    /// Publishes feedback or the goal statuses.
    pub(super) fn publish(&self, output: ActionOutput<'_>) -> Result<(), String> {
        match output {
            ActionOutput::Feedback(id, feedback) => self
                .feedback
                .publish(&Fjt::FeedbackMessage {
                    goal_id: uuid(&id),
                    feedback: feedback_out(feedback),
                })
                .map_err(|e| format!("action feedback: {e}")),
            ActionOutput::Status(goals) => {
                let status_list = goals
                    .iter()
                    .map(|(info, status)| action_wire::GoalStatus {
                        goal_info: goal_info(info),
                        status: *status as i8,
                    })
                    .collect();
                self.status
                    .publish(&action_wire::GoalStatusArray { status_list })
                    .map_err(|e| format!("action status: {e}"))
            }
        }
    }
}
