//! `controller_node` and `sim_node` on the r2r backend (rcl), built by
//! `tests/interop/build_r2r_nodes.sh` against ROS 2 from the PyPI wheels of the distribution
//! `ARMCTL_TEST_ROS_DISTRO` picks (Jazzy by default, or Kilted: `tests/interop/ros_venv.sh`)
//! and the control_msgs test fixture beside them (`tests/interop/control_msgs_fixture.sh`),
//! and started as `ros2 run` would start them there: Fast DDS, the default RMW, on loopback
//! only.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The r2r nodes and the venv whose ROS 2 they run on.
#[derive(Debug, Clone)]
pub struct R2rNodes {
    bin_dir: PathBuf,
    venv: PathBuf,
    /// `jazzy` or `kilted`.
    distro: String,
    /// The prefix of the control_msgs test fixture.
    fixture: PathBuf,
    /// Where rcl writes its log files (not the user's `~/.ros/log`).
    log_dir: PathBuf,
}

/// Builds the r2r nodes once per test process (cargo's lock makes concurrent test processes
/// wait for one build) in `target_tmpdir` (a test's `CARGO_TARGET_TMPDIR`): in `r2r-target`
/// for Jazzy, `r2r-target-<distro>` for another, so that no build invalidates another's
/// bindings.
pub fn r2r_nodes(target_tmpdir: &Path) -> R2rNodes {
    static NODES: OnceLock<R2rNodes> = OnceLock::new();
    NODES.get_or_init(|| build(target_tmpdir)).clone()
}

