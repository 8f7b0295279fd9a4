//! A real ROS 2 peer against controller_node on both backends: `tests/interop/rclpy_peer.py`,
//! rclpy on Fast DDS from ROS 2's PyPI wheels (Jazzy's, or Kilted's with
//! `ARMCTL_TEST_ROS_DISTRO=kilted`), does what `ros2 node`, `ros2 topic`, `ros2 param` and rqt
//! do (discovery and types, driving the arm, list / describe / get / set / atomic parameters,
//! /parameter_events, /rosout, robot_description through get_parameters, /diagnostics,
//! simulated time on rosgraph_msgs/Clock, `~/reset_collision` (std_srvs/Trigger), a burst of
//! 300 get_parameters calls on the r2r backend, 20 fresh clients' first calls). The DDS
//! backend's node runs in this process; the r2r backend's is the binary built against the
//! wheels. Discovery on loopback only.

use std::path::{Path, PathBuf};

use armctl_e2e::r2r_nodes::{r2r_nodes, NodeProcess};
use armctl_nodes::launch::{spawn, RunningNode};
use armctl_nodes::nodes::controller_node::ControllerNode;
use armctl_nodes::transport::dds::DdsOptions;
use armctl_runtime::ros_args::RosArgs;

const JOINTS: [&str; 7] = armctl_e2e::PANDA_JOINTS;
const Q0: [f64; 7] = armctl_e2e::PANDA_Q0;
/// Above what the DDS backend sends a Fast DDS client in one reply (see its parameter
/// services): such a value is answered "not set", with the reason on /rosout.
const DDS_REPLY_LIMIT: usize = 60_000;
/// Each fresh client's first call must be answered within this; how long it took is printed,
/// not bounded (a loaded machine slows it, and the DDS backend's first reply waits for a
/// heartbeat, about 3 s, in about half the tries: the RustDDS defect docs/ros2.md describes).
const FIRST_CALL_DEADLINE_S: f64 = 20.0;

fn tmp() -> &'static Path {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
}

/// The Panda's URDF padded by a comment to `bytes`, in a file of its own and as
/// `robot_description` in a parameter file (as robot_state_publisher's users pass it), with
/// `use_sim_time`: the two paths.
fn description_files(bytes: usize) -> (PathBuf, PathBuf) {
    let urdf = std::fs::read_to_string(armctl_e2e::urdf_dir().join("panda.urdf")).unwrap();
    let filler = "x".repeat(bytes - urdf.len() - "<!--  -->\n".len());
    let padded = urdf.replace("</robot>", &format!("<!-- {filler} -->\n</robot>"));
    assert_eq!(padded.len(), bytes);
    let dir = tmp().join("rclpy_peers");
    std::fs::create_dir_all(&dir).unwrap();
    let urdf_path = dir.join(format!("panda_{bytes}.urdf"));
    std::fs::write(&urdf_path, &padded).unwrap();
    let params_path = dir.join(format!("panda_{bytes}.yaml"));
    let quoted = serde_json::to_string(&padded).unwrap();
    let yaml = format!(
        "controller_node:\n  ros__parameters:\n    use_sim_time: true\n    robot_description: {quoted}\n"
    );
    std::fs::write(&params_path, yaml).unwrap();
    (urdf_path, params_path)
}

/// The node under test, kept running while it lives.
#[allow(dead_code)]
enum Node {
    InProcess(RunningNode),
    Process(NodeProcess),
}

fn start_dds(domain: u16, params: &Path) -> Node {
    let args = RosArgs {
        node_name: Some("controller_node".into()),
        params_files: vec![params.display().to_string()],
        ..RosArgs::default()
    };
    let node = ControllerNode::new(&args).expect("controller node configures");
    Node::InProcess(spawn(node, &DdsOptions::loopback(domain)).expect("controller node starts"))
}

/// The r2r binary, given its URDF by `params`, or (none) waiting for it on /robot_description.
fn start_r2r(domain: u16, params: Option<&Path>) -> Node {
    let mut command = r2r_nodes(tmp()).command("controller_node", domain);
    command.args(["--ros-args", "-p", "use_sim_time:=true"]);
    if let Some(params) = params {
        command.arg("--params-file").arg(params);
    }
    let child = command
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the r2r controller_node starts");
    Node::Process(NodeProcess(child))
}

/// `via_topic`: the peer publishes the URDF on /robot_description (latched, as
/// robot_state_publisher does) for the r2r binary, which starts without one.
async fn meet(domain: u16, description_bytes: usize, r2r: bool, via_topic: bool) {
    let (urdf, params) = description_files(description_bytes);
    let _node = match (r2r, via_topic) {
        (true, true) => start_r2r(domain, None),
        (true, false) => start_r2r(domain, Some(&params)),
        (false, _) => start_dds(domain, &params),
    };
    let expected = serde_json::json!({
        "node": "/controller_node",
        "command_topic": "/computed_torque/commands",
        "joints": JOINTS,
        "q": Q0,
        "description_bytes": description_bytes,
        "publish_description": via_topic.then(|| urdf.display().to_string()),
        "description_over_limit": !r2r && description_bytes > DDS_REPLY_LIMIT,
        "fresh_clients": 20,
        // ros2-client 0.12.1's spinner reads /clock as builtin_interfaces/msg/Time.
        "extra_clock_reader": !r2r,
        "first_call_deadline": FIRST_CALL_DEADLINE_S,
        "trigger_service": true,
        // Every request answered however many wait (the r2r backend pumps its services).
        "burst": if r2r { 300 } else { 0 },
        // rqt's and `ros2 param dump`'s calls from clients made in a running node, 20 times
        // (the DDS backend cannot send such replies whole to Fast DDS: docs/ros2.md).
        "dump_tries": if r2r { 20 } else { 0 },
    });
    let python = armctl_e2e::interop_python::ros_venv(tmp()).join("bin/python");
    let peer = tokio::process::Command::new(python)
        .arg(armctl_e2e::workspace_dir().join("tests/interop/rclpy_peer.py"))
        .args(["--expected", &expected.to_string()])
        .env("ROS_DOMAIN_ID", domain.to_string())
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
        .env("ROS_LOG_DIR", tmp().join("ros-log"))
        .kill_on_drop(true)
        .output();
    let peer = tokio::time::timeout(std::time::Duration::from_secs(300), peer)
        .await
        .expect("the rclpy peer did not finish within 300 s")
        .expect("running the rclpy peer");
    let stdout = String::from_utf8_lossy(&peer.stdout);
    eprintln!("{stdout}{}", String::from_utf8_lossy(&peer.stderr));
    assert!(
        peer.status.success() && stdout.contains("\"failed\": []"),
        "the rclpy peer reported failures:\n{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rclpy_meets_the_dds_backend_with_a_100_kb_description() {
    meet(215, 100_000, false, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rclpy_meets_the_dds_backend_with_a_400_kb_description() {
    meet(216, 400_000, false, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rclpy_meets_the_r2r_backend_with_a_100_kb_description_from_the_topic() {
    meet(217, 100_000, true, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rclpy_meets_the_r2r_backend_with_a_400_kb_description() {
    meet(218, 400_000, true, false).await;
}
