//! Controller parameters from a ROS 2 parameter file (`<node>: ros__parameters: {..}`, also
//! `/**:`) or a plain mapping `{kp: [..], kd: [..]}`.

use std::path::Path;

use anyhow::{bail, Context, Result};
use armctl_control::{Controller, ParamValue};
use serde_yaml::Value;

/// Node-level parameters of controller_node: accepted in the file and not the controller's.
const NODE_PARAMETERS: [&str; 12] = [
    "robot_description",
    "urdf_path",
    "base_link",
    "tip_link",
    "joints",
    "controller",
    "update_rate",
    "state_timeout",
    "command_topic",
    "safe_mode",
    "use_sim_time",
    "rate_limit",
];

/// The parameter mapping of a file: the first `ros__parameters` found, else the root.
fn parameter_map(root: &Value) -> Option<&serde_yaml::Mapping> {
    let map = root.as_mapping()?;
    for node in map.values() {
        if let Some(params) = node.get("ros__parameters").and_then(Value::as_mapping) {
            return Some(params);
        }
    }
    Some(map)
}

fn to_value(name: &str, v: &Value) -> Result<ParamValue> {
    match v {
        Value::Number(x) => Ok(ParamValue::Scalar(
            x.as_f64()
                .with_context(|| format!("{name}: not a number"))?,
        )),
        Value::Sequence(items) => Ok(ParamValue::Vector(
            items
                .iter()
                .map(|i| {
                    i.as_f64()
                        .with_context(|| format!("{name}: '{i:?}' is not a number"))
                })
                .collect::<Result<_>>()?,
        )),
        other => bail!("{name}: expected a number or a list of numbers, got {other:?}"),
    }
}

/// Applies every controller parameter of `path` to `controller`; the first bad one is an error
/// naming it.
pub(crate) fn apply(path: &Path, controller: &mut dyn Controller) -> Result<()> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading parameters {}", path.display()))?;
    let root: Value = serde_yaml::from_str(&text)
        .with_context(|| format!("parsing parameters {}", path.display()))?;
    let Some(map) = parameter_map(&root) else {
        bail!("{}: expected a mapping of parameters", path.display());
    };
    for (key, value) in map {
        let name = key
            .as_str()
            .with_context(|| format!("{}: parameter names must be strings", path.display()))?;
        if NODE_PARAMETERS.contains(&name) || name.starts_with(&format!("{}.", "qos")) {
            continue;
        }
        let name = name
            .strip_prefix(&format!("{}.", controller.name()))
            .unwrap_or(name);
        let value = to_value(name, value).with_context(|| path.display().to_string())?;
        controller
            .set_parameter(name, value)
            .with_context(|| path.display().to_string())?;
    }
    Ok(())
}
