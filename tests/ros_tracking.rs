//! End to end over DDS on loopback: `sim_node` and `controller_node` (each its own DDS
//! participant, as separate processes would be) follow the Panda waypoint trajectory, and the
//! tracking error is compared with the same setup run in-process, without middleware.

use armctl_control::controller_by_name;
use armctl_control::reference::{MultiPoint, TrajectoryPoint};
use armctl_model::{ChainOptions, Robot};
use armctl_ros::demo::{run_demo, DemoSetup};
use armctl_ros::msgs::{Duration, JointTrajectory, JointTrajectoryPoint};
use armctl_ros::transport::dds::DdsOptions;
use armctl_sim::{run_closed_loop, SimConfig, Simulator};
use serde::Deserialize;

#[derive(Deserialize)]
struct WaypointFile {
    joint_names: Vec<String>,
    points: Vec<Waypoint>,
}

#[derive(Deserialize)]
struct Waypoint {
    positions: Vec<f64>,
    time_from_start: f64,
}

const Q0: [f64; 7] = [0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8];
const DURATION: f64 = 5.5;

fn workspace_path(relative: &str) -> String {
    armctl_e2e::workspace_dir()
        .join(relative)
        .display()
        .to_string()
}

fn panda_wave() -> WaypointFile {
    let text =
        std::fs::read_to_string(workspace_path("config/trajectories/panda_wave.yaml")).unwrap();
    serde_yaml::from_str(&text).unwrap()
}

/// The waypoints run in-process: RMS error over all joints.
fn in_process_rms(controller: &str) -> f64 {
    let robot =
        Robot::from_urdf_file(workspace_path("urdf/panda.urdf"), &ChainOptions::default()).unwrap();
    let file = panda_wave();
    let names: Vec<&str> = robot.joint_names().collect();
    assert_eq!(
        file.joint_names, names,
        "the file lists the joints in chain order"
    );
    let mut points = vec![TrajectoryPoint {
        time: 0.0,
        positions: Q0.to_vec(),
        velocities: None,
        accelerations: None,
    }];
    points.extend(file.points.iter().map(|p| TrajectoryPoint {
        time: p.time_from_start,
        positions: p.positions.clone(),
        velocities: None,
        accelerations: None,
    }));
    let trajectory = MultiPoint::new(7, &points).unwrap();
    let mut controller = controller_by_name(controller, &robot).unwrap();
    let mut sim = Simulator::new(&robot, &Q0, SimConfig::default()).unwrap();
    let steps = (DURATION / 1e-3).round() as usize;
    let log = run_closed_loop(
        &mut sim,
        controller.as_mut(),
        &trajectory,
        steps,
        |_, _, _| {},
    )
    .unwrap();
    log.rms_error_all(0.0, DURATION)
}

/// The same waypoints as a trajectory_msgs/JointTrajectory.
fn joint_trajectory() -> JointTrajectory {
    let file = panda_wave();
    JointTrajectory {
        joint_names: file.joint_names,
        points: file
            .points
            .iter()
            .map(|p| JointTrajectoryPoint {
                positions: p.positions.clone(),
                time_from_start: Duration::from_seconds(p.time_from_start),
                ..JointTrajectoryPoint::default()
            })
            .collect(),
        ..JointTrajectory::default()
    }
}

fn setup(controller: &str, domain_id: u16) -> DemoSetup {
    let q0 = Q0
        .iter()
        .map(|v| format!("{v:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    DemoSetup {
        urdf_path: workspace_path("urdf/panda.urdf"),
        controller: controller.into(),
        params_files: vec![],
        controller_overrides: vec![],
        sim_overrides: vec![("initial_positions".into(), format!("[{q0}]"))],
        trajectory: joint_trajectory(),
        duration: DURATION,
        rate: 1000.0,
        namespace: "/".into(),
        dds: DdsOptions::loopback(domain_id),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn computed_torque_over_dds_tracks_within_twice_the_in_process_error() {
    let expected = in_process_rms("computed_torque");
    let record = run_demo(&setup("computed_torque", 61), |_| {})
        .await
        .unwrap();
    let rms = record.rms_error();
    eprintln!(
        "computed_torque RMS error: over DDS {rms:.3e} rad ({} steps, {} holding, {:.1} s wall), in-process {expected:.3e} rad",
        record.time.len(),
        record.holding_steps,
        record.wall_seconds
    );
    assert_eq!(record.holding_steps, 0);
    assert!(
        record.time.len() as f64 > 0.9 * DURATION * 1000.0,
        "{} control steps recorded",
        record.time.len()
    );
    assert!(
        rms <= 2.0 * expected,
        "RMS over DDS {rms:.3e} vs in-process {expected:.3e}"
    );
}
