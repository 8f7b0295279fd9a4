//! A trajectory through waypoints, in the shape of trajectory_msgs/JointTrajectory: each point
//! has positions, optional velocities and accelerations, and a time from start. Segments are
//! quintic polynomials matching position, velocity and acceleration at both ends, so the
//! reference is twice continuously differentiable. Missing velocities are the average of the
//! neighbouring slopes (zero at the ends and where the slope changes sign); missing
//! accelerations are zero.

use super::Trajectory;
use crate::{ControlError, JointReference};

/// One waypoint.
#[derive(Debug, Clone, PartialEq)]
pub struct TrajectoryPoint {
    /// Time from the start of the trajectory, s.
    pub time: f64,
    /// Positions.
    pub positions: Vec<f64>,
    /// Velocities, if given.
    pub velocities: Option<Vec<f64>>,
    /// Accelerations, if given.
    pub accelerations: Option<Vec<f64>>,
}

/// A trajectory through waypoints.
#[derive(Debug, Clone, PartialEq)]
pub struct MultiPoint {
    times: Vec<f64>,
    /// Per point and joint: position, velocity, acceleration.
    knots: Vec<Vec<[f64; 3]>>,
}

impl MultiPoint {
    /// Checks the points: at least one, one value per joint, finite, times strictly increasing
    /// from a non-negative start.
    pub fn new(dof: usize, points: &[TrajectoryPoint]) -> Result<Self, ControlError> {
        let invalid = |reason: String| Err(ControlError::InvalidReference { reason });
        if points.is_empty() {
            return invalid("a trajectory needs at least one point".into());
        }
        for (k, p) in points.iter().enumerate() {
            let lists = [
                Some(&p.positions),
                p.velocities.as_ref(),
                p.accelerations.as_ref(),
            ];
            for (name, list) in ["positions", "velocities", "accelerations"]
                .iter()
                .zip(lists)
            {
                if let Some(list) = list {
                    if list.len() != dof {
                        return invalid(format!(
                            "point {k}: {name} has {} values, the robot has {dof} joints",
                            list.len()
                        ));
                    }
                    if list.iter().any(|v| !v.is_finite()) {
                        return invalid(format!("point {k}: {name} holds a non-finite value"));
                    }
                }
            }
            let earlier = if k == 0 {
                -f64::MIN_POSITIVE
            } else {
                points[k - 1].time
            };
            if !(p.time.is_finite() && p.time > earlier && p.time >= 0.0) {
                return invalid(format!(
                    "point {k}: time_from_start {:?} must be finite and after the previous point",
                    p.time
                ));
            }
        }
        let times: Vec<f64> = points.iter().map(|p| p.time).collect();
        let knots = (0..points.len())
            .map(|k| {
                (0..dof)
                    .map(|j| {
                        [
                            points[k].positions[j],
                            velocity(points, k, j),
                            acceleration(points, k, j),
                        ]
                    })
                    .collect()
            })
            .collect();
        Ok(Self { times, knots })
    }
}

fn velocity(points: &[TrajectoryPoint], k: usize, j: usize) -> f64 {
    if let Some(v) = &points[k].velocities {
        return v[j];
    }
    if k == 0 || k + 1 == points.len() {
        return 0.0;
    }
    let slope = |a: usize, b: usize| {
        (points[b].positions[j] - points[a].positions[j]) / (points[b].time - points[a].time)
    };
    let (before, after) = (slope(k - 1, k), slope(k, k + 1));
    if before * after <= 0.0 {
        0.0
    } else {
        0.5 * (before + after)
    }
}

fn acceleration(points: &[TrajectoryPoint], k: usize, j: usize) -> f64 {
    points[k].accelerations.as_ref().map_or(0.0, |a| a[j])
}

