//! Running the `armctl` binary from the workspace root, as a user does.
// Each test file is its own crate and uses only some of these.
#![allow(dead_code)]

pub(crate) mod commissioned;
pub(crate) mod true_arm;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root (bundled `urdf/` and `config/` are relative to it).
pub(crate) fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `armctl ARGS` in the workspace root: success, stdout, stderr.
pub(crate) fn armctl(args: &[&str]) -> (bool, String, String) {
    armctl_with_env(args, &[])
}

/// `armctl sim` or `demo` that must run to its end, where the arm may hold on the way (a
/// collision or an over-speed the test provokes): whether it held (exit code 3, said on
/// stderr), stdout, stderr. Any other failure fails the test.
pub(crate) fn armctl_ran(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_armctl"))
        .args(args)
        .current_dir(workspace())
        .output()
        .expect("armctl runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    let held = match out.status.code() {
        Some(0) => false,
        Some(3) if stderr.contains("the arm held in its safe mode") => true,
        code => panic!("armctl {args:?} exited {code:?}: {stderr}"),
    };
    (held, stdout, stderr)
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

/// An empty scratch directory for one test: `<tmp>/armctl-<group>-<name>-<pid>`.
pub(crate) fn scratch(group: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("armctl-{group}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A path as a command-line argument.
pub(crate) fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// `armctl excite urdf/panda.urdf --duration 20` into `dir/excitation.yaml`, as
/// docs/identification.md runs it: the file and what the command printed.
pub(crate) fn panda_excitation(dir: &Path) -> (PathBuf, String) {
    let excitation = dir.join("excitation.yaml");
    let (ok, stdout, err) = armctl(&[
        "excite",
        "urdf/panda.urdf",
        "--duration",
        "20",
        "--out",
        text(&excitation),
    ]);
    assert!(ok, "{err}");
    (excitation, stdout)
}

/// The Markdown the project publishes: the README and the book's pages under `docs/`, sorted.
pub(crate) fn documentation_pages() -> Vec<PathBuf> {
    let root = workspace();
    let mut pages = vec![root.join("README.md")];
    let mut dirs = vec![root.join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    pages.sort();
    pages
}
