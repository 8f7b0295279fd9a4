//! Running the `armctl` binary from the workspace root, as a user does.
// Each test file is its own crate and uses only some of these.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

/// The workspace root (bundled `urdf/` and `config/` are relative to it).
pub(crate) fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `armctl ARGS` in the workspace root: success, stdout, stderr.
pub(crate) fn armctl(args: &[&str]) -> (bool, String, String) {
    armctl_with_env(args, &[])
}

/// As [`armctl`], with environment variables set (`Some`) or removed (`None`).
pub(crate) fn armctl_with_env(
    args: &[&str],
    env: &[(&str, Option<&str>)],
) -> (bool, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_armctl"));
    command.args(args).current_dir(workspace());
    for (name, value) in env {
        match value {
            Some(v) => command.env(name, v),
            None => command.env_remove(name),
        };
    }
    let out = command.output().expect("armctl runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
