//! `armctl dynamics` as a user runs it: reference states in on stdin, reference numbers out.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(args: &[&str], stdin: &str) -> (bool, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_armctl"))
        .args(args)
        .current_dir(workspace())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("armctl starts");
    let written = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes());
    // A command refused on its arguments exits without reading stdin: a closed pipe then.
    if let Err(e) = written {
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::BrokenPipe,
            "writing stdin: {e}"
        );
    }
    let out = child.wait_with_output().expect("armctl runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn close(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    match (a, b) {
        (serde_json::Value::Array(x), serde_json::Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| close(p, q))
        }
        (x, y) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            (x - y).abs() <= 1e-9 * y.abs().max(1.0)
        }
    }
}

#[test]
fn reproduces_reference_dynamics_from_stdin() {
    let reference_path = workspace().join("tests/data/reference/panda_arm.json");
    let reference: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&reference_path).expect("reference data in tests/data/reference"),
    )
    .unwrap();
    let samples: Vec<serde_json::Value> = reference["samples"].as_array().unwrap()[..5]
        .iter()
        .map(|s| serde_json::json!({"q": s["q"], "qd": s["qd"], "qdd": s["qdd"], "tau": s["tau_rand"]}))
        .collect();
    let input = serde_json::json!({ "samples": samples }).to_string();
    let urdf = reference_path.with_file_name("panda_arm.urdf");
    let (ok, out, err) = run(
        &["dynamics", urdf.to_str().unwrap(), "--states", "-"],
        &input,
    );
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["joint_names"][0], "panda_joint1");
    for (got, want) in v["samples"]
        .as_array()
        .unwrap()
        .iter()
        .zip(reference["samples"].as_array().unwrap())
    {
        assert!(close(&got["tau"], &want["tau"]), "tau");
        assert!(close(&got["M"], &want["M"]), "M");
        assert!(close(&got["C"], &want["C"]), "C");
        assert!(close(&got["G"], &want["G"]), "G");
        assert!(close(&got["qdd"], &want["qdd_fd"]), "qdd");
        assert!(close(&got["T_tip"], &want["T_tip"]), "T_tip");
    }
}

#[test]
fn qdd_is_absent_without_tau_and_bad_states_are_named() {
    let input = r#"{"samples":[{"q":[0,0],"qd":[0,0],"qdd":[0,0]}]}"#;
    let (ok, out, err) = run(
        &["dynamics", "urdf/planar_2link.urdf", "--states", "-"],
        input,
    );
    assert!(ok, "{err}");
    assert!(!out.contains("\"qdd\""), "{out}");
    let (ok, _, err) = run(
        &["dynamics", "urdf/planar_2link.urdf", "--states", "-"],
        r#"{"samples":[{"q":[0],"qd":[0,0],"qdd":[0,0]}]}"#,
    );
    assert!(
        !ok && err.contains("sample 0") && err.contains("'q' has 1 values"),
        "{err}"
    );
    let (ok, _, err) = run(
        &["dynamics", "urdf/planar_2link.urdf", "--states", "-"],
        "{not json",
    );
    assert!(!ok && err.contains("parsing states"), "{err}");
    // Finite but absurd: the results overflow; an error, not `null` and exit 0.
    let (ok, out, err) = run(
        &["dynamics", "urdf/planar_2link.urdf", "--states", "-"],
        r#"{"samples":[{"q":[0,0],"qd":[1e300,1e300],"qdd":[0,0]}]}"#,
    );
    assert!(!ok && err.contains("is not finite"), "{out} {err}");
    assert!(!out.contains("null"), "{out}");
}

/// Structure only: timings are never asserted in the test suite (the machine is shared).
#[test]
fn bench_reports_every_algorithm_and_writes_states() {
    let states =
        std::env::temp_dir().join(format!("armctl-bench-states-{}.txt", std::process::id()));
    let (ok, out, err) = run(
        &[
            "bench",
            "urdf/planar_2link.urdf",
            "--batches",
            "1",
            "--json",
            "--states-out",
            states.to_str().unwrap(),
        ],
        "",
    );
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let names: Vec<&str> = v["ns_per_call"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p[0].as_str().unwrap())
        .collect();
    for algorithm in [
        "rnea",
        "mass_matrix",
        "coriolis_matrix",
        "gravity",
        "forward_dynamics",
        "forward_kinematics",
        "jacobian",
        "regressor",
        "controller_pd_gravity",
        "controller_cartesian_impedance",
        "controller_cartesian_impedance_random_states",
        "joint_limit_guard_far",
        "joint_limit_guard_at_soft_limits",
    ] {
        assert!(
            names.contains(&algorithm),
            "{algorithm} missing from {names:?}"
        );
    }
    let text = std::fs::read_to_string(&states).unwrap();
    assert_eq!(text.lines().count(), 256);
    assert!(text.lines().all(|l| l.split_whitespace().count() == 6));
    let _ = std::fs::remove_file(states);
}

