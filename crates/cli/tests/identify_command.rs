//! The identification workflow as a user runs it: `armctl excite`, `armctl sim` on a less ideal
//! (10% heavier, payload, friction, noise, delay) simulated Panda, `armctl identify` of the
//! log (CSV and rosbag2 MCAP), and `armctl sim --params` with the identified model.

mod common;

use common::{armctl, panda_excitation, scratch, text};

use std::path::Path;

use armctl_ident::JointLog;
use armctl_nodes::msgs::{Header, JointState, Time};

/// Computed torque on the realistic simulator following `trajectory`; the RMS tracking error
/// over all joints.
fn tracked(trajectory: &Path, params: &[&Path], out: &Path) -> f64 {
    let trajectory = format!("file:{}", text(trajectory));
    let mut args = vec![
        "sim",
        "--urdf",
        "urdf/panda.urdf",
        "--controller",
        "computed_torque",
        "--params",
        "config/panda_computed_torque.yaml",
        "--trajectory",
        &trajectory,
        "--duration",
        "20",
        "--sim-config",
        "config/sim_realistic.yaml",
        "--out",
        text(out),
        "--json",
    ];
    for p in params {
        args.extend(["--params", text(p)]);
    }
    let (ok, stdout, err) = armctl(&args);
    assert!(ok, "{err}");
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    // A run that held would track nothing and make any comparison pass.
    let warnings = summary["warnings"].to_string();
    assert!(!warnings.contains("holding"), "{warnings}");
    let squares: f64 = summary["joints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["rms_error"].as_f64().unwrap().powi(2))
        .sum();
    squares.sqrt()
}

fn identified(log: &Path, out: Option<&Path>) -> serde_json::Value {
    // The plant has the URDF's friction: left out, it would be read as inertia.
    let mut args = vec![
        "identify",
        "urdf/panda.urdf",
        "--log",
        text(log),
        "--friction",
        "--json",
    ];
    if let Some(out) = out {
        args.extend(["--out", text(out)]);
    }
    let (ok, stdout, err) = armctl(&args);
    assert!(ok, "{err}");
    serde_json::from_str(&stdout).unwrap()
}

/// The log as a rosbag2 file of sensor_msgs/JointState.
fn to_mcap(log: &JointLog, path: &Path) {
    let states: Vec<JointState> = (0..log.len())
        .map(|k| JointState {
            header: Header {
                stamp: Time::from_seconds(log.time[k]),
                frame_id: String::new(),
            },
            name: log.joint_names.clone(),
            position: log.position[k].clone(),
            velocity: log.velocity.as_ref().unwrap()[k].clone(),
            effort: log.effort[k].clone(),
        })
        .collect();
    armctl_nodes::bag::write_joint_states(path, "/joint_states", &states).unwrap();
}

/// The condition number `armctl excite` printed.
fn printed_condition(stdout: &str) -> f64 {
    stdout
        .rsplit("condition number of the base regressor ")
        .next()
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no condition number in: {stdout}"))
}

#[test]
fn excite_simulate_identify_and_track_better() {
    let dir = scratch("identify", "flow");
    let (excitation, stdout) = panda_excitation(&dir);
    let condition = printed_condition(&stdout);
    assert!(condition < 50.0, "condition number {condition}");

    // The URDF is wrong by design here (the realistic arm is heavier, carries a tool and has
    // friction the URDF lacks): collision detection told so, as docs/identification.md does.
    let commissioning = dir.join("commissioning.yaml");
    std::fs::write(&commissioning, "model_error: 0.3\n").unwrap();
    let with_urdf = tracked(&excitation, &[&commissioning], &dir.join("urdf_run"));
    let log = dir.join("urdf_run/run.csv");
    let model = dir.join("identified.yaml");
    let report = identified(&log, Some(&model));
    assert_eq!(report["base_parameters"].as_array().unwrap().len(), 43);
    let held_out = report["holdout_overall"].as_f64().unwrap();
    assert!(held_out < 0.02, "held-out effort error {held_out}");
    for e in report["base_parameters"].as_array().unwrap() {
        assert!(e["std"].as_f64().unwrap().is_finite(), "{e}");
    }

    let with_identified = tracked(&excitation, &[&model], &dir.join("identified_run"));
    eprintln!(
        "RMS tracking error: URDF {with_urdf:.3e} rad, identified {with_identified:.3e} rad, condition number {condition:.1}, held-out error {:.2}%",
        100.0 * held_out
    );
    assert!(
        with_identified * 5.0 < with_urdf,
        "URDF {with_urdf:.3e}, identified {with_identified:.3e}"
    );

    // The same log as a rosbag2 file gives the same model.
    let bag = dir.join("run.mcap");
    to_mcap(&JointLog::read_csv(&log).unwrap(), &bag);
    let from_bag = identified(&bag, None);
    let from_csv = identified(&log, None);
    for (a, b) in from_csv["base_parameters"]
        .as_array()
        .unwrap()
        .iter()
        .zip(from_bag["base_parameters"].as_array().unwrap())
    {
        let (a, b) = (a["value"].as_f64().unwrap(), b["value"].as_f64().unwrap());
        assert!(
            (a - b).abs() <= 1e-6 * a.abs().max(1e-3),
            "csv {a}, mcap {b}"
        );
    }
}

/// Before, a run shorter than one period printed (and wrote) the whole period's condition
/// number, 10.1, for a series that excites far less.
#[test]
fn an_excitation_shorter_than_its_period_reports_its_own_condition_number() {
    let dir = scratch("identify", "short-excitation");
    let file = dir.join("short.yaml");
    let (ok, stdout, stderr) = armctl(&[
        "excite",
        "urdf/panda.urdf",
        "--duration",
        "3",
        "--out",
        text(&file),
    ]);
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains("--duration 3 s is shorter than --period 10 s"),
        "{stderr}"
    );
    let printed = printed_condition(&stdout);
    assert!(printed > 20.0, "{stdout}");
    let written = std::fs::read_to_string(&file).unwrap();
    let document: serde_yaml::Value = serde_yaml::from_str(&written).unwrap();
    let in_file = document["fourier"]["condition_number"].as_f64().unwrap();
    assert!((in_file - printed).abs() <= 0.05 * printed, "{written}");
}

