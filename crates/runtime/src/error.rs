//! The one error type of the runtime.

use thiserror::Error;

/// What can go wrong configuring or running a controller outside any middleware.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// The command line is malformed.
    #[error("command line: {reason}")]
    Arguments {
        /// What is wrong.
        reason: String,
    },
    /// A parameter file could not be read or parsed.
    #[error("parameter file '{path}': {reason}")]
    ParamsFile {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// A parameter is unknown, of the wrong type, out of range, or read-only.
    #[error("parameter '{name}': {reason}")]
    Parameter {
        /// The parameter.
        name: String,
        /// Why it was rejected.
        reason: String,
    },
    /// A reference (trajectory or target) was refused.
    #[error("reference refused: {reason}")]
    Reference {
        /// Why.
        reason: String,
    },
    /// A scene file could not be read or parsed (a misspelled key, a wrong type).
    #[error("scene file '{path}': {reason}")]
    SceneFile {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// A simulator scene is invalid (an obstacle, a contact point, the sensor).
    #[error("scene: {reason}")]
    Scene {
        /// What is wrong, naming the item.
        reason: String,
    },
    /// The robot model could not be built.
    #[error("robot model: {0}")]
    Model(#[from] armctl_model::ModelError),
}

impl From<armctl_sim::scene_file::SceneFileError> for RuntimeError {
    fn from(e: armctl_sim::scene_file::SceneFileError) -> Self {
        use armctl_sim::scene_file::SceneFileError;
        match e {
            SceneFileError::File { path, reason } => Self::SceneFile { path, reason },
            SceneFileError::Scene { reason } => Self::Scene { reason },
        }
    }
}

/// A refusal of the parameter `name`, saying why.
pub(crate) fn invalid(name: &str, reason: String) -> RuntimeError {
    RuntimeError::Parameter {
        name: name.into(),
        reason,
    }
}

/// A law's refusal of its parameter `name`, worded as the node's own refusals are
/// (`parameter 'kp': needs 7 values ...`).
pub(crate) fn law_refusal(name: &str, e: armctl_control::ControlError) -> RuntimeError {
    let reason = match e {
        armctl_control::ControlError::InvalidParameter { reason, .. } => reason,
        other => other.to_string(),
    };
    RuntimeError::Parameter {
        name: armctl_control::shown(name),
        reason,
    }
}

/// A parameter the law declares but holds no value of (cannot happen: every declared
/// parameter has its default), refused rather than answered with a made-up value.
pub(crate) fn not_held(name: &str) -> String {
    format!(
        "parameter '{}': the law holds no value of it",
        armctl_control::shown(name)
    )
}

#[cfg(test)]
mod tests {
    use super::RuntimeError;
    use armctl_sim::scene_file::SceneFileError;

    /// sim_node reports a scene file it cannot parse as a scene file, not a parameter file.
    #[test]
    fn a_scene_file_error_stays_a_scene_file_error() {
        let e = RuntimeError::from(SceneFileError::File {
            path: "table.yaml".into(),
            reason: "unknown field `stifness`".into(),
        });
        assert_eq!(
            e.to_string(),
            "scene file 'table.yaml': unknown field `stifness`"
        );
    }
}
