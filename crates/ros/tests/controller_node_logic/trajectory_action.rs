//! `~/follow_joint_trajectory` as joint_trajectory_controller answers it, and what it
//! refuses.

use super::*;

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
