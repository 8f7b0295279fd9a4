//! The one error type of the identification crate.

use thiserror::Error;

/// What can go wrong identifying a model.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum IdentError {
    /// A log could not be read, or holds something unusable.
    #[error("log {path}: {reason}")]
    Log {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The data do not determine the parameters.
    #[error("identification: {reason}")]
    Identification {
        /// What is wrong.
        reason: String,
    },
    /// An identified model does not fit the robot it is applied to.
    #[error("identified model: {reason}")]
    Model {
        /// What is wrong.
        reason: String,
    },
}

impl From<armctl_dynamics::DynamicsError> for IdentError {
    fn from(e: armctl_dynamics::DynamicsError) -> Self {
        IdentError::Identification {
            reason: e.to_string(),
        }
    }
}
