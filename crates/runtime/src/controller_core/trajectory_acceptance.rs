//! Taking a trajectory: joints matched by name, times, limits, the interpolated motion and
//! the start from the reference in effect; refused with a reason otherwise.

use super::*;

/// Samples per segment when the motion between waypoints is checked.
const SAMPLES_PER_SEGMENT: usize = 16;

/// Every segment between consecutive `times`, sampled [`SAMPLES_PER_SEGMENT`] times, ends
/// included.
fn segment_samples(times: &[f64]) -> impl Iterator<Item = f64> + '_ {
    times.windows(2).flat_map(|w| {
        (0..=SAMPLES_PER_SEGMENT)
            .map(move |k| w[0] + (w[1] - w[0]) * k as f64 / SAMPLES_PER_SEGMENT as f64)
    })
}

/// Where an in-process trajectory is checked: every segment of one through waypoints (a
/// segment between two checks could hide a point beyond the limits); else 1000 times over
/// its duration, all of it when it ends (the first 60 s of a periodic one).
fn check_times(trajectory: &dyn Trajectory) -> Vec<f64> {
    const SAMPLES: usize = 1000;
    let knots = trajectory.knots();
    if knots.len() > 1 {
        return segment_samples(knots).collect();
    }
    let duration = trajectory.duration();
    let span = if duration.is_finite() { duration } else { 60.0 };
    if span == 0.0 {
        return vec![0.0];
    }
    (0..=SAMPLES)
        .map(|k| span * k as f64 / SAMPLES as f64)
        .collect()
}

/// A number of a refusal: three decimals, or in exponent form when large (a 1e308 read from
/// a file is not shown as 309 digits).
fn shown(v: f64) -> String {
    if v.abs() < 1e6 {
        format!("{v:.3}")
    } else {
        format!("{v:.3e}")
    }
}

fn reference_error(reason: String) -> RuntimeError {
    RuntimeError::Reference { reason }
}

/// Times from start finite, from 0 on, each after the one before (as joint_trajectory_controller
/// requires), said with the message's point numbers and times.
fn check_point_times(points: &[TrajectoryPoint]) -> Result<(), RuntimeError> {
    let mut before: Option<f64> = None;
    for (k, p) in points.iter().enumerate() {
        let t = p.time;
        let after = before.is_none_or(|b| t > b);
        if !(t.is_finite() && t >= 0.0 && after) {
            let rule = match before {
                Some(b) => format!("after point {}'s {b:?} s", k - 1),
                None => "0 or later".to_string(),
            };
            return Err(reference_error(format!(
                "point {k}: time_from_start {t:?} s must be {rule}"
            )));
        }
        before = Some(t);
    }
    Ok(())
}

/// Point `k` in the controller's joint order (`order[i]`: index of joint i in the message).
fn reorder_point(
    k: usize,
    p: &TrajectoryPoint,
    order: &[usize],
    listed: usize,
) -> Result<TrajectoryPoint, RuntimeError> {
    let reorder = |v: &[f64], what: &str| -> Result<Vec<f64>, RuntimeError> {
        if v.len() != listed {
            return Err(reference_error(format!(
                "point {k}: {what} has {} values for {listed} joint names",
                v.len()
            )));
        }
        if let Some(bad) = v.iter().find(|x| !x.is_finite()) {
            return Err(reference_error(format!("point {k}: {what} holds {bad}")));
        }
        Ok(order.iter().map(|&i| v[i]).collect())
    };
    let optional = |v: &Option<Vec<f64>>, what: &str| {
        v.as_deref()
            .filter(|v| !v.is_empty())
            .map(|v| reorder(v, what))
            .transpose()
    };
    Ok(TrajectoryPoint {
        time: p.time,
        positions: reorder(&p.positions, "positions")?,
        velocities: optional(&p.velocities, "velocities")?,
        accelerations: optional(&p.accelerations, "accelerations")?,
    })
}

