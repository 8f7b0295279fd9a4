//! The ROS package armctl_ros (`crates/ros_rcl`, the nodes on rcl) is a cargo workspace of its
//! own, which `cargo test --workspace` does not build (it needs ROS 2): these checks keep it
//! in step with the workspace without building it.

use std::collections::BTreeMap;
use std::path::Path;

use armctl_e2e::workspace_dir;

/// `(name, version) -> source` of every package in a Cargo.lock that comes from a registry or
/// git (path packages, the workspace's own, have no source).
fn locked(path: &Path) -> BTreeMap<(String, String), String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut packages = BTreeMap::new();
    for block in text.split("[[package]]").skip(1) {
        let field = |key: &str| {
            block.lines().find_map(|l| {
                l.strip_prefix(key)
                    .and_then(|rest| rest.trim().strip_prefix("= "))
                    .map(|v| v.trim_matches('"').to_string())
            })
        };
        let (Some(name), Some(version)) = (field("name "), field("version ")) else {
            panic!(
                "{}: a package without name or version:{block}",
                path.display()
            );
        };
        if let Some(source) = field("source ") {
            packages.insert((name, version), source);
        }
    }
    packages
}

/// Every crate the ROS package locks is one the workspace locks, at the same version and from
/// the same source: colcon builds the nodes from the dependencies `cargo test` tested.
#[test]
fn the_ros_package_locks_the_workspace_versions() {
    let root = workspace_dir();
    let workspace = locked(&root.join("Cargo.lock"));
    let package = locked(&root.join("crates/ros_rcl/Cargo.lock"));
    assert!(
        package.keys().any(|(name, _)| name == "r2r"),
        "crates/ros_rcl/Cargo.lock has no r2r"
    );
    let differing: Vec<String> = package
        .iter()
        .filter(|(key, source)| workspace.get(*key) != Some(source))
        .map(|((name, version), _)| format!("{name} {version}"))
        .collect();
    assert!(
        differing.is_empty(),
        "crates/ros_rcl/Cargo.lock holds crates the workspace's Cargo.lock does not: {differing:?}\n\
         (refresh it: cp Cargo.lock crates/ros_rcl/ && cargo metadata --offline --format-version 1 --manifest-path crates/ros_rcl/Cargo.toml > /dev/null)"
    );
}

/// The ROS package is armctl_ros in package.xml and Cargo.toml alike (cargo-ament-build
/// installs under the Cargo name, `ros2 launch` looks under package.xml's), builds armctl_nodes
/// on rcl only, and its nodes are the ones armctl_nodes builds on DDS.
#[test]
fn the_ros_package_is_armctl_ros_on_rcl() {
    let root = workspace_dir();
    let manifest = std::fs::read_to_string(root.join("crates/ros_rcl/Cargo.toml")).unwrap();
    let package_xml = std::fs::read_to_string(root.join("crates/ros_rcl/package.xml")).unwrap();
    let doc = roxmltree::Document::parse(&package_xml).unwrap();
    let xml_name = doc
        .descendants()
        .find(|e| e.has_tag_name("name"))
        .and_then(|e| e.text())
        .unwrap();
    assert_eq!(xml_name, "armctl_ros");
    assert!(manifest.contains("\nname = \"armctl_ros\"\n"), "{manifest}");
    assert!(
        manifest.contains(
            "armctl_nodes = { path = \"../ros\", default-features = false, features = [\"r2r\"] }"
        ),
        "crates/ros_rcl must build armctl_nodes with r2r and without DDS:\n{manifest}"
    );
    let nodes = std::fs::read_to_string(root.join("crates/ros/Cargo.toml")).unwrap();
    for bin in ["controller_node", "sim_node"] {
        assert!(root
            .join(format!("crates/ros_rcl/src/bin/{bin}.rs"))
            .is_file());
        assert!(
            nodes.contains(&format!("path = \"../ros_rcl/src/bin/{bin}.rs\"")),
            "armctl_nodes builds {bin} from another main than the ROS package's"
        );
    }
}

/// Every package the two ROS packages depend on is released for ROS 2 Jazzy and Kilted
/// (`tests/data/rosdistro/released.txt`, read from rosdistro), so `rosdep install
/// --from-paths src` resolves each; a new dependency fails here, naming it, until it is
/// checked against the distributions.
#[test]
fn every_dependency_is_a_package_released_for_jazzy_and_kilted() {
    let root = workspace_dir();
    let released_text =
        std::fs::read_to_string(root.join("tests/data/rosdistro/released.txt")).unwrap();
    let released: Vec<&str> = released_text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let mut unreleased = Vec::new();
    for package in [
        "crates/ros_rcl/package.xml",
        "ros2_control/armctl_controllers/package.xml",
    ] {
        let text = std::fs::read_to_string(root.join(package)).unwrap();
        let doc = roxmltree::Document::parse(&text).unwrap();
        let dependencies = doc.descendants().filter(|e| {
            e.tag_name().name().ends_with("depend") && e.tag_name().name() != "member_of_group"
        });
        let names: Vec<&str> = dependencies.filter_map(|e| e.text()).collect();
        assert!(names.len() >= 5, "{package}: {names:?}");
        unreleased.extend(
            names
                .into_iter()
                .filter(|n| !released.contains(n))
                .map(|n| format!("{package}: {n}")),
        );
    }
    assert!(
        unreleased.is_empty(),
        "not known to be released for Jazzy and Kilted: {unreleased:?}"
    );
}
