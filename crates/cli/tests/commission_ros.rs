//! `armctl commission --ros` as a user runs it against an arm on ROS 2: sim_node stands in for
//! a real arm whose true model differs from the URDF given (links 30 % heavier, inertials
//! moved, friction the URDF lacks, a tool off the flange axis, encoder noise, a step of delay),
//! on DDS over loopback, sim_node in this process on its own participant as a separate process
//! would be, on the simulated clock with lockstep (a loaded machine slows the simulated time
//! instead of the commands). The commissioning talks to it only through its topics:
//! `/joint_states` in, efforts out. The Panda, the UR5e and a generated light-wristed arm, each
//! checked as the done-when table asks ([`check_outcome`]), one at a time.

mod common;

use std::path::Path;

use armctl_nodes::launch::spawn;
use armctl_nodes::nodes::sim_node::SimNode;
use armctl_nodes::transport::dds::DdsOptions;
use armctl_runtime::ros_args::RosArgs;
use common::commissioned::check_outcome;
use common::true_arm::{
    check_offset, check_panda_coulomb, generated_true_arm, held_out_share, identified_coulomb,
    identified_offset, true_arm_urdf, with_friction, PANDA_COULOMB, PANDA_OFFSET,
};
use common::{scratch, text};

/// One commissioning at a time: each runs a simulated arm and a commissioning, which is what
/// two cores can run without starving either.
static ONE_ARM: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The arm under commissioning and the true arm sim_node runs for it.
struct Case {
    name: &'static str,
    /// ROS domain of this case's participants.
    domain: u16,
    /// The URDF the user gives.
    urdf: String,
    /// Its text.
    source: String,
    /// The true arm's joint friction, which the URDF lacks: viscous, N m s/rad; Coulomb, N m.
    viscous: Vec<f64>,
    coulomb: Vec<f64>,
    /// The tool's mass, kg (its centre of mass 3, 2 and 8 cm off the flange).
    tool: f64,
    /// The true arm's friction offset per joint (empty: none).
    offset: Vec<f64>,
}

const TOOL_COM: &str = "[0.03, 0.02, 0.08]";
const MASS_SCALE: &str = "1.3";
const NOISE_POSITION: &str = "1.0e-5";
const NOISE_VELOCITY: &str = "1.0e-3";

impl Case {
    fn bundled(name: &'static str, domain: u16, urdf: &str, friction: [&[f64]; 2]) -> Self {
        let source = std::fs::read_to_string(common::workspace().join(urdf)).unwrap();
        Self {
            name,
            domain,
            urdf: urdf.into(),
            source,
            viscous: friction[0].to_vec(),
            coulomb: friction[1].to_vec(),
            tool: 1.0,
            offset: vec![],
        }
    }

    /// The true arm's URDF: inertials moved, the friction added.
    fn true_arm(&self, dir: &Path) -> std::path::PathBuf {
        let arm = dir.join("true_arm.urdf");
        let text = with_friction(&true_arm_urdf(&self.source), &self.viscous, &self.coulomb);
        std::fs::write(&arm, text).unwrap();
        arm
    }

    /// The true arm in the embedded simulator, as sim_node runs it (the URDF's friction, the
    /// masses, the tool, the noise and the delay), to measure computed torque's tracking on.
    fn embedded_config(&self, dir: &Path) -> std::path::PathBuf {
        let config = dir.join("true_arm.yaml");
        let yaml = format!(
            "friction: true\nnoise: {{position: {NOISE_POSITION}, velocity: {NOISE_VELOCITY}, seed: 1}}\ncommand_delay_steps: 1\npayload: {{mass: {}, com: {TOOL_COM}, inertia: [[0, 0, 0], [0, 0, 0], [0, 0, 0]]}}\nmass_scale: {MASS_SCALE}\n",
            self.tool
        ) + &self.offset_setting();
        std::fs::write(&config, yaml).unwrap();
        config
    }
}

impl Case {
    /// `friction_offset: [..]` for the embedded simulator (nothing without an offset).
    fn offset_setting(&self) -> String {
        if self.offset.is_empty() {
            return String::new();
        }
        format!("friction_offset: {:?}\n", self.offset)
    }
}

