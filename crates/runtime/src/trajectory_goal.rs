//! What a trajectory goal (control_msgs/FollowJointTrajectory, as MoveIt sends it) asks of the
//! motion, by joint_trajectory_controller's rules: path tolerances while the trajectory runs,
//! goal tolerances once it has ended, and how long after its end the arm may take to get
//! within them. A tolerance of 0 is not checked. No middleware types: the ROS layer turns the
//! goal's fields into [`ToleranceRequest`]s and the outcome into the action's result.

use armctl_control::JointReference;

/// Largest errors (reference - measured) a joint may have; 0 means not checked.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StateTolerance {
    /// Position error, rad (m).
    pub position: f64,
    /// Velocity error, rad/s (m/s).
    pub velocity: f64,
}

/// One joint's tolerance as a goal gives it (control_msgs/JointTolerance): each value > 0
/// replaces the default, 0 keeps it, -1 removes it (not checked).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToleranceRequest<'a> {
    /// The joint.
    pub joint: &'a str,
    /// Position.
    pub position: f64,
    /// Velocity.
    pub velocity: f64,
    /// Acceleration: joint states carry no accelerations, so only 0 (or -1) is accepted.
    pub acceleration: f64,
}

/// Why a goal's tolerances were refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToleranceError {
    /// A tolerance names a joint that is not controlled (control_msgs' INVALID_JOINTS).
    UnknownJoint(String),
    /// A value that is not a tolerance, or one that cannot be checked.
    Value(String),
}

impl std::fmt::Display for ToleranceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::UnknownJoint(reason) | Self::Value(reason) => f.write_str(reason),
        }
    }
}

/// How a goal stands after a step.
#[derive(Debug, Clone, PartialEq)]
pub enum GoalCheck {
    /// The trajectory runs within its path tolerances, or has ended and the arm is still
    /// getting within the goal tolerances.
    Moving,
    /// The trajectory has ended and every joint is within its goal tolerances.
    Reached,
    /// A joint left its path tolerance (which joint, by how much).
    PathViolated(String),
    /// The goal tolerances were not met within the goal time after the end.
    GoalTimeExceeded(String),
}

/// The tolerances one goal is checked against.
#[derive(Debug, Clone, PartialEq)]
pub struct GoalTolerances {
    /// While the trajectory runs, per joint in the controller's order.
    pub path: Vec<StateTolerance>,
    /// Once it has ended, per joint.
    pub goal: Vec<StateTolerance>,
    /// Seconds after the end within which the goal tolerances must be met (0: no limit).
    pub goal_time: f64,
}

/// `request` applied to `default` (> 0 replaces, 0 keeps, -1 removes).
fn overridden(default: f64, request: f64, what: &str) -> Result<f64, ToleranceError> {
    if request == -1.0 {
        Ok(0.0)
    } else if request == 0.0 {
        Ok(default)
    } else if request.is_finite() && request > 0.0 {
        Ok(request)
    } else {
        Err(ToleranceError::Value(format!(
            "{what} {request} is not a tolerance (> 0 sets it, 0 keeps the default, -1 removes it)"
        )))
    }
}

