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
        let script = crate::workspace_dir().join("tests/interop/ros_venv.sh");
        let out = Command::new("sh")
            .arg(script)
            .arg(target_tmpdir)
            .output()
            .expect("running ros_venv.sh");
        assert!(
            out.status.success(),
            "creating the ROS 2 venv ({}) failed:\n{}",
            ros_distro(),
            String::from_utf8_lossy(&out.stderr)
        );
        PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
    })
    .clone()
}
