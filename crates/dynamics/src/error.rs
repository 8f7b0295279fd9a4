//! The one error type of the dynamics crate.

use armctl_model::LengthMismatch;
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
    /// What is asked is not done for this arm (named in the reason).
    #[error("{reason}")]
    Unsupported {
        /// What and why.
        reason: String,
    },
    /// A least-squares problem could not be solved.
    #[error("numerical failure: {reason}")]
    Numerical {
        /// What failed.
        reason: String,
    },
}

impl From<LengthMismatch> for DynamicsError {
    fn from(e: LengthMismatch) -> Self {
        DynamicsError::Dimension {
            what: e.what,
            expected: e.expected,
            got: e.got,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{rnea, DynamicsWorkspace};
    use armctl_model::{ChainOptions, Robot};

    #[test]
    fn a_wrong_length_is_a_dimension_error_naming_the_argument() {
        let robot = Robot::from_urdf_file(
            concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/planar_2link.urdf"),
            &ChainOptions::default(),
        )
        .unwrap();
        let mut ws = DynamicsWorkspace::new(&robot);
        let mut tau = [0.0; 2];
        assert_eq!(
            rnea(&robot, &mut ws, &[0.0; 2], &[0.0; 3], &[0.0; 2], &mut tau),
            Err(DynamicsError::Dimension {
                what: "qd",
                expected: 2,
                got: 3
            })
        );
        assert_eq!(
            rnea(
                &robot,
                &mut ws,
                &[0.0; 2],
                &[0.0; 2],
                &[0.0; 2],
                &mut [0.0; 1]
            ),
            Err(DynamicsError::Dimension {
                what: "tau",
                expected: 2,
                got: 1
            })
        );
    }
}
