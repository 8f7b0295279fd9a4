//! References: joint trajectories, and for task-space laws a pose target and the measured
//! wrench.

use std::ffi::c_char;

use armctl_control::reference::TrajectoryPoint;
use armctl_runtime::inputs::{pose_from_parts, TrajectoryRefused};

use crate::handle::{guarded, invalid, refused, ArmctlController};
use crate::status::ArmctlStatus;
use crate::values::{slice, text};

/// One point of a joint trajectory: arrays of one value per joint (the creation order).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ArmctlTrajectoryPoint {
    /// Time from the trajectory's start, s.
    pub time: f64,
    /// Positions.
    pub positions: *const f64,
    /// Velocities, or null.
    pub velocities: *const f64,
    /// Accelerations, or null.
    pub accelerations: *const f64,
}

/// Point `k` as the runtime's type.
///
/// # Safety
/// The point's arrays are valid for `n` values (or null where optional).
unsafe fn point(p: &ArmctlTrajectoryPoint, k: usize, n: usize) -> Result<TrajectoryPoint, String> {
    let optional = |values: *const f64, what: &str| {
        // SAFETY: null or `n` values by the caller's contract.
        (!values.is_null())
            .then(|| {
                unsafe { slice(values, n, &format!("point {k}: {what}")) }.map(<[f64]>::to_vec)
            })
            .transpose()
    };
    Ok(TrajectoryPoint {
        time: p.time,
        // SAFETY: `n` values by the caller's contract.
        positions: unsafe { slice(p.positions, n, &format!("point {k}: positions")) }?.to_vec(),
        velocities: optional(p.velocities, "velocities")?,
        accelerations: optional(p.accelerations, "accelerations")?,
    })
}

/// Follows the trajectory of `count` points from time `start` (s, the clock of
/// `armctl_update`), checked as controller_node checks a JointTrajectory (limits, velocities
/// and accelerations the points imply, point count; a start in the past is never a step).
/// `now` is the current time. `Refused` with the reason; the old reference stays. No points
/// (`count` 0, `points` may be null) stops following and holds where the arm is, as an empty
/// JointTrajectory does for controller_node and joint_trajectory_controller.
#[no_mangle]
pub extern "C" fn armctl_set_trajectory(
    handle: *mut ArmctlController,
    points: *const ArmctlTrajectoryPoint,
    count: usize,
    start: f64,
    now: f64,
) -> ArmctlStatus {
    guarded(handle, |h| {
        let n = h.joints.len();
        let read = || {
            // SAFETY: `count` points by the caller's contract.
            let raw = unsafe { slice(points, count, "points") }?;
            raw.iter()
                .enumerate()
                // SAFETY: each point's arrays by the caller's contract.
                .map(|(k, p)| unsafe { point(p, k, n) })
                .collect::<Result<Vec<_>, _>>()
        };
        let joints = h.joints.clone();
        match h
            .runtime_mut()
            .take_trajectory(&joints, count, read, start, now)
        {
            Ok(_) => Ok(()),
            Err(TrajectoryRefused::Unreadable(why)) => Err(invalid(why)),
            Err(TrajectoryRefused::Refused(why)) => Err(refused(why)),
        }
    })
}

/// A pose target for a task-space law (`cartesian_impedance`, `resolved_acceleration`):
/// `position` (3, m) and `orientation` (4, quaternion x, y, z, w) of the tip in the base
/// link's axes, reached in `duration` s. `Refused` for a joint-space law or a bad pose.
#[no_mangle]
pub extern "C" fn armctl_set_target_pose(
    handle: *mut ArmctlController,
    position: *const f64,
    orientation: *const f64,
    duration: f64,
) -> ArmctlStatus {
    armctl_set_target_pose_in(handle, c"".as_ptr(), position, orientation, duration)
}

/// As [`armctl_set_target_pose`], the pose given in `frame` (a PoseStamped's `frame_id`): the
/// base link (or empty), the tip link, or a URDF link fixed to a body of the chain, placed at
/// the newest valid state. `Refused` for any other frame, naming it and the known ones.
#[no_mangle]
pub extern "C" fn armctl_set_target_pose_in(
    handle: *mut ArmctlController,
    frame: *const c_char,
    position: *const f64,
    orientation: *const f64,
    duration: f64,
) -> ArmctlStatus {
    guarded(handle, |h| {
        // SAFETY: a C string, 3 and 4 values by the caller's contract.
        let (frame, p, q) = unsafe {
            (
                text(frame, "frame").map_err(invalid)?,
                slice(position, 3, "position").map_err(invalid)?,
                slice(orientation, 4, "orientation").map_err(invalid)?,
            )
        };
        let pose = pose_from_parts([p[0], p[1], p[2]], [q[0], q[1], q[2], q[3]])
            .map_err(|e| refused(format!("target pose: {e}")))?;
        h.runtime_mut()
            .take_target_pose(frame, pose, duration)
            .map_err(refused)
    })
}

/// The measured wrench on the tip, `[f; m]` (6 values) in the base link's axes with the
/// moment about the tip, for the task-space laws that use it; ignored by the others.
#[no_mangle]
pub extern "C" fn armctl_set_external_wrench(
    handle: *mut ArmctlController,
    wrench: *const f64,
) -> ArmctlStatus {
    armctl_set_external_wrench_in(handle, c"".as_ptr(), wrench)
}

/// As [`armctl_set_external_wrench`], the wrench given in `frame` (a WrenchStamped's
/// `frame_id`): in a frame fixed to the base (the base link, a world link, or empty) the tip's
/// wrench in that frame's axes, its moment about the tip; in a frame on the chain (a sensor,
/// the flange) the sensor's, its moment about the frame's origin, moved to the tip. `Refused`
/// for any other frame, naming it and the known ones, and the wrench is not used.
#[no_mangle]
pub extern "C" fn armctl_set_external_wrench_in(
    handle: *mut ArmctlController,
    frame: *const c_char,
    wrench: *const f64,
) -> ArmctlStatus {
    guarded(handle, |h| {
        // SAFETY: a C string and 6 values by the caller's contract.
        let (frame, w) = unsafe {
            (
                text(frame, "frame").map_err(invalid)?,
                slice(wrench, 6, "wrench").map_err(invalid)?,
            )
        };
        let measured = [w[0], w[1], w[2], w[3], w[4], w[5]];
        h.runtime_mut()
            .take_external_wrench(frame, measured)
            .map_err(refused)?;
        Ok(())
    })
}