/// sim_node running the true arm `urdf` on `command_topic`, with `offset` (its
/// `friction_offset`; empty: none).
fn true_arm_node(urdf: &Path, command_topic: &str, tool: f64, offset: &[f64]) -> SimNode {
    let tool = tool.to_string();
    let offset = format!("{offset:?}");
    let mut overrides = vec![
        ("urdf_path", text(urdf)),
        ("command_topic", command_topic),
        ("publish_clock", "true"),
        ("lockstep", "true"),
        ("mass_scale", MASS_SCALE),
        ("payload_mass", &tool),
        ("payload_com", TOOL_COM),
        ("noise_position", NOISE_POSITION),
        ("noise_velocity", NOISE_VELOCITY),
        ("command_delay_steps", "1"),
    ];
    if offset != "[]" {
        overrides.push(("friction_offset", &offset));
    }
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
async fn commission(domain: u16, args: Vec<String>) -> (bool, String, String) {
    let domain = domain.to_string();
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

/// Refused without an arm on the domain (after --wait, naming the topic), and with the embedded
/// simulator's settings.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_arm_on_ros2_the_commissioning_is_refused() {
    let out = scratch("commission-ros", "refused").join("out");
    let cases: [(&[&str], &str); 2] = [
        (&["--wait", "1"], "no joint state on /joint_states for 1 s"),
        (
            &["--sim-config", "config/sim_realistic.yaml"],
            "--sim-config describes the embedded simulator's arm",
        ),
    ];
    for (extra, reason) in cases {
        let mut list = vec![
            "commission",
            "urdf/panda.urdf",
            "--ros",
            "--out",
            text(&out),
        ];
        list.extend_from_slice(extra);
        let (ok, _, err) = commission(94, args(&list)).await;
        assert!(!ok && err.contains(reason), "{extra:?}: {err}");
    }
    assert!(!out.exists(), "nothing written");
}

/// `case` commissioned over ROS 2 against sim_node running its true arm, and checked as the
/// done-when table asks: what it printed, and the folder it wrote.
async fn commissioned_over_ros2(case: &Case) -> (String, std::path::PathBuf) {
    let _one = ONE_ARM.lock().await;
    let dir = scratch("commission-ros", case.name);
    let out = dir.join("out");
    let arm = case.true_arm(&dir);
    let topic = "/effort_controller/commands";
    let node = true_arm_node(&arm, topic, case.tool, &case.offset);
    let sim = spawn(node, &DdsOptions::loopback(case.domain)).unwrap();
    let (ok, stdout, stderr) = commission(
        case.domain,
        args(&[
            "commission",
            &case.urdf,
            "--ros",
            "--command-topic",
            topic,
            "--duration",
            "30",
            "--validation-duration",
            "10",
            "--out",
            text(&out),
        ]),
    )
    .await;
    drop(sim);
    assert!(ok, "{}: {stdout}\n{stderr}", case.name);
    assert!(
        stdout.contains("1. check: ")
            && stdout.contains("against the arm on /joint_states and /effort_controller/commands"),
        "{stdout}"
    );
    for file in ["validate.csv", "verify.csv"] {
        assert!(out.join(file).exists(), "{}: {file}", case.name);
    }
    let config = case.embedded_config(&dir);
    check_outcome(case.name, &case.urdf, text(&config), (&out, &arm, &stdout));
    println!("{stdout}");
    (stdout, out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_panda_is_commissioned_over_ros2_against_sim_node() {
    let viscous = [0.05, 0.05, 0.05, 0.05, 0.02, 0.02, 0.02];
    let case = Case {
        offset: PANDA_OFFSET.to_vec(),
        ..Case::bundled("panda", 93, "urdf/panda.urdf", [&viscous, &PANDA_COULOMB])
    };
    let (stdout, out) = commissioned_over_ros2(&case).await;
    assert!(held_out_share(&stdout) < 3.0);
    // The identified friction is the true arm's, which the URDF lacked.
    let file = out.join("commissioned.yaml");
    check_panda_coulomb(&identified_coulomb(&file));
    // And its asymmetry, sim_node's friction_offset.
    check_offset(&identified_offset(&file), &PANDA_OFFSET, 0.02);
}

/// The UR5e, its true arm's friction heavier on the large joints (this test's own values, as
/// `config/commissioning/ur5e_true_arm.yaml`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ur5e_is_commissioned_over_ros2_against_sim_node() {
    let viscous = [0.3, 0.3, 0.3, 0.05, 0.02, 0.01];
    let coulomb = [2.0, 2.0, 1.5, 0.3, 0.2, 0.05];
    let case = Case::bundled("ur5e", 92, "urdf/ur5e.urdf", [&viscous, &coulomb]);
    commissioned_over_ros2(&case).await;
}

/// Generated arm 6 of the test population (a light wrist, no URDF friction), its true arm
/// [`generated_true_arm`]'s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generated_light_wristed_arm_is_commissioned_over_ros2_against_sim_node() {
    let generated = generated_true_arm(6);
    let dir = scratch("commission-ros", "generated-urdf");
    let urdf = dir.join("generated_arm.urdf");
    std::fs::write(&urdf, &generated.urdf).unwrap();
    let case = Case {
        name: "generated",
        domain: 91,
        urdf: text(&urdf).into(),
        source: generated.urdf,
        viscous: generated.viscous,
        coulomb: generated.coulomb,
        tool: generated.tool,
        offset: vec![],
    };
    commissioned_over_ros2(&case).await;
}
