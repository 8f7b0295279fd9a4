//! Every `config/<robot>_<controller>.yaml` controls its robot: read as controller_node reads
//! it, the controller follows small smooth moves (0.05 rad) on the embedded simulator (friction, limits,
//! saturation) for three seconds without saturating or losing track.

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

#[test]
fn every_parameter_file_controls_its_robot_on_the_simulator() {
    let share = workspace_share(&workspace_dir());
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
        assert_eq!(log.saturated, 0, "{robot_name} {controller_name} saturates");
        // Cartesian impedance holds the tip, not the joints: only bounded there.
        let bound = if controller_name == "cartesian_impedance" {
            0.2
        } else {
            0.02
        };
        assert!(
            largest < bound,
            "{robot_name} {controller_name}: error {largest}"
        );
    }
}
