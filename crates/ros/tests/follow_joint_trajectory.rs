//! controller_node's `~/follow_joint_trajectory` action as MoveIt uses it, over DDS: the action
//! client is an independent implementation, `tests/interop/fjt_peer.py` (Cyclone DDS's Python
//! binding, in the interop venv of `tests/interop/setup_venv.sh`), and the arm is sim_node. A
//! goal as MoveIt sends it succeeds and ends where it should; a goal naming an unknown joint is
//! rejected with INVALID_JOINTS; a cancel stops the arm part way and holds it; a newer goal
//! preempts the running one (CANCELED, INVALID_GOAL); goal tolerances that cannot be met
//! abort the goal (GOAL_TOLERANCE_VIOLATED); a tolerance for an unknown joint is rejected. Both
//! service forms: Fast DDS's (ROS 2's default) and rmw_cyclonedds's. The peer also decodes
//! `~/controller_state` (control_msgs/JointTrajectoryControllerState) in Jazzy's layout with the
//! first, in Humble's with the second.

use std::io::Read;
use std::process::{Command, Stdio};

mod peers;
use peers::{python, wait_for, workspace, Killed, CYCLONEDDS_URI};

const START: &str = "0.0,-0.3,0.0,-2.0,0.0,1.8,0.7";
const GOAL: &str = "0.3,-0.1,0.2,-1.7,0.2,2.0,0.9";

/// A node binary on `domain`, loopback only, in the service form of `mapping`.
fn node(binary: &str, domain: u16, mapping: &str, args: &[String]) -> Command {
    let mut command = Command::new(binary);
    command
        .arg("--ros-args")
        .args(args)
        .env("ROS_LOCALHOST_ONLY", "1")
        .env("ROS_DOMAIN_ID", domain.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if mapping == "cyclone" {
        command.env("RMW_IMPLEMENTATION", "rmw_cyclonedds_cpp");
    }
    command
}

/// Every scenario on `domain` with the services in the form of `mapping`, `~/controller_state` in
/// `layout`.
fn run_scenarios(domain: u16, mapping: &str, layout: &str) {
    let python = python();
    let urdf = format!("urdf_path:={}", workspace("urdf/panda.urdf"));
    let p = |v: String| ["-p".to_string(), v];
    let sim_args = [
        p(urdf.clone()),
        p(format!("initial_positions:=[{START}]")),
        p("command_topic:=/computed_torque/commands".into()),
    ]
    .concat();
    let mut sim = Killed(
        node(env!("CARGO_BIN_EXE_sim_node"), domain, mapping, &sim_args)
            .spawn()
            .unwrap(),
    );
    let _sim_lines = peers::lines("sim_node", sim.0.stderr.take().unwrap());
    let controller_args = [
        p(urdf),
        p("controller:=computed_torque".into()),
        p(format!("controller_state_layout:={layout}")),
        // The scenarios test the action, not staleness: a busy machine may stall sim_node
        // past the default 0.1 s (beside two CPU hogs it stalled 1.0 s once), and the hold
        // would then end a goal.
        p("state_timeout:=5.0".into()),
    ]
    .concat();
    let controller = env!("CARGO_BIN_EXE_controller_node");
    let mut controller = Killed(
        node(controller, domain, mapping, &controller_args)
            .spawn()
            .unwrap(),
    );
    let lines = peers::lines("controller_node", controller.0.stderr.take().unwrap());
    wait_for(&lines, "controlling panda_joint1");
    let joints: Vec<String> = (1..=7).map(|i| format!("panda_joint{i}")).collect();
    let joints = joints.join(",");
    let mut peer = Killed(
        Command::new(python)
            .arg(workspace("tests/interop/fjt_peer.py"))
            .args(["--domain", &domain.to_string(), "--mapping", mapping])
            .args(["--joints", &joints, "--start", START, "--goal", GOAL])
            .args(["--scenario", "all", "--duration", "2.0", "--timeout", "120"])
            .args(["--state-layout", layout])
            .env("CYCLONEDDS_URI", CYCLONEDDS_URI)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap(),
    );
    let mut out = String::new();
    peer.0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let ok = peer.0.wait().unwrap().success();
    eprintln!("{out}");
    assert!(ok, "the action client's checks failed:\n{out}");
    for scenario in [
        "succeed",
        "unknown_joint",
        "cancel",
        "preempt",
        "goal_tolerance",
        "bad_tolerance",
    ] {
        assert!(
            out.contains(&format!("PASS {scenario}")),
            "{scenario} did not run:\n{out}"
        );
    }
    assert!(
        sim.0.try_wait().unwrap().is_none(),
        "sim_node exited during the goals"
    );
}

#[test]
fn moveit_goals_over_fast_dds_services() {
    run_scenarios(180, "enhanced", "jazzy");
}

#[test]
fn moveit_goals_over_cyclone_dds_services() {
    run_scenarios(181, "cyclone", "humble");
}
