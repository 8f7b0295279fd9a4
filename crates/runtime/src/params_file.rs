//! ROS 2 parameter files: `<node>: ros__parameters: {...}` where `<node>` is the node's name,
//! its fully qualified name (`/ns/name`), or a wildcard (`/**`, `/ns/*`); nested mappings are
//! flattened with dots (`gains.kp`). Later files and matches override earlier ones; `-p`
//! overrides come last. Values are `armctl_control`'s [`ParameterValue`]s, typed from YAML here.

use armctl_control::ParameterValue;
use serde_yaml::Value;

use crate::RuntimeError;

/// A parameter value from YAML, typed as `ros2 param` types it (integer lists widened to
/// doubles, an empty list a double array).
pub fn value_from_yaml(name: &str, value: &Value) -> Result<ParameterValue, RuntimeError> {
    let bad = |what: &str| RuntimeError::Parameter {
        name: name.into(),
        reason: what.into(),
    };
    match value {
        Value::Bool(b) => Ok(ParameterValue::Bool(*b)),
        Value::Number(n) if n.is_i64() => {
            Ok(ParameterValue::Integer(n.as_i64().unwrap_or_default()))
        }
        Value::Number(n) => n
            .as_f64()
            .map(ParameterValue::Double)
            .ok_or_else(|| bad("not a number")),
        Value::String(s) => Ok(ParameterValue::String(s.clone())),
        Value::Sequence(items) if items.is_empty() => Ok(ParameterValue::DoubleArray(vec![])),
        Value::Sequence(items) => {
            if items.iter().all(Value::is_bool) {
                Ok(ParameterValue::BoolArray(
                    items.iter().filter_map(Value::as_bool).collect(),
                ))
            } else if items.iter().all(Value::is_number) {
                Ok(ParameterValue::DoubleArray(
                    items.iter().filter_map(Value::as_f64).collect(),
                ))
            } else if items.iter().all(Value::is_string) {
                Ok(ParameterValue::StringArray(
                    items
                        .iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect(),
                ))
            } else {
                Err(bad(
                    "a list must hold only numbers, only strings or only booleans",
                ))
            }
        }
        Value::Null => Err(bad("has no value")),
        _ => Err(bad(
            "unsupported value (mappings are flattened into dotted names)",
        )),
    }
}

/// A parameter value from the text of `-p name:=value` (YAML syntax).
pub fn value_from_text(name: &str, text: &str) -> Result<ParameterValue, RuntimeError> {
    let value: Value = serde_yaml::from_str(text).map_err(|e| RuntimeError::Parameter {
        name: name.into(),
        reason: format!("'{text}': {e}"),
    })?;
    value_from_yaml(name, &value)
}

/// Whether the file key `pattern` selects the node `/ns/name` (`ns` "/" for the root), as
/// rclcpp decides: a key without a leading `/` gets one (so `controller_node` means the node in
/// the root namespace only); `*` stands for one name, `**` for any number of them.
pub fn node_matches(pattern: &str, namespace: &str, name: &str) -> bool {
    let full = if namespace == "/" {
        format!("/{name}")
    } else {
        format!("{namespace}/{name}")
    };
    let pattern = pattern.strip_prefix('/').unwrap_or(pattern);
    glob(
        &pattern.split('/').collect::<Vec<_>>(),
        &full.split('/').skip(1).collect::<Vec<_>>(),
    )
}

fn glob(pattern: &[&str], name: &[&str]) -> bool {
    match (pattern.first(), name.first()) {
        (None, None) => true,
        (Some(&"**"), _) => {
            glob(&pattern[1..], name) || (!name.is_empty() && glob(pattern, &name[1..]))
        }
        (Some(p), Some(n)) if *p == "*" || p == n => glob(&pattern[1..], &name[1..]),
        _ => false,
    }
}

/// Every `(node key, parameters)` of a file: keys may nest (`arm1: controller_node:
/// ros__parameters:` is the node `arm1/controller_node`), as rcl's parser allows.
fn nodes<'a>(
    prefix: &str,
    map: &'a serde_yaml::Mapping,
    out: &mut Vec<(String, &'a Value)>,
) -> Result<(), String> {
    for (key, body) in map {
        let key = key.as_str().ok_or("node names must be strings")?;
        let node = if prefix.is_empty() {
            key.to_string()
        } else {
            format!("{prefix}/{}", key.trim_start_matches('/'))
        };
        match body.get("ros__parameters") {
            Some(params) => out.push((node, params)),
            None => match body.as_mapping() {
                Some(inner) if !inner.is_empty() => nodes(&node, inner, out)?,
                _ => return Err(format!("'{node}' has no ros__parameters")),
            },
        }
    }
    Ok(())
}

