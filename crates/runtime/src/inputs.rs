//! What a runner hands one arm besides its joint states (a trajectory, a pose target, a
//! measured wrench) and a pair besides theirs (an object target): each checked, placed in
//! the base and refused here, so that controller_node, the C ABI and `armctl sim` say the
//! same thing for the same input.

use armctl_control::shown;
use nalgebra::{IsometryMatrix3, Quaternion, Translation3, UnitQuaternion};

use crate::group_loop::GroupLoop;
use crate::RuntimeError;
use armctl_control::reference::TrajectoryPoint;

/// A pose from a position (m) and an orientation quaternion `[x, y, z, w]`, as messages and
/// the C ABI give them; refused when a value is not finite or the quaternion is zero.
pub fn pose_from_parts(position: [f64; 3], xyzw: [f64; 4]) -> Result<IsometryMatrix3<f64>, String> {
    let quaternion = Quaternion::new(xyzw[3], xyzw[0], xyzw[1], xyzw[2]);
    if position.iter().chain(&xyzw).any(|v| !v.is_finite()) || quaternion.norm() < 1e-9 {
        return Err("not finite or a zero quaternion".into());
    }
    Ok(IsometryMatrix3::from_parts(
        Translation3::new(position[0], position[1], position[2]),
        UnitQuaternion::from_quaternion(quaternion).to_rotation_matrix(),
    ))
}

/// An object target of a pair, which is given in the world frame (`world` or empty); another
/// frame is refused, naming it.
pub fn object_target_in_world(
    frame: &str,
    pose: Result<IsometryMatrix3<f64>, String>,
) -> Result<IsometryMatrix3<f64>, String> {
    if !(frame.is_empty() || frame == "world") {
        return Err(format!(
            "frame '{}' is not the world (object targets are in frame 'world')",
            shown(frame)
        ));
    }
    pose
}

/// What a trajectory input did.
#[derive(Debug, Clone, PartialEq)]
pub enum TrajectoryTaken {
    /// No points: following stopped, and the arm holds where it is (as an empty
    /// JointTrajectory stops joint_trajectory_controller).
    Stopped,
    /// Followed from now on.
    Following {
        /// Its points.
        points: usize,
        /// The time of its last point, s.
        duration: f64,
        /// When it starts, s on the loop's clock.
        start: f64,
    },
}

impl std::fmt::Display for TrajectoryTaken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Stopped => write!(f, "empty reference: holding where the arm is"),
            Self::Following {
                points,
                duration,
                start,
            } => write!(
                f,
                "new reference: {points} points over {duration:.3} s, starting at t = {start:.3} s"
            ),
        }
    }
}

/// Why a trajectory input was not taken; the old reference stays.
#[derive(Debug, Clone, PartialEq)]
pub enum TrajectoryRefused {
    /// Its points could not be read (the runner's conversion said why).
    Unreadable(String),
    /// Read, and refused: too many points, unknown joints, beyond the limits.
    Refused(String),
}

impl std::fmt::Display for TrajectoryRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unreadable(why) => write!(f, "reference refused: {why}"),
            Self::Refused(why) => write!(f, "{why}"),
        }
    }
}

impl From<RuntimeError> for TrajectoryRefused {
    fn from(e: RuntimeError) -> Self {
        Self::Refused(e.to_string())
    }
}

impl GroupLoop {
    /// A trajectory of `count` points over the joints `names`, starting at `start` (`now` is
    /// the loop's time). The points are counted before `read` copies them out of a message or
    /// a C array that may be huge; no points stop following.
    pub fn take_trajectory(
        &mut self,
        names: &[String],
        count: usize,
        read: impl FnOnce() -> Result<Vec<TrajectoryPoint>, String>,
        start: f64,
        now: f64,
    ) -> Result<TrajectoryTaken, TrajectoryRefused> {
        self.lone_law("trajectories")
            .map_err(TrajectoryRefused::Refused)?;
        if count == 0 {
            self.core_mut().cancel_trajectory();
            return Ok(TrajectoryTaken::Stopped);
        }
        self.core().check_point_count(count)?;
        let points = read().map_err(TrajectoryRefused::Unreadable)?;
        self.core_mut().set_trajectory(names, &points, start, now)?;
        Ok(TrajectoryTaken::Following {
            points: points.len(),
            duration: points.last().map_or(0.0, |p| p.time),
            start,
        })
    }

