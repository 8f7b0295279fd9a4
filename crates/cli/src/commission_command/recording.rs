//! What a commissioning run records: flat buffers sized before the run (the loop appends
//! within their capacity, allocating nothing), turned into a [`JointLog`] and the references
//! when it ends.

use armctl_ident::JointLog;

/// The samples of a run while it runs, the URDF's joint order.
pub(crate) struct Recorder {
    n: usize,
    time: Vec<f64>,
    position: Vec<f64>,
    velocity: Vec<f64>,
    effort: Vec<f64>,
    reference: Vec<f64>,
}

impl Recorder {
    /// Buffers for `samples` samples of `n` joints.
    pub(crate) fn new(n: usize, samples: usize) -> Self {
        let buffer = || Vec::with_capacity(n * samples);
        Self {
            n,
            time: Vec::with_capacity(samples),
            position: buffer(),
            velocity: buffer(),
            effort: buffer(),
            reference: buffer(),
        }
    }

    /// One sample: `pick(j)` gives joint `j`'s position, velocity and measured effort. A
    /// state no later than the last (sent twice) is not recorded again.
    pub(crate) fn push(&mut self, t: f64, pick: impl Fn(usize) -> [f64; 3], reference: &[f64]) {
        if self.time.last().is_some_and(|last| t <= *last) {
            return;
        }
        self.time.push(t);
        // The effort a state reports is the one applied over the period that led to it: it
        // belongs to the previous sample (whose period it is), and stands in for this one's
        // until the next state reports it.
        let previous = self.effort.len().saturating_sub(self.n);
        for j in 0..self.n {
            let [q, qd, effort] = pick(j);
            self.position.push(q);
            self.velocity.push(qd);
            if let Some(last) = self.effort.get_mut(previous + j) {
                *last = effort;
            }
            self.effort.push(effort);
        }
        self.reference.extend_from_slice(reference);
    }

    /// Drops what was recorded (a hold that records nothing keeps its buffers).
    pub(crate) fn forget(&mut self) {
        for buffer in [
            &mut self.time,
            &mut self.position,
            &mut self.velocity,
            &mut self.effort,
            &mut self.reference,
        ] {
            buffer.clear();
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.time.len()
    }

    /// The newest sample's largest tracking error: the joint and the error.
    pub(crate) fn error_now(&self) -> (usize, f64) {
        let start = self.position.len().saturating_sub(self.n);
        largest_error(&self.position[start..], &self.reference[start..])
    }

    /// The recording, `tracked` of its samples before any brake.
    pub(crate) fn finish(self, joint_names: Vec<String>, tracked: usize) -> Recording {
        let rows = |flat: &[f64]| flat.chunks(self.n.max(1)).map(<[f64]>::to_vec).collect();
        Recording {
            log: JointLog {
                joint_names,
                time: self.time.clone(),
                position: rows(&self.position),
                velocity: Some(rows(&self.velocity)),
                acceleration: None,
                effort: rows(&self.effort),
            },
            reference: rows(&self.reference),
            tracked,
            stop: None,
            braked: None,
            events: vec![],
            slowest: None,
        }
    }
}

/// The joint with the largest `|reference - position|` and that error.
fn largest_error(position: &[f64], reference: &[f64]) -> (usize, f64) {
    let n = position.len();
    position
        .iter()
        .zip(reference)
        .map(|(q, r)| (r - q).abs())
        .enumerate()
        .fold(
            (0, 0.0),
            |w, (k, e)| if e > w.1 { (k % n.max(1), e) } else { w },
        )
}

/// What a run recorded.
#[derive(Debug, Clone)]
pub(crate) struct Recording {
    /// Measured positions, velocities and efforts, the URDF's joint order.
    pub(crate) log: JointLog,
    /// The reference positions at each sample.
    pub(crate) reference: Vec<Vec<f64>>,
    /// The samples recorded while following, before the brake that ends every run.
    pub(crate) tracked: usize,
    /// Why the run stopped early, if it did.
    pub(crate) stop: Option<String>,
    /// Whether the brake at the end brought the arm to rest, and its largest speed then.
    pub(crate) braked: Option<(bool, f64)>,
    /// What the protections reported, with times.
    pub(crate) events: Vec<String>,
    /// The slowest rate the trajectory was run at, and when (none: never slowed).
    pub(crate) slowest: Option<(f64, f64)>,
}

impl Recording {
    /// The largest tracking error while following: the joint and the error.
    pub(crate) fn largest_error(&self) -> (usize, f64) {
        let pairs = self
            .reference
            .iter()
            .zip(&self.log.position)
            .take(self.tracked);
        pairs
            .map(|(r, q)| largest_error(q, r))
            .fold((0, 0.0), |w, e| if e.1 > w.1 { e } else { w })
    }

    /// RMS tracking error per joint while following (NaN for a run that followed nothing).
    pub(crate) fn tracking_rms(&self) -> Vec<f64> {
        let samples = self.tracked as f64;
        (0..self.log.joint_names.len())
            .map(|j| {
                let pairs = self
                    .reference
                    .iter()
                    .zip(&self.log.position)
                    .take(self.tracked);
                let sum: f64 = pairs.map(|(r, q)| (r[j] - q[j]).powi(2)).sum();
                (sum / samples).sqrt()
            })
            .collect()
    }

    /// Whether it ran slower than planned somewhere.
    pub(crate) fn was_slowed(&self) -> bool {
        self.slowest.is_some()
    }
}

/// The RMS over joints of per-joint values.
pub(crate) fn rms_over_joints(values: &[f64]) -> f64 {
    (values.iter().map(|x| x * x).sum::<f64>() / values.len().max(1) as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recording_keeps_the_samples_and_tracks_before_the_brake() {
        let mut recorder = Recorder::new(2, 4);
        for k in 0..4 {
            let q = [k as f64, -(k as f64)];
            recorder.push(k as f64 * 0.1, |j| [q[j], 0.0, 1.0], &[0.0, 0.0]);
        }
        assert_eq!(recorder.error_now(), (0, 3.0));
        let recording = recorder.finish(vec!["a".into(), "b".into()], 2);
        assert_eq!(
            recording.log.position,
            vec![
                vec![0.0, 0.0],
                vec![1.0, -1.0],
                vec![2.0, -2.0],
                vec![3.0, -3.0]
            ]
        );
        // Only the two samples before the brake count: errors 0 and 1.
        assert_eq!(recording.largest_error(), (0, 1.0));
        let rms = recording.tracking_rms();
        assert!((rms[0] - 0.5_f64.sqrt()).abs() < 1e-12 && (rms[1] - rms[0]).abs() < 1e-12);
    }
}
