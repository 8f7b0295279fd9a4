//! Controller parameters from a ROS 2 parameter file, read as controller_node would read it
//! (`controller_node`, `/**/controller_node`, `/**`, ... : `ros__parameters:`), or from a plain
//! mapping `{kp: [..], kd: [..]}`. controller_node's own parameters (`update_rate`, ...) are
//! skipped; every other one must be the controller's.

use std::path::Path;

use anyhow::{bail, Context, Result};
use armctl_control::Controller;
use armctl_ros::declarations::{controller_node_declarations, to_controller_value};
use armctl_ros::params_file::{parameters_for_node, RosValue};
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
fn parameters(path: &Path, text: &str) -> Result<Vec<(String, RosValue)>> {
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
            Ok((name.to_string(), RosValue::from_yaml(name, value)?))
        })
        .collect()
}

/// Applies every controller parameter of `path` to `controller`; the first bad one is an error
/// naming it.
pub(crate) fn apply(path: &Path, controller: &mut dyn Controller) -> Result<()> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading parameters {}", path.display()))?;
    let node_parameters = controller_node_declarations();
    for (name, value) in parameters(path, &text)? {
        if node_parameters.iter().any(|d| d.name == name) {
            continue;
        }
        let converted = to_controller_value(&value).with_context(|| {
            format!(
                "{}: {name}: expected a number or a list of numbers",
                path.display()
            )
        })?;
        controller
            .set_parameter(&name, converted)
            .with_context(|| path.display().to_string())?;
    }
    Ok(())
}

/// The identified model the files hold (`model_*` parameters), if any.
pub(crate) fn identified_model(
    paths: &[std::path::PathBuf],
) -> Result<Option<armctl_ident::IdentifiedModel>> {
    let mut values = std::collections::BTreeMap::new();
    for path in paths {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading parameters {}", path.display()))?;
        values.extend(parameters(path, &text)?);
    }
    Ok(armctl_ros::model_parameters::identified_model(|name| {
        values.get(name)
    }))
}
