//! controller_node's logic on a scripted in-memory transport (no middleware): what arrives is a
//! fixed list of messages, ticks and pauses; the efforts the node publishes are recorded.

use std::collections::VecDeque;
use std::time::Duration;

use armctl_ros::follow_joint_trajectory::{
    ActionOutput, ActionRequest, ActionResponse, ActionResult, CancelCode, Goal, GoalId, GoalInfo,
    GoalStatus, JointTolerance,
};
use armctl_ros::msgs::{
    Clock, DiagnosticArray, DiagnosticStatus, Float64MultiArray, Header, JointState,
    JointTrajectoryPoint, PoseStamped, Time, WrenchStamped,
};
use armctl_ros::nodes::controller_node::ControllerNode;
use armctl_ros::parameter_services::ParameterRequest;
use armctl_ros::parameter_services::ParameterResponse;
use armctl_ros::transport::{Incoming, LogLevel, NodeLogic, Outgoing, Topic, Transport};
use armctl_runtime::ros_args::RosArgs;

/// One scripted event (as large as an `Incoming`: a copy per event is nothing in a test).
#[allow(clippy::large_enum_variant)]
enum Step {
    Deliver(Incoming),
    /// The node's thread is late by this long (a stall: the ticker merges missed ticks).
    Pause(Duration),
}

#[derive(Default)]
struct Scripted {
    script: VecDeque<Step>,
    commands: Vec<Vec<f64>>,
    states: Vec<Float64MultiArray>,
    logs: std::sync::Mutex<Vec<String>>,
    diagnostics: Vec<DiagnosticArray>,
    /// Answers to action requests, by request id, with the number of commands sent before.
    answers: Vec<(u64, ActionResponse, usize)>,
    /// Feedback messages sent: goal id and the joints' position errors.
    feedback: Vec<(GoalId, Vec<f64>)>,
    /// Status lists published, each as (goal id's first byte, status).
    statuses: Vec<Vec<(u8, GoalStatus)>>,
}

impl Transport for Scripted {
    async fn next(&mut self) -> Option<Incoming> {
        loop {
            match self.script.pop_front()? {
                Step::Deliver(incoming) => return Some(incoming),
                Step::Pause(pause) => std::thread::sleep(pause),
            }
        }
    }

    fn publish(&mut self, msg: Outgoing<'_>) {
        match msg {
            Outgoing::Commands(Float64MultiArray { data, .. }) => self.commands.push(data.clone()),
            Outgoing::State(state) => self.states.push(state.clone()),
            Outgoing::Diagnostics(d) => self.diagnostics.push(d.clone()),
            _ => {}
        }
    }

    fn publish_on(&mut self, _slot: usize, msg: Outgoing<'_>) {
        self.publish(msg);
    }

    fn received_on(&self) -> usize {
        0
    }

    fn subscriber_count(&self, _topic: Topic) -> usize {
        1
    }

    fn respond(&mut self, _id: u64, _response: ParameterResponse) {}

    fn respond_action(&mut self, id: u64, response: ActionResponse) {
        self.answers.push((id, response, self.commands.len()));
    }

    fn publish_action(&mut self, output: ActionOutput<'_>) {
        match output {
            ActionOutput::Feedback(id, f) => self.feedback.push((id, f.error.positions.clone())),
            ActionOutput::Status(list) => self
                .statuses
                .push(list.iter().map(|(i, s)| (i.goal_id[0], *s)).collect()),
        }
    }

    fn log(&self, _level: LogLevel, text: &str) {
        self.logs.lock().unwrap().push(text.to_string());
    }
}

