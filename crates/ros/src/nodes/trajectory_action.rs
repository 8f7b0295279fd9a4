//! controller_node's `~/follow_joint_trajectory` action (control_msgs/FollowJointTrajectory),
//! served as ros2_controllers' joint_trajectory_controller serves it, so that MoveIt's
//! `moveit_simple_controller_manager` drives armctl as it drives that controller:
//!
//! - A goal is checked and taken at once (the checks of `~/reference`, plus the joint names,
//!   the stamp and the tolerances) or rejected; a rejected goal's reason and error code stay
//!   available through `get_result`.
//! - A newer goal, or a trajectory on `~/reference`, preempts the active goal: CANCELED with
//!   INVALID_GOAL. A cancel request cancels it and the arm holds where it is.
//! - Each step checks the path tolerances while the trajectory runs and the goal tolerances
//!   after its end ([`GoalTolerances`]); feedback goes out at `action_monitor_rate`.
//! - A hold (stale or implausible joint states, a controller fault) aborts the goal.

use std::collections::VecDeque;

use armctl_control::reference::TrajectoryPoint;
use armctl_runtime::controller_core::{ControllerCore, Fault};
use armctl_runtime::declarations::LiveSettings;
use armctl_runtime::group_loop::{ArmOutput, ArmState};
use armctl_runtime::node_clock::NodeClock;
use armctl_runtime::trajectory_goal::{
    GoalCheck, GoalTolerances, StateTolerance, ToleranceError, ToleranceRequest,
};

use crate::follow_joint_trajectory::{
    ActionOutput, ActionResponse, ActionResult, CancelCode, Feedback, Goal, GoalId, GoalInfo,
    GoalStatus, JointTolerance,
};
use crate::msgs::{JointTrajectory, JointTrajectoryPoint, Time};
use crate::transport::{LogLevel, Transport};

/// How many ended goals are remembered for `get_result` and the status list.
const REMEMBERED: usize = 16;

/// A goal that has ended (or was rejected: then it is not in the status list).
struct EndedGoal {
    info: GoalInfo,
    status: GoalStatus,
    result: ActionResult,
}

/// The goal being executed.
struct ActiveGoal {
    info: GoalInfo,
    tolerances: GoalTolerances,
    /// When it was accepted (the node's clock).
    accepted: f64,
}

/// The points of a JointTrajectory message as the core takes them; a point with efforts is
/// refused (the controller computes the efforts: they would be ignored).
pub(crate) fn trajectory_points(msg: &JointTrajectory) -> Result<Vec<TrajectoryPoint>, String> {
    if let Some(k) = msg.points.iter().position(|p| !p.effort.is_empty()) {
        return Err(format!("point {k} gives efforts: this controller computes the efforts itself (leave effort empty)"));
    }
    Ok(msg
        .points
        .iter()
        .map(|p| TrajectoryPoint {
            time: p.time_from_start.seconds(),
            positions: p.positions.clone(),
            velocities: Some(p.velocities.clone()).filter(|v| !v.is_empty()),
            accelerations: Some(p.accelerations.clone()).filter(|v| !v.is_empty()),
        })
        .collect())
}

/// When a JointTrajectory starts on `clock`: its stamp, or `now` for a zero stamp (as in
/// ros2_control's trajectory controller).
pub(crate) fn trajectory_start(msg: &JointTrajectory, now: f64, clock: &NodeClock) -> f64 {
    let stamp = msg.header.stamp.seconds();
    if stamp > 0.0 {
        clock.from_stamp(stamp)
    } else {
        now
    }
}

fn requests(tolerances: &[JointTolerance]) -> Vec<ToleranceRequest<'_>> {
    tolerances
        .iter()
        .map(|t| ToleranceRequest {
            joint: &t.name,
            position: t.position,
            velocity: t.velocity,
            acceleration: t.acceleration,
        })
        .collect()
}

fn refused(error_code: i32, reason: impl Into<String>) -> ActionResult {
    ActionResult {
        error_code,
        error_string: reason.into(),
    }
}

