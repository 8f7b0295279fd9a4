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

impl From<LengthMismatch> for SimError {
    fn from(e: LengthMismatch) -> Self {
        SimError::Dimension {
            what: e.what,
            expected: e.expected,
            got: e.got,
        }
    }
}
