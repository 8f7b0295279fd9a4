//! Builds `tests/cpp/c_abi_program.cpp` with CMake and g++ against `include/armctl.h` and the
//! static library, and runs it on the `run.csv` of `armctl sim` (the binary, built here from
//! the same sources): the Panda under computed torque following the waypoints of
//! `config/trajectories/panda_wave.yaml` for 5 s. The program checks the efforts it gets
//! through the C ABI against the run's to 1e-9, counts allocations in `armctl_update`, and
//! checks holds (NaN, unreadable, implausible, stale states) and a parameter refusal. Needs
//! `g++`; CMake is PyPI's, installed by the test run into the tests' venv
//! (`tests/interop/setup_venv.sh`), so a machine without cmake runs it too.
//!
//! The second test builds the ros2_control plugin (`ros2_control/armctl_controllers`) with the
//! stand-in declarations (`ros2_control/test_api/include`) and `ros2_control/test_api/run_plugin.cpp`,
//! as Humble and as Jazzy, with the address and undefined-behaviour sanitizers, and runs it:
//! the plugin's lifecycle, update() on the same run, parameters, holds and deactivation.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The workspace's output folder of this build profile.
fn output_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

/// `libarmctl_capi.a` and the `armctl` binary as the sources are now. `cargo test` builds
/// only the rlib of the crate under test, so both are built here, with a target dir of their
/// own (a nested cargo on the outer build's dir would wait for its lock).
fn static_library_and_armctl(out: &Path) -> (PathBuf, PathBuf) {
    let target = out.join("capi-static");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    run(
        Command::new(cargo)
            .args([
                "build",
                "--release",
                "--quiet",
                "-p",
                "armctl_capi",
                "-p",
                "armctl",
                "--target-dir",
            ])
            .arg(&target)
            .current_dir(env!("CARGO_MANIFEST_DIR")),
        "cargo build of the static library and armctl",
    );
    (
        target.join("release/libarmctl_capi.a"),
        target.join("release/armctl"),
    )
}

/// The waypoints of `config/trajectories/panda_wave.yaml`, as `(time, positions)`.
fn panda_wave() -> Vec<(f64, Vec<f64>)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../config/trajectories/panda_wave.yaml"
    );
    let yaml: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    yaml["points"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|p| {
            let positions = p["positions"].as_sequence().unwrap();
            let positions = positions.iter().map(|v| v.as_f64().unwrap()).collect();
            (p["time_from_start"].as_f64().unwrap(), positions)
        })
        .collect()
}

/// Runs `armctl sim` for `seconds` from the first waypoint into `dir` (its `run.csv`: t, q,
/// qd, q_ref, error, effort per joint, shortest round-trip numbers) and writes the waypoints
/// as `waypoints.txt`, one "time q1 q2 ..." per line, for the program.
fn write_run(armctl: &Path, dir: &Path, seconds: f64) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let waypoints = panda_wave();
    let q0: Vec<String> = waypoints[0].1.iter().map(|v| format!("{v:?}")).collect();
    run(
        Command::new(armctl)
            .arg("sim")
            .arg("--urdf")
            .arg(root.join("urdf/panda.urdf"))
            .args(["--controller", "computed_torque", "--trajectory"])
            .arg(format!(
                "file:{}",
                root.join("config/trajectories/panda_wave.yaml").display()
            ))
            .args(["--q0", &q0.join(","), "--duration", &seconds.to_string()])
            .arg("--out")
            .arg(dir),
        "armctl sim",
    );
    let lines: Vec<String> = waypoints
        .iter()
        .map(|(time, p)| {
            let values: Vec<String> = p.iter().map(|v| format!("{v:?}")).collect();
            format!("{time:?} {}", values.join(" "))
        })
        .collect();
    std::fs::write(dir.join("waypoints.txt"), lines.join("\n") + "\n").unwrap();
}

/// PyPI's CMake from the tests' venv, which `tests/interop/setup_venv.sh` creates on first
/// use (shared with the interop tests).
fn cmake() -> PathBuf {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cyclonedds-venv");
    run(
        Command::new("sh")
            .arg(repository().join("tests/interop/setup_venv.sh"))
            .arg(&venv),
        "tests/interop/setup_venv.sh (installs CMake from PyPI)",
    );
    venv.join("bin/cmake")
}

