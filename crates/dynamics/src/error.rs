//! The one error type of the dynamics crate.

use thiserror::Error;

/// What can go wrong when calling a dynamics algorithm.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum DynamicsError {
    /// An input or output has the wrong size.
    #[error("{what}: expected size {expected}, got {got}")]
    Dimension {
        /// The argument.
        what: &'static str,
        /// The size the robot needs.
        expected: usize,
        /// The size given.
        got: usize,
    },
    /// The mass matrix is not positive definite (a link without mass or inertia on an axis).
    #[error("the mass matrix is not positive definite: a joint drives no mass or inertia")]
    SingularMassMatrix,
    /// A least-squares problem could not be solved.
    #[error("numerical failure: {reason}")]
    Numerical {
        /// What failed.
        reason: String,
    },
}

/// Checks a length.
pub(crate) fn check(what: &'static str, expected: usize, got: usize) -> Result<(), DynamicsError> {
    if expected == got {
        Ok(())
    } else {
        Err(DynamicsError::Dimension {
            what,
            expected,
            got,
        })
    }
}