/// `--method lagrange` gives the same JSON as the default route (to rounding), with the
/// coupling coefficients on request; the Lagrange-only options are refused without it.
#[test]
fn the_lagrange_route_gives_the_same_numbers_and_the_coupling_coefficients() {
    let states = r#"{"samples":[{"q":[0.1,-0.4,0.2,-2.1,0.1,1.7,0.6],"qd":[0.3,-0.2,0.1,0.4,-0.3,0.2,0.5],"qdd":[1,2,-1,0.5,0,1,-2],"tau":[1,2,3,4,5,6,7]}]}"#;
    let output = |extra: &[&str]| {
        let mut args = vec!["dynamics", "urdf/panda.urdf", "--states", "-"];
        args.extend_from_slice(extra);
        let (ok, out, err) = run(&args, states);
        assert!(ok, "{err}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap()
    };
    let newton = output(&[]);
    for trace in ["direct", "inner-product"] {
        let lagrange = output(&["--method", "lagrange", "--trace", trace, "--coupling"]);
        for term in ["tau", "M", "C", "G", "qdd", "T_tip"] {
            let (a, b) = (&lagrange["samples"][0][term], &newton["samples"][0][term]);
            assert!(close(a, b), "{trace} {term}: {a} vs {b}");
        }
        let d = lagrange["samples"][0]["D_ijk"].as_array().unwrap();
        assert_eq!(d.len(), 7);
        assert!(d.iter().all(|plane| plane.as_array().unwrap().len() == 7));
    }
    assert!(newton["samples"][0].get("D_ijk").is_none());
    let (ok, _, err) = run(
        &["dynamics", "urdf/panda.urdf", "--states", "-", "--coupling"],
        states,
    );
    assert!(
        !ok && err.contains("--coupling and --trace are for --method lagrange"),
        "{err}"
    );
}

/// `--derivatives` prints Pinocchio's derivatives of the reference UR5 (inverse dynamics,
/// gravity, and with a tau forward dynamics), under the reference data's names; the Lagrange
/// route refuses them.
#[test]
fn derivatives_reproduce_the_reference_derivatives() {
    let reference_path = workspace().join("tests/data/reference/ur5_derivatives.json");
    let reference: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&reference_path).unwrap()).unwrap();
    let chosen = &reference["samples"].as_array().unwrap()[..3];
    let samples: Vec<serde_json::Value> = chosen
        .iter()
        .map(|s| serde_json::json!({"q": s["q"], "qd": s["qd"], "qdd": s["qdd"], "tau": s["tau_rand"]}))
        .collect();
    let input = serde_json::json!({ "samples": samples }).to_string();
    let urdf = reference_path.with_file_name("ur5.urdf");
    let args = ["dynamics", urdf.to_str().unwrap(), "--tip", "tool0"];
    let (ok, out, err) = run(
        &[&args[..], &["--states", "-", "--derivatives"]].concat(),
        &input,
    );
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    for (got, want) in v["samples"].as_array().unwrap().iter().zip(chosen) {
        for name in [
            "dtau_dq",
            "dtau_dqd",
            "dG_dq",
            "dqdd_dq",
            "dqdd_dqd",
            "dqdd_dtau",
        ] {
            assert!(close_relative(&got[name], &want[name]), "{name}");
        }
    }
    let lagrange = ["--method", "lagrange", "--derivatives", "--states", "-"];
    let (ok, _, err) = run(&[&args[..], &lagrange[..]].concat(), &input);
    assert!(!ok && err.contains("use --method newton-euler"), "{err}");
}

/// Entries within 1e-8 of the largest (the reference's own agreement with differences).
fn close_relative(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    let flat = |v: &serde_json::Value| -> Vec<f64> {
        v.as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()))
            .collect()
    };
    let (a, b) = (flat(a), flat(b));
    let scale = b.iter().fold(1.0f64, |m, x| m.max(x.abs()));
    a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| (x - y).abs() <= 1e-8 * scale)
}