impl ControllerCore {
    /// A joint trajectory to follow from time `start` (s, the node's clock), joints matched by
    /// name (the JointTrajectory shape): every controlled joint listed once, nothing else, one
    /// value per listed joint in every point, times from start increasing from 0 on, positions
    /// within the URDF limits, velocities within the velocity limits. It starts from the
    /// reference in effect, with its velocity and acceleration (a newer trajectory replacing a
    /// moving one makes no step in the reference velocity), or from the arm at rest when not
    /// controlling yet. Refused with a reason otherwise, and before the first valid joint
    /// state; the old reference stays.
    ///
    /// A `start` before `now` is never a step (as ros2_control's joint_trajectory_controller
    /// does it): the points already due are dropped and the first point still ahead is reached
    /// from the reference in effect; a trajectory entirely in the past is refused. A `start`
    /// after `now` is reached from the reference in effect too (the reference moves to the
    /// first point by then, not at once). A point due at once must lie within
    /// [`START_TOLERANCE`] of the reference in effect. The interpolated motion between the
    /// points is checked against the velocity and acceleration limits, and more than
    /// `max_reference_points` points are refused.
    pub fn set_trajectory(
        &mut self,
        joint_names: &[String],
        points: &[TrajectoryPoint],
        start: f64,
        now: f64,
    ) -> Result<(), RuntimeError> {
        if self.gate.last_valid_q.is_none() {
            return Err(reference_error("no valid joint state yet".into()));
        }
        self.check_point_count(points.len())?;
        check_point_times(points)?;
        let order = self.trajectory_order(joint_names)?;
        let mut ordered = Vec::with_capacity(points.len() + 1);
        for (k, p) in points.iter().enumerate() {
            let point = reorder_point(k, p, &order, joint_names.len())?;
            self.check_limits(k, &point)?;
            ordered.push(point);
        }
        // From now on: points already due dropped, a later start a delay before the points.
        let late = now - start;
        ordered.retain(|p| p.time > late || (late <= 0.0 && p.time == 0.0));
        if ordered.is_empty() {
            return Err(reference_error(format!(
                "every point lies in the past (the trajectory started {late:.3} s ago)"
            )));
        }
        ordered.iter_mut().for_each(|p| p.time -= late);
        let from = self.start_point();
        match ordered.first() {
            Some(first) if first.time > 0.0 => ordered.insert(0, from),
            Some(first) => self.check_start(first, &from)?,
            None => {}
        }
        let trajectory = MultiPoint::new(self.robot.dof(), &ordered).map_err(|e| match e {
            ControlError::InvalidReference { reason } => reference_error(reason),
            other => reference_error(other.to_string()),
        })?;
        self.check_interpolated_motion(&trajectory, &ordered)?;
        self.source.trajectory = Some((now, Approach::new(Box::new(trajectory))));
        Ok(())
    }

    /// Where a new trajectory starts from: the reference in effect (with its velocity and
    /// acceleration), or the arm at rest when not controlling yet.
    fn start_point(&self) -> TrajectoryPoint {
        match (&self.gate.last_valid_q, self.supervisor.was_holding) {
            (Some(q), true) => TrajectoryPoint {
                time: 0.0,
                positions: q.clone(),
                velocities: None,
                accelerations: None,
            },
            _ => TrajectoryPoint {
                time: 0.0,
                positions: self.source.reference.q.clone(),
                velocities: Some(self.source.reference.qd.clone()),
                accelerations: Some(self.source.reference.qdd.clone()),
            },
        }
    }

    /// A point due at once must be where the reference is (within [`START_TOLERANCE`]).
    fn check_start(
        &self,
        first: &TrajectoryPoint,
        from: &TrajectoryPoint,
    ) -> Result<(), RuntimeError> {
        let joints = self.robot.joints().iter();
        for ((joint, q), here) in joints.zip(&first.positions).zip(&from.positions) {
            if (q - here).abs() > START_TOLERANCE {
                return Err(reference_error(format!(
                    "the first point is due now (time_from_start 0) but puts {} at {}, {} from where its reference is ({}): start the trajectory where the arm is, or give the first point a time to get there",
                    joint.name,
                    shown(*q),
                    shown(q - here),
                    shown(*here)
                )));
            }
        }
        Ok(())
    }