/// A joint's goal position tolerance when `constraints.goal` is empty, rad (m): a torque
/// controller's arm can sag short of the goal (a payload, a model error), and a goal must not
/// be reported reached then.
pub(crate) const DEFAULT_GOAL_TOLERANCE: f64 = 0.05;

/// The controller's default tolerances from its `constraints.*` parameters.
fn default_tolerances(settings: &LiveSettings, joints: usize) -> GoalTolerances {
    let per_joint = |given: &[f64], empty: f64| match given.len() == joints {
        true => given.to_vec(),
        false => vec![empty; joints],
    };
    let stopped = settings.stopped_velocity_tolerance;
    GoalTolerances {
        path: per_joint(&settings.path_tolerance, 0.0)
            .into_iter()
            .map(|position| StateTolerance {
                position,
                velocity: 0.0,
            })
            .collect(),
        goal: per_joint(&settings.goal_tolerance, DEFAULT_GOAL_TOLERANCE)
            .into_iter()
            .map(|position| StateTolerance {
                position,
                velocity: stopped,
            })
            .collect(),
        goal_time: settings.goal_time,
    }
}

/// The action's goals and the requests waiting on them.
pub(crate) struct TrajectoryAction {
    joints: Vec<String>,
    active: Option<ActiveGoal>,
    ended: VecDeque<EndedGoal>,
    /// get_result requests for the active goal, answered when it ends.
    waiting: Vec<u64>,
    feedback: Feedback,
    last_feedback: Option<f64>,
    statuses: Vec<(GoalInfo, GoalStatus)>,
}

impl TrajectoryAction {
    /// The action of a controller of `joints`.
    pub(crate) fn new(joints: &[String]) -> Self {
        let n = joints.len();
        let point = || JointTrajectoryPoint {
            positions: vec![0.0; n],
            velocities: vec![0.0; n],
            accelerations: vec![0.0; n],
            ..JointTrajectoryPoint::default()
        };
        Self {
            joints: joints.to_vec(),
            active: None,
            ended: VecDeque::new(),
            waiting: Vec::new(),
            feedback: Feedback {
                joint_names: joints.to_vec(),
                desired: point(),
                actual: point(),
                error: point(),
                ..Feedback::default()
            },
            last_feedback: None,
            statuses: Vec::new(),
        }
    }

    /// Whether a goal is being executed.
    pub(crate) fn is_active(&self) -> bool {
        self.active.is_some()
    }

    /// Whether a goal with this id was sent (`accepted_only`: and accepted).
    fn known(&self, id: &GoalId, accepted_only: bool) -> bool {
        let listed = |e: &&EndedGoal| !accepted_only || e.status != GoalStatus::Unknown;
        self.active.as_ref().is_some_and(|a| a.info.goal_id == *id)
            || self
                .ended
                .iter()
                .filter(listed)
                .any(|e| e.info.goal_id == *id)
    }

