//! The Python of the interop virtual environment (`tests/interop/setup_venv.sh`): Cyclone
//! DDS's binding, the MCAP project's ROS 2 reader and writer, and the MuJoCo physics engine,
//! independent of armctl. And the ROS 2 prefix of the real-ROS tests, whose distribution
//! `ARMCTL_TEST_ROS_DISTRO` picks (`tests/interop/ros_venv.sh`): Jazzy (the default, the
//! interop venv itself) or Kilted (a venv of its own).

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
    run_setup("setup_venv.sh", venv, "the interop venv")
}

/// Runs `tests/interop/<script> <arg>` and gives the line it prints (a venv's python or
/// folder); `what` names it when the script fails.
fn run_setup(script: &str, arg: &Path, what: &str) -> String {
    let path: PathBuf = crate::workspace_dir().join("tests/interop").join(script);
    let out = Command::new("sh")
        .arg(path)
        .arg(arg)
        .output()
        .unwrap_or_else(|e| panic!("running {script}: {e}"));
    assert!(
        out.status.success(),
        "creating {what} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The ROS 2 distribution the real-ROS tests run against: `ARMCTL_TEST_ROS_DISTRO`, `jazzy`
/// unless set (`tests/interop/ros_venv.sh` refuses other names).
pub fn ros_distro() -> String {
    std::env::var("ARMCTL_TEST_ROS_DISTRO").unwrap_or_else(|_| "jazzy".into())
}

/// The venv holding that distribution's wheels (a ROS 2 prefix with rclpy), created on first
/// use in `target_tmpdir`.
pub fn ros_venv(target_tmpdir: &Path) -> PathBuf {
    static VENV: OnceLock<PathBuf> = OnceLock::new();
    VENV.get_or_init(|| {
        let what = format!("the ROS 2 venv ({})", ros_distro());
        PathBuf::from(run_setup("ros_venv.sh", target_tmpdir, &what))
    })
    .clone()
}
