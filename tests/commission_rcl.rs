//! `armctl commission --ros` built for a ROS 2 workspace (`--features rcl`: the command a
//! node of the installation, through r2r) against the r2r sim_node standing in for a real
//! Panda whose true model differs from the URDF given (links 30 % heavier, inertials moved,
//! the friction Gaz et al. identified, a 1 kg tool off the flange axis, encoder noise, a step
//! of delay): both on rcl and Fast DDS from ROS 2 Jazzy's (or Kilted's) PyPI wheels, discovery
//! on loopback only, sim_node on `/clock` with lockstep. The same commissioning as over DDS
//! (`crates/cli/tests/commission_ros.rs`), checked for what the middleware could change: the
//! arm found, the runs completed, the held-out error, the friction the URDF lacked.

use std::path::Path;

use armctl_e2e::r2r_nodes::r2r_nodes;

#[path = "../crates/cli/tests/common/true_arm.rs"]
#[allow(dead_code)]
mod true_arm;

use true_arm::{
    check_panda_coulomb, held_out_share, identified_coulomb, true_arm_urdf, with_friction,
    PANDA_COULOMB,
};

const DOMAIN: u16 = 89;

fn tmp() -> &'static Path {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
}

#[test]
fn the_panda_is_commissioned_on_rcl_against_the_r2r_sim_node() {
    let nodes = r2r_nodes(tmp());
    let armctl = nodes.armctl_rcl();
    let dir = tmp().join("commission-rcl");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let urdf = armctl_e2e::urdf_dir().join("panda.urdf");
    let source = std::fs::read_to_string(&urdf).unwrap();
    let viscous = [0.05, 0.05, 0.05, 0.05, 0.02, 0.02, 0.02];
    let arm = dir.join("true_arm.urdf");
    std::fs::write(
        &arm,
        with_friction(&true_arm_urdf(&source), &viscous, &PANDA_COULOMB),
    )
    .unwrap();
    let topic = "/effort_controller/commands";
    let sim_params = [
        format!("urdf_path:={}", arm.display()),
        format!("command_topic:={topic}"),
        "publish_clock:=true".into(),
        "lockstep:=true".into(),
        "mass_scale:=1.3".into(),
        "payload_mass:=1.0".into(),
        "payload_com:=[0.03, 0.02, 0.08]".into(),
        "noise_position:=1.0e-5".into(),
        "noise_velocity:=1.0e-3".into(),
        "command_delay_steps:=1".into(),
    ];
    let mut sim = nodes.start("sim_node", DOMAIN, &sim_params, &dir);
    let out = dir.join("out");
    let mut command = std::process::Command::new(&armctl);
    command
        .args(["commission", &urdf.display().to_string(), "--ros"])
        .args(["--command-topic", topic, "--duration", "30"])
        .args(["--validation-duration", "10", "--wait", "60"])
        .args(["--out", &out.display().to_string()])
        .current_dir(armctl_e2e::workspace_dir());
    for (name, value) in nodes.environment(DOMAIN) {
        command.env(name, value);
    }
    let run = command.output().expect("armctl runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    assert!(
        !sim.is_finished(),
        "sim_node ended: {}",
        armctl_e2e::r2r_nodes::R2rNodes::log("sim_node", DOMAIN, &dir)
    );
    assert!(run.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!(
            "1. check: panda against the arm on /joint_states and {topic} (ROS domain {DOMAIN} (rcl))"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("   estimator: IDIM-IV (2 iterations)"),
        "{stdout}"
    );
    let share = held_out_share(&stdout);
    assert!(share < 3.0, "held-out error {share} % of the effort range");
    for file in [
        "commissioned.yaml",
        "report.md",
        "excite.mcap",
        "verify.csv",
    ] {
        assert!(out.join(file).exists(), "{file}");
    }
    check_panda_coulomb(&identified_coulomb(&out.join("commissioned.yaml")));
    println!("{stdout}");
}