    /// Checks a goal and, when it passes, makes the core follow it (the old goal is
    /// preempted); `task_law` names the law when it follows pose targets instead. Why it
    /// cannot be taken, with the error code that says so.
    fn take(
        &self,
        goal: &Goal,
        (core, task_law): (&mut ControllerCore, Option<&str>),
        settings: &LiveSettings,
        clock: &NodeClock,
    ) -> Result<GoalTolerances, ActionResult> {
        if !goal.multi_dof_trajectory.points.is_empty()
            || !goal.multi_dof_trajectory.joint_names.is_empty()
        {
            return Err(refused(
                ActionResult::INVALID_GOAL,
                "multi_dof_trajectory is not supported: the controlled joints are single-DOF",
            ));
        }
        if !goal.component_path_tolerance.is_empty() || !goal.component_goal_tolerance.is_empty() {
            return Err(refused(
                ActionResult::INVALID_GOAL,
                "component tolerances are for multi-DOF joints, which this controller has none of",
            ));
        }
        if let Some(law) = task_law {
            let why = format!(
                "controller '{law}' follows pose targets (~/target_pose), not joint trajectories"
            );
            return Err(refused(ActionResult::INVALID_GOAL, why));
        }
        let trajectory = &goal.trajectory;
        if trajectory.points.is_empty() {
            return Err(refused(
                ActionResult::INVALID_GOAL,
                "the trajectory has no points",
            ));
        }
        core.check_trajectory_joints(&trajectory.joint_names)
            .map_err(|e| refused(ActionResult::INVALID_JOINTS, e.to_string()))?;
        let tolerances = default_tolerances(settings, self.joints.len())
            .for_goal(
                &self.joints,
                &requests(&goal.path_tolerance),
                &requests(&goal.goal_tolerance),
                goal.goal_time_tolerance.seconds(),
            )
            .map_err(|e| match e {
                ToleranceError::UnknownJoint(r) => refused(ActionResult::INVALID_JOINTS, r),
                ToleranceError::Value(r) => refused(ActionResult::INVALID_GOAL, r),
            })?;
        if let Some(fault) = core.fault() {
            return Err(refused(
                ActionResult::INVALID_GOAL,
                format!("the controller holds: {fault}"),
            ));
        }
        let now = clock.now();
        let start = trajectory_start(trajectory, now, clock);
        let end = start
            + trajectory
                .points
                .last()
                .map_or(0.0, |p| p.time_from_start.seconds());
        if trajectory.header.stamp.seconds() > 0.0 && end < now {
            let late = now - end;
            return Err(refused(
                ActionResult::OLD_HEADER_TIMESTAMP,
                format!("the trajectory's stamp puts its end {late:.3} s in the past"),
            ));
        }
        let points =
            trajectory_points(trajectory).map_err(|e| refused(ActionResult::INVALID_GOAL, e))?;
        core.set_trajectory(&trajectory.joint_names, &points, start, now)
            .map_err(|e| refused(ActionResult::INVALID_GOAL, e.to_string()))?;
        Ok(tolerances)
    }

    /// A send_goal request: taken (preempting the active goal) or rejected, answered either
    /// way.
    pub(crate) fn on_goal<T: Transport>(
        &mut self,
        transport: &mut T,
        request: u64,
        (goal_id, goal): (GoalId, &Goal),
        arm: (&mut ControllerCore, Option<&str>),
        settings: &LiveSettings,
        clock: &NodeClock,
    ) {
        let now = clock.now();
        let info = GoalInfo {
            goal_id,
            stamp: Time::from_seconds(clock.to_stamp(now)),
        };
        let duplicate = self.known(&goal_id, false);
        let taken = if duplicate {
            Err(refused(
                ActionResult::INVALID_GOAL,
                "a goal with this id was sent before",
            ))
        } else {
            self.take(goal, arm, settings, clock)
        };
        let accepted = taken.is_ok();
        transport.respond_action(
            request,
            ActionResponse::Goal {
                accepted,
                stamp: info.stamp,
            },
        );
        match taken {
            Ok(tolerances) => {
                let preempted = "cancelled: a newer goal replaced it";
                self.end(
                    transport,
                    GoalStatus::Canceled,
                    refused(ActionResult::INVALID_GOAL, preempted),
                );
                let points = goal.trajectory.points.len();
                transport.log(
                    LogLevel::Info,
                    &format!(
                        "follow_joint_trajectory: goal {} accepted ({points} points)",
                        hex(&goal_id)
                    ),
                );
                self.active = Some(ActiveGoal {
                    info,
                    tolerances,
                    accepted: now,
                });
                self.last_feedback = None;
                self.publish_status(transport);
            }
            Err(result) => {
                transport.log(
                    LogLevel::Warn,
                    &format!(
                        "follow_joint_trajectory: goal {} rejected: {}",
                        hex(&goal_id),
                        result.error_string
                    ),
                );
                // The id's result stays the first goal's.
                if duplicate {
                    return;
                }
                self.remember(EndedGoal {
                    info,
                    status: GoalStatus::Unknown,
                    result,
                });
            }
        }
    }

