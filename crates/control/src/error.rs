//! The one error type of the control crate.

use armctl_dynamics::DynamicsError;
use armctl_model::LengthMismatch;
use thiserror::Error;

/// What can go wrong when configuring or running a controller or a reference.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ControlError {
    /// A vector has the wrong length.
    #[error("{what}: expected {expected} values, got {got}")]
    Dimension {
        /// The argument.
        what: String,
        /// The number the robot needs.
        expected: usize,
        /// What was given.
        got: usize,
    },
    /// A parameter value was rejected; the old value is kept.
    #[error("parameter '{name}' rejected: {reason}")]
    InvalidParameter {
        /// The parameter.
        name: String,
        /// Why.
        reason: String,
    },
    /// The controller has no parameter of that name.
    #[error("unknown parameter '{name}' (known: {known})")]
    UnknownParameter {
        /// The name given.
        name: String,
        /// The declared names, comma-separated.
        known: String,
    },
    /// A reference (trajectory) is malformed.
    #[error("invalid reference: {reason}")]
    InvalidReference {
        /// Why.
        reason: String,
    },
    /// The state handed to the controller holds NaN or infinity.
    #[error("{what} holds a non-finite value")]
    NonFinite {
        /// The input.
        what: &'static str,
    },
    /// The model terms failed.
    #[error(transparent)]
    Dynamics(#[from] DynamicsError),
}

impl From<LengthMismatch> for ControlError {
    fn from(e: LengthMismatch) -> Self {
        ControlError::Dimension {
            what: e.what.to_string(),
            expected: e.expected,
            got: e.got,
        }
    }
}
