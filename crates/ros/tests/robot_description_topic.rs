//! controller_node without `robot_description` or `urdf_path` reads the URDF from the
//! `robot_description` topic, as robot_state_publisher publishes it (std_msgs/String, reliable,
//! transient local): published before the node starts, and after. The publisher and the arm
//! are an independent DDS implementation, `tests/interop/description_peer.py` (Cyclone DDS's
//! Python binding, in the interop venv of `tests/interop/setup_venv.sh`), which also reads the
//! node's `/diagnostics`.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

mod peers;
use peers::{python, wait_for, workspace, Killed, CYCLONEDDS_URI};

fn controller_node(domain: u16) -> Killed {
    Killed(
        Command::new(env!("CARGO_BIN_EXE_controller_node"))
            .args(["--ros-args", "-p", "controller:=pd_gravity"])
            .env("ROS_LOCALHOST_ONLY", "1")
            .env("ROS_DOMAIN_ID", domain.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    )
}

fn peer(python: &str, domain: u16) -> Killed {
    let joints: Vec<String> = (1..=7).map(|i| format!("panda_joint{i}")).collect();
    Killed(
        Command::new(python)
            .arg(workspace("tests/interop/description_peer.py"))
            .args(["--domain", &domain.to_string(), "--urdf"])
            .arg(workspace("urdf/panda.urdf"))
            .args(["--joints", &joints.join(",")])
            .args(["--positions", "0.1,-0.4,0.05,-2.1,0.1,1.9,0.7"])
            .args(["--command-topic", "/pd_gravity/commands"])
            .env("CYCLONEDDS_URI", CYCLONEDDS_URI)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap(),
    )
}

/// The node said it received the whole URDF, and the peer (its stdout: `output`) got an
/// effort command from it.
fn check_received(lines: &mpsc::Receiver<String>, mut peer: Killed, mut output: impl Read) {
    let received = wait_for(lines, "URDF received on /robot_description");
    let bytes = std::fs::metadata(workspace("urdf/panda.urdf"))
        .unwrap()
        .len();
    assert!(received.contains(&format!("({bytes} bytes)")), "{received}");
    let mut out = String::new();
    output.read_to_string(&mut out).unwrap();
    let ok = peer.0.wait().unwrap().success();
    assert!(ok, "no effort command from the URDF of the topic:\n{out}");
    assert!(out.contains("command ["), "{out}");
    // /diagnostics, decoded by the independent peer.
    let report = "diagnostics controller_node: control loop | panda | controlling | pd_gravity";
    assert!(out.contains(report), "{out}");
}

#[test]
fn the_urdf_published_before_the_node_starts_reaches_it() {
    let python = python();
    let mut description = peer(&python, 96);
    let mut output = BufReader::new(description.0.stdout.take().unwrap());
    let mut first = String::new();
    output.read_line(&mut first).unwrap();
    assert_eq!(first.trim(), "published");
    let mut node = controller_node(96);
    let lines = peers::lines("controller_node", node.0.stderr.take().unwrap());
    wait_for(&lines, "waiting for the URDF on /robot_description");
    check_received(&lines, description, output);
}

#[test]
fn the_node_waits_for_a_urdf_published_after_it_starts() {
    let python = python();
    let mut node = controller_node(97);
    let lines = peers::lines("controller_node", node.0.stderr.take().unwrap());
    wait_for(&lines, "waiting for the URDF on /robot_description");
    std::thread::sleep(Duration::from_millis(500));
    let mut description = peer(&python, 97);
    let output = description.0.stdout.take().unwrap();
    check_received(&lines, description, output);
}