#[test]
fn bad_logs_are_named() {
    let dir = scratch("identify", "bad");
    let (ok, _, err) = armctl(&[
        "identify",
        "urdf/panda.urdf",
        "--log",
        "nowhere.csv",
        "--friction-position-harmonics",
        "2",
    ]);
    assert!(
        !ok && err.contains("--friction-position-harmonics needs --friction"),
        "{err}"
    );
    let (ok, _, err) = armctl(&[
        "identify",
        "urdf/panda.urdf",
        "--log",
        "nowhere.csv",
        "--friction-offset",
    ]);
    assert!(
        !ok && err.contains("--friction-offset needs --friction"),
        "{err}"
    );
    let short = dir.join("short.csv");
    std::fs::write(
        &short,
        "t,q_panda_joint1,effort_panda_joint1\n0,0,0\n0.001,0,0\n",
    )
    .unwrap();
    let other = dir.join("other.csv");
    let mut rows = String::from("t,q_a,effort_a\n");
    for k in 0..100 {
        rows += &format!("{},0,0\n", f64::from(k) * 1e-3);
    }
    std::fs::write(&other, rows).unwrap();
    let not_a_bag = dir.join("broken.mcap");
    std::fs::write(&not_a_bag, b"not an mcap file").unwrap();
    let missing = dir.join("missing.csv");
    let twice = dir.join("twice.csv");
    std::fs::write(&twice, "t,q_a,q_a,effort_a\n0,0,0,0\n").unwrap();
    // The Panda held still for 2 s, with its time in milliseconds in a second copy.
    let still_log = |time_scale: f64| {
        let joints: Vec<String> = (1..=7).map(|i| format!("panda_joint{i}")).collect();
        let mut rows = format!(
            "t,{},{}\n",
            joints
                .iter()
                .map(|j| format!("q_{j}"))
                .collect::<Vec<_>>()
                .join(","),
            joints
                .iter()
                .map(|j| format!("effort_{j}"))
                .collect::<Vec<_>>()
                .join(",")
        );
        for k in 0..2000 {
            rows += &format!("{}", f64::from(k) * 1e-3 * time_scale);
            rows += ",0.1,-0.3,0.0,-2.0,0.0,1.7,0.5,0,-3.5,0.6,20.1,0.7,1.3,0.01\n";
        }
        rows
    };
    let still = dir.join("still.csv");
    std::fs::write(&still, still_log(1.0)).unwrap();
    let milliseconds = dir.join("milliseconds.csv");
    std::fs::write(&milliseconds, still_log(1000.0)).unwrap();
    // Before, --topic was ignored for a CSV log without a word.
    let cases: [(&Path, &[&str], &str); 10] = [
        (&twice, &[], "column 'q_a' appears twice"),
        (&short, &[], "too few"),
        (&other, &[], "panda_joint1"),
        (&not_a_bag, &[], "broken.mcap"),
        (&missing, &[], "missing.csv"),
        (&still, &[], "does not excite"),
        (&milliseconds, &[], "is the time column in seconds?"),
        (&still, &["--cutoff", "0"], "cutoff"),
        (&still, &["--holdout", "1"], "held-out fraction"),
        (
            &still,
            &["--topic", "/arm/joint_states"],
            "is a CSV log, which has no topics",
        ),
    ];
    for (log, extra, expected) in cases {
        let mut args = vec!["identify", "urdf/panda.urdf", "--log", text(log)];
        args.extend(extra);
        let (ok, _, err) = armctl(&args);
        assert!(!ok, "{args:?} was accepted");
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn the_excitation_as_a_joint_trajectory_message_is_followed_after_its_lead_in() {
    let dir = scratch("identify", "message");
    let (excitation, message) = (dir.join("excitation.yaml"), dir.join("message.yaml"));
    let (ok, _, err) = armctl(&[
        "excite",
        "urdf/panda.urdf",
        "--duration",
        "4",
        "--out",
        text(&excitation),
        "--message",
        text(&message),
        "--lead-in",
        "2",
    ]);
    assert!(ok, "{err}");
    let msg: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(&message).unwrap()).unwrap();
    let points = msg["points"].as_sequence().unwrap();
    assert_eq!(points.len(), 81, "4 s every 50 ms, both ends");
    let stamp = |p: &serde_yaml::Value| {
        p["time_from_start"]["sec"].as_f64().unwrap()
            + 1e-9 * p["time_from_start"]["nanosec"].as_f64().unwrap()
    };
    assert!((stamp(&points[0]) - 2.0).abs() < 1e-12);
    assert!((stamp(&points[80]) - 6.0).abs() < 1e-9);
    assert_eq!(msg["joint_names"].as_sequence().unwrap().len(), 7);

    // Followed from the middle of the ranges, the message's samples and the series agree.
    let follow = |trajectory: &Path, out: &str, duration: &str| -> String {
        let spec = format!("file:{}", text(trajectory));
        let out = dir.join(out);
        let (ok, _, err) = armctl(&[
            "sim",
            "--urdf",
            "urdf/panda.urdf",
            "--controller",
            "computed_torque",
            "--params",
            "config/panda_computed_torque.yaml",
            "--trajectory",
            &spec,
            "--duration",
            duration,
            "--out",
            text(&out),
        ]);
        assert!(ok, "{err}");
        std::fs::read_to_string(out.join("run.csv")).unwrap()
    };
    let reference_at = |csv: &str, t: f64| -> Vec<f64> {
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let row: Vec<f64> = lines
            .map(|l| {
                l.split(',')
                    .map(|v| v.parse().unwrap())
                    .collect::<Vec<f64>>()
            })
            .find(|r| (r[0] - t).abs() < 1e-9)
            .unwrap();
        header
            .iter()
            .zip(&row)
            .filter(|(h, _)| h.starts_with("q_ref_"))
            .map(|(_, v)| *v)
            .collect()
    };
    let series = follow(&excitation, "series", "4");
    let sampled = follow(&message, "sampled", "6");
    for t in [0.5, 1.7, 3.2] {
        let (a, b) = (reference_at(&series, t), reference_at(&sampled, t + 2.0));
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() < 1e-5, "t = {t}: {a:?} vs {b:?}");
        }
    }
}
