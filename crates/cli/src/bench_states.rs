//! Joint states for benchmarks: reproducible random states within a robot's limits, and a
//! smooth periodic path through them.

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
                .map(|j| j.limits.position_at(unit()))
                .collect();
            let qd = (0..robot.dof()).map(|_| 4.0 * unit() - 2.0).collect();
            let qdd = (0..robot.dof()).map(|_| 10.0 * unit() - 5.0).collect();
            State { q, qd, qdd }
        })
        .collect()
}

/// `count` samples, `dt` apart, of one period of a smooth path: every joint swings about the
/// middle of its limits (0 for a continuous joint) by 0.4 rad or a third of its range,
/// whichever is smaller, each with its own phase, so the path closes on itself.
pub(crate) fn periodic_path(robot: &Robot, count: usize, dt: f64) -> Vec<State> {
    let omega = 2.0 * std::f64::consts::PI / (count as f64 * dt);
    let swings: Vec<(f64, f64, f64)> = robot
        .joints()
        .iter()
        .enumerate()
        .map(|(j, joint)| {
            let (lo, hi) = joint.limits.within_half_turn();
            let amplitude = (0.4f64).min((hi - lo) / 3.0);
            (0.5 * (lo + hi), amplitude, 0.9 * j as f64)
        })
        .collect();
    (0..count)
        .map(|k| {
            let t = k as f64 * dt;
            let angle = |&(_, _, phase): &(f64, f64, f64)| omega * t + phase;
            let q = swings.iter().map(|s| s.0 + s.1 * angle(s).sin()).collect();
            let qd = swings
                .iter()
                .map(|s| s.1 * omega * angle(s).cos())
                .collect();
            let qdd = swings
                .iter()
                .map(|s| -s.1 * omega * omega * angle(s).sin())
                .collect();
            State { q, qd, qdd }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_is_smooth_closes_on_itself_and_stays_within_the_limits() {
        let robot = armctl_model::test_support::bundled_robot("panda.urdf");
        let dt = 1e-3;
        let path = periodic_path(&robot, 2048, dt);
        for (k, state) in path.iter().enumerate() {
            let next = &path[(k + 1) % path.len()];
            for (j, joint) in robot.joints().iter().enumerate() {
                assert!(joint.limits.lower <= state.q[j] && state.q[j] <= joint.limits.upper);
                // Central difference of q against qd, across the wrap too.
                let slope = (next.q[j] - state.q[j]) / dt;
                let mean = 0.5 * (next.qd[j] + state.qd[j]);
                assert!((slope - mean).abs() < 1e-5, "joint {j} at {k}");
                let slope = (next.qd[j] - state.qd[j]) / dt;
                let mean = 0.5 * (next.qdd[j] + state.qdd[j]);
                assert!((slope - mean).abs() < 1e-4, "joint {j} at {k}");
            }
        }
    }
}
