//! Parameters from ROS 2 parameter files, read as controller_node reads them
//! (`controller_node`, `/**/controller_node`, `/**`, ... : `ros__parameters:`), or from plain
//! mappings `{kp: [..], kd: [..]}`: the start values of a [`armctl_runtime`] controller.

use std::path::Path;

use anyhow::{bail, Context, Result};
use armctl_control::ParameterValue;
use armctl_runtime::params_file::{parameters_for_node, value_from_yaml};
use serde_yaml::Value;

fn is_ros_file(root: &Value) -> bool {
    fn has_parameters(v: &Value) -> bool {
        v.get("ros__parameters").is_some()
            || v.as_mapping()
                .is_some_and(|m| m.values().any(has_parameters))
    }
    root.as_mapping()
        .is_some_and(|m| m.values().any(has_parameters))
}

/// The `(name, value)` pairs of a file, in file order.
fn parameters(path: &Path, text: &str) -> Result<Vec<(String, ParameterValue)>> {
    let root: Value = serde_yaml::from_str(text)
        .with_context(|| format!("parsing parameters {}", path.display()))?;
    let shown = path.display().to_string();
    if is_ros_file(&root) {
        return Ok(parameters_for_node(text, &shown, "/", "controller_node")?);
    }
    let Some(map) = root.as_mapping() else {
        bail!("{shown}: expected a mapping of parameters");
    };
    map.iter()
        .map(|(key, value)| {
            let name = key
                .as_str()
                .with_context(|| format!("{shown}: parameter names must be strings"))?;
            Ok((name.to_string(), value_from_yaml(name, value)?))
        })
        .collect()
}

/// The `(name, value)` pairs of every file, in order (later files win when they are applied
/// in this order).
pub(crate) fn values(paths: &[std::path::PathBuf]) -> Result<Vec<(String, ParameterValue)>> {
    let mut values = Vec::new();
    for path in paths {
        let text = crate::input_file::read_text(
            path,
            "parameters",
            armctl_model::files::MAX_CONFIG_BYTES,
        )?;
        values.extend(parameters(path, &text)?);
    }
    Ok(values)
}
