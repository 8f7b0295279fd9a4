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
    /// A rosbag2 file could not be read or written.
    #[error("rosbag2 file '{path}': {reason}")]
    Bag {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
}
