//! Joint friction from the model: `F(q, qd) = viscous qd + coulomb(q) sgn(qd) + offset |sgn(qd)|`,
//! the Coulomb level rippling over the position on a geared joint and sliding one way harder
//! than the other by its offset (docs/theory.md section 2). The sign can be smoothed as `tanh(qd / width)`, which integrators and
//! identification prefer to a jump at zero velocity.

use armctl_model::{check_length, Robot};

use crate::DynamicsError;

/// How the Coulomb term treats the sign of the velocity.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum CoulombSign {
    /// `sgn(qd)`, zero at zero velocity.
    #[default]
    Exact,
    /// `tanh(qd / width)`, width in rad/s or m/s.
    Smooth {
        /// Velocity over which the sign goes from -1 to 1.
        width: f64,
    },
}

/// Friction torques `F(q, qd) = viscous qd + coulomb(q) sgn(qd) + offset |sgn(qd)|` into `out`
/// (the sliding part: [`armctl_model::Friction::sliding`]).
pub fn friction_torques(
    robot: &Robot,
    q: &[f64],
    qd: &[f64],
    sign: CoulombSign,
    out: &mut [f64],
) -> Result<(), DynamicsError> {
    check_length("q", robot.dof(), q.len())?;
    check_length("qd", robot.dof(), qd.len())?;
    check_length("friction", robot.dof(), out.len())?;
    for (((o, joint), &v), &position) in out.iter_mut().zip(robot.joints()).zip(qd).zip(q) {
        *o = joint.friction.viscous * v + joint.friction.sliding(position, sign.of(v));
    }
    Ok(())
}

impl CoulombSign {
    /// The sign of velocity `v` as this rule has it.
    pub fn of(self, v: f64) -> f64 {
        match self {
            CoulombSign::Exact if v == 0.0 => 0.0,
            CoulombSign::Exact => v.signum(),
            CoulombSign::Smooth { width } => (v / width).tanh(),
        }
    }
}
