//! controller_node's `~/follow_joint_trajectory` and `~/controller_state` on the r2r backend,
//! used as MoveIt and rqt use them: rclpy's own ActionClient and a subscriber
//! (`tests/interop/rclpy_action_peer.py`, Fast DDS from ROS 2 Jazzy's or, with
//! `ARMCTL_TEST_ROS_DISTRO=kilted`, Kilted's PyPI wheels) against the r2r nodes built with
//! control_msgs (the test fixture `tests/interop/control_msgs`, built with the wheels' rosidl
//! generators), the arm the r2r sim_node. A goal followed to the end with
//! feedback, a rejected goal with its code, a cancelled goal, a path-tolerance abort, and the
//! controller state decoded. Discovery on loopback only.

use std::path::Path;

use armctl_e2e::r2r_nodes::{r2r_nodes, R2rNodes};

const DOMAIN: u16 = 231;
const START: &str = "0.0,-0.3,0.0,-2.0,0.0,1.8,0.7";
const GOAL: &str = "0.3,-0.1,0.2,-1.7,0.2,2.0,0.9";

fn tmp() -> &'static Path {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
}

#[test]
fn rclpy_drives_the_action_and_reads_the_controller_state_of_the_r2r_node() {
    let nodes = r2r_nodes(tmp());
    let urdf = format!(
        "urdf_path:={}",
        armctl_e2e::urdf_dir().join("panda.urdf").display()
    );
    let sim_params = [
        urdf.clone(),
        format!("initial_positions:=[{START}]"),
        "command_topic:=/computed_torque/commands".into(),
        // Each simulation step waits for the command answering the last joint states: a busy
        // machine slows the simulated time instead of starving the controller, which runs on
        // the simulated clock.
        "publish_clock:=true".into(),
        "lockstep:=true".into(),
    ];
    let _sim = nodes.start("sim_node", DOMAIN, &sim_params, tmp());
    let controller_params = [
        urdf,
        "controller:=computed_torque".into(),
        "use_sim_time:=true".into(),
        // The scenarios test the action, not staleness.
        "state_timeout:=1.0".into(),
    ];
    let _controller = nodes.start("controller_node", DOMAIN, &controller_params, tmp());
    let joints: Vec<String> = armctl_e2e::PANDA_JOINTS
        .iter()
        .map(|j| j.to_string())
        .collect();
    let mut peer = std::process::Command::new(nodes.python());
    peer.arg(armctl_e2e::workspace_dir().join("tests/interop/rclpy_action_peer.py"))
        .args([
            "--joints",
            &joints.join(","),
            "--start",
            START,
            "--goal",
            GOAL,
        ]);
    for (name, value) in nodes.python_environment(DOMAIN) {
        peer.env(name, value);
    }
    let out = peer.output().expect("running the rclpy action peer");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let logs = format!(
        "controller_node:\n{}\nsim_node:\n{}",
        R2rNodes::log("controller_node", DOMAIN, tmp()),
        R2rNodes::log("sim_node", DOMAIN, tmp())
    );
    eprintln!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success() && stdout.contains("\"failed\": []"),
        "the rclpy action peer reported failures:\n{stdout}\n{logs}"
    );
    for scenario in [
        "followed",
        "rejected",
        "cancelled",
        "path_tolerance",
        "controller_state",
    ] {
        assert!(
            stdout.contains(&format!("== {scenario}")),
            "{scenario} did not run"
        );
    }
}
