//! The arguments `ros2 run` and `ros2 launch` pass to a node, as rcl reads them:
//! `--ros-args -p name:=value --params-file FILE -r from:=to -r __node:=NAME -r __ns:=/NS`,
//! with rules optionally for one node only (`node:name:=value`, `node:from:=to`); rcl's other
//! flags are accepted (`--log-level`, `--log-config-file`, `-e`/`--enclave`, the
//! `--enable-*`/`--disable-*` logging switches), anything else inside `--ros-args` is an
//! error; several `--ros-args ... --` groups are allowed and other arguments are left to the
//! program.

use crate::RuntimeError;

/// What the ROS arguments say.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RosArgs {
    /// `-r __node:=NAME`.
    pub node_name: Option<String>,
    /// `-r __ns:=/NS`.
    pub namespace: Option<String>,
    /// `--params-file FILE`, in order.
    pub params_files: Vec<String>,
    /// `-p name:=value`, in order (values as written, YAML-typed later); a name may carry a
    /// node prefix, `node:name` (see [`for_node`]).
    pub overrides: Vec<(String, String)>,
    /// Other remappings `-r from:=to`, `from` possibly with a node prefix.
    pub remaps: Vec<(String, String)>,
    /// Arguments outside `--ros-args`.
    pub other: Vec<String>,
}

fn split_assignment(flag: &str, text: &str) -> Result<(String, String), RuntimeError> {
    text.split_once(":=")
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .ok_or_else(|| RuntimeError::Arguments {
            reason: format!("{flag} expects NAME:=VALUE, got '{text}'"),
        })
}

/// Parses the arguments after the program name.
pub fn parse_ros_args<I: IntoIterator<Item = String>>(args: I) -> Result<RosArgs, RuntimeError> {
    let mut out = RosArgs::default();
    let mut in_ros = false;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match (in_ros, arg.as_str()) {
            (_, "--ros-args") => in_ros = true,
            (true, "--") => in_ros = false,
            (true, "-p" | "--param") => {
                let value = args.next().ok_or_else(|| RuntimeError::Arguments {
                    reason: "-p needs NAME:=VALUE".into(),
                })?;
                out.overrides.push(split_assignment("-p", &value)?);
            }
            (true, "--params-file") => {
                out.params_files
                    .push(args.next().ok_or_else(|| RuntimeError::Arguments {
                        reason: "--params-file needs a FILE".into(),
                    })?);
            }
            (true, "-r" | "--remap") => {
                let value = args.next().ok_or_else(|| RuntimeError::Arguments {
                    reason: "-r needs FROM:=TO".into(),
                })?;
                let (from, to) = split_assignment("-r", &value)?;
                match from.as_str() {
                    "__node" | "__name" => out.node_name = Some(to),
                    "__ns" => out.namespace = Some(normalize_namespace(&to)?),
                    _ => out.remaps.push((from, to)),
                }
            }
            (true, "--log-level" | "--log-config-file" | "--enclave" | "-e") => {
                if args.next().is_none() {
                    return Err(RuntimeError::Arguments {
                        reason: format!("{arg} needs a value"),
                    });
                }
            }
            (true, flag) if LOG_SWITCHES.contains(&flag) => {}
            (true, other) => {
                return Err(RuntimeError::Arguments {
                    reason: format!("unknown ROS argument '{other}' inside --ros-args"),
                })
            }
            (false, _) => out.other.push(arg),
        }
    }
    Ok(out)
}

const LOG_SWITCHES: [&str; 6] = [
    "--enable-rosout-logs",
    "--disable-rosout-logs",
    "--enable-stdout-logs",
    "--disable-stdout-logs",
    "--enable-external-lib-logs",
    "--disable-external-lib-logs",
];

/// The rules of `rules` that apply to node `node`: unprefixed ones, and those written
/// `node:rule` (with the prefix removed). Node-prefixed `__node` / `__ns` rules are applied
/// by the caller the same way.
pub fn for_node(rules: &[(String, String)], node: &str) -> Vec<(String, String)> {
    rules
        .iter()
        .filter_map(|(lhs, value)| match lhs.split_once(':') {
            None => Some((lhs.clone(), value.clone())),
            Some((prefix, name)) if prefix == node => Some((name.to_string(), value.clone())),
            Some(_) => None,
        })
        .collect()
}

/// `/ns` form: a leading slash, no trailing one, ROS name characters only.
pub fn normalize_namespace(ns: &str) -> Result<String, RuntimeError> {
    let trimmed = ns.trim_end_matches('/');
    let with_slash = if trimmed.starts_with('/') {
        trimmed.to_string()
    } else {
        format!("/{trimmed}")
    };
    let valid = with_slash.split('/').skip(1).all(|part| {
        !part.is_empty()
            && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !part.starts_with(|c: char| c.is_ascii_digit())
    });
    if with_slash == "/" || valid {
        Ok(with_slash)
    } else {
        Err(RuntimeError::Arguments {
            reason: format!("invalid namespace '{ns}'"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn parses_what_ros2_launch_passes() {
        let a = parse_ros_args(args("--print-params --ros-args -r __node:=arm_ctl -r __ns:=/left --params-file /tmp/p.yaml -p kp:=[1.0,2.0] -p controller:=computed_torque -r joint_states:=/arm/joint_states --")).unwrap();
        assert_eq!(a.node_name.as_deref(), Some("arm_ctl"));
        assert_eq!(a.namespace.as_deref(), Some("/left"));
        assert_eq!(a.params_files, vec!["/tmp/p.yaml"]);
        assert_eq!(
            a.overrides,
            vec![
                ("kp".into(), "[1.0,2.0]".into()),
                ("controller".into(), "computed_torque".into())
            ]
        );
        assert_eq!(
            a.remaps,
            vec![("joint_states".into(), "/arm/joint_states".into())]
        );
        assert_eq!(a.other, vec!["--print-params"]);
    }

    #[test]
    fn malformed_arguments_are_named() {
        assert!(parse_ros_args(args("--ros-args -p kp"))
            .unwrap_err()
            .to_string()
            .contains("NAME:=VALUE"));
        assert!(parse_ros_args(args("--ros-args --params-file")).is_err());
        assert!(parse_ros_args(args("--ros-args -r __ns:=/bad-name"))
            .unwrap_err()
            .to_string()
            .contains("namespace"));
        assert_eq!(normalize_namespace("arm1/").unwrap(), "/arm1");
        assert!(parse_ros_args(args("--ros-args --bogus"))
            .unwrap_err()
            .to_string()
            .contains("'--bogus'"));
        assert!(parse_ros_args(args("--ros-args --log-level")).is_err());
        let a = parse_ros_args(args(
            "--ros-args --log-level debug --log-config-file l.cfg -e /enc --disable-rosout-logs",
        ))
        .unwrap();
        assert!(a.other.is_empty());
    }

    #[test]
    fn node_prefixed_rules_apply_to_their_node_only() {
        let a = parse_ros_args(args(
            "--ros-args -p ctl:kp:=[1.0] -p sim:rate:=500.0 -p state_timeout:=0.2 -r ctl:joint_states:=/js",
        ))
        .unwrap();
        assert_eq!(
            for_node(&a.overrides, "ctl"),
            vec![
                ("kp".to_string(), "[1.0]".to_string()),
                ("state_timeout".to_string(), "0.2".to_string())
            ]
        );
        assert_eq!(for_node(&a.remaps, "sim"), vec![]);
        assert_eq!(
            for_node(&a.remaps, "ctl"),
            vec![("joint_states".to_string(), "/js".to_string())]
        );
    }
}