/// `requests` applied to `tolerances` (one per joint of `joints`); `kind` names the list.
fn apply_requests(
    tolerances: &mut [StateTolerance],
    joints: &[String],
    requests: &[ToleranceRequest<'_>],
    kind: &str,
) -> Result<(), ToleranceError> {
    for request in requests {
        let Some(j) = joints.iter().position(|name| name == request.joint) else {
            return Err(ToleranceError::UnknownJoint(format!(
                "{kind} names joint '{}', which this controller does not control",
                request.joint
            )));
        };
        let what = |field: &str| format!("{kind} of {}: {field}", request.joint);
        if request.acceleration != 0.0 && request.acceleration != -1.0 {
            return Err(ToleranceError::Value(format!(
                "{}: {} cannot be checked (joint states carry no accelerations)",
                what("acceleration"),
                request.acceleration
            )));
        }
        let tolerance = &mut tolerances[j];
        tolerance.position = overridden(tolerance.position, request.position, &what("position"))?;
        tolerance.velocity = overridden(tolerance.velocity, request.velocity, &what("velocity"))?;
    }
    Ok(())
}

impl GoalTolerances {
    /// The tolerances for a goal: these defaults with the goal's own (`goal_time` > 0
    /// replaces the default goal time; 0 keeps it).
    pub fn for_goal(
        &self,
        joints: &[String],
        path: &[ToleranceRequest<'_>],
        goal: &[ToleranceRequest<'_>],
        goal_time: f64,
    ) -> Result<Self, ToleranceError> {
        let mut out = self.clone();
        apply_requests(&mut out.path, joints, path, "path_tolerance")?;
        apply_requests(&mut out.goal, joints, goal, "goal_tolerance")?;
        if !(goal_time.is_finite() && goal_time >= 0.0) {
            return Err(ToleranceError::Value(format!(
                "goal_time_tolerance {goal_time} s is not a duration"
            )));
        }
        if goal_time > 0.0 {
            out.goal_time = goal_time;
        }
        Ok(out)
    }

    /// The goal after a step: `since_end` is the time since the trajectory's end (negative
    /// while it runs), `reference` the reference of the step, `q` and `qd` the measured state,
    /// all in the controller's joint order (`joints` names them in messages).
    pub fn check(
        &self,
        joints: &[String],
        since_end: f64,
        reference: &JointReference,
        q: &[f64],
        qd: &[f64],
    ) -> GoalCheck {
        let moving = since_end < 0.0;
        let tolerances = if moving { &self.path } else { &self.goal };
        let outside = first_outside(tolerances, joints, reference, q, qd);
        match (outside, moving) {
            (None, true) => GoalCheck::Moving,
            (None, false) => GoalCheck::Reached,
            (Some(why), true) => GoalCheck::PathViolated(why),
            (Some(why), false) if self.goal_time > 0.0 && since_end > self.goal_time => {
                GoalCheck::GoalTimeExceeded(format!(
                    "{why}, {since_end:.3} s after the trajectory's end (goal time tolerance {} s)",
                    self.goal_time
                ))
            }
            (Some(_), false) => GoalCheck::Moving,
        }
    }
}

/// Whether `error` is beyond a checked (> 0) `tolerance`; a NaN error always is.
fn beyond(error: f64, tolerance: f64) -> bool {
    tolerance > 0.0 && (error.is_nan() || error.abs() > tolerance)
}

/// The first joint whose error is beyond a (checked) tolerance, said with its numbers.
fn first_outside(
    tolerances: &[StateTolerance],
    joints: &[String],
    reference: &JointReference,
    q: &[f64],
    qd: &[f64],
) -> Option<String> {
    for (j, tolerance) in tolerances.iter().enumerate() {
        let position_error = reference.q[j] - q[j];
        let velocity_error = reference.qd[j] - qd[j];
        let name = joints.get(j).map_or("?", String::as_str);
        if beyond(position_error, tolerance.position) {
            return Some(format!(
                "{name} position error {position_error:.3e} is beyond its tolerance {}",
                tolerance.position
            ));
        }
        if beyond(velocity_error, tolerance.velocity) {
            return Some(format!(
                "{name} velocity error {velocity_error:.3e} is beyond its tolerance {}",
                tolerance.velocity
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn joints() -> Vec<String> {
        vec!["a".into(), "b".into()]
    }

    fn defaults() -> GoalTolerances {
        let stopped = StateTolerance {
            position: 0.0,
            velocity: 0.01,
        };
        GoalTolerances {
            path: vec![StateTolerance::default(); 2],
            goal: vec![stopped; 2],
            goal_time: 0.0,
        }
    }

    fn request(joint: &str, position: f64, velocity: f64) -> ToleranceRequest<'_> {
        ToleranceRequest {
            joint,
            position,
            velocity,
            acceleration: 0.0,
        }
    }

    #[test]
    fn a_goal_sets_keeps_or_removes_each_default() {
        let goal = [request("a", 0.05, -1.0), request("b", 0.0, 0.0)];
        let t = defaults()
            .for_goal(&joints(), &[request("b", 0.2, 0.0)], &goal, 0.5)
            .unwrap();
        assert_eq!(
            t.goal[0],
            StateTolerance {
                position: 0.05,
                velocity: 0.0
            }
        );
        assert_eq!(t.goal[1], defaults().goal[1]);
        assert_eq!(t.path[1].position, 0.2);
        assert_eq!(t.path[0], StateTolerance::default());
        assert_eq!(t.goal_time, 0.5);
        let kept = defaults().for_goal(&joints(), &[], &[], 0.0).unwrap();
        assert_eq!(kept, defaults());
    }

    #[test]
    fn unknown_joints_and_bad_values_are_refused_by_name() {
        let unknown = defaults().for_goal(&joints(), &[request("elbow", 0.1, 0.0)], &[], 0.0);
        assert!(matches!(unknown, Err(ToleranceError::UnknownJoint(r)) if r.contains("'elbow'")));
        for bad in [-0.5, f64::NAN, f64::INFINITY] {
            let refused = defaults().for_goal(&joints(), &[], &[request("b", bad, 0.0)], 0.0);
            assert!(
                matches!(&refused, Err(ToleranceError::Value(r)) if r.contains("goal_tolerance of b: position")),
                "{refused:?}"
            );
        }
        let acceleration = ToleranceRequest {
            acceleration: 0.3,
            ..request("a", 0.0, 0.0)
        };
        let refused = defaults().for_goal(&joints(), &[acceleration], &[], 0.0);
        assert!(matches!(refused, Err(ToleranceError::Value(r)) if r.contains("no accelerations")));
        let refused = defaults().for_goal(&joints(), &[], &[], -1.0);
        assert!(matches!(refused, Err(ToleranceError::Value(r)) if r.contains("goal_time")));
    }

    #[test]
    fn path_tolerances_apply_while_moving_goal_tolerances_after_the_end() {
        let t = GoalTolerances {
            path: vec![
                StateTolerance {
                    position: 0.1,
                    velocity: 0.0
                };
                2
            ],
            goal: vec![
                StateTolerance {
                    position: 0.01,
                    velocity: 0.01
                };
                2
            ],
            goal_time: 0.5,
        };
        let reference = JointReference::hold(&[1.0, 2.0]);
        let j = joints();
        let still = [0.0, 0.0];
        assert_eq!(
            t.check(&j, -0.1, &reference, &[0.95, 2.0], &still),
            GoalCheck::Moving
        );
        let off = t.check(&j, -0.1, &reference, &[1.0, 1.8], &still);
        assert!(
            matches!(off, GoalCheck::PathViolated(r) if r.starts_with("b position error 2.000e-1"))
        );
        // After the end: within 0.5 s the arm may still settle; then it is a failure.
        assert_eq!(
            t.check(&j, 0.2, &reference, &[0.95, 2.0], &still),
            GoalCheck::Moving
        );
        let late = t.check(&j, 0.6, &reference, &[0.95, 2.0], &still);
        assert!(matches!(late, GoalCheck::GoalTimeExceeded(r) if r.contains("a position error")));
        let moving = t.check(&j, 0.2, &reference, &[1.0, 2.0], &[0.0, 0.05]);
        assert_eq!(moving, GoalCheck::Moving, "not stopped yet");
        assert_eq!(
            t.check(&j, 0.2, &reference, &[1.005, 2.0], &still),
            GoalCheck::Reached
        );
        // A NaN measurement is never within a checked tolerance.
        let nan = t.check(&j, -0.1, &reference, &[f64::NAN, 2.0], &still);
        assert!(matches!(nan, GoalCheck::PathViolated(_)));
    }

    #[test]
    fn without_a_goal_time_the_goal_waits_for_the_arm() {
        let mut t = defaults();
        t.goal[0].position = 0.01;
        let reference = JointReference::hold(&[1.0, 2.0]);
        let far = t.check(&joints(), 100.0, &reference, &[0.5, 2.0], &[0.0, 0.0]);
        assert_eq!(far, GoalCheck::Moving);
    }
}
