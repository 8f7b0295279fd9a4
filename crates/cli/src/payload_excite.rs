//! `armctl excite --payload`: rest-to-rest moves through the poses that best determine a
//! tool's mass and centre of mass (`armctl_ident::payload_poses`), dwelling in each, as
//! trajectory_msgs/JointTrajectory waypoints for `armctl sim --trajectory` or a running
//! controller_node; `armctl identify --payload` reads the log.

use anyhow::Result;
use armctl_ident::payload_poses;
use armctl_model::Robot;
use armctl_ros::msgs::{Duration, JointTrajectory, JointTrajectoryPoint};

/// Timing of the poses.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PoseTiming {
    /// Poses to visit.
    pub poses: usize,
    /// Seconds of each rest-to-rest move.
    pub move_time: f64,
    /// Seconds at rest in each pose (the estimate takes the second half).
    pub dwell: f64,
}

/// The waypoints from `q0` through the chosen poses: each reached at rest after `move_time`
/// and held for `dwell`.
pub(crate) fn payload_trajectory(
    robot: &Robot,
    q0: &[f64],
    timing: PoseTiming,
) -> Result<JointTrajectory> {
    let poses = payload_poses(robot, q0, timing.poses)?;
    let n = robot.dof();
    let mut points = Vec::with_capacity(2 * poses.len());
    let mut t = 0.0;
    for pose in poses {
        for stay in [timing.move_time, timing.dwell] {
            t += stay;
            points.push(JointTrajectoryPoint {
                positions: pose.clone(),
                velocities: vec![0.0; n],
                accelerations: vec![0.0; n],
                time_from_start: Duration::from_seconds(t),
                ..JointTrajectoryPoint::default()
            });
        }
    }
    Ok(JointTrajectory {
        joint_names: robot.joint_names().map(str::to_string).collect(),
        points,
        ..JointTrajectory::default()
    })
}
