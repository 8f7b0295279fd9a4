//! ROS name resolution, as rcl does it: `~/x` is private (`/ns/node/x`), `x` is relative to
//! the namespace, `/x` is absolute; a remap rule `from:=to` applies when `from`, expanded the
//! same way, equals the expanded name, and its `to` is expanded too.

/// `name` expanded for node `node` in namespace `ns` ("/" or "/a/b"), without remapping.
pub fn expand(name: &str, ns: &str, node: &str) -> String {
    let base = if ns == "/" { "" } else { ns };
    if name == "~" {
        format!("{base}/{node}")
    } else if let Some(rest) = name.strip_prefix("~/") {
        format!("{base}/{node}/{rest}")
    } else if name.starts_with('/') {
        name.to_string()
    } else {
        format!("{base}/{name}")
    }
}

/// Resolves `name` for node `node` in namespace `ns` with `remaps` (the node's rules, see
/// [`crate::ros_args::for_node`]); the first matching rule wins.
pub fn resolve(name: &str, ns: &str, node: &str, remaps: &[(String, String)]) -> String {
    let expanded = expand(name, ns, node);
    remaps
        .iter()
        .find(|(from, _)| expand(from, ns, node) == expanded)
        .map_or(expanded, |(_, to)| expand(to, ns, node))
}

/// Why `name` is not a valid relative ROS name (segments of letters, digits and underscores,
/// not starting with a digit, joined by single slashes), or `None` when it is.
pub fn relative_name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("it is empty");
    }
    if name.starts_with('/') || name.starts_with('~') {
        return Some("it must be relative (no leading '/' or '~')");
    }
    let valid_segment = |segment: &str| {
        segment
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && segment
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if !name.split('/').all(valid_segment) {
        return Some("its parts must be letters, digits and underscores, not starting with a digit, joined by single '/'");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(from: &str, to: &str) -> Vec<(String, String)> {
        vec![(from.to_string(), to.to_string())]
    }

    #[test]
    fn resolves_private_relative_absolute_and_remapped_names() {
        assert_eq!(resolve("~/state", "/", "ctl", &[]), "/ctl/state");
        assert_eq!(resolve("~/state", "/arm1", "ctl", &[]), "/arm1/ctl/state");
        assert_eq!(
            resolve("joint_states", "/arm1", "ctl", &[]),
            "/arm1/joint_states"
        );
        assert_eq!(
            resolve("/joint_states", "/arm1", "ctl", &[]),
            "/joint_states"
        );
        let to_robot = rule("joint_states", "/robot/joint_states");
        assert_eq!(
            resolve("joint_states", "/arm1", "ctl", &to_robot),
            "/robot/joint_states"
        );
        // Rules match after expansion: an absolute `from` catches a relative name.
        let absolute = rule("/arm1/joint_states", "states");
        assert_eq!(
            resolve("joint_states", "/arm1", "ctl", &absolute),
            "/arm1/states"
        );
        let private = rule("~/reference", "/plan");
        assert_eq!(resolve("~/reference", "/", "ctl", &private), "/plan");
        assert_eq!(
            resolve("/clock", "/", "ctl", &rule("/clock", "/sim/clock")),
            "/sim/clock"
        );
    }

    #[test]
    fn relative_names_are_checked() {
        for good in ["left", "arm_1/left", "_x"] {
            assert_eq!(relative_name_problem(good), None, "{good}");
        }
        for bad in ["", "/left", "~/x", "left/", "a b/c", "1arm", "a//b"] {
            assert!(relative_name_problem(bad).is_some(), "{bad}");
        }
    }
}