/// Position, velocity, acceleration at `t` in `[0, big_t]` of the quintic matching `a`, `b`.
fn quintic(a: &[f64; 3], b: &[f64; 3], big_t: f64, t: f64) -> [f64; 3] {
    let ([p0, v0, a0], [p1, v1, a1]) = (*a, *b);
    let (t2, t3) = (big_t * big_t, big_t * big_t * big_t);
    let c3 =
        (20.0 * (p1 - p0) - (8.0 * v1 + 12.0 * v0) * big_t - (3.0 * a0 - a1) * t2) / (2.0 * t3);
    let c4 = (30.0 * (p0 - p1) + (14.0 * v1 + 16.0 * v0) * big_t + (3.0 * a0 - 2.0 * a1) * t2)
        / (2.0 * t3 * big_t);
    let c5 = (12.0 * (p1 - p0) - 6.0 * (v1 + v0) * big_t - (a0 - a1) * t2) / (2.0 * t3 * t2);
    let c = [p0, v0, 0.5 * a0, c3, c4, c5];
    let position = c.iter().rev().fold(0.0, |acc, ci| acc * t + ci);
    let velocity = (1..6).rev().fold(0.0, |acc, i| acc * t + i as f64 * c[i]);
    let accel = (2..6)
        .rev()
        .fold(0.0, |acc, i| acc * t + (i * (i - 1)) as f64 * c[i]);
    [position, velocity, accel]
}

impl Trajectory for MultiPoint {
    fn dof(&self) -> usize {
        self.knots[0].len()
    }
    fn duration(&self) -> f64 {
        self.times[self.times.len() - 1]
    }
    fn knots(&self) -> &[f64] {
        &self.times
    }
    fn sample(&self, t: f64, out: &mut JointReference) {
        let last = self.times.len() - 1;
        let hold = |k: usize, out: &mut JointReference| {
            for (j, knot) in self.knots[k].iter().enumerate() {
                out.q[j] = knot[0];
                out.qd[j] = 0.0;
                out.qdd[j] = 0.0;
            }
        };
        if t < self.times[0] {
            return hold(0, out);
        }
        if t >= self.times[last] {
            return hold(last, out);
        }
        let k = self.times.partition_point(|&tk| tk <= t) - 1;
        let big_t = self.times[k + 1] - self.times[k];
        for j in 0..self.knots[k].len() {
            let [p, v, a] = quintic(
                &self.knots[k][j],
                &self.knots[k + 1][j],
                big_t,
                t - self.times[k],
            );
            out.q[j] = p;
            out.qd[j] = v;
            out.qdd[j] = a;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(time: f64, q: f64) -> TrajectoryPoint {
        TrajectoryPoint {
            time,
            positions: vec![q],
            velocities: None,
            accelerations: None,
        }
    }

    #[test]
    fn passes_through_every_point_smoothly() {
        let traj = MultiPoint::new(
            1,
            &[
                point(0.0, 0.0),
                point(1.0, 1.0),
                point(2.5, 2.0),
                point(3.0, -1.0),
            ],
        )
        .unwrap();
        let mut r = JointReference::hold(&[0.0]);
        for (t, q) in [(0.0, 0.0), (1.0, 1.0), (2.5, 2.0), (3.0, -1.0)] {
            traj.sample(t, &mut r);
            assert!((r.q[0] - q).abs() < 1e-12, "at {t}: {}", r.q[0]);
        }
        // Velocity and acceleration are continuous across a knot, and match differences.
        let h = 1e-6;
        for t in [0.7, 1.0 - 1e-9, 1.0 + 1e-9, 2.0] {
            traj.sample(t, &mut r);
            let (q, qd, qdd) = (r.q[0], r.qd[0], r.qdd[0]);
            traj.sample(t + h, &mut r);
            let (qp, qdp) = (r.q[0], r.qd[0]);
            assert!(((qp - q) / h - qd).abs() < 1e-4, "velocity at {t}");
            assert!(((qdp - qd) / h - qdd).abs() < 1e-3, "acceleration at {t}");
        }
        // Interior velocity is the average slope when the slopes agree in sign.
        traj.sample(1.0, &mut r);
        assert!((r.qd[0] - 0.5 * (1.0 + 1.0 / 1.5)).abs() < 1e-12);
        traj.sample(2.5, &mut r);
        assert_eq!(r.qd[0], 0.0);
    }

    #[test]
    fn bad_points_are_named() {
        let e = MultiPoint::new(2, &[point(0.0, 0.0)]).unwrap_err();
        assert!(
            e.to_string().contains("point 0: positions has 1 values"),
            "{e}"
        );
        let e = MultiPoint::new(1, &[point(1.0, 0.0), point(0.5, 1.0)]).unwrap_err();
        assert!(e.to_string().contains("point 1"), "{e}");
        assert!(MultiPoint::new(1, &[]).is_err());
    }
}