    /// Refuses more than `max_reference_points` points (before anything is built from them).
    pub fn check_point_count(&self, points: usize) -> Result<(), RuntimeError> {
        if points > self.source.max_points {
            return Err(reference_error(format!(
                "{points} points exceed max_reference_points ({})",
                self.source.max_points
            )));
        }
        Ok(())
    }

    /// Changes the largest number of points a trajectory may have (live parameter).
    pub fn set_max_points(&mut self, max_points: usize) {
        self.source.max_points = max_points;
    }

    /// Sets the reference acceleration limits (live parameter `acceleration_limits`): one
    /// positive value per controlled joint, or none for the arm-derived defaults
    /// ([`armctl_control::default_gains::acceleration_limits`]).
    pub fn set_acceleration_limits(&mut self, limits: &[f64]) -> Result<(), String> {
        if limits.is_empty() {
            self.source
                .acceleration_limits
                .clone_from(&self.source.default_acceleration_limits);
            return Ok(());
        }
        if limits.len() != self.robot.dof() {
            return Err(format!(
                "{} values for {} joints (or none for the defaults)",
                limits.len(),
                self.robot.dof()
            ));
        }
        if let Some(bad) = limits.iter().find(|a| !(a.is_finite() && **a > 0.0)) {
            return Err(format!("{bad} is not a positive acceleration"));
        }
        self.source.acceleration_limits = limits.to_vec();
        Ok(())
    }

    /// The reference acceleration limits in effect, per joint.
    pub fn acceleration_limits(&self) -> &[f64] {
        &self.source.acceleration_limits
    }

    /// A sample of a reference at `t` within the velocity and acceleration limits; `why` says
    /// what may have made it too fast.
    fn check_motion(&self, t: f64, sample: &JointReference, why: &str) -> Result<(), RuntimeError> {
        let joints = self
            .robot
            .joints()
            .iter()
            .zip(&self.source.acceleration_limits);
        for ((joint, accel_limit), (qd, qdd)) in joints.zip(sample.qd.iter().zip(&sample.qdd)) {
            let limit = joint.limits.velocity;
            if qd.is_nan() || (limit > 0.0 && qd.abs() > limit * (1.0 + 1e-9)) {
                return Err(reference_error(format!(
                    "{} would move at {} at t = {} s, above its velocity limit {limit}{why}",
                    joint.name,
                    shown(*qd),
                    shown(t)
                )));
            }
            if qdd.is_nan() || qdd.abs() > accel_limit * (1.0 + 1e-9) {
                return Err(reference_error(format!(
                    "{} would accelerate at {} at t = {} s, above its acceleration_limits entry {accel_limit:.3}{why}",
                    joint.name,
                    shown(*qdd),
                    shown(t)
                )));
            }
        }
        Ok(())
    }

    /// The velocities and accelerations of the motion between the points, sampled (16 per
    /// segment, ends included), within the limits: waypoints that respect them can still be
    /// joined too fast.
    fn check_interpolated_motion(
        &self,
        trajectory: &MultiPoint,
        points: &[TrajectoryPoint],
    ) -> Result<(), RuntimeError> {
        let times: Vec<f64> = points.iter().map(|p| p.time).collect();
        let mut sample = JointReference::hold(&self.source.reference.q);
        for t in segment_samples(&times) {
            trajectory.sample(t, &mut sample);
            self.check_motion(t, &sample, " (points too close in time)")?;
        }
        Ok(())
    }

    /// Follows `trajectory` from time `start` (s, the core's clock): for in-process runners
    /// whose trajectories are built and checked by their own code (such as `armctl sim`'s
    /// specifications). Messages go through [`ControllerCore::set_trajectory`], which checks
    /// them.
    pub fn follow(
        &mut self,
        trajectory: Box<dyn Trajectory>,
        start: f64,
    ) -> Result<(), RuntimeError> {
        if trajectory.dof() != self.robot.dof() {
            return Err(reference_error(format!(
                "the trajectory has {} joints, the robot {}",
                trajectory.dof(),
                self.robot.dof()
            )));
        }
        self.check_sampled(trajectory.as_ref())?;
        self.source.trajectory = Some((start, Approach::new(trajectory)));
        Ok(())
    }