    /// A pose target given in `frame` (placed at the newest valid state), reached in `seconds`;
    /// only a task-space law takes one.
    pub fn take_target_pose(
        &mut self,
        frame: &str,
        pose: IsometryMatrix3<f64>,
        seconds: f64,
    ) -> Result<(), String> {
        self.lone_law("pose targets")?;
        let goal = self.target_in_base(frame, pose)?;
        let law = self.law_name();
        match self.task_space() {
            Some(task_space) => task_space
                .set_target_pose(goal, seconds)
                .map_err(|e| e.to_string()),
            None => Err(format!(
                "controller '{law}' takes joint references, not pose targets"
            )),
        }
    }

    /// A measured wrench given in `frame`, moved to the tip in base link axes: `Ok(true)` when
    /// the law takes it, `Ok(false)` when a joint-space law ignores it (its frame unchecked).
    pub fn take_external_wrench(&mut self, frame: &str, wrench: [f64; 6]) -> Result<bool, String> {
        self.lone_law("measured wrenches")?;
        if self.task_space().is_none() {
            return Ok(false);
        }
        let at_tip = self.wrench_at_tip(frame, wrench)?;
        if let Some(task_space) = self.task_space() {
            task_space.set_external_wrench(&at_tip);
        }
        Ok(true)
    }

    /// An object target in the world frame, reached in `seconds`: only a pair's law takes
    /// one. Returns the time the move takes.
    pub fn take_object_target(
        &mut self,
        goal: IsometryMatrix3<f64>,
        seconds: f64,
    ) -> Result<f64, String> {
        let law_name = self.law_name();
        match self.pair_law_mut() {
            Some(law) => law
                .set_object_target(goal, seconds)
                .map_err(|e| e.to_string()),
            None => Err(format!(
                "controller '{law_name}' moves one arm: it takes pose targets, not object targets"
            )),
        }
    }

    /// Refuses `what` for a pair: its law takes object targets (in the world), not an arm's.
    fn lone_law(&self, what: &str) -> Result<(), String> {
        match self.pair_law() {
            None => Ok(()),
            Some(_) => Err(format!(
                "controller '{}' moves the object held by both arms: it takes object targets, not {what}",
                self.law_name()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pose_needs_finite_values_and_a_quaternion() {
        let pose = pose_from_parts([0.1, 0.2, 0.3], [0.0, 0.0, 0.0, 2.0]).unwrap();
        assert!((pose.translation.vector.x - 0.1).abs() < 1e-15);
        assert!((pose.rotation.matrix() - nalgebra::Matrix3::identity()).norm() < 1e-15);
        let zero = pose_from_parts([0.0; 3], [0.0; 4]).unwrap_err();
        assert_eq!(zero, "not finite or a zero quaternion");
        assert!(pose_from_parts([f64::NAN, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]).is_err());
    }

    #[test]
    fn an_object_target_is_in_the_world() {
        let pose = Ok(IsometryMatrix3::identity());
        assert!(object_target_in_world("", pose.clone()).is_ok());
        assert!(object_target_in_world("world", pose.clone()).is_ok());
        let err = object_target_in_world("base", pose).unwrap_err();
        assert!(err.contains("frame 'base' is not the world"), "{err}");
    }

    #[test]
    fn a_trajectory_says_what_it_did() {
        assert_eq!(
            TrajectoryTaken::Stopped.to_string(),
            "empty reference: holding where the arm is"
        );
        let taken = TrajectoryTaken::Following {
            points: 3,
            duration: 2.0,
            start: 0.5,
        };
        assert_eq!(
            taken.to_string(),
            "new reference: 3 points over 2.000 s, starting at t = 0.500 s"
        );
        let unreadable = TrajectoryRefused::Unreadable("point 1: 2 positions".into());
        assert_eq!(
            unreadable.to_string(),
            "reference refused: point 1: 2 positions"
        );
    }
}