fn node(overrides: &[(&str, &str)]) -> ControllerNode {
    let urdf = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/planar_2link.urdf");
    let mut all = vec![("urdf_path".to_string(), urdf.to_string())];
    all.extend(
        overrides
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    let args = RosArgs {
        overrides: all,
        ..RosArgs::default()
    };
    ControllerNode::new(&args).expect("node configures")
}

fn state(q: [f64; 2]) -> Incoming {
    Incoming::JointStates(JointState {
        name: vec!["joint1".into(), "joint2".into()],
        position: q.to_vec(),
        velocity: vec![0.0, 0.0],
        ..JointState::default()
    })
}

/// Wall-clock node at 100 Hz: after a 60 ms stall (the ticker merges the missed ticks into one)
/// the next step advances by the time that passed, not by the nominal 10 ms. Seen through the
/// rate limit, which lets an effort move `rate_limit * dt` per step.
#[tokio::test]
async fn a_step_after_a_stall_advances_by_the_measured_time() {
    let node = node(&[
        ("controller", "independent_pd"),
        ("update_rate", "100.0"),
        ("state_timeout", "5.0"),
        ("rate_limit", "10.0"),
    ]);
    let mut transport = Scripted {
        script: VecDeque::from([
            Step::Deliver(state([0.0, 0.0])),
            Step::Deliver(Incoming::Tick),
            // The arm is pushed away: the PD effort wants to jump far beyond 10 N m/s.
            Step::Deliver(state([0.5, -0.5])),
            Step::Deliver(Incoming::Tick),
            Step::Pause(Duration::from_millis(60)),
            Step::Deliver(Incoming::Tick),
        ]),
        ..Scripted::default()
    };
    node.run(&mut transport).await.unwrap();
    let c = &transport.commands;
    assert_eq!(c.len(), 3, "{c:?}");
    let moved = (c[2][0] - c[1][0]).abs();
    // Measured dt >= 60 ms (capped at 0.1 s): 0.6..1.0 N m. The nominal 10 ms gave 0.1 N m.
    assert!(
        (0.55..=1.0 + 1e-9).contains(&moved),
        "effort moved {moved} N m in the step after the stall"
    );
}

/// `~/state` counts the efforts the safety layer clipped at their limits (what `armctl demo`
/// reports as saturated commands; it printed a constant 0).
#[tokio::test]
async fn the_state_counts_clipped_efforts() {
    let node = node(&[
        ("controller", "independent_pd"),
        ("kp", "[1e5, 1e5]"),
        ("state_publish_rate", "0.0"),
    ]);
    let mut transport = Scripted {
        // Per-message mode: each state is answered; the arm is far from the held reference.
        script: VecDeque::from([
            Step::Deliver(state([0.0, 0.0])),
            Step::Deliver(state([0.5, -0.5])),
            Step::Deliver(state([0.5, -0.5])),
        ]),
        ..Scripted::default()
    };
    node.run(&mut transport).await.unwrap();
    let saturated: Vec<f64> = transport
        .states
        .iter()
        .map(|s| armctl_ros::msgs::labelled_block(s, "saturated").unwrap()[0])
        .collect();
    assert_eq!(
        saturated,
        vec![0.0, 2.0, 4.0],
        "both joints clipped in the last two steps"
    );
}

fn pose_in(frame: &str, x: f64) -> Incoming {
    let mut msg = PoseStamped {
        header: Header {
            frame_id: frame.into(),
            ..Header::default()
        },
        ..PoseStamped::default()
    };
    msg.pose.position.x = x;
    msg.pose.orientation.w = 1.0;
    Incoming::TargetPose(msg)
}

fn wrench_in(frame: &str) -> Incoming {
    let mut msg = WrenchStamped {
        header: Header {
            frame_id: frame.into(),
            ..Header::default()
        },
        ..WrenchStamped::default()
    };
    msg.wrench.force.x = 1.0;
    Incoming::ExternalWrench(msg)
}

/// Pose targets and wrenches name their frame: a link of the chain is placed with the model's
/// kinematics, anything else is refused naming it (a wrench once per frame, not per message).
#[tokio::test]
async fn stamped_inputs_in_an_unknown_frame_are_refused_naming_it() {
    let node = node(&[("controller", "cartesian_impedance")]);
    let q = [0.3, 0.5];
    let mut script = vec![
        Step::Deliver(state(q)),
        Step::Deliver(pose_in("camera", 0.0)),
        Step::Deliver(wrench_in("nowhere")),
        Step::Deliver(wrench_in("nowhere")),
        Step::Deliver(wrench_in("tool0")),
        // 5 cm ahead along the tool's own x axis.
        Step::Deliver(pose_in("tool0", 0.05)),
    ];
    // 0.2 s of the 1 s move to the new target.
    for _ in 0..20 {
        script.push(Step::Pause(Duration::from_millis(10)));
        script.push(Step::Deliver(state(q)));
    }
    let mut transport = Scripted {
        script: script.into(),
        ..Scripted::default()
    };
    node.run(&mut transport).await.unwrap();
    let logs = transport.logs.lock().unwrap().clone();
    let refused = |what: &str| logs.iter().filter(|l| l.contains(what)).count();
    assert_eq!(
        refused("target pose rejected: frame 'camera'"),
        1,
        "{logs:?}"
    );
    assert_eq!(
        refused("external wrench refused: frame 'nowhere'"),
        1,
        "{logs:?}"
    );
    assert_eq!(refused("rejected") + refused("refused"), 2, "{logs:?}");
    // The accepted target moves the tip: the efforts change from the holding ones.
    let (first, last) = (&transport.commands[0], transport.commands.last().unwrap());
    let change = (first[0] - last[0]).abs() + (first[1] - last[1]).abs();
    assert!(change > 1e-3, "{first:?} -> {last:?}");
}

/// `/diagnostics` once a second: STALE before any joint state; WARN for a second with a
/// refused parameter change (counted); ERROR while holding on stale states, with the reason.
#[tokio::test]
async fn diagnostics_report_the_loop_once_a_second() {
    let node = node(&[("controller", "pd_gravity")]);
    let bad_kd = armctl_control::ParameterValue::DoubleArray(vec![-1.0, -1.0]);
    let second = || Step::Pause(Duration::from_millis(1050));
    let mut script = vec![second(), Step::Deliver(Incoming::Tick)];
    for _ in 0..10 {
        script.push(Step::Deliver(state([0.1, 0.2])));
    }
    script.push(Step::Deliver(Incoming::ParameterRequest(
        1,
        ParameterRequest::Set(vec![("kd".into(), bad_kd)]),
    )));
    script.extend([second(), Step::Deliver(state([0.1, 0.2]))]);
    script.extend([Step::Deliver(Incoming::Tick), second()]);
    script.extend([Step::Deliver(Incoming::Tick), Step::Deliver(Incoming::Tick)]);
    let mut transport = Scripted {
        script: script.into(),
        ..Scripted::default()
    };
    node.run(&mut transport).await.unwrap();
    let reports: Vec<&DiagnosticStatus> =
        transport.diagnostics.iter().map(|d| &d.status[0]).collect();
    assert_eq!(reports.len(), 3, "{reports:#?}");
    let value = |s: &DiagnosticStatus, key: &str| {
        s.values
            .iter()
            .find(|kv| kv.key == key)
            .map(|kv| kv.value.clone())
            .unwrap()
    };
    assert_eq!(reports[0].name, "controller_node: control loop");
    assert_eq!(reports[0].hardware_id, "planar_2link");
    assert_eq!(
        reports[0].level,
        DiagnosticStatus::STALE,
        "{:?}",
        reports[0]
    );
    assert_eq!(reports[1].level, DiagnosticStatus::WARN, "{:?}", reports[1]);
    assert!(
        reports[1].message.contains("1 refused"),
        "{}",
        reports[1].message
    );
    assert_eq!(
        value(reports[1], "parameter changes refused since start"),
        "1"
    );
    assert_eq!(value(reports[1], "controller"), "pd_gravity");
    assert_eq!(value(reports[1], "steps in the last second"), "10");
    assert_eq!(
        reports[2].level,
        DiagnosticStatus::ERROR,
        "{:?}",
        reports[2]
    );
    assert!(
        reports[2].message.starts_with("holding: "),
        "{}",
        reports[2].message
    );
    let age: f64 = value(reports[2], "joint state age (s)").parse().unwrap();
    assert!(age > 1.0, "{age}");
}

/// A node running `controller` on simulated time (states stale after 0.5 s).
fn on_sim_time(controller: &str) -> ControllerNode {
    node(&[
        ("controller", controller),
        ("use_sim_time", "true"),
        ("state_timeout", "0.5"),
    ])
}

/// The node run through `script`, and what it sent.
async fn run(node: ControllerNode, script: VecDeque<Step>) -> Scripted {
    let mut transport = Scripted {
        script,
        ..Scripted::default()
    };
    node.run(&mut transport).await.unwrap();
    transport
}

/// On simulated time: the clock at `t` and a joint state stamped `t`.
fn at(t: f64, q: [f64; 2], qd: [f64; 2]) -> [Step; 2] {
    let stamp = Time::from_seconds(t);
    [
        Step::Deliver(Incoming::Clock(Clock { clock: stamp })),
        Step::Deliver(Incoming::JointStates(JointState {
            header: Header {
                stamp,
                ..Header::default()
            },
            name: vec!["joint1".into(), "joint2".into()],
            position: q.to_vec(),
            velocity: qd.to_vec(),
            ..JointState::default()
        })),
    ]
}

/// A goal to `to` over `duration` s from now, in `joints`' order (one point: the core starts
/// it from the reference in effect).
fn goal(joints: [&str; 2], to: [f64; 2], duration: f64) -> Goal {
    let mut goal = Goal::default();
    goal.trajectory.joint_names = joints.iter().map(|j| j.to_string()).collect();
    goal.trajectory.points = vec![JointTrajectoryPoint {
        positions: to.to_vec(),
        velocities: vec![0.0, 0.0],
        time_from_start: Time::from_seconds(duration),
        ..JointTrajectoryPoint::default()
    }];
    goal
}

fn send(request: u64, id: u8, goal: Goal) -> Step {
    Step::Deliver(Incoming::Action(
        request,
        ActionRequest::SendGoal([id; 16], Box::new(goal)),
    ))
}

fn ask(request: u64, id: u8) -> Step {
    Step::Deliver(Incoming::Action(
        request,
        ActionRequest::GetResult([id; 16]),
    ))
}

fn answer(transport: &Scripted, request: u64) -> &ActionResponse {
    let found = transport.answers.iter().find(|(r, _, _)| *r == request);
    &found
        .unwrap_or_else(|| panic!("no answer to request {request}: {:?}", transport.answers))
        .1
}

fn result(transport: &Scripted, request: u64) -> (GoalStatus, ActionResult) {
    match answer(transport, request) {
        ActionResponse::Result { status, result } => (*status, result.clone()),
        other => panic!("request {request}: {other:?}"),
    }
}

fn accepted(transport: &Scripted, request: u64) -> bool {
    matches!(
        answer(transport, request),
        ActionResponse::Goal { accepted: true, .. }
    )
}

/// The follow_joint_trajectory action by joint_trajectory_controller's rules, on simulated
/// time: bad goals rejected with their codes (kept for get_result), a goal reached once its
/// trajectory ended and the arm stopped, preemption by a newer goal, cancel, tolerances, and a
/// hold that aborts.
#[tokio::test]
async fn the_trajectory_action_answers_as_joint_trajectory_controller() {
    let node = on_sim_time("pd_gravity");
    let j = ["joint1", "joint2"];
    let mut script = VecDeque::new();
    script.extend(at(1.0, [0.0, 0.0], [0.0, 0.0]));
    // Rejected: an unknown joint, a tolerance of an unknown joint, an old stamp.
    script.push_back(send(1, 0xA1, goal(["joint1", "elbow"], [0.1, 0.1], 0.5)));
    script.push_back(ask(2, 0xA1));
    let mut bad_tolerance = goal(j, [0.1, 0.1], 0.5);
    bad_tolerance.path_tolerance = vec![JointTolerance {
        name: "no_such_joint".into(),
        position: 0.1,
        ..JointTolerance::default()
    }];
    script.push_back(send(3, 0xA2, bad_tolerance));
    script.push_back(ask(4, 0xA2));
    let mut old = goal(j, [0.1, 0.1], 0.5);
    old.trajectory.header.stamp = Time::from_seconds(0.2);
    script.push_back(send(5, 0xA3, old));
    // Reached: the arm follows; a step after the end with the arm still moving is not yet
    // success (stopped_velocity_tolerance 0.01).
    script.push_back(send(10, 0xB1, goal(j, [0.1, 0.1], 0.5)));
    script.push_back(ask(11, 0xB1));
    script.extend(at(1.25, [0.05, 0.05], [0.2, 0.2]));
    script.extend(at(1.55, [0.1, 0.1], [0.05, 0.0]));
    script.extend(at(1.6, [0.1, 0.1], [0.0, 0.0]));
    script.push_back(send(13, 0xB1, goal(j, [0.0, 0.0], 0.5)));
    // Preempted by a newer goal, which is then cancelled.
    script.push_back(send(20, 0xC1, goal(j, [0.3, 0.3], 2.0)));
    script.push_back(ask(21, 0xC1));
    script.extend(at(1.7, [0.11, 0.11], [0.0, 0.0]));
    script.push_back(send(22, 0xC2, goal(j, [0.0, 0.0], 2.0)));
    script.push_back(ask(23, 0xC2));
    script.extend(at(1.8, [0.1, 0.1], [0.0, 0.0]));
    script.push_back(Step::Deliver(Incoming::Action(
        24,
        ActionRequest::Cancel(GoalInfo {
            goal_id: [0xC2; 16],
            ..GoalInfo::default()
        }),
    )));
    script.push_back(Step::Deliver(Incoming::Action(
        25,
        ActionRequest::Cancel(GoalInfo {
            goal_id: [0xC2; 16],
            ..GoalInfo::default()
        }),
    )));
    script.push_back(Step::Deliver(Incoming::Action(
        26,
        ActionRequest::Cancel(GoalInfo {
            goal_id: [0xEE; 16],
            ..GoalInfo::default()
        }),
    )));
    // Goal tolerance not met within the goal time.
    let mut strict = goal(j, [0.2, 0.2], 0.5);
    strict.goal_tolerance = j
        .iter()
        .map(|n| JointTolerance {
            name: n.to_string(),
            position: 1e-6,
            ..JointTolerance::default()
        })
        .collect();
    strict.goal_time_tolerance = Time::from_seconds(0.1);
    script.push_back(send(30, 0xD1, strict));
    script.push_back(ask(31, 0xD1));
    script.extend(at(2.35, [0.19, 0.19], [0.0, 0.0]));
    script.push_back(ask(32, 0xD1));
    script.extend(at(2.45, [0.19, 0.19], [0.0, 0.0]));
    // Path tolerance.
    let mut narrow = goal(j, [0.0, 0.0], 1.0);
    narrow.path_tolerance = vec![JointTolerance {
        name: "joint2".into(),
        position: 0.05,
        ..JointTolerance::default()
    }];
    script.push_back(send(40, 0xE1, narrow));
    script.push_back(ask(41, 0xE1));
    script.extend(at(2.5, [0.18, 0.1], [0.0, 0.0]));
    // A hold (the states stop) aborts the goal.
    script.push_back(send(50, 0xF1, goal(j, [0.0, 0.0], 1.0)));
    script.push_back(ask(51, 0xF1));
    script.push_back(Step::Deliver(Incoming::Clock(Clock {
        clock: Time::from_seconds(3.5),
    })));
    script.push_back(Step::Deliver(Incoming::Tick));
    let transport = run(node, script).await;
    let t = &transport;

    assert!(!accepted(t, 1));
    let (status, r) = result(t, 2);
    assert_eq!(
        (status, r.error_code),
        (GoalStatus::Unknown, ActionResult::INVALID_JOINTS),
        "{r:?}"
    );
    assert!(r.error_string.contains("'elbow'"), "{r:?}");
    assert!(!accepted(t, 3));
    let (_, r) = result(t, 4);
    assert_eq!(r.error_code, ActionResult::INVALID_JOINTS, "{r:?}");
    assert!(r.error_string.contains("no_such_joint"), "{r:?}");
    assert!(!accepted(t, 5), "a stamp that puts the end in the past");

    assert!(accepted(t, 10));
    let (status, r) = result(t, 11);
    assert_eq!(
        (status, r.error_code),
        (GoalStatus::Succeeded, ActionResult::SUCCESSFUL),
        "{r:?}"
    );
    let steps_before = |request: u64| t.answers.iter().find(|(r, _, _)| *r == request).unwrap().2;
    assert_eq!(
        steps_before(11),
        4,
        "answered at the step at 1.6 s, once the arm stopped"
    );
    assert!(!accepted(t, 13), "a goal id used before");
    assert!(t
        .feedback
        .iter()
        .any(|(id, e)| *id == [0xB1; 16] && e.len() == 2));

    assert!(accepted(t, 20) && accepted(t, 22));
    let (status, r) = result(t, 21);
    assert_eq!(
        (status, r.error_code),
        (GoalStatus::Canceled, ActionResult::INVALID_GOAL),
        "{r:?}"
    );
    assert!(
        matches!(answer(t, 24), ActionResponse::Cancel { code: CancelCode::None, canceling } if canceling.len() == 1 && canceling[0].goal_id == [0xC2; 16])
    );
    assert_eq!(result(t, 23).0, GoalStatus::Canceled);
    assert!(matches!(
        answer(t, 25),
        ActionResponse::Cancel {
            code: CancelCode::GoalTerminated,
            ..
        }
    ));
    assert!(matches!(
        answer(t, 26),
        ActionResponse::Cancel {
            code: CancelCode::UnknownGoal,
            ..
        }
    ));

    assert_eq!(
        steps_before(31),
        steps_before(32),
        "not within the goal time yet at 2.35 s"
    );
    let (status, r) = result(t, 31);
    assert_eq!(
        (status, r.error_code),
        (GoalStatus::Aborted, ActionResult::GOAL_TOLERANCE_VIOLATED),
        "{r:?}"
    );
    let (status, r) = result(t, 41);
    assert_eq!(
        (status, r.error_code),
        (GoalStatus::Aborted, ActionResult::PATH_TOLERANCE_VIOLATED),
        "{r:?}"
    );
    assert!(r.error_string.contains("joint2"), "{r:?}");
    let (status, r) = result(t, 51);
    assert_eq!(
        (status, r.error_code),
        (GoalStatus::Aborted, ActionResult::PATH_TOLERANCE_VIOLATED),
        "{r:?}"
    );
    assert!(r.error_string.contains("holds"), "{r:?}");

    // The status list: the reached goal SUCCEEDED, rejected goals never listed.
    let last = t.statuses.last().unwrap();
    assert!(last.contains(&(0xB1, GoalStatus::Succeeded)), "{last:?}");
    assert!(!last.iter().any(|(id, _)| *id == 0xA1));
    assert!(t
        .statuses
        .iter()
        .any(|l| l.contains(&(0xB1, GoalStatus::Executing))));
}

/// What a review of the action found, on simulated time: a task-space law rejects goals (it
/// would ignore them and report success); with the default tolerances an arm that stops short
/// of the goal is not reported there (GOAL_TOLERANCE_VIOLATED after `constraints.goal_time`);
/// a goal id sent again keeps its first goal's result; cancelling a rejected goal is
/// UNKNOWN_GOAL; a point due at once with a zero stamp is not an old stamp; efforts in points
/// are refused.
#[tokio::test]
async fn the_action_refuses_what_it_cannot_do_and_never_reports_a_goal_it_missed() {
    let task_space = on_sim_time("cartesian_impedance");
    let mut script = VecDeque::new();
    script.extend(at(1.0, [0.0, 0.0], [0.0, 0.0]));
    script.push_back(send(1, 0x11, goal(["joint1", "joint2"], [0.1, 0.1], 0.5)));
    script.push_back(ask(2, 0x11));
    let transport = run(task_space, script).await;
    assert!(!accepted(&transport, 1));
    let (_, r) = result(&transport, 2);
    assert!(
        r.error_string.contains("cartesian_impedance") && r.error_string.contains("pose targets"),
        "{r:?}"
    );

    let node = on_sim_time("pd_gravity");
    let j = ["joint1", "joint2"];
    let mut script = VecDeque::new();
    script.extend(at(1.0, [0.0, 0.0], [0.0, 0.0]));
    // The arm stops 0.08 rad short: within 0.5 s of the end it may still get there; then not.
    script.push_back(send(10, 0x21, goal(j, [0.2, 0.2], 0.5)));
    script.push_back(ask(11, 0x21));
    script.push_back(send(12, 0x21, goal(j, [0.0, 0.0], 0.5)));
    script.extend(at(1.6, [0.12, 0.2], [0.0, 0.0]));
    script.extend(at(2.05, [0.12, 0.2], [0.0, 0.0]));
    script.push_back(ask(13, 0x21));
    // A goal rejected for its efforts, then cancelled by id.
    let mut with_effort = goal(j, [0.1, 0.1], 0.5);
    with_effort.trajectory.points[0].effort = vec![1.0, 1.0];
    script.push_back(send(20, 0x31, with_effort));
    script.push_back(ask(21, 0x31));
    script.push_back(Step::Deliver(Incoming::Action(
        22,
        ActionRequest::Cancel(GoalInfo {
            goal_id: [0x31; 16],
            ..GoalInfo::default()
        }),
    )));
    // Start and end now (zero stamp, one point at 0 where the arm is): reached, not "old".
    script.push_back(send(30, 0x41, goal(j, [0.12, 0.2], 0.0)));
    script.push_back(ask(31, 0x41));
    script.extend(at(2.1, [0.12, 0.2], [0.0, 0.0]));
    let transport = run(node, script).await;
    let t = &transport;
    assert!(accepted(t, 10) && !accepted(t, 12));
    let (status, r) = result(t, 11);
    assert_eq!(
        (status, r.error_code),
        (GoalStatus::Aborted, ActionResult::GOAL_TOLERANCE_VIOLATED),
        "{r:?}"
    );
    assert!(
        r.error_string.contains("joint1 position error 8.000e-2"),
        "{r:?}"
    );
    assert_eq!(
        result(t, 13),
        (status, r),
        "the id's result is the first goal's"
    );
    let (_, r) = result(t, 21);
    assert!(r.error_string.contains("point 0 gives efforts"), "{r:?}");
    assert!(matches!(
        answer(t, 22),
        ActionResponse::Cancel {
            code: CancelCode::UnknownGoal,
            ..
        }
    ));
    assert!(accepted(t, 30), "{:?}", t.answers);
    assert_eq!(result(t, 31).0, GoalStatus::Succeeded);
}
