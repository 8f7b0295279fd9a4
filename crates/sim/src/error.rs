//! The one error type of the simulator.

use armctl_control::ControlError;
use armctl_dynamics::DynamicsError;
use armctl_model::ModelError;
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
    /// The dynamics failed.
    #[error(transparent)]
    Dynamics(#[from] DynamicsError),
    /// Building the simulated robot failed.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The controller failed during a closed-loop run.
    #[error("controller at t = {time:.3} s: {source}")]
    Controller {
        /// Simulated time.
        time: f64,
        /// The controller's error.
        source: ControlError,
    },
}

pub(crate) fn check(what: &'static str, expected: usize, got: usize) -> Result<(), SimError> {
    if expected == got {
        Ok(())
    } else {
        Err(SimError::Dimension {
            what,
            expected,
            got,
        })
    }
}
