//! The configurations gains are sized and checked at: the middle of the joints' ranges, the
//! zero configuration and pseudo-random ones from a fixed seed, and the control rate they are
//! sized for.

use armctl_model::Robot;

/// Control rate the defaults are sized for, Hz (the simulator's, and most torque-controlled
/// arms'). At a lower rate, scale the damping down with the rate.
pub const DESIGN_RATE: f64 = 1000.0;

/// Random configurations sampled besides the middle and the zero configuration.
const SAMPLES: usize = 24;

/// The configurations the bounds are taken over (and user gains checked at).
pub(crate) fn samples(robot: &Robot) -> Vec<Vec<f64>> {
    let middle = Configurations::middle(robot);
    let zero = robot
        .joints()
        .iter()
        .map(|j| 0.0_f64.clamp(j.limits.lower, j.limits.upper))
        .collect();
    let mut random = Configurations::new(0x5EED_0FDE_u64);
    let mut all = vec![middle, zero];
    all.extend((0..SAMPLES).map(|_| random.next(robot)));
    all
}

/// Pseudo-random configurations within the joint limits (within +-pi for unlimited joints),
/// from a fixed seed (xorshift): the same sequence on every run.
#[derive(Debug, Clone)]
pub(crate) struct Configurations {
    seed: u64,
}

impl Configurations {
    pub(crate) fn new(seed: u64) -> Self {
        Self { seed }
    }

    fn unit(&mut self) -> f64 {
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        (self.seed >> 11) as f64 / (1u64 << 53) as f64
    }

    /// The middle of each joint's clipped range.
    pub(crate) fn middle(robot: &Robot) -> Vec<f64> {
        robot
            .joints()
            .iter()
            .map(|j| {
                let (lo, hi) = j.limits.within_half_turn();
                0.5 * (lo + hi)
            })
            .collect()
    }

    /// The next configuration.
    pub(crate) fn next(&mut self, robot: &Robot) -> Vec<f64> {
        robot
            .joints()
            .iter()
            .map(|j| j.limits.position_at(self.unit()))
            .collect()
    }
}
