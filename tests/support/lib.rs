//! Helpers shared by the end-to-end tests: where the workspace lives, launch-file checks, the
//! Python interop environment, the nodes built on the r2r backend and a ROS probe node. (Random chains and the third-party
//! reference data are in `armctl_model::test_support`, with the crate tests that use them.)

use std::path::PathBuf;

/// The workspace root (this package lives in its `tests/`).
pub fn workspace_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from(".."), PathBuf::from)
}

/// The bundled Panda's joints, in chain order.
pub const PANDA_JOINTS: [&str; 7] = [
    "panda_joint1",
    "panda_joint2",
    "panda_joint3",
    "panda_joint4",
    "panda_joint5",
    "panda_joint6",
    "panda_joint7",
];

/// The Panda's start configuration in the ROS tests (the waypoint file's first point).
pub const PANDA_Q0: [f64; 7] = [0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8];

/// The bundled robot descriptions (`urdf/` of the workspace).
pub fn urdf_dir() -> PathBuf {
    workspace_dir().join("urdf")
}

/// The model with every link's mass and inertia scaled by `factor` (centres of mass kept): a
/// wrong model for the controllers' robustness and adaptation tests.
pub fn scaled(robot: &armctl_model::Robot, factor: f64) -> armctl_model::Robot {
    let mut parts = robot.to_parts();
    for link in &mut parts.links {
        link.mass *= factor;
        link.inertia_com *= factor;
    }
    armctl_model::Robot::new(parts).expect("scaling keeps a valid model")
}

/// Held by a test that runs a timed 1 kHz loop across processes or DDS participants, so
/// that the tests of one binary (which cargo runs in parallel) do not share the machine's
/// two cores three ways: such a test measures tracking, and a starved loop answers late.
pub async fn one_timed_loop_at_a_time() -> tokio::sync::MutexGuard<'static, ()> {
    static TIMED_LOOP: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    TIMED_LOOP.lock().await
}

pub mod interop_python;
pub mod launch_check;
pub mod r2r_nodes;
pub mod ros_probe;

/// How a test starts controller_node in process: its default name in the root namespace, no
/// remaps, `values` as the parameters given at start.
pub fn controller_node_start(
    values: Vec<(String, armctl_control::ParameterValue)>,
) -> armctl_runtime::startup::NodeStart {
    armctl_runtime::startup::NodeStart {
        name: "controller_node".into(),
        namespace: "/".into(),
        remaps: vec![],
        values,
    }
}
