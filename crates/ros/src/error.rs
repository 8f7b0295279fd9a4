//! The one error type of the ROS layer.

use armctl_runtime::RuntimeError;
use thiserror::Error;

/// What can go wrong starting or running a node.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum RosError {
    /// The node's configuration was refused (arguments, parameters, model, references).
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// The middleware failed.
    #[error("middleware: {reason}")]
    Transport {
        /// What failed.
        reason: String,
    },
    /// The simulation diverged (sim_node).
    #[error("simulation: {reason}")]
    Simulation {
        /// What happened, naming the joint.
        reason: String,
    },
    /// A rosbag2 file could not be read or written.
    #[error("rosbag2 file '{path}': {reason}")]
    Bag {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_configuration_keeps_its_typed_cause() {
        let refused = RuntimeError::Parameter {
            name: "kp".into(),
            reason: "needs 7 values".into(),
        };
        let error = RosError::from(refused.clone());
        assert_eq!(error, RosError::Runtime(refused.clone()));
        assert_eq!(
            error.to_string(),
            refused.to_string(),
            "shown once, as it is"
        );
    }
}
