//! What the C ABI tests share: the Panda, and the runtime controller_node runs.

use armctl_control::reference::TrajectoryPoint;
use armctl_control::ParameterValue;
use armctl_runtime::group_loop::GroupLoop;
use armctl_runtime::startup::NodeStart;

pub(crate) fn panda_urdf() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../urdf/panda.urdf"
    ))
    .unwrap()
}

pub(crate) const PANDA_JOINTS: [&str; 7] = [
    "panda_joint1",
    "panda_joint2",
    "panda_joint3",
    "panda_joint4",
    "panda_joint5",
    "panda_joint6",
    "panda_joint7",
];

/// The runtime controller_node runs, configured with the same values a C host gives.
pub(crate) fn node_runtime(urdf: &str, controller: &str, joints: &[&str]) -> GroupLoop {
    let string = |s: &str| ParameterValue::String(s.into());
    let start = NodeStart {
        name: "controller_node".into(),
        namespace: "/".into(),
        remaps: vec![],
        values: vec![
            ("robot_description".into(), string(urdf)),
            ("controller".into(), string(controller)),
            (
                "joints".into(),
                ParameterValue::StringArray(joints.iter().map(|j| j.to_string()).collect()),
            ),
        ],
    };
    GroupLoop::lone(&start).unwrap()
}

/// `(time, positions)` waypoints as the runtime's points (positions only).
pub(crate) fn trajectory_points(waypoints: &[(f64, Vec<f64>)]) -> Vec<TrajectoryPoint> {
    waypoints
        .iter()
        .map(|(time, p)| TrajectoryPoint {
            time: *time,
            positions: p.clone(),
            velocities: None,
            accelerations: None,
        })
        .collect()
}
