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
    /// A dynamics computation failed (a wrong size, a singular mass matrix).
    #[error(transparent)]
    Dynamics(#[from] armctl_dynamics::DynamicsError),
    /// An identified model does not fit the robot it is applied to.
    #[error("identified model: {reason}")]
    Model {
        /// What is wrong.
        reason: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn a_dynamics_failure_keeps_its_typed_source() {
        let error = IdentError::from(armctl_dynamics::DynamicsError::SingularMassMatrix);
        assert!(matches!(
            error,
            IdentError::Dynamics(armctl_dynamics::DynamicsError::SingularMassMatrix)
        ));
        // Shown once: the message is the cause's own, not the cause repeated after ours.
        let cause = armctl_dynamics::DynamicsError::SingularMassMatrix.to_string();
        assert_eq!(error.to_string(), cause);
        assert!(error.source().is_none_or(|s| s.to_string() != cause));
    }
}
