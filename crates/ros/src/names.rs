//! ROS name resolution: `~/x` is private (`/ns/node/x`), `x` is relative to the namespace,
//! `/x` is absolute; `-r from:=to` remaps apply first.

/// Resolves `name` for node `node` in namespace `ns` ("/" or "/a/b").
pub fn resolve(name: &str, ns: &str, node: &str, remaps: &[(String, String)]) -> String {
    let name = remaps
        .iter()
        .find(|(from, _)| from == name)
        .map_or(name, |(_, to)| to.as_str());
    let base = if ns == "/" {
        String::new()
    } else {
        ns.to_string()
    };
    if let Some(rest) = name.strip_prefix("~/") {
        format!("{base}/{node}/{rest}")
    } else if name.starts_with('/') {
        name.to_string()
    } else {
        format!("{base}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let remaps = vec![(
            "joint_states".to_string(),
            "/robot/joint_states".to_string(),
        )];
        assert_eq!(
            resolve("joint_states", "/arm1", "ctl", &remaps),
            "/robot/joint_states"
        );
    }
}