fn run(command: &mut Command, what: &str) -> String {
    let output = command.output().unwrap_or_else(|e| {
        panic!("{what}: {e} (the C++ tests need g++, and sh and python3 with venv for CMake)")
    });
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{what} failed:\n{text}");
    text
}

/// The static library and the `armctl sim` run, made once for both tests.
struct Prepared {
    library: PathBuf,
    work: PathBuf,
}

fn prepared() -> &'static Prepared {
    static PREPARED: OnceLock<Prepared> = OnceLock::new();
    PREPARED.get_or_init(|| {
        let out = output_dir();
        let (library, armctl) = static_library_and_armctl(&out);
        let work = out.join("c_abi_program");
        std::fs::create_dir_all(&work).unwrap();
        write_run(&armctl, &work, 5.0);
        Prepared { library, work }
    })
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn a_cpp_host_gets_armctl_sim_s_efforts_without_allocating_and_the_same_holds_and_refusals() {
    let Prepared { library, work } = prepared();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cpp");
    let include = repository().join("include");
    let build = work.join("build");
    // A cache from a checkout elsewhere (CI clones into a new folder each time) is refused
    // by CMake: start clean, the program is small.
    let _ = std::fs::remove_dir_all(&build);
    let cmake = cmake();
    run(
        Command::new(&cmake)
            .arg("-S")
            .arg(&source)
            .arg("-B")
            .arg(&build)
            .arg(format!("-DARMCTL_LIBRARY={}", library.display()))
            .arg(format!("-DARMCTL_INCLUDE={}", include.display())),
        "cmake configure",
    );
    run(
        Command::new(&cmake).arg("--build").arg(&build),
        "cmake build",
    );
    let report = run(
        Command::new(build.join("c_abi_program"))
            .arg(repository().join("urdf/panda.urdf"))
            .arg(work.join("waypoints.txt"))
            .arg(work.join("run.csv")),
        "c_abi_program",
    );
    println!("{report}");
    assert!(
        report.contains("0 allocations in armctl_update"),
        "{report}"
    );
}

#[test]
fn the_ros2_control_plugin_runs_on_the_stand_in_as_humble_and_as_jazzy() {
    let Prepared { library, work } = prepared();
    let root = repository();
    let plugin = root.join("ros2_control/armctl_controllers");
    let test_api = root.join("ros2_control/test_api");
    let compiler = std::env::var("CXX").unwrap_or_else(|_| "g++".into());
    // Every .cpp of the plugin (its CMakeLists.txt lists the same ones), sorted: splitting or
    // adding a source needs no change here.
    let mut sources: Vec<PathBuf> = std::fs::read_dir(plugin.join("src"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "cpp"))
        .collect();
    sources.sort();
    assert!(
        !sources.is_empty(),
        "no .cpp in {}",
        plugin.join("src").display()
    );
    for distro in ["humble", "jazzy"] {
        let program = work.join(format!("run_plugin_{distro}"));
        let mut build = Command::new(&compiler);
        build.args(["-std=c++17", "-O1", "-g", "-Wall", "-Wextra", "-Werror"]);
        build.arg("-fsanitize=address,undefined");
        if distro == "jazzy" {
            build.arg("-DARMCTL_ROS_DISTRO_JAZZY");
        }
        for include in [
            plugin.join("include"),
            test_api.join("include"),
            root.join("include"),
        ] {
            build.arg("-I").arg(include);
        }
        build
            .args(&sources)
            .arg(test_api.join("run_plugin.cpp"))
            .arg(library)
            .args(["-lpthread", "-ldl", "-lm", "-o"])
            .arg(&program);
        run(
            &mut build,
            &format!("building the plugin on the stand-in as {distro}"),
        );
        let report = run(
            Command::new(&program)
                .arg(root.join("urdf/panda.urdf"))
                .arg(work.join("run.csv"))
                .arg(work.join("waypoints.txt")),
            &format!("the plugin on the stand-in as {distro}"),
        );
        println!("{distro}:\n{report}");
        assert!(report.contains("all checks passed"), "{report}");
    }
}
