//! The poses the arm rests in and the external torque estimate there, collected as the loop
//! runs, for an online payload estimate (`estimate_payload`): at rest the observer's residual
//! is minus the weight the model leaves out, `-Y(q) [m, m c]` for a payload at the tip.
//!
//! A joint is at rest when its velocity, low-pass filtered against noise, stays under
//! [`REST_SPEED`]: a joint creeping against friction under a load its gains do not hold
//! still counts (the observer's residual accounts for the motion; the friction it holds is in
//! the estimate's uncertainty). A pose counts once the residual has settled (five of the observer's
//! time constants after the rest began or the estimate started over) and has been averaged
//! for [`MIN_REST_TIME`]. The newest [`MAX_POSES`] poses are kept, in buffers allocated up
//! front: collecting allocates nothing.

use armctl_ident::payload_estimation::RestSample;

/// Below this filtered speed a joint is at rest, rad/s (m/s): ten times what a log's rest needs
/// (`armctl identify --payload`, which has no observer), as a light wrist under an unmodelled
/// tool creeps at 2e-3 rad/s against its friction.
pub(crate) const REST_SPEED: f64 = 5e-3;

/// Poses kept; a newer one replaces the oldest.
pub const MAX_POSES: usize = 32;

/// Seconds of rest, after the residual settled, that make a pose.
pub const MIN_REST_TIME: f64 = 0.2;

/// Time constant of the velocity filter that tells rest from noise, s (about the 50-sample
/// window of `armctl identify --payload` at 1 kHz).
const VELOCITY_TIME_CONSTANT: f64 = 0.05;

/// Observer time constants the residual is given to settle.
const SETTLING_TIME_CONSTANTS: f64 = 5.0;

/// The poses at rest so far and the one under way.
#[derive(Debug, Clone)]
pub(crate) struct RestPoses {
    n: usize,
    /// Seconds the residual needs to settle: [`SETTLING_TIME_CONSTANTS`] / the observer's gain.
    settling: f64,
    /// The filtered velocity; none until a state came.
    smoothed: Vec<f64>,
    primed: bool,
    /// Seconds still to wait before the rest under way counts.
    waiting: f64,
    /// Sums over the rest under way.
    run_q: Vec<f64>,
    run_r: Vec<f64>,
    run_samples: usize,
    run_time: f64,
    /// Mean pose and residual of each kept pose, `MAX_POSES` rows of `n`, a ring.
    q: Vec<f64>,
    r: Vec<f64>,
    kept: usize,
    next: usize,
}

impl RestPoses {
    /// For `n` joints and an observer of `gain` (1/s).
    pub(crate) fn new(n: usize, gain: f64) -> Self {
        let settling = SETTLING_TIME_CONSTANTS / gain;
        Self {
            n,
            settling,
            smoothed: vec![0.0; n],
            primed: false,
            waiting: settling,
            run_q: vec![0.0; n],
            run_r: vec![0.0; n],
            run_samples: 0,
            run_time: 0.0,
            q: vec![0.0; n * MAX_POSES],
            r: vec![0.0; n * MAX_POSES],
            kept: 0,
            next: 0,
        }
    }

    /// The observer's gain changed (1/s): the residual settles at the new pace.
    pub(crate) fn set_gain(&mut self, gain: f64) {
        self.settling = SETTLING_TIME_CONSTANTS / gain;
        self.restart();
    }

    /// The estimate started over: the rest under way counts if it was long enough, and the
    /// next waits for the residual to settle again.
    pub(crate) fn restart(&mut self) {
        self.end_rest();
        self.primed = false;
    }

    /// Forgets every pose (the model the residual is taken against changed).
    pub(crate) fn forget(&mut self) {
        self.kept = 0;
        self.next = 0;
        self.clear_run();
        self.primed = false;
    }

    /// A state `(q, qd)` observed `dt` after the last, with the residual `r` it gave.
    pub(crate) fn observe(&mut self, (q, qd): (&[f64], &[f64]), r: &[f64], dt: f64) {
        if !self.primed {
            self.smoothed.copy_from_slice(qd);
            self.primed = true;
        } else {
            let a = dt / (VELOCITY_TIME_CONSTANT + dt);
            for (s, v) in self.smoothed.iter_mut().zip(qd) {
                *s += a * (v - *s);
            }
        }
        let at_rest = self.smoothed.iter().all(|v| v.abs() < REST_SPEED);
        if !at_rest {
            self.end_rest();
            return;
        }
        if self.waiting > 0.0 {
            self.waiting -= dt;
            return;
        }
        for ((sq, sr), (q, r)) in self
            .run_q
            .iter_mut()
            .zip(&mut self.run_r)
            .zip(q.iter().zip(r))
        {
            *sq += q;
            *sr += r;
        }
        self.run_samples += 1;
        self.run_time += dt;
    }

