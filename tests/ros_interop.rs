//! Interoperability with an independent DDS implementation: `tests/interop/cyclone_peer.py`,
//! written with Eclipse Cyclone DDS's Python binding, drives controller_node over loopback
//! (joint states in, efforts out, a gain set through `set_parameters`, an invalid one
//! rejected, `~/state` read). Both service forms are exercised: Fast DDS's (ROS 2's default)
//! and rmw_cyclonedds's. The peer's virtual environment is created on first use
//! (`tests/interop/setup_venv.sh`, pip installs `cyclonedds`).

use std::path::{Path, PathBuf};

use armctl_dynamics::{gravity_torques, DynamicsWorkspace};
use armctl_model::{ChainOptions, Robot};
use armctl_nodes::launch::spawn;
use armctl_nodes::nodes::controller_node::ControllerNode;
use armctl_nodes::transport::dds::DdsOptions;
use armctl_runtime::ros_args::RosArgs;

const Q: [f64; 7] = [0.1, -0.4, 0.05, -2.1, 0.1, 1.9, 0.7];
const QD: [f64; 7] = [0.1, -0.2, 0.15, 0.2, -0.1, 0.3, -0.25];
const KP: [f64; 7] = [600.0, 600.0, 600.0, 600.0, 250.0, 150.0, 50.0];
/// Dampings the run-time bound leaves as they are at `Q` for steps of up to 20 ms (the peer
/// publishes from Python at about 250 Hz): the peer checks `G - kd qd` exactly.
const KD_OLD: [f64; 7] = [1.0, 1.0, 1.0, 0.5, 0.3, 0.2, 0.05];
const KD_NEW: [f64; 7] = [0.8, 0.9, 0.7, 0.4, 0.25, 0.15, 0.08];

/// Loopback only, no multicast: what docs/conventions.md prescribes for tests.
const CYCLONEDDS_URI: &str = "<CycloneDDS><Domain><General><Interfaces><NetworkInterface name=\"lo\"/></Interfaces><AllowMulticast>false</AllowMulticast></General><Discovery><ParticipantIndex>auto</ParticipantIndex><Peers><Peer address=\"127.0.0.1\"/></Peers></Discovery></Domain></CycloneDDS>";

fn workspace(relative: &str) -> PathBuf {
    armctl_e2e::workspace_dir().join(relative)
}

/// The venv's python, created once for all tests of this file.
fn python() -> String {
    armctl_e2e::interop_python::interop_python(Path::new(env!("CARGO_TARGET_TMPDIR")))
}

fn gravity() -> Vec<f64> {
    let robot =
        Robot::from_urdf_file(workspace("urdf/panda.urdf"), &ChainOptions::default()).unwrap();
    let mut ws = DynamicsWorkspace::new(&robot);
    let mut g = vec![0.0; 7];
    gravity_torques(&robot, &mut ws, &Q, &mut g).unwrap();
    g
}

/// The peer's expected efforts need the dampings applied as set: the sampled-data bound must
/// not scale them at `Q`, even for a late state.
#[test]
fn the_test_dampings_are_within_the_sampled_data_margin() {
    use armctl_control::damping_bound::DampingBound;
    let robot =
        Robot::from_urdf_file(workspace("urdf/panda.urdf"), &ChainOptions::default()).unwrap();
    let mut ws = DynamicsWorkspace::new(&robot);
    let mut bound = DampingBound::new(7);
    for kd in [KD_OLD, KD_NEW] {
        let scales = bound
            .diagonal_scales(&robot, &mut ws, &Q, &kd, 0.02)
            .unwrap();
        assert!(scales.iter().all(|s| *s == 1.0), "{kd:?}: {scales:?}");
    }
}

fn vector(v: &[f64]) -> String {
    format!("{v:?}")
}

async fn interop(domain: u16, mapping: &str) {
    let python = python();
    let overrides = [
        (
            "urdf_path",
            workspace("urdf/panda.urdf").display().to_string(),
        ),
        ("controller", "pd_gravity".to_string()),
        ("kp", vector(&KP)),
        ("kd", vector(&KD_OLD)),
        // The peer publishes from Python at about 250 Hz.
        ("state_timeout", "0.5".to_string()),
        // Its states do not follow the efforts (an arm held still): no collision detection.
        ("collision_detection", "off".to_string()),
    ];
    let args = RosArgs {
        node_name: Some("controller_node".into()),
        overrides: overrides
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect(),
        ..RosArgs::default()
    };
    let dds = DdsOptions {
        cyclone_services: mapping == "cyclone",
        ..DdsOptions::loopback(domain)
    };
    let _node = spawn(ControllerNode::new(&args).unwrap(), &dds).unwrap();
    let expected = serde_json::json!({
        "joints": (1..=7).map(|i| format!("panda_joint{i}")).collect::<Vec<_>>(),
        "q": Q, "qd": QD, "gravity": gravity(), "kd_old": KD_OLD, "kd_new": KD_NEW,
        "command_topic": "/pd_gravity/commands", "node": "/controller_node",
    });
    let peer = tokio::process::Command::new(python)
        .arg(workspace("tests/interop/cyclone_peer.py"))
        .args([
            "--domain",
            &domain.to_string(),
            "--mapping",
            mapping,
            "--expected",
            &expected.to_string(),
        ])
        .env("CYCLONEDDS_URI", CYCLONEDDS_URI)
        .output()
        .await
        .expect("running the Cyclone DDS peer");
    let stdout = String::from_utf8_lossy(&peer.stdout);
    eprintln!("{stdout}{}", String::from_utf8_lossy(&peer.stderr));
    assert!(
        peer.status.success(),
        "the Cyclone DDS peer reported failures ({mapping} services):\n{stdout}"
    );
    assert!(stdout.contains("\"failed\": []"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cyclone_dds_peer_drives_controller_node_with_fast_dds_style_services() {
    interop(71, "enhanced").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cyclone_dds_peer_drives_controller_node_with_rmw_cyclonedds_services() {
    interop(72, "cyclone").await;
}
