//! Joint friction from the model: `F(qd) = viscous qd + coulomb sgn(qd)` (docs/theory.md
//! section 2). The sign can be smoothed as `tanh(qd / width)`, which integrators and
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

/// Friction torques `F(qd)` into `out`.
pub fn friction_torques(
    robot: &Robot,
    qd: &[f64],
    sign: CoulombSign,
    out: &mut [f64],
) -> Result<(), DynamicsError> {
    check_length("qd", robot.dof(), qd.len())?;
    check_length("friction", robot.dof(), out.len())?;
    for ((o, joint), &v) in out.iter_mut().zip(robot.joints()).zip(qd) {
        let s = match sign {
            CoulombSign::Exact if v == 0.0 => 0.0,
            CoulombSign::Exact => v.signum(),
            CoulombSign::Smooth { width } => (v / width).tanh(),
        };
        *o = joint.friction.viscous * v + joint.friction.coulomb * s;
    }
    Ok(())
}