    /// A cancel_goal request, by action_msgs/CancelGoal's rules (a zero id: every goal; a
    /// nonzero stamp: those accepted at or before it): the active goal is cancelled and the
    /// arm holds where it is.
    pub(crate) fn on_cancel<T: Transport>(
        &mut self,
        transport: &mut T,
        request: u64,
        which: GoalInfo,
        core: &mut ControllerCore,
    ) {
        let all = which.goal_id == [0; 16];
        let by_time = which.stamp != Time::default();
        let matches = |info: &GoalInfo| {
            info.goal_id == which.goal_id
                || (all && !by_time)
                || (by_time && info.stamp.seconds() <= which.stamp.seconds())
        };
        let response = match &self.active {
            Some(active) if matches(&active.info) => {
                let info = active.info;
                core.cancel_trajectory();
                self.end(
                    transport,
                    GoalStatus::Canceled,
                    refused(
                        ActionResult::SUCCESSFUL,
                        "cancelled on request: holding where the arm is",
                    ),
                );
                transport.log(
                    LogLevel::Info,
                    &format!(
                        "follow_joint_trajectory: goal {} cancelled",
                        hex(&info.goal_id)
                    ),
                );
                ActionResponse::Cancel {
                    code: CancelCode::None,
                    canceling: vec![info],
                }
            }
            _ if !all && self.known(&which.goal_id, true) => ActionResponse::Cancel {
                code: CancelCode::GoalTerminated,
                canceling: vec![],
            },
            _ if !all => ActionResponse::Cancel {
                code: CancelCode::UnknownGoal,
                canceling: vec![],
            },
            _ => ActionResponse::Cancel {
                code: CancelCode::Rejected,
                canceling: vec![],
            },
        };
        transport.respond_action(request, response);
    }

    /// A get_result request: answered now for an ended (or rejected, or unknown) goal, when
    /// it ends for the active one.
    pub(crate) fn on_get_result<T: Transport>(
        &mut self,
        transport: &mut T,
        request: u64,
        goal_id: GoalId,
    ) {
        if self
            .active
            .as_ref()
            .is_some_and(|a| a.info.goal_id == goal_id)
        {
            self.waiting.push(request);
            return;
        }
        let response = match self.ended.iter().find(|e| e.info.goal_id == goal_id) {
            Some(e) => ActionResponse::Result {
                status: e.status,
                result: e.result.clone(),
            },
            None => ActionResponse::Result {
                status: GoalStatus::Unknown,
                result: refused(
                    ActionResult::INVALID_GOAL,
                    "no such goal (never sent, or forgotten)",
                ),
            },
        };
        transport.respond_action(request, response);
    }

    /// After a control step at `now` (`arm`: its outcome, the fault it held for if it did):
    /// ends the goal when reached, off its path, late, or held; sends feedback at
    /// `monitor_rate`. Returns `true` when the goal was aborted: its trajectory must go.
    pub(crate) fn after_step<T: Transport>(
        &mut self,
        transport: &mut T,
        arm: &ArmOutput,
        (now, stamp): (f64, f64),
        monitor_rate: f64,
    ) -> bool {
        let Some(active) = &self.active else {
            return false;
        };
        let state = &arm.state;
        let verdict = match (arm.report.fault.as_ref(), state.trajectory_end) {
            (Some(Fault::NoState), _) | (None, Some(_)) => None,
            (Some(fault), _) => Some((
                GoalStatus::Aborted,
                refused(
                    ActionResult::PATH_TOLERANCE_VIOLATED,
                    format!("aborted: the controller holds ({fault})"),
                ),
            )),
            (None, None) => Some((
                GoalStatus::Aborted,
                refused(
                    ActionResult::INVALID_GOAL,
                    "aborted: the trajectory was dropped",
                ),
            )),
        };
        let verdict = verdict.or_else(|| {
            let end = state.trajectory_end.unwrap_or(now);
            let (q, qd) = (&state.position, &state.velocity);
            match active
                .tolerances
                .check(&self.joints, now - end, &state.reference, q, qd)
            {
                GoalCheck::Moving => None,
                GoalCheck::Reached => Some((
                    GoalStatus::Succeeded,
                    refused(ActionResult::SUCCESSFUL, "goal reached"),
                )),
                GoalCheck::PathViolated(why) => Some((
                    GoalStatus::Aborted,
                    refused(
                        ActionResult::PATH_TOLERANCE_VIOLATED,
                        format!("aborted: {why}"),
                    ),
                )),
                GoalCheck::GoalTimeExceeded(why) => Some((
                    GoalStatus::Aborted,
                    refused(
                        ActionResult::GOAL_TOLERANCE_VIOLATED,
                        format!("aborted: {why}"),
                    ),
                )),
            }
        });
        if self
            .last_feedback
            .is_none_or(|t| now - t >= 1.0 / monitor_rate - 1e-9 || now < t)
        {
            self.last_feedback = Some(now);
            self.send_feedback(transport, state, now, stamp);
        }
        let Some((status, result)) = verdict else {
            return false;
        };
        let level = if status == GoalStatus::Succeeded {
            LogLevel::Info
        } else {
            LogLevel::Warn
        };
        transport.log(
            level,
            &format!("follow_joint_trajectory: {}", result.error_string),
        );
        self.end(transport, status, result);
        status == GoalStatus::Aborted
    }