    /// A trajectory's positions within the limits and its motion within the velocity and
    /// acceleration limits where [`check_times`] samples it, and no more points than a message
    /// may have: what the node checks of a message, for references built in process.
    fn check_sampled(&self, trajectory: &dyn Trajectory) -> Result<(), RuntimeError> {
        self.check_point_count(trajectory.knots().len())?;
        let mut sample = JointReference::hold(&self.source.reference.q);
        for t in check_times(trajectory) {
            trajectory.sample(t, &mut sample);
            for (j, joint) in self.robot.joints().iter().enumerate() {
                let (q, limits) = (sample.q[j], &joint.limits);
                let outside = limits.is_bounded() && !(limits.lower..=limits.upper).contains(&q);
                if !q.is_finite() || outside {
                    return Err(reference_error(format!(
                        "{} = {q:?} at t = {} s is outside [{}, {}]",
                        joint.name,
                        shown(t),
                        limits.lower,
                        limits.upper
                    )));
                }
            }
            self.check_motion(t, &sample, "")?;
        }
        Ok(())
    }

    /// When the trajectory being followed ends (s, the core's clock), if one is.
    pub fn trajectory_end(&self) -> Option<f64> {
        self.source
            .trajectory
            .as_ref()
            .map(|(start, t)| start + t.duration())
    }

    /// Refuses joint names a trajectory could not be matched by (a joint listed twice, one
    /// not controlled, a controlled one missing): the checks a FollowJointTrajectory goal's
    /// INVALID_JOINTS answer stands for.
    pub fn check_trajectory_joints(&self, joint_names: &[String]) -> Result<(), RuntimeError> {
        self.trajectory_order(joint_names).map(|_| ())
    }

    /// Stops following the trajectory and holds where the arm is (an empty JointTrajectory).
    pub fn cancel_trajectory(&mut self) {
        self.source.trajectory = None;
        if let Some(q) = &self.gate.last_valid_q {
            self.source.reference = JointReference::hold(q);
        }
    }

    /// For each controlled joint, its index in `joint_names`.
    fn trajectory_order(&self, joint_names: &[String]) -> Result<Vec<usize>, RuntimeError> {
        for (k, name) in joint_names.iter().enumerate() {
            if joint_names[..k].contains(name) {
                return Err(reference_error(format!("joint '{name}' is listed twice")));
            }
            if !self.gate.map.joints().contains(name) {
                return Err(reference_error(format!(
                    "joint '{name}' is not controlled by this node"
                )));
            }
        }
        self.gate
            .map
            .joints()
            .iter()
            .map(|j| {
                joint_names.iter().position(|n| n == j).ok_or_else(|| {
                    reference_error(format!("joint '{j}' is missing from joint_names"))
                })
            })
            .collect()
    }

    fn check_limits(&self, k: usize, point: &TrajectoryPoint) -> Result<(), RuntimeError> {
        for (j, joint) in self.robot.joints().iter().enumerate() {
            let (q, limits) = (point.positions[j], &joint.limits);
            if limits.is_bounded() && !(limits.lower..=limits.upper).contains(&q) {
                return Err(reference_error(format!(
                    "point {k}: {} = {q:?} is outside [{}, {}]",
                    joint.name, limits.lower, limits.upper
                )));
            }
            let qd = point.velocities.as_ref().map_or(0.0, |v| v[j]);
            if limits.velocity > 0.0 && qd.abs() > limits.velocity {
                return Err(reference_error(format!(
                    "point {k}: {} velocity {qd:?} exceeds its limit {}",
                    joint.name, limits.velocity
                )));
            }
            let qdd = point.accelerations.as_ref().map_or(0.0, |a| a[j]);
            if qdd.abs() > self.source.acceleration_limits[j] {
                return Err(reference_error(format!(
                    "point {k}: {} acceleration {qdd:?} exceeds its acceleration_limits entry {:.3}",
                    joint.name, self.source.acceleration_limits[j]
                )));
            }
        }
        Ok(())
    }
}
