//! Every `config/<robot>_<controller>.yaml` controls its robot: read as controller_node reads
//! it, the controller follows small smooth moves (0.05 rad) on the embedded simulator (friction, limits,
//! saturation) for three seconds without saturating or losing track (a file that keeps the law's
//! defaults: without saturating or losing the arm). There is one for every bundled robot and
//! every registered controller.

use armctl_control::reference::{MultiPoint, TrajectoryPoint};
use armctl_control::{controller_by_name, Controller, ParameterValue};
use armctl_e2e::launch_check::{configured_pairs, workspace_share};
use armctl_e2e::workspace_dir;
use armctl_model::{ChainOptions, Robot};
use armctl_runtime::declarations::controller_node_declarations;
use armctl_runtime::params_file::parameters_for_node;
use armctl_sim::{run_closed_loop, SimConfig, Simulator};

/// The controller a parameter file configures, as controller_node would build it.
fn configured(robot: &Robot, file: &str) -> Box<dyn Controller> {
    let text = std::fs::read_to_string(file).unwrap();
    let values = parameters_for_node(&text, file, "/", "controller_node").unwrap();
    let name = values.iter().find_map(|(n, v)| match (n.as_str(), v) {
        ("controller", ParameterValue::String(c)) => Some(c.clone()),
        _ => None,
    });
    let mut controller =
        controller_by_name(&name.expect("the file names its controller"), robot).unwrap();
    let node_parameters = controller_node_declarations();
    for (name, value) in values {
        if node_parameters.iter().all(|d| d.name != name) {
            controller.set_parameter(&name, value).unwrap();
        }
    }
    controller.parameters_mut().settle();
    controller
}

/// Task-space laws that hold a tip target (not the joint reference) unless given one.
const HOLD_THE_TIP: [&str; 3] = [
    "cartesian_impedance",
    "hybrid_force_position",
    "resolved_acceleration",
];

/// Whether the file leaves every gain at the law's default (it names the controller only).
fn defaults_only(file: &str) -> bool {
    let text = std::fs::read_to_string(file).unwrap();
    let values = parameters_for_node(&text, file, "/", "controller_node").unwrap();
    values.iter().all(|(name, _)| name == "controller")
}

#[test]
fn every_parameter_file_controls_its_robot_on_the_simulator() {
    let share = workspace_share(&workspace_dir());
    let mut failures = vec![];
    for (robot_name, controller_name) in configured_pairs(&share) {
        let urdf = workspace_dir().join(format!("urdf/{robot_name}.urdf"));
        let robot = Robot::from_urdf_file(&urdf, &ChainOptions::default()).unwrap();
        let file = workspace_dir().join(format!("config/{robot_name}_{controller_name}.yaml"));
        let mut controller = configured(&robot, &file.display().to_string());
        let q0 = robot.middle_configuration();
        let n = robot.dof();
        let point = |time: f64, offset: f64| TrajectoryPoint {
            time,
            positions: q0.iter().map(|q| q + offset).collect(),
            velocities: None,
            accelerations: None,
        };
        let moves = [
            point(0.0, 0.0),
            point(1.0, 0.05),
            point(2.0, -0.05),
            point(3.0, 0.0),
        ];
        let reference = MultiPoint::new(n, &moves).unwrap();
        let mut sim = Simulator::new(&robot, &q0, SimConfig::default()).unwrap();
        let log = run_closed_loop(
            &mut sim,
            controller.as_mut(),
            &reference,
            3000,
            |_, _, _| {},
        )
        .unwrap();
        let largest = (0..n)
            .map(|i| log.error(i).iter().fold(0.0_f64, |m, e| m.max(e.abs())))
            .fold(0.0, f64::max);
        eprintln!(
            "{robot_name} {controller_name}: largest error {largest:.2e} rad, {} saturated",
            log.saturated
        );
        if log.saturated > 0 {
            failures.push(format!(
                "{robot_name} {controller_name}: {} saturated",
                log.saturated
            ));
        }
        // The laws that hold the tip, not the joints, are only bounded there; the laws' own
        // defaults are gentle (stable on any arm, not tuned: a PD without gravity sags), so a
        // file of defaults must keep the arm stable, not track.
        let bound = if defaults_only(&file.display().to_string()) {
            0.5
        } else if HOLD_THE_TIP.contains(&controller_name.as_str()) {
            0.2
        } else {
            0.02
        };
        if largest >= bound {
            failures.push(format!(
                "{robot_name} {controller_name}: error {largest:.3e} rad"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Every bundled robot has a parameter file for every registered controller, so every
/// `robot:=R controller:=C` of the launch files starts (the launch checker runs them all).
#[test]
fn every_robot_has_a_file_for_every_controller() {
    let share = workspace_share(&workspace_dir());
    let pairs = configured_pairs(&share);
    for robot in ["panda", "planar_2link", "puma560", "ur5e"] {
        for law in armctl_control::CONTROLLERS {
            let pair = (robot.to_string(), law.to_string());
            assert!(pairs.contains(&pair), "no config/{robot}_{law}.yaml");
        }
    }
}
