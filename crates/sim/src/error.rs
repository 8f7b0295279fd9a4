//! The one error type of the simulator.

use armctl_control::ControlError;
use armctl_dynamics::DynamicsError;
use armctl_model::{LengthMismatch, ModelError};
use thiserror::Error;

/// What can go wrong while building or stepping the simulator.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum SimError {
    /// A vector has the wrong length.
    #[error("{what}: expected {expected} values, got {got}")]
    Dimension {
        /// The argument.
        what: &'static str,
        /// The robot's joint count.
        expected: usize,
        /// What was given.
        got: usize,
    },
    /// A configuration value is out of range.
    #[error("invalid simulator setting {name}: {reason}")]
    InvalidConfig {
        /// The setting.
        name: &'static str,
        /// Why.
        reason: String,
    },
    /// A command or the state holds NaN or infinity.
    #[error("{what} holds a non-finite value")]
    NonFinite {
        /// "command" or "state".
        what: &'static str,
    },
    /// A moving joint carries no mass or inertia at the start (a link without `<inertial>` and
    /// nothing beyond it): its acceleration would be undefined.
    #[error("joint '{joint}' drives no mass or inertia: give the links it moves an <inertial>")]
    Massless {
        /// The joint.
        joint: String,
    },
    /// The dynamics failed.
    #[error(transparent)]
    Dynamics(#[from] DynamicsError),
    /// Building the simulated robot failed.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The simulated arm left physics behind (a joint faster than 100 times its velocity
    /// limit, a non-finite state, or a mass matrix that lost positive definiteness): usually a
    /// step too large for the damping or stiffness, or gains unstable at this rate.
    #[error("the simulation diverged at t = {time:.4} s: {joint} at {position} rad (m) moving at {velocity} rad/s (m/s)")]
    Diverged {
        /// Simulated time.
        time: f64,
        /// The joint moving fastest against its limit.
        joint: String,
        /// Its position.
        position: f64,
        /// Its velocity.
        velocity: f64,
    },
    /// The controller failed during a closed-loop run. (The cause is the error's source, not
    /// part of its message: a report that prints the chain shows it once.)
    #[error("controller failed at t = {time:.3} s")]
    Controller {
        /// Simulated time.
        time: f64,
        /// The controller's error.
        source: ControlError,
    },
}

impl From<LengthMismatch> for SimError {
    fn from(e: LengthMismatch) -> Self {
        SimError::Dimension {
            what: e.what,
            expected: e.expected,
            got: e.got,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn a_controller_failure_names_its_cause_once_in_the_chain() {
        let error = SimError::Controller {
            time: 0.25,
            source: ControlError::NonFinite {
                what: "joint state",
            },
        };
        let cause = error.source().map(ToString::to_string).unwrap_or_default();
        assert!(cause.contains("joint state"), "{cause}");
        let chain = format!("{error}: {cause}");
        assert_eq!(chain.matches("joint state").count(), 1, "{chain}");
        assert!(error.to_string().contains("t = 0.250 s"));
    }
}
