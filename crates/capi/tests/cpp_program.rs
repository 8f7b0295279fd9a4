//! Builds `tests/cpp/c_abi_program.cpp` with CMake and g++ against `include/armctl.h` and the
//! static library, and runs it on a Panda run made here: the embedded simulator under computed
//! torque through the runtime `armctl sim` and controller_node use, following the waypoints of
//! `config/trajectories/panda_wave.yaml`. The program checks the efforts it gets through the C
//! ABI against the run's to 1e-9, counts allocations in `armctl_update`, and checks holds and
//! a parameter refusal. Needs `cmake` and `g++` (`.ci/run` installs them).

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use armctl_sim::{SimConfig, Simulator};
use common::{node_runtime, panda_urdf, trajectory_points, PANDA_JOINTS};

const STEP: f64 = 1e-3;

/// The workspace's output folder of this build profile.
fn output_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

/// `libarmctl_capi.a` as the sources are now. `cargo test` builds only the rlib of the crate
/// under test, so the static library is built here, with a target dir of its own (a nested
/// cargo on the outer build's dir would wait for its lock).
fn static_library(out: &Path) -> PathBuf {
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
                "--target-dir",
            ])
            .arg(&target)
            .current_dir(env!("CARGO_MANIFEST_DIR")),
        "cargo build of the static library",
    );
    target.join("release/libarmctl_capi.a")
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

/// `seconds` of the run; writes `waypoints.txt` and `run.csv` (t, q, qd, effort per joint,
/// shortest round-trip numbers) into `dir`.
fn write_run(dir: &Path, seconds: f64) {
    let urdf = panda_urdf();
    let mut node = node_runtime(&urdf, "computed_torque", &PANDA_JOINTS);
    let names: Vec<String> = PANDA_JOINTS.iter().map(|j| j.to_string()).collect();
    let robot = node.core().robot().clone();
    let waypoints = panda_wave();
    let mut sim = Simulator::new(&robot, &waypoints[0].1, SimConfig::default()).unwrap();
    let mut text = String::from("t");
    for prefix in ["q", "qd", "effort"] {
        for joint in PANDA_JOINTS {
            let _ = write!(text, ",{prefix}_{joint}");
        }
    }
    let mut effort = vec![0.0; 7];
    for k in 0..(seconds / STEP) as usize {
        let t = k as f64 * STEP;
        let (q, qd) = (sim.q().to_vec(), sim.qd().to_vec());
        node.core_mut().on_joint_state(&names, &q, &qd, t);
        let report = node.core_mut().step(t, STEP, &mut effort);
        assert!(report.fault.is_none(), "{report:?}");
        if k == 0 {
            let points = trajectory_points(&waypoints);
            node.core_mut()
                .set_trajectory(&names, &points, t, t)
                .unwrap();
        }
        text.push_str(&format!("\n{t:?}"));
        for v in q.iter().chain(&qd).chain(&effort) {
            let _ = write!(text, ",{v:?}");
        }
        sim.step(&effort).unwrap();
    }
    text.push('\n');
    std::fs::write(dir.join("run.csv"), text).unwrap();
    let lines: Vec<String> = waypoints
        .iter()
        .map(|(time, p)| {
            let values: Vec<String> = p.iter().map(|v| format!("{v:?}")).collect();
            format!("{time:?} {}", values.join(" "))
        })
        .collect();
    std::fs::write(dir.join("waypoints.txt"), lines.join("\n") + "\n").unwrap();
}

fn run(command: &mut Command, what: &str) -> String {
    let output = command.output().unwrap_or_else(|e| {
        panic!("{what}: {e} (the C++ test needs cmake and g++: apt-get install cmake g++)")
    });
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{what} failed:\n{text}");
    text
}

#[test]
fn a_cpp_host_gets_the_runtime_s_efforts_without_allocating_and_the_same_holds_and_refusals() {
    let out = output_dir();
    let library = static_library(&out);
    let work = out.join("c_abi_program");
    std::fs::create_dir_all(&work).unwrap();
    write_run(&work, 5.0);
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cpp");
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../include");
    let build = work.join("build");
    // A cache from a checkout elsewhere (CI clones into a new folder each time) is refused
    // by CMake: start clean, the program is small.
    let _ = std::fs::remove_dir_all(&build);
    run(
        Command::new("cmake")
            .arg("-S")
            .arg(&source)
            .arg("-B")
            .arg(&build)
            .arg(format!("-DARMCTL_LIBRARY={}", library.display()))
            .arg(format!("-DARMCTL_INCLUDE={}", include.display())),
        "cmake configure",
    );
    run(
        Command::new("cmake").arg("--build").arg(&build),
        "cmake build",
    );
    let urdf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../urdf/panda.urdf");
    let report = run(
        Command::new(build.join("c_abi_program"))
            .arg(&urdf)
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
