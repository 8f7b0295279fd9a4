//! `armctl excite --payload`: rest-to-rest moves through the poses that best determine a
//! tool's mass and centre of mass (`armctl_ident::payload_poses`), dwelling in each, as
//! trajectory_msgs/JointTrajectory waypoints for `armctl sim --trajectory` or a running
//! controller_node; `armctl identify --payload` reads the log.

use anyhow::{Context, Result};
use armctl_ident::{payload_poses, pose_move_time};
use armctl_model::Robot;
use armctl_nodes::msgs::{Duration, JointTrajectory, JointTrajectoryPoint};

/// Timing of the poses.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PoseTiming {
    /// Poses to visit.
    pub poses: usize,
    /// Seconds of each rest-to-rest move, at least (longer where a joint would pass half its
    /// velocity or acceleration limit).
    pub move_time: f64,
    /// Seconds at rest in each pose (the estimate takes the second half).
    pub dwell: f64,
}

/// The waypoints from `q0` through the chosen poses: each reached at rest after `move_time`
/// (or as long as the limits need) and held for `dwell`.
pub(crate) fn payload_trajectory(
    robot: &Robot,
    q0: &[f64],
    timing: PoseTiming,
) -> Result<JointTrajectory> {
    let poses = payload_poses(robot, q0, timing.poses)?;
    let accelerations = armctl_control::default_gains::acceleration_limits(robot)
        .context("the reference acceleration limits")?;
    let n = robot.dof();
    let mut points = Vec::with_capacity(2 * poses.len());
    let mut t = 0.0;
    let mut from = q0.to_vec();
    for pose in poses {
        let travel = pose_move_time(robot, &accelerations, (&from, &pose), timing.move_time);
        from.clone_from(&pose);
        for stay in [travel, timing.dwell] {
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

#[cfg(test)]
mod tests {
    use super::*;
    use armctl_model::ChainOptions;

    /// Every move between the poses stays within half of each joint's velocity limit (a rest
    /// to rest quintic peaks at 1.875 times its mean speed), on the bundled arms and on a light
    /// wrist whose default 3 s moves went past its limit (the Jaco2 class).
    #[test]
    fn the_moves_between_the_poses_stay_within_half_the_velocity_limits() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        for file in [
            "urdf/panda.urdf",
            "urdf/ur5e.urdf",
            "urdf/puma560.urdf",
            "tests/data/arms/jaco2_class.urdf",
        ] {
            let path = format!("{root}/{file}");
            let robot = Robot::from_urdf_file(path, &ChainOptions::default()).unwrap();
            let q0 = robot.middle_configuration();
            let timing = PoseTiming {
                poses: 8,
                move_time: 3.0,
                dwell: 3.0,
            };
            let trajectory = payload_trajectory(&robot, &q0, timing).unwrap();
            let (mut from, mut t0) = (q0.clone(), 0.0);
            let mut slowest = 0.0_f64;
            for pair in trajectory.points.chunks(2) {
                let (arrive, leave) = (&pair[0], &pair[1]);
                let duration = arrive.time_from_start.seconds() - t0;
                for (j, joint) in robot.joints().iter().enumerate() {
                    let peak = 1.875 * (arrive.positions[j] - from[j]).abs() / duration;
                    assert!(
                        peak <= 0.5 * joint.limits.velocity + 1e-9,
                        "{file} joint {j}: {peak} rad/s"
                    );
                }
                slowest = slowest.max(duration);
                from.clone_from(&arrive.positions);
                t0 = leave.time_from_start.seconds();
            }
            println!("{file}: longest move {slowest:.2} s");
        }
    }
}
