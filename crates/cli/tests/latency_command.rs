//! `armctl latency` with the node's control thread made real-time (`--realtime-priority`,
//! `--cpu-affinity`, passed to a controller_node process as its parameters): reported, refused
//! in process, and the node's own refusal surfaced when the system does not allow it.

mod common;
use common::armctl;

/// The controller_node binary next to armctl (built with the workspace's tests).
fn controller_node() -> String {
    let path = std::path::Path::new(env!("CARGO_BIN_EXE_armctl")).with_file_name("controller_node");
    assert!(
        path.exists(),
        "{} is missing: cargo build --release -p armctl_nodes --bins",
        path.display()
    );
    path.display().to_string()
}

/// Whether this machine lets the test's user run SCHED_FIFO (root, or an rtprio limit).
fn fifo_allowed() -> bool {
    std::process::Command::new("chrt")
        .args(["-f", "1", "true"])
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn the_real_time_control_thread_is_measured_and_reported() {
    let (ok, _, err) = armctl(&["latency", "--realtime-priority", "30", "--duration", "1"]);
    assert!(!ok && err.contains("give --node-binary"), "{err}");
    if !fifo_allowed() {
        eprintln!("skipped the measured run: this machine does not allow SCHED_FIFO");
        return;
    }
    let node = controller_node();
    let args = [
        "latency",
        "--node-binary",
        &node,
        "--realtime-priority",
        "30",
    ];
    let rest = [
        "--cpu-affinity",
        "0",
        "--duration",
        "1",
        "--domain-id",
        "183",
        "--json",
    ];
    let (ok, out, err) = armctl(&[&args[..], &rest[..]].concat());
    assert!(ok, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        report["control_thread"],
        "SCHED_FIFO priority 30, memory locked, pinned to CPU 0"
    );
    assert_eq!(report["states_sent"], 1000);
    // How many were answered in time depends on the machine's load: no bound on that here.
    assert!(report["commands_timed"].as_u64().unwrap() > 0, "{report}");
}

#[test]
fn a_node_that_refuses_real_time_ends_the_measurement_with_its_reason() {
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0");
    if !root && fifo_allowed() {
        eprintln!("skipped: not root, and SCHED_FIFO is allowed: no refusal to provoke");
        return;
    }
    let node = controller_node();
    let mut command = std::process::Command::new(if root {
        "setpriv"
    } else {
        env!("CARGO_BIN_EXE_armctl")
    });
    if root {
        command.args([
            "--bounding-set",
            "-sys_nice",
            "--inh-caps",
            "-sys_nice",
            env!("CARGO_BIN_EXE_armctl"),
        ]);
    }
    let out = command
        .args([
            "latency",
            "--node-binary",
            &node,
            "--realtime-priority",
            "30",
        ])
        .args(["--duration", "1", "--domain-id", "184"])
        .current_dir(common::workspace())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("parameter 'realtime_priority'") && err.contains("exited before answering"),
        "{err}"
    );
}

/// The measurement times the law it names: the probe's scripted states are not a plant, and
/// the node no longer reads them as a collision and holds (it did in every run, and the report
/// still said "computed_torque"); a node that holds ends the measurement with the reason.
#[test]
fn the_measured_controller_runs_its_law_not_a_hold() {
    for controller in ["computed_torque", "pd_gravity"] {
        let (ok, out, err) = armctl(&[
            "latency",
            "--controller",
            controller,
            "--duration",
            "2",
            "--domain-id",
            "187",
            "--json",
        ]);
        assert!(ok, "{controller}: {err}");
        let report: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(report["controller"], controller);
        assert!(report["commands_timed"].as_u64().unwrap() > 0, "{report}");
    }
}
