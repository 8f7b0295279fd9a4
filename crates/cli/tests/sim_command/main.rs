//! `armctl sim` as a user runs it.
//! The helpers are here; the tests in one file per kind of run.

#[path = "../common/mod.rs"]
mod common;

use common::{armctl, armctl_ran, workspace};

use std::path::PathBuf;

mod collision;
mod external_torque;
mod one_arm;
mod pairs;
mod scenes;
mod set_at;
mod what_ran;

fn out_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("armctl-sim-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The JSON summary of 3 s of the two Pandas under `config/two_pandas_cooperative.yaml`
/// (plus `extra`) moving the box by `movement`.
fn cooperative_run(name: &str, extra: &[&str], movement: &str) -> serde_json::Value {
    let dir = out_dir(name);
    let mut args = vec![
        "sim",
        "--urdf",
        "urdf/panda.urdf",
        "--params",
        "config/two_pandas_cooperative.yaml",
        "--object-move",
        movement,
        "--duration",
        "3",
        "--out",
        dir.to_str().unwrap(),
        "--json",
    ];
    args.extend_from_slice(extra);
    let (ok, out, err) = armctl(&args);
    assert!(ok, "{err}");
    serde_json::from_str(&out).unwrap()
}