fn flatten(
    prefix: &str,
    value: &Value,
    out: &mut Vec<(String, ParameterValue)>,
) -> Result<(), RuntimeError> {
    match value {
        Value::Mapping(map) => {
            for (key, v) in map {
                let key = key.as_str().ok_or_else(|| RuntimeError::Parameter {
                    name: prefix.into(),
                    reason: "parameter names must be strings".into(),
                })?;
                let name = if prefix.is_empty() {
                    key.to_string()
                } else {
                    format!("{prefix}.{key}")
                };
                flatten(&name, v, out)?;
            }
            Ok(())
        }
        other => {
            out.push((prefix.to_string(), value_from_yaml(prefix, other)?));
            Ok(())
        }
    }
}

/// The parameters of YAML `text` for node `/namespace/name`, in file order.
pub fn parameters_for_node(
    text: &str,
    path: &str,
    namespace: &str,
    name: &str,
) -> Result<Vec<(String, ParameterValue)>, RuntimeError> {
    let fail = |reason: String| RuntimeError::ParamsFile {
        path: path.into(),
        reason,
    };
    let root: Value = serde_yaml::from_str(text).map_err(|e| fail(e.to_string()))?;
    let map = root
        .as_mapping()
        .ok_or_else(|| fail("expected a mapping of node names".into()))?;
    let mut found = Vec::new();
    nodes("", map, &mut found).map_err(fail)?;
    let mut out = Vec::new();
    for (node, params) in found {
        if node_matches(&node, namespace, name) {
            flatten("", params, &mut out).map_err(|e| fail(e.to_string()))?;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"
/**:
  ros__parameters:
    use_sim_time: true
controller_node:
  ros__parameters:
    controller: computed_torque
    kp: [100, 200.5]
    joints: [j1, j2]
    update_rate: 1000
    gains:
      scale: 0.5
/other:
  ros__parameters:
    kp: [1, 1]
"#;

    #[test]
    fn picks_the_node_and_wildcards_and_flattens() {
        let p = parameters_for_node(FILE, "f.yaml", "/", "controller_node").unwrap();
        let names: Vec<&str> = p.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "use_sim_time",
                "controller",
                "kp",
                "joints",
                "update_rate",
                "gains.scale"
            ]
        );
        assert_eq!(p[2].1, ParameterValue::DoubleArray(vec![100.0, 200.5]));
        assert_eq!(
            p[3].1,
            ParameterValue::StringArray(vec!["j1".into(), "j2".into()])
        );
        assert_eq!(p[4].1, ParameterValue::Integer(1000));
        // In a namespace a bare key no longer matches (rclcpp reads it as /controller_node);
        // `/**:` still does.
        assert_eq!(
            parameters_for_node(FILE, "f.yaml", "/arm1", "controller_node")
                .unwrap()
                .len(),
            1
        );
        let nested = "arm1:\n  controller_node:\n    ros__parameters:\n      kp: [1.0]\n";
        let p = parameters_for_node(nested, "f.yaml", "/arm1", "controller_node").unwrap();
        assert_eq!(
            p,
            vec![("kp".to_string(), ParameterValue::DoubleArray(vec![1.0]))]
        );
        assert!(
            parameters_for_node(nested, "f.yaml", "/", "controller_node")
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            parameters_for_node(FILE, "f.yaml", "/", "sim_node")
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn patterns() {
        assert!(node_matches(
            "/arm1/controller_node",
            "/arm1",
            "controller_node"
        ));
        assert!(!node_matches(
            "/arm2/controller_node",
            "/arm1",
            "controller_node"
        ));
        assert!(node_matches("/arm1/*", "/arm1", "controller_node"));
        assert!(node_matches(
            "/**/controller_node",
            "/a/b",
            "controller_node"
        ));
        assert!(node_matches("/**/controller_node", "/", "controller_node"));
        assert!(node_matches("/**", "/a/b", "n"));
        assert!(node_matches("controller_node", "/", "controller_node"));
        assert!(!node_matches("controller_node", "/arm1", "controller_node"));
        assert!(!node_matches("/*", "/arm1", "controller_node"));
    }

    #[test]
    fn malformed_files_are_errors_naming_the_file() {
        let e = parameters_for_node("controller_node: [1, 2", "bad.yaml", "/", "n").unwrap_err();
        assert!(e.to_string().contains("bad.yaml"), "{e}");
        let e = parameters_for_node(
            "controller_node:\n  kp: 1\n",
            "bad.yaml",
            "/",
            "controller_node",
        )
        .unwrap_err();
        assert!(e.to_string().contains("ros__parameters"), "{e}");
        let e = parameters_for_node(
            "n:\n  ros__parameters:\n    kp: [1, a]\n",
            "bad.yaml",
            "/",
            "n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("kp"), "{e}");
        assert_eq!(
            value_from_text("kp", "[1, 2]").unwrap(),
            ParameterValue::DoubleArray(vec![1.0, 2.0])
        );
        assert_eq!(
            value_from_text("mode", "gravity").unwrap(),
            ParameterValue::String("gravity".into())
        );
    }
}
