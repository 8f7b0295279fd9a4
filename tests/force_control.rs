//! Force control on the embedded simulator with contact: the Panda's flange pressed on a table
//! with 10 N by hybrid force/position control while it slides 0.2 m along it, then off a raised
//! block onto the table (contact lost and found again).

use armctl_control::{Controller, HybridForcePosition, ParameterValue};
use armctl_e2e::urdf_dir;
use armctl_model::{forward_kinematics, urdf_file_to_robot, ChainOptions, KinematicsWorkspace};
use armctl_sim::scene_file;
use armctl_sim::{run_closed_loop, Integrator, RunLog, SimConfig, Simulator};
use nalgebra::{IsometryMatrix3, Translation3, Vector3};

/// A table top at z = 0.6 under the flange (which starts at x 0.582, y 0, z 0.655), with a
/// 1.5 cm block on it for y < 0.08; contact points on the flange and the wrist; the sensor at
/// the flange.
const TABLE: &str = "
obstacles:
  - {name: table, box: {center: [0.6, 0.0, 0.3], size: [0.8, 1.2, 0.6]}, stiffness: 50000.0, damping: 5.0, friction: 0.3}
points:
  - {link: tip, name: flange}
  - {link: panda_link7, name: wrist}
sensor: {link: tip}
";

/// The table with the block on it.
fn table_and_block() -> String {
    TABLE.replace(
        "points:",
        "  - {name: block, box: {center: [0.58, -0.12, 0.6075], size: [0.4, 0.4, 0.015]}, stiffness: 50000.0, damping: 5.0, friction: 0.3}\npoints:",
    )
}

const PRESS: f64 = 10.0;

/// The Panda at the middle of its joint ranges in `scene` (RK4 at 1 kHz).
fn panda_in(scene: &str) -> (armctl_model::Robot, Vec<f64>, Simulator) {
    let path = urdf_dir().join("panda.urdf");
    let conversion = urdf_file_to_robot(&path, &ChainOptions::default()).unwrap();
    let robot = conversion.robot;
    let scene = serde_yaml::from_str::<scene_file::SceneFile>(scene)
        .unwrap()
        .resolve(&robot, &conversion.report)
        .unwrap();
    let q0 = robot.middle_configuration();
    let config = SimConfig {
        scene,
        integrator: Integrator::Rk4,
        ..SimConfig::default()
    };
    let sim = Simulator::new(&robot, &q0, config).unwrap();
    (robot, q0, sim)
}

/// Runs the hybrid law pressing down with `PRESS` newtons and sliding the flange from its start
/// by `slide` along y in `seconds`, for `total` seconds.
fn press_and_slide(
    scene: &str,
    slide: f64,
    seconds: f64,
    total: f64,
) -> (RunLog, Vec<Vector3<f64>>) {
    let (robot, q0, mut sim) = panda_in(scene);
    let mut law = HybridForcePosition::new(&robot).unwrap();
    let set = |law: &mut HybridForcePosition, name: &str, v: Vec<f64>| {
        law.set_parameter(name, ParameterValue::DoubleArray(v))
            .unwrap();
    };
    set(&mut law, "selection", vec![0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
    set(
        &mut law,
        "desired_wrench",
        vec![0.0, 0.0, -PRESS, 0.0, 0.0, 0.0],
    );
    set(&mut law, "kp", vec![4900.0; 6]);
    set(&mut law, "kd", vec![140.0; 6]);
    let start = forward_kinematics(&robot, &mut KinematicsWorkspace::new(&robot), &q0)
        .unwrap()
        .tip();
    let goal = IsometryMatrix3::from_parts(
        Translation3::from(start.translation.vector + Vector3::new(0.0, slide, 0.0)),
        start.rotation,
    );
    let mut tips = Vec::new();
    let steps = (total / 1e-3) as usize;
    let hold = armctl_control::reference::SetPoint::new(q0.clone());
    let mut kin = KinematicsWorkspace::new(&robot);
    let log = run_closed_loop(&mut sim, &mut law, &hold, steps, |k, _, controller| {
        // The slide starts after a second of pressing.
        if k == 1000 {
            let task = controller.task_space().unwrap();
            task.set_target_pose(goal, seconds).unwrap();
        }
    })
    .unwrap();
    for row in 0..log.time.len() {
        let q: Vec<f64> = log.q.iter().map(|c| c[row]).collect();
        let tip = forward_kinematics(&robot, &mut kin, &q).unwrap().tip();
        tips.push(tip.translation.vector - start.translation.vector);
    }
    (log, tips)
}

/// The flange's contact force (what the table pushes back with), z, N.
fn normal_force(log: &RunLog, row: usize) -> f64 {
    log.contact[2][row]
}

/// The tool's position along the slide: a quintic from 0 to 0.2 m over 1 s to 3 s.
fn planned(t: f64) -> f64 {
    let s = ((t - 1.0) / 2.0).clamp(0.0, 1.0);
    0.2 * s * s * s * (10.0 - 15.0 * s + 6.0 * s * s)
}

fn rms(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v * v, n + 1));
    (sum / n.max(1) as f64).sqrt()
}

