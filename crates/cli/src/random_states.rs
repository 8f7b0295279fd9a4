//! Reproducible random joint states within a robot's limits, for benchmarks.

use armctl_model::Robot;

/// A joint state `(q, qd, qdd)`.
pub(crate) struct State {
    pub(crate) q: Vec<f64>,
    pub(crate) qd: Vec<f64>,
    pub(crate) qdd: Vec<f64>,
}

/// `count` states: q uniform within the position limits (within +-pi for continuous joints),
/// qd and qdd uniform in +-2 rad/s and +-5 rad/s^2. Same seed, same states.
pub(crate) fn random_states(robot: &Robot, count: usize, seed: u64) -> Vec<State> {
    let mut x = seed | 1;
    let mut unit = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..count)
        .map(|_| {
            let q = robot
                .joints()
                .iter()
                .map(|j| {
                    let lo = j.limits.lower.max(-std::f64::consts::PI);
                    let hi = j.limits.upper.min(std::f64::consts::PI);
                    lo + (hi - lo) * unit()
                })
                .collect();
            let qd = (0..robot.dof()).map(|_| 4.0 * unit() - 2.0).collect();
            let qdd = (0..robot.dof()).map(|_| 10.0 * unit() - 5.0).collect();
            State { q, qd, qdd }
        })
        .collect()
}