    /// The poses kept and the rest under way if long enough, each with the mean residual in
    /// place of what the model leaves unexplained (allocates: not for the loop).
    pub(crate) fn samples(&self) -> Vec<RestSample> {
        let n = self.n;
        let mut samples: Vec<RestSample> = (0..self.kept)
            .map(|k| RestSample {
                q: self.q[k * n..(k + 1) * n].to_vec(),
                unexplained: self.r[k * n..(k + 1) * n].to_vec(),
            })
            .collect();
        if self.run_time >= MIN_REST_TIME {
            let count = self.run_samples as f64;
            samples.push(RestSample {
                q: self.run_q.iter().map(|s| s / count).collect(),
                unexplained: self.run_r.iter().map(|s| s / count).collect(),
            });
        }
        samples
    }

    /// The rest under way ended: kept if long enough.
    fn end_rest(&mut self) {
        if self.run_time >= MIN_REST_TIME {
            let (n, row) = (self.n, self.next);
            let count = self.run_samples as f64;
            for i in 0..n {
                self.q[row * n + i] = self.run_q[i] / count;
                self.r[row * n + i] = self.run_r[i] / count;
            }
            self.next = (row + 1) % MAX_POSES;
            self.kept = (self.kept + 1).min(MAX_POSES);
        }
        self.clear_run();
    }

    fn clear_run(&mut self) {
        self.run_q.fill(0.0);
        self.run_r.fill(0.0);
        self.run_samples = 0;
        self.run_time = 0.0;
        self.waiting = self.settling;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rest(poses: &mut RestPoses, q: &[f64], r: &[f64], seconds: f64) {
        let zeros = vec![0.0; q.len()];
        for _ in 0..(seconds / 1e-3).round() as usize {
            poses.observe((q, &zeros), r, 1e-3);
        }
    }

    fn moving(poses: &mut RestPoses, n: usize) {
        let (q, qd) = (vec![0.0; n], vec![0.1; n]);
        for _ in 0..100 {
            poses.observe((&q, &qd), &q, 1e-3);
        }
    }

    /// A rest counts after the residual settled (0.1 s at a gain of 50) and 0.2 s of it;
    /// its mean is what was observed at rest, and motion ends it.
    #[test]
    fn a_rest_long_enough_is_a_pose_with_its_mean_residual() {
        let mut poses = RestPoses::new(2, 50.0);
        rest(&mut poses, &[0.1, 0.2], &[1.0, -2.0], 0.29);
        assert!(poses.samples().is_empty(), "0.19 s after settling");
        rest(&mut poses, &[0.1, 0.2], &[1.0, -2.0], 0.02);
        let samples = poses.samples();
        assert_eq!(samples.len(), 1, "the rest under way counts");
        assert!((samples[0].q[0] - 0.1).abs() + (samples[0].q[1] - 0.2).abs() < 1e-12);
        assert!((samples[0].unexplained[1] + 2.0).abs() < 1e-12);
        moving(&mut poses, 2);
        rest(&mut poses, &[0.3, 0.4], &[3.0, 4.0], 0.1);
        assert_eq!(poses.samples().len(), 1, "kept; the new rest still settles");
    }

    /// Noise about zero velocity is rest; a drift above the rest speed is not.
    #[test]
    fn filtered_noise_is_rest_and_a_drift_is_not() {
        let mut poses = RestPoses::new(1, 50.0);
        for k in 0..1000 {
            let noise = if k % 2 == 0 { 2e-3 } else { -2e-3 };
            poses.observe((&[0.0], &[noise]), &[1.0], 1e-3);
        }
        assert_eq!(poses.samples().len(), 1);
        poses.forget();
        for _ in 0..1000 {
            poses.observe((&[0.0], &[2.0 * REST_SPEED]), &[1.0], 1e-3);
        }
        assert!(poses.samples().is_empty());
    }

    /// The newest poses are kept; a restart keeps what was collected; forgetting clears it.
    #[test]
    fn the_newest_poses_are_kept() {
        let mut poses = RestPoses::new(1, 50.0);
        for k in 0..MAX_POSES + 3 {
            rest(&mut poses, &[k as f64], &[0.0], 0.8);
            moving(&mut poses, 1);
        }
        let samples = poses.samples();
        assert_eq!(samples.len(), MAX_POSES);
        // (The first steps of a move, before the filtered speed passes the rest speed, join
        // the rest before it: its mean pose moves by a fraction of a percent.)
        assert!(samples.iter().all(|s| s.q[0] >= 2.9));
        rest(&mut poses, &[-1.0], &[0.0], 0.8);
        poses.restart();
        assert_eq!(
            poses.samples().len(),
            MAX_POSES,
            "the rest before the restart"
        );
        poses.forget();
        assert!(poses.samples().is_empty());
    }
}
