//! The crate graph runs one way, model -> dynamics -> control -> {sim, ident, runtime} ->
//! {ros, cli}, and nothing below `armctl_nodes` links a middleware (read from `cargo metadata`
//! for this platform, offline: it needs only what the build fetched).

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use armctl_e2e::workspace_dir;

/// Each workspace crate's layer: a crate may depend only on crates of lower layers.
const LAYERS: [(&str, u32); 10] = [
    ("armctl_model", 0),
    ("armctl_dynamics", 1),
    ("armctl_control", 2),
    ("armctl_sim", 3),
    ("armctl_ident", 3),
    ("armctl_runtime", 4),
    ("armctl_nodes", 5),
    // The C ABI sits beside the ROS layer: over the runtime, without middleware.
    ("armctl_capi", 5),
    ("armctl", 6),
    ("armctl_e2e", 7),
];

/// Crates that only the ROS layer and above may link.
const MIDDLEWARE: [&str; 4] = ["ros2-client", "rustdds", "r2r", "tokio"];

/// This machine's target triple (`rustc -vV`).
fn host() -> String {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("rustc runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names the host")
        .to_string()
}

fn metadata() -> serde_json::Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let host = host();
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--offline"])
        .args(["--filter-platform", &host])
        .current_dir(workspace_dir())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("metadata is JSON")
}

/// Package id -> name, and each package's normal (non-dev, non-build) dependencies by id.
fn graph(meta: &serde_json::Value) -> (BTreeMap<String, String>, BTreeMap<String, Vec<String>>) {
    let names = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let id = p["id"].as_str().unwrap().to_string();
            (id, p["name"].as_str().unwrap().to_string())
        })
        .collect();
    let edges = meta["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|node| {
            let normal = node["deps"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| {
                    d["dep_kinds"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|k| k["kind"].is_null())
                })
                .map(|d| d["pkg"].as_str().unwrap().to_string())
                .collect();
            (node["id"].as_str().unwrap().to_string(), normal)
        })
        .collect();
    (names, edges)
}

fn layer(name: &str) -> Option<u32> {
    LAYERS.iter().find(|(n, _)| *n == name).map(|(_, l)| *l)
}

#[test]
fn workspace_crates_depend_only_downwards_and_middleware_stays_in_the_ros_layer() {
    let meta = metadata();
    let (names, edges) = graph(&meta);
    let members: Vec<String> = meta["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect();
    for id in &members {
        let name = &names[id];
        let own = layer(name).unwrap_or_else(|| panic!("{name} has no layer in LAYERS"));
        // Direct workspace dependencies point down.
        for dep in &edges[id] {
            if let Some(dep_layer) = layer(&names[dep]) {
                assert!(
                    dep_layer < own,
                    "{name} (layer {own}) depends on {} (layer {dep_layer})",
                    names[dep]
                );
            }
        }
        // Below the ROS layer, no middleware anywhere in the closure.
        if own < layer("armctl_nodes").unwrap() {
            let mut seen = BTreeSet::new();
            let mut stack = vec![id.clone()];
            while let Some(next) = stack.pop() {
                if seen.insert(next.clone()) {
                    stack.extend(edges[&next].iter().cloned());
                }
            }
            for dep in &seen {
                assert!(
                    !MIDDLEWARE.contains(&names[dep].as_str()),
                    "{name} links {} (middleware belongs to armctl_nodes and above)",
                    names[dep]
                );
            }
        }
    }
}
