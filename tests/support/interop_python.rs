//! The Python of the interop virtual environment (`tests/interop/setup_venv.sh`): Cyclone
//! DDS's binding, the MCAP project's ROS 2 reader and writer, and the MuJoCo physics engine,
//! independent of armctl.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The venv's python, created on first use in `target_tmpdir` (a test's
/// `CARGO_TARGET_TMPDIR`) and shared by every test of the process.
pub fn interop_python(target_tmpdir: &Path) -> String {
    static PYTHON: OnceLock<String> = OnceLock::new();
    PYTHON
        .get_or_init(|| create_venv(&target_tmpdir.join("cyclonedds-venv")))
        .clone()
}

fn create_venv(venv: &Path) -> String {
    let script: PathBuf = crate::workspace_dir().join("tests/interop/setup_venv.sh");
    let out = Command::new("sh")
        .arg(script)
        .arg(venv)
        .output()
        .expect("running setup_venv.sh");
    assert!(
        out.status.success(),
        "creating the interop venv failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}