fn build(target_tmpdir: &Path) -> R2rNodes {
    let venv = crate::interop_python::ros_venv(target_tmpdir);
    let distro = crate::interop_python::ros_distro();
    let target = match distro.as_str() {
        "jazzy" => "r2r-target".to_string(),
        other => format!("r2r-target-{other}"),
    };
    let script = crate::workspace_dir().join("tests/interop/build_r2r_nodes.sh");
    let out = Command::new("sh")
        .arg(script)
        .arg(&venv)
        .arg(target_tmpdir.join(target))
        .output()
        .expect("running build_r2r_nodes.sh");
    assert!(
        out.status.success(),
        "building the r2r nodes ({distro}) failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8(out.stdout).expect("build_r2r_nodes.sh prints paths");
    let mut lines = printed.lines();
    let (Some(bin_dir), Some(fixture)) = (lines.next(), lines.next()) else {
        panic!("build_r2r_nodes.sh printed '{printed}', not the nodes' folder and the fixture's prefix");
    };
    R2rNodes {
        bin_dir: PathBuf::from(bin_dir),
        fixture: PathBuf::from(fixture),
        venv,
        distro,
        log_dir: target_tmpdir.join("ros-log"),
    }
}

impl R2rNodes {
    /// A command that runs the r2r build of `binary` (`controller_node`, `sim_node`) on
    /// `domain`, with the wheels' libraries, Fast DDS and discovery on loopback only.
    pub fn command(&self, binary: &str, domain: u16) -> Command {
        let mut command = Command::new(self.bin_dir.join(binary));
        for (name, value) in self.environment(domain) {
            command.env(name, value);
        }
        command
    }

    /// The environment a sourced ROS 2 would give, with `domain` and loopback-only discovery.
    pub fn environment(&self, domain: u16) -> Vec<(&'static str, String)> {
        let venv = self.venv.display().to_string();
        let fixture = self.fixture.display().to_string();
        vec![
            ("AMENT_PREFIX_PATH", format!("{fixture}:{venv}")),
            ("LD_LIBRARY_PATH", self.library_path()),
            // The wheels' librcl links rclpy's converters, which import Python's C API: the
            // stub build_r2r_nodes.sh made stands in for libpython (never called).
            (
                "LD_PRELOAD",
                self.bin_dir.join("libpython_stub.so").display().to_string(),
            ),
            ("ROS_DISTRO", self.distro.clone()),
            ("ROS_LOG_DIR", self.log_dir.display().to_string()),
            ("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp".into()),
            ("ROS_DOMAIN_ID", domain.to_string()),
            ("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST".into()),
        ]
    }

    /// The fixture's and the venv's `lib` and the wheels' own library folders
    /// (`site-packages/ros_*.libs`), as the wheels' bootstrapper sets them for Python.
    fn library_path(&self) -> String {
        let mut dirs = vec![self.fixture.join("lib"), self.venv.join("lib")];
        let lib = std::fs::read_dir(self.venv.join("lib")).expect("the venv's lib");
        for python in lib
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("python"))
        {
            let site = python.path().join("site-packages");
            let Ok(entries) = std::fs::read_dir(&site) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().to_string();
                if name.starts_with("ros_") && name.ends_with(".libs") {
                    dirs.push(entry.path());
                }
            }
        }
        let dirs: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        dirs.join(":")
    }

    /// The armctl command built with its `rcl` feature (`tests/interop/build_r2r_cli.sh`),
    /// beside the nodes and on the same bindings; run it with [`R2rNodes::environment`].
    pub fn armctl_rcl(&self) -> PathBuf {
        static CLI: OnceLock<PathBuf> = OnceLock::new();
        CLI.get_or_init(|| {
            let target = self.bin_dir.parent();
            let target = target.expect("the nodes' folder is <target>/release");
            let script = crate::workspace_dir().join("tests/interop/build_r2r_cli.sh");
            let out = Command::new("sh")
                .arg(script)
                .arg(&self.venv)
                .arg(target)
                .output()
                .expect("running build_r2r_cli.sh");
            assert!(
                out.status.success(),
                "building armctl --features rcl ({}) failed:\n{}",
                self.distro,
                String::from_utf8_lossy(&out.stderr)
            );
            let printed = String::from_utf8(out.stdout).expect("build_r2r_cli.sh prints a path");
            PathBuf::from(printed.trim())
        })
        .clone()
    }

    /// The venv's python (rclpy of the same distribution, for ROS 2 peers).
    pub fn python(&self) -> PathBuf {
        self.venv.join("bin/python")
    }

    /// The environment of an rclpy peer on `domain`, loopback only, with the control_msgs
    /// fixture importable.
    pub fn python_environment(&self, domain: u16) -> Vec<(&'static str, String)> {
        // lib/python3.<minor>/site-packages, as the venv's Python installed it.
        let site = std::fs::read_dir(self.fixture.join("lib"))
            .expect("the fixture's lib")
            .flatten()
            .map(|e| e.path().join("site-packages"))
            .find(|p| p.is_dir())
            .expect("the fixture's Python packages");
        vec![
            ("PYTHONPATH", site.display().to_string()),
            (
                "LD_LIBRARY_PATH",
                self.fixture.join("lib").display().to_string(),
            ),
            ("ROS_LOG_DIR", self.log_dir.display().to_string()),
            ("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp".into()),
            ("ROS_DOMAIN_ID", domain.to_string()),
            ("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST".into()),
        ]
    }

    /// Starts `binary` on `domain` with `-p` for each of `params`, its output written to
    /// `<binary>_<domain>.log` in `log_dir` (read back by [`R2rNodes::log`]).
    pub fn start(
        &self,
        binary: &str,
        domain: u16,
        params: &[String],
        log_dir: &Path,
    ) -> NodeProcess {
        let mut command = self.command(binary, domain);
        command.arg("--ros-args");
        for param in params {
            command.args(["-p", param]);
        }
        let log = std::fs::File::create(log_dir.join(format!("{binary}_{domain}.log")))
            .expect("the node's log file");
        let child = command
            .stdout(log.try_clone().expect("the node's log file"))
            .stderr(log)
            .spawn()
            .expect("the r2r node starts");
        NodeProcess(child)
    }

    /// What a node started by [`R2rNodes::start`] has logged so far.
    pub fn log(binary: &str, domain: u16, log_dir: &Path) -> String {
        std::fs::read_to_string(log_dir.join(format!("{binary}_{domain}.log"))).unwrap_or_default()
    }
}

/// A node process, killed if the test ends before stopping it.
#[derive(Debug)]
pub struct NodeProcess(pub std::process::Child);

impl NodeProcess {
    /// Whether it has exited.
    pub fn is_finished(&mut self) -> bool {
        matches!(self.0.try_wait(), Ok(Some(_)))
    }
}

impl Drop for NodeProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