    /// Ends the active goal, if any, with `status` and `result`, e.g. when a trajectory on
    /// `~/reference` replaced it, simulated time went back, or the node stops.
    pub(crate) fn end<T: Transport>(
        &mut self,
        transport: &mut T,
        status: GoalStatus,
        result: ActionResult,
    ) {
        let Some(active) = self.active.take() else {
            return;
        };
        for request in self.waiting.drain(..) {
            transport.respond_action(
                request,
                ActionResponse::Result {
                    status,
                    result: result.clone(),
                },
            );
        }
        self.remember(EndedGoal {
            info: active.info,
            status,
            result,
        });
        self.publish_status(transport);
    }

    fn remember(&mut self, goal: EndedGoal) {
        if self.ended.len() == REMEMBERED {
            self.ended.pop_front();
        }
        self.ended.push_back(goal);
    }

    fn publish_status<T: Transport>(&mut self, transport: &mut T) {
        self.statuses.clear();
        let accepted = self
            .ended
            .iter()
            .filter(|e| e.status != GoalStatus::Unknown);
        self.statuses.extend(accepted.map(|e| (e.info, e.status)));
        if let Some(active) = &self.active {
            self.statuses.push((active.info, GoalStatus::Executing));
        }
        transport.publish_action(ActionOutput::Status(&self.statuses));
    }

    fn send_feedback<T: Transport>(
        &mut self,
        transport: &mut T,
        state: &ArmState,
        now: f64,
        stamp: f64,
    ) {
        let Some(active) = &self.active else { return };
        let reference = &state.reference;
        let (q, qd) = (&state.position, &state.velocity);
        let f = &mut self.feedback;
        f.header.stamp = Time::from_seconds(stamp);
        let since = crate::msgs::Duration::from_seconds(now - active.accepted);
        for point in [&mut f.desired, &mut f.actual, &mut f.error] {
            point.time_from_start = since;
        }
        f.desired.positions.copy_from_slice(&reference.q);
        f.desired.velocities.copy_from_slice(&reference.qd);
        f.desired.accelerations.copy_from_slice(&reference.qdd);
        f.actual.positions.copy_from_slice(q);
        f.actual.velocities.copy_from_slice(qd);
        f.actual.accelerations.clear();
        f.error.accelerations.clear();
        for j in 0..q.len() {
            f.error.positions[j] = reference.q[j] - q[j];
            f.error.velocities[j] = reference.qd[j] - qd[j];
        }
        transport.publish_action(ActionOutput::Feedback(active.info.goal_id, &self.feedback));
    }
}

/// A goal id as the 32 hex digits ROS tools print.
fn hex(id: &GoalId) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}
