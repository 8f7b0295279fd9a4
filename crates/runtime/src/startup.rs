//! What both nodes do before they run: resolve the node's name and namespace, gather the
//! parameter values (parameter files in order, then `-p` overrides), check each against its
//! declaration, and build the robot model.

use armctl_control::ParameterValue;
use armctl_model::{
    urdf_file_to_robot, urdf_to_robot, BranchPolicy, ChainOptions, Conversion, Robot,
};

use crate::declarations::RobotSettings;
use crate::node_parameters::ParameterStore;
use crate::params_file::{parameters_for_node, value_from_text};
use crate::ros_args::{for_node, normalize_namespace, RosArgs};
use crate::RuntimeError;

/// A node's identity and raw parameter values, before they are checked.
#[derive(Debug, Clone)]
pub struct NodeStart {
    /// Node name.
    pub name: String,
    /// Namespace.
    pub namespace: String,
    /// Remappings.
    pub remaps: Vec<(String, String)>,
    /// Values from files and overrides, in order (later wins).
    pub values: Vec<(String, ParameterValue)>,
}

impl NodeStart {
    /// From the command line; reads every `--params-file`.
    pub fn new(args: &RosArgs, default_name: &str) -> Result<Self, RuntimeError> {
        // Node-prefixed rules name the node as it is called before any renaming.
        let own_remaps = for_node(&args.remaps, default_name);
        let renamed = |rule: &str| {
            own_remaps
                .iter()
                .find(|(f, _)| f == rule)
                .map(|(_, t)| t.clone())
        };
        let name = args
            .node_name
            .clone()
            .or_else(|| renamed("__node"))
            .or_else(|| renamed("__name"))
            .unwrap_or_else(|| default_name.to_string());
        let namespace = match (&args.namespace, renamed("__ns")) {
            (Some(ns), _) => ns.clone(),
            (None, Some(ns)) => normalize_namespace(&ns)?,
            (None, None) => "/".to_string(),
        };
        let mut values = Vec::new();
        for path in &args.params_files {
            let text = armctl_model::files::read_text_bounded(
                std::path::Path::new(path),
                armctl_model::files::MAX_CONFIG_BYTES,
            )
            .map_err(|reason| RuntimeError::ParamsFile {
                path: path.clone(),
                reason,
            })?;
            values.extend(parameters_for_node(&text, path, &namespace, &name)?);
        }
        for (param, text) in for_node(&args.overrides, default_name) {
            values.push((param.clone(), value_from_text(&param, &text)?));
        }
        let remaps = own_remaps
            .into_iter()
            .filter(|(from, _)| !matches!(from.as_str(), "__node" | "__name" | "__ns"))
            .collect();
        Ok(Self {
            name,
            namespace,
            remaps,
            values,
        })
    }

    /// The value given last for `name`, if any.
    pub fn value(&self, name: &str) -> Option<&ParameterValue> {
        self.values
            .iter()
            .rev()
            .find_map(|(given, value)| (given == name).then_some(value))
    }

    /// Whether `robot_description` or `urdf_path` is given (not empty).
    pub fn names_a_robot(&self) -> bool {
        ["robot_description", "urdf_path"].iter().any(|name| {
            matches!(self.value(name), Some(ParameterValue::String(text)) if !text.trim().is_empty())
        })
    }

    /// The `controller` given last, if it is a string.
    pub fn controller(&self) -> Option<&str> {
        match self.value("controller") {
            Some(ParameterValue::String(law)) => Some(law),
            _ => None,
        }
    }

    /// Applies the values `store` declares; returns the names it does not declare.
    pub fn apply(&self, store: &mut ParameterStore) -> Result<Vec<String>, RuntimeError> {
        let mut unknown = Vec::new();
        for (name, value) in &self.values {
            if store.declaration(name).is_some() {
                store.set(name, value, true)?;
            } else if !unknown.contains(name) {
                unknown.push(name.clone());
            }
        }
        Ok(unknown)
    }
}

/// The robot from `robot_description` (URDF text) or `urdf_path`, cut at `base_link`/`tip_link`.
pub fn load_robot(settings: &RobotSettings) -> Result<Robot, RuntimeError> {
    Ok(load_conversion(settings)?.robot)
}

/// As [`load_robot`], with what the conversion noticed (nearly parallel axes, inertias no
/// real body has), for the node to tell the operator.
pub fn load_conversion(settings: &RobotSettings) -> Result<Conversion, RuntimeError> {
    let given = |link: &String| Some(link.clone()).filter(|s| !s.is_empty());
    let options = ChainOptions {
        base_link: given(&settings.base_link),
        tip_link: given(&settings.tip_link),
        branches: BranchPolicy::Lock,
        xacro_args: settings.xacro_args.clone(),
        ..ChainOptions::default()
    };
    let (description, path) = (&settings.robot_description, &settings.urdf_path);
    let robot = if !description.trim().is_empty() {
        urdf_to_robot(description, &options)
    } else if !path.is_empty() {
        urdf_file_to_robot(std::path::Path::new(path), &options)
    } else {
        return Err(RuntimeError::Parameter {
            name: "robot_description".into(),
            reason: "neither robot_description nor urdf_path is set".into(),
        });
    };
    Ok(robot?)
}
