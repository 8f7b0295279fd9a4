//! `armctl commission --ros` as a user runs it against an arm on ROS 2: sim_node stands in for
//! a real Panda whose true model differs from the URDF given (links 30 % heavier, inertials
//! moved, the friction Gaz et al. identified, a 1 kg tool off the flange axis, encoder noise, a
//! step of delay), on DDS over loopback, sim_node in this process on its own participant as a
//! separate process would be, on the simulated clock with lockstep (a loaded machine slows the
//! simulated time instead of the commands). The commissioning talks to it only through its
//! topics: `/joint_states` in, efforts out.

mod common;

use std::path::Path;

use armctl_nodes::launch::spawn;
use armctl_nodes::nodes::sim_node::SimNode;
use armctl_nodes::transport::dds::DdsOptions;
use armctl_runtime::ros_args::RosArgs;
use common::true_arm::{held_out_share, true_arm_urdf, with_friction};
use common::{scratch, text};

const DOMAIN: u16 = 93;

/// The Panda's joint friction as Gaz et al. (IEEE RA-L 2019) identified it: Coulomb, N m.
const PANDA_COULOMB: [f64; 7] = [0.2731, 0.4361, 0.3203, 0.6397, 0.4195, 0.1515, 0.2824];

/// sim_node running the true arm `urdf` on `command_topic`.
fn true_arm_node(urdf: &Path, command_topic: &str) -> SimNode {
    let overrides = [
        ("urdf_path", text(urdf)),
        ("command_topic", command_topic),
        ("publish_clock", "true"),
        ("lockstep", "true"),
        ("mass_scale", "1.3"),
        ("payload_mass", "1.0"),
        ("payload_com", "[0.03, 0.02, 0.08]"),
        ("noise_position", "1.0e-5"),
        ("noise_velocity", "1.0e-3"),
        ("command_delay_steps", "1"),
    ];
    let args = RosArgs {
        overrides: overrides
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..RosArgs::default()
    };
    SimNode::new(&args).unwrap()
}

/// `armctl commission ARGS` on the test's ROS domain, loopback only.
async fn commission(args: Vec<String>) -> (bool, String, String) {
    let domain = DOMAIN.to_string();
    tokio::task::spawn_blocking(move || {
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let env = [
            ("ROS_DOMAIN_ID", Some(domain.as_str())),
            ("ROS_LOCALHOST_ONLY", Some("1")),
        ];
        common::armctl_with_env(&argv, &env)
    })
    .await
    .unwrap()
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_panda_is_commissioned_over_ros2_against_sim_node() {
    let dir = scratch("commission-ros", "panda");
    let out = dir.join("out");
    // Nothing on the domain yet: refused after --wait, naming the topic.
    let (ok, _, err) = commission(args(&[
        "commission",
        "urdf/panda.urdf",
        "--ros",
        "--wait",
        "1",
        "--out",
        text(&out),
    ]))
    .await;
    assert!(
        !ok && err.contains("no joint state on /joint_states for 1 s"),
        "{err}"
    );
    let (ok, _, err) = commission(args(&[
        "commission",
        "urdf/panda.urdf",
        "--ros",
        "--sim-config",
        "config/sim_realistic.yaml",
    ]))
    .await;
    assert!(
        !ok && err.contains("--sim-config describes the embedded simulator's arm"),
        "{err}"
    );

    let source = std::fs::read_to_string(common::workspace().join("urdf/panda.urdf")).unwrap();
    let viscous = [0.05, 0.05, 0.05, 0.05, 0.02, 0.02, 0.02];
    let arm = dir.join("true_arm.urdf");
    std::fs::write(
        &arm,
        with_friction(&true_arm_urdf(&source), &viscous, &PANDA_COULOMB),
    )
    .unwrap();
    let topic = "/effort_controller/commands";
    let _sim = spawn(true_arm_node(&arm, topic), &DdsOptions::loopback(DOMAIN)).unwrap();
    let (ok, stdout, stderr) = commission(args(&[
        "commission",
        "urdf/panda.urdf",
        "--ros",
        "--command-topic",
        topic,
        "--duration",
        "30",
        "--period",
        "5",
        "--validation-duration",
        "10",
        "--out",
        text(&out),
    ]))
    .await;
    assert!(ok, "{stdout}\n{stderr}");
    assert!(
        stdout.contains(
            "1. check: panda against the arm on /joint_states and /effort_controller/commands"
        ),
        "{stdout}"
    );
    let share = held_out_share(&stdout);
    assert!(share < 3.0, "held-out error {share} % of the effort range");
    for file in [
        "commissioned.yaml",
        "report.md",
        "excite.mcap",
        "validate.csv",
        "verify.csv",
    ] {
        assert!(out.join(file).exists(), "{file}");
    }
    // The identified friction is the true arm's, which the URDF lacked.
    let identified = std::fs::read_to_string(out.join("commissioned.yaml")).unwrap();
    let coulomb_line = identified
        .lines()
        .find(|l| l.trim_start().starts_with("model_coulomb:"))
        .unwrap();
    let values: Vec<f64> = coulomb_line
        .split(['[', ']'])
        .nth(1)
        .unwrap()
        .split(',')
        .map(|v| v.trim().parse().unwrap())
        .collect();
    for (found, truth) in values.iter().zip(PANDA_COULOMB) {
        assert!(
            (found - truth).abs() < 0.1 * truth + 0.02,
            "Coulomb {values:?} against {PANDA_COULOMB:?}"
        );
    }
    println!("{stdout}");
}