#[test]
fn hybrid_control_presses_with_10_n_while_sliding_0_2_m() {
    let (log, tips) = press_and_slide(TABLE, 0.2, 2.0, 4.0);
    // After contact is made and the first impact has settled (0.8 s).
    let rows = 800..log.time.len();
    let force = rms(rows.clone().map(|r| normal_force(&log, r) - PRESS));
    let along = rows
        .map(|r| {
            (tips[r].y - planned(log.time[r]))
                .abs()
                .max(tips[r].x.abs())
        })
        .fold(0.0, f64::max);
    eprintln!(
        "force error rms {force:.3} N, largest position error along the surface {along:.2e} m"
    );
    assert!(force < 0.5, "force error rms {force} N");
    assert!(along < 1e-3, "position error along the surface {along} m");
    assert_eq!(log.saturated, 0);
    assert!((tips[log.time.len() - 1].y - 0.2).abs() < 1e-3);
}

/// Off the block's edge the flange loses contact, descends damped 1.5 cm, and finds the table:
/// no effort saturates, the impact stays within three times the pressing force, and the force
/// is back within 0.5 N of 10 N 0.3 s after re-contact.
#[test]
fn hybrid_control_loses_contact_off_an_edge_and_finds_the_surface_again() {
    let (log, tips) = press_and_slide(&table_and_block(), 0.2, 2.0, 4.0);
    let rows = log.time.len();
    let lost = (800..rows)
        .find(|&r| normal_force(&log, r) < 0.1)
        .expect("contact lost");
    let found = (lost..rows)
        .find(|&r| normal_force(&log, r) > 1.0)
        .expect("contact found");
    let peak = (found..rows)
        .map(|r| normal_force(&log, r))
        .fold(0.0, f64::max);
    let settled = rms((found + 300..rows).map(|r| normal_force(&log, r) - PRESS));
    eprintln!(
        "lost at y {:.3} m (t {:.3} s), found at t {:.3} s {:.1} mm lower, peak {peak:.1} N, then rms error {settled:.3} N",
        tips[lost].y, log.time[lost], log.time[found], (tips[lost].z - tips[found].z) * 1e3
    );
    assert_eq!(log.saturated, 0, "saturated efforts");
    assert!(peak < 3.0 * PRESS, "impact {peak} N");
    assert!(settled < 0.5, "force error after re-contact {settled} N");
}

/// Force tracking on top of Cartesian impedance (no model of the constrained directions): the
/// target moves down until the flange exerts 10 N on the table, within 2% at rest, whatever
/// the law's stiffness; switched off, the target returns and the flange leaves the table.
#[test]
fn cartesian_impedance_tracks_a_force_on_the_table() {
    let (robot, q0, mut sim) = panda_in(TABLE);
    let mut law = armctl_control::CartesianImpedance::new(&robot).unwrap();
    let mut set = |name: &str, v: ParameterValue| law.set_parameter(name, v).unwrap();
    set(
        "force_target",
        ParameterValue::DoubleArray(vec![0.0, 0.0, -PRESS, 0.0, 0.0, 0.0]),
    );
    set(
        "force_tracking",
        ParameterValue::DoubleArray(vec![0.0, 0.0, 0.01, 0.0, 0.0, 0.0]),
    );
    set("force_offset_limit", ParameterValue::Double(0.2));
    let hold = armctl_control::reference::SetPoint::new(q0.clone());
    // Force tracking switched off after 6 s: the target returns to where it was, off the table.
    let log = run_closed_loop(&mut sim, &mut law, &hold, 8000, |k, _, law| {
        if k == 6000 {
            let off = ParameterValue::DoubleArray(vec![0.0; 6]);
            law.set_parameter("force_tracking", off).unwrap();
        }
    })
    .unwrap();
    let rows = 6000;
    let last_second = rms((rows - 1000..rows).map(|r| normal_force(&log, r) - PRESS));
    let after = normal_force(&log, log.time.len() - 1);
    eprintln!("force tracking off: contact force at the end {after:.3} N");
    assert!(after < 0.1, "the target stays pressed in: {after} N");
    let peak = (0..rows).map(|r| normal_force(&log, r)).fold(0.0, f64::max);
    eprintln!("tracked force: rms error over the last second {last_second:.3} N, peak {peak:.1} N");
    assert!(last_second < 0.02 * PRESS, "force error {last_second} N");
    assert_eq!(log.saturated, 0);
}

