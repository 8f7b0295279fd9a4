//! The loop: the time a step advances, clipped and joint-limited efforts counted, stamped
//! inputs in unknown frames refused, the diagnostics.

use super::*;

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
        // Without the rate limit, which would ramp these efforts to the limits over steps.
        ("effort_rise_time", "0.0"),
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
        .map(|s| armctl_nodes::msgs::labelled_block(s, "saturated").unwrap()[0])
        .collect();
    assert_eq!(
        saturated,
        vec![0.0, 2.0, 4.0],
        "both joints clipped in the last two steps"
    );
}

/// `~/state` and `/diagnostics` count the efforts the joint-limit protection bounded: the first
/// joint starts (and is held) 0.01 rad inside its URDF limit, beyond its soft limit (0.05 rad
/// inside): the law pushes to stay there, the protection pulls back toward the soft limit,
/// every step; the second's report warns with the count.
#[tokio::test]
async fn the_state_counts_efforts_bounded_at_a_soft_limit() {
    let node = node(&[
        ("controller", "pd_gravity"),
        ("state_publish_rate", "0.0"),
        ("effort_rise_time", "0.0"),
    ]);
    let beyond = || Step::Deliver(state([3.09, 0.0]));
    let mut transport = Scripted {
        script: VecDeque::from([
            beyond(),
            beyond(),
            beyond(),
            // A second later, a fresh state and the timer: the diagnostics report.
            Step::Pause(Duration::from_millis(1050)),
            beyond(),
            Step::Deliver(Incoming::Tick),
        ]),
        ..Scripted::default()
    };
    node.run(&mut transport).await.unwrap();
    let bounded: Vec<f64> = transport
        .states
        .iter()
        .map(|s| armctl_nodes::msgs::labelled_block(s, "joint_limited").unwrap()[0])
        .collect();
    assert_eq!(
        bounded,
        vec![1.0, 2.0, 3.0, 4.0],
        "the first joint, every step"
    );
    let report = &transport.diagnostics.last().expect("a report").status[0];
    assert_eq!(report.level, DiagnosticStatus::WARN, "{report:?}");
    assert!(
        report
            .message
            .contains("4 efforts bounded at soft joint limits"),
        "{}",
        report.message
    );
    let total = report
        .values
        .iter()
        .find(|kv| kv.key == "efforts bounded at soft joint limits since start")
        .map(|kv| kv.value.as_str());
    assert_eq!(total, Some("4"));
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

/// Poles set while a gain design is chosen write `kp` and `kd`: `/parameter_events` announces
/// them beside the set's own `poles` (rqt_reconfigure and `ros2 param get` agree); the design
/// from the default poles, which gives the default gains, and a set that derives nothing
/// announce nothing more.
#[tokio::test]
async fn gains_a_design_writes_are_announced_as_changed() {
    use armctl_control::ParameterValue;
    let node = node(&[("controller", "computed_torque")]);
    let set = |id, name: &str, value| {
        Step::Deliver(Incoming::ParameterRequest(
            id,
            ParameterRequest::Set(vec![(name.into(), value)]),
        ))
    };
    let poles = ParameterValue::DoubleArray(vec![-1.0, -2.0, -3.0, -4.0]);
    let script = vec![
        set(1, "gain_design", ParameterValue::String("poles".into())),
        set(2, "poles", poles),
        set(3, "state_timeout", ParameterValue::Double(0.2)),
    ];
    let mut transport = Scripted {
        script: script.into(),
        ..Scripted::default()
    };
    node.run(&mut transport).await.unwrap();
    let names: Vec<&str> = transport
        .announced
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(names, ["kp", "kd"], "{:?}", transport.announced);
    // s^2 + 3 s + 2 and s^2 + 7 s + 12: kp = p1 p2, kd = -(p1 + p2) per joint.
    assert_eq!(
        transport.announced[0].1,
        ParameterValue::DoubleArray(vec![2.0, 12.0])
    );
}

/// Settings that do what a user may not expect are warned about on /rosout: at start, and when
/// a change brings them about (a compliant collision reaction with `safe_mode: zero` lets the
/// arm sag), once.
#[tokio::test]
async fn a_compliant_reaction_without_gravity_is_warned_about_at_start_and_on_change() {
    let warned = |logs: &[String]| {
        logs.iter()
            .filter(|l| l.starts_with("parameters: ") && l.contains("sags"))
            .count()
    };
    let at_start = node(&[("collision_reaction", "compliant"), ("safe_mode", "zero")]);
    let mut transport = Scripted::default();
    at_start.run(&mut transport).await.unwrap();
    let logs = transport.logs.lock().unwrap().clone();
    assert_eq!(warned(&logs), 1, "at start: {logs:?}");
    let changed = node(&[("collision_reaction", "compliant")]);
    let set = |name: &str, value: &str| {
        Step::Deliver(Incoming::ParameterRequest(
            1,
            ParameterRequest::Set(vec![(
                name.into(),
                armctl_control::ParameterValue::String(value.into()),
            )]),
        ))
    };
    let mut transport = Scripted {
        script: VecDeque::from([set("safe_mode", "zero"), set("safe_mode", "zero")]),
        ..Scripted::default()
    };
    changed.run(&mut transport).await.unwrap();
    let logs = transport.logs.lock().unwrap().clone();
    assert_eq!(warned(&logs), 1, "once, on the change: {logs:?}");
}
