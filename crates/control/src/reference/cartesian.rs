//! Cartesian pose targets with interpolation: from the pose at the start to the target, the
//! position along a straight line and the orientation along the shortest rotation (slerp),
//! both with a quintic time law `s(t) = 10 u^3 - 15 u^4 + 6 u^5`, `u = t / T` (zero velocity and
//! acceleration at both ends).

use nalgebra::{IsometryMatrix3, UnitQuaternion, Vector3, Vector6};

use crate::ControlError;

/// A desired pose, twist and acceleration (`[v; w]`, `[a; dw]`, base link axes) at one instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PoseSample {
    /// Desired pose of the tip in the base link frame.
    pub pose: IsometryMatrix3<f64>,
    /// Desired linear and angular velocity.
    pub twist: Vector6<f64>,
    /// Desired linear and angular acceleration (the rotation turns about a fixed axis, so the
    /// angular acceleration is the axis times the angle's second derivative).
    pub acceleration: Vector6<f64>,
}

/// Interpolation between two poses.
#[derive(Debug, Clone, PartialEq)]
pub struct PoseInterpolation {
    start: IsometryMatrix3<f64>,
    goal: IsometryMatrix3<f64>,
    duration: f64,
    /// Rotation from start to goal as axis times angle (base link axes).
    rotation: Vector3<f64>,
}

impl PoseInterpolation {
    /// From `start` to `goal` in `duration` seconds (0: jump to the goal).
    pub fn new(
        start: IsometryMatrix3<f64>,
        goal: IsometryMatrix3<f64>,
        duration: f64,
    ) -> Result<Self, ControlError> {
        let finite = |p: &IsometryMatrix3<f64>| p.to_homogeneous().iter().all(|v| v.is_finite());
        if !finite(&start) || !finite(&goal) {
            return Err(ControlError::InvalidReference {
                reason: "poses must be finite".into(),
            });
        }
        if !(duration.is_finite() && duration >= 0.0) {
            return Err(ControlError::InvalidReference {
                reason: format!("duration {duration} must be finite and not negative"),
            });
        }
        let relative = goal.rotation * start.rotation.inverse();
        Ok(Self {
            start,
            goal,
            duration,
            // Through the quaternion: the rotation matrix's angle takes acos of its trace,
            // which rounding pushes past 1 (NaN) for rotations of a few 1e-8 rad.
            rotation: UnitQuaternion::from_rotation_matrix(&relative).scaled_axis(),
        })
    }

    /// Holding `pose`.
    pub fn hold(pose: IsometryMatrix3<f64>) -> Self {
        Self {
            start: pose,
            goal: pose,
            duration: 0.0,
            rotation: Vector3::zeros(),
        }
    }

    /// The goal.
    pub fn goal(&self) -> &IsometryMatrix3<f64> {
        &self.goal
    }

    /// Seconds from the start to the goal.
    pub fn duration(&self) -> f64 {
        self.duration
    }

    /// The desired pose, twist and acceleration `t` seconds after the start.
    pub fn sample(&self, t: f64) -> PoseSample {
        if self.duration <= 0.0 || t >= self.duration {
            return PoseSample {
                pose: self.goal,
                twist: Vector6::zeros(),
                acceleration: Vector6::zeros(),
            };
        }
        let u = (t / self.duration).clamp(0.0, 1.0);
        let s = u * u * u * (10.0 - 15.0 * u + 6.0 * u * u);
        let ds = 30.0 * u * u * (1.0 - 2.0 * u + u * u) / self.duration;
        let dds = 60.0 * u * (1.0 - 3.0 * u + 2.0 * u * u) / (self.duration * self.duration);
        let translation = self.goal.translation.vector - self.start.translation.vector;
        let position = self.start.translation.vector + translation * s;
        let rotation = UnitQuaternion::from_scaled_axis(self.rotation * s).to_rotation_matrix()
            * self.start.rotation;
        let (v, w) = (translation * ds, self.rotation * ds);
        let (a, dw) = (translation * dds, self.rotation * dds);
        PoseSample {
            pose: IsometryMatrix3::from_parts(position.into(), rotation),
            twist: Vector6::new(v.x, v.y, v.z, w.x, w.y, w.z),
            acceleration: Vector6::new(a.x, a.y, a.z, dw.x, dw.y, dw.z),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Rotation3, Translation3};

    #[test]
    fn starts_and_ends_at_the_poses_and_the_twist_is_the_derivative() {
        let a = IsometryMatrix3::from_parts(
            Translation3::new(0.3, 0.0, 0.5),
            Rotation3::from_euler_angles(0.1, -0.2, 0.3),
        );
        let b = IsometryMatrix3::from_parts(
            Translation3::new(0.5, 0.2, 0.4),
            Rotation3::from_euler_angles(-0.4, 0.3, 1.2),
        );
        let path = PoseInterpolation::new(a, b, 2.0).unwrap();
        assert!((path.sample(0.0).pose.to_homogeneous() - a.to_homogeneous()).amax() < 1e-12);
        assert!((path.sample(2.0).pose.to_homogeneous() - b.to_homogeneous()).amax() < 1e-12);
        let (t, h) = (0.7, 1e-6);
        let (p0, p1) = (path.sample(t), path.sample(t + h));
        let v = (p1.pose.translation.vector - p0.pose.translation.vector) / h;
        // The skew part of the small relative rotation (acos-based angles lose precision here).
        let d = (p1.pose.rotation * p0.pose.rotation.inverse()).into_inner();
        let w = Vector3::new(
            d[(2, 1)] - d[(1, 2)],
            d[(0, 2)] - d[(2, 0)],
            d[(1, 0)] - d[(0, 1)],
        ) / (2.0 * h);
        assert!((v - p0.twist.fixed_rows::<3>(0)).amax() < 1e-5);
        assert!((w - p0.twist.fixed_rows::<3>(3)).amax() < 1e-5);
        let acceleration = (p1.twist - p0.twist) / h;
        assert!(
            (acceleration - p0.acceleration).amax() < 1e-4,
            "{acceleration} {}",
            p0.acceleration
        );
        assert!(PoseInterpolation::new(a, b, -1.0).is_err());
    }

    #[test]
    fn goals_a_rounding_error_away_from_the_start_turn_by_nothing_not_nan() {
        let start = IsometryMatrix3::from_parts(
            Translation3::new(0.3, 0.0, 0.5),
            Rotation3::from_euler_angles(0.1, -0.2, 0.3),
        );
        let mut nan = 0;
        for k in 1..2000 {
            let tiny = Rotation3::new(Vector3::new(1.0, -0.5, 0.25) * (k as f64 * 1e-12));
            let goal = IsometryMatrix3::from_parts(start.translation, tiny * start.rotation);
            let path = PoseInterpolation::new(start, goal, 1.0).unwrap();
            let sample = path.sample(0.5);
            nan += usize::from(!sample.pose.to_homogeneous().iter().all(|v| v.is_finite()));
            assert!(sample.twist.amax() < 1e-8, "{}", sample.twist);
        }
        assert_eq!(nan, 0);
    }
}