/// With a force-controlled direction and no measured wrench (a scene without a sensor), the
/// hybrid law refuses to push blind once `wrench_timeout` (0.1 s) has passed since its start
/// without one: its update fails naming wrench_timeout (the runtime then holds the arm).
#[test]
fn hybrid_control_without_a_measured_wrench_refuses_to_push_blind() {
    let (robot, q0, mut sim) = panda_in(&TABLE.replace("sensor: {link: tip}\n", ""));
    let mut law = HybridForcePosition::new(&robot).unwrap();
    let selection = ParameterValue::DoubleArray(vec![0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
    law.set_parameter("selection", selection).unwrap();
    let hold = armctl_control::reference::SetPoint::new(q0.clone());
    let e = run_closed_loop(&mut sim, &mut law, &hold, 300, |_, _, _| {}).unwrap_err();
    let armctl_sim::SimError::Controller { time, .. } = &e else {
        panic!("{e}");
    };
    // (The age counts the step that finds it, so the 100th step at t = 0.099 s refuses.)
    assert!((0.098..0.11).contains(time), "refused at {time} s");
    let why = std::error::Error::source(&e).map(ToString::to_string);
    assert!(
        why.as_deref().is_some_and(|w| w.contains("wrench_timeout")),
        "{e}: {why:?}"
    );
}

/// Without a force/torque sensor, the hybrid law presses on the wrench the runtime estimates
/// from the motion (`external_wrench_source: estimated`): the table's force within 0.5 N rms
/// of 10 N while the flange slides 0.2 m.
#[test]
fn hybrid_control_presses_with_10_n_on_the_estimated_wrench_without_a_sensor() {
    use armctl_runtime::controller_core::{ControllerCore, SafeMode};
    use armctl_runtime::simulated_loop::SimulatedLoop;
    let blind = TABLE.replace("sensor: {link: tip}\n", "");
    let (robot, q0, mut sim) = panda_in(&blind);
    assert!(sim.sensed_wrench_at_tip().is_none());
    let mut law = HybridForcePosition::new(&robot).unwrap();
    for (name, v) in [
        ("selection", vec![0.0, 0.0, 1.0, 0.0, 0.0, 0.0]),
        ("desired_wrench", vec![0.0, 0.0, -PRESS, 0.0, 0.0, 0.0]),
        ("kp", vec![4900.0; 6]),
        ("kd", vec![140.0; 6]),
    ] {
        law.set_parameter(name, ParameterValue::DoubleArray(v))
            .unwrap();
    }
    let mut core = ControllerCore::new(robot.clone(), SafeMode::Gravity, 0.1, None).unwrap();
    core.set_wrench_from_estimate(true);
    core.follow(
        Box::new(armctl_control::reference::SetPoint::new(q0.clone())),
        0.0,
    )
    .unwrap();
    let start = forward_kinematics(&robot, &mut KinematicsWorkspace::new(&robot), &q0)
        .unwrap()
        .tip();
    let goal = IsometryMatrix3::from_parts(
        Translation3::from(start.translation.vector + Vector3::new(0.0, 0.2, 0.0)),
        start.rotation,
    );
    let mut group = armctl_runtime::group_loop::GroupLoop::of_core(core, Box::new(law)).unwrap();
    let mut control = SimulatedLoop::new(&mut group);
    let log = armctl_sim::run_loop(&mut sim, &mut control, 4000, |k, _, control| {
        if k == 1000 {
            control.target_pose = Some((goal, 2.0));
        }
    })
    .unwrap();
    assert_eq!(control.held, 0, "{:?}", control.events);
    let force = rms((800..log.time.len()).map(|r| normal_force(&log, r) - PRESS));
    let mut kin = KinematicsWorkspace::new(&robot);
    let last: Vec<f64> = log.q.iter().map(|c| *c.last().unwrap()).collect();
    let end = forward_kinematics(&robot, &mut kin, &last).unwrap().tip();
    let slid = end.translation.vector.y - start.translation.vector.y;
    eprintln!("estimated wrench: force error rms {force:.3} N, slid {slid:.4} m");
    assert!(force < 0.5, "force error rms {force} N");
    assert!((slid - 0.2).abs() < 1e-3, "slid {slid} m");
}
