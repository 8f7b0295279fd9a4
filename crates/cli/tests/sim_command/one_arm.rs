//! One arm: set points, waypoint files, parameter and settings files, bad input, clipped
//! efforts, a law without G, damping warnings.

use super::*;

#[test]
fn pd_gravity_on_panda_reaches_the_set_point_and_writes_plots() {
    let dir = out_dir("setpoint");
    let (ok, out, err) = armctl(&[
        "sim",
        "--urdf",
        "urdf/panda.urdf",
        "--controller",
        "pd_gravity",
        "--params",
        "config/panda_pd_gravity.yaml",
        "--trajectory",
        "setpoint:0.3,-0.5,0.2,-2.0,0.4,1.5,0.6",
        "--duration",
        "5",
        "--out",
        dir.to_str().unwrap(),
        "--json",
    ]);
    assert!(ok, "{err}");
    let summary: serde_json::Value = serde_json::from_str(&out).unwrap();
    for joint in summary["joints"].as_array().unwrap() {
        let final_error = joint["final_error"].as_f64().unwrap();
        assert!(
            final_error < 1e-4,
            "{}: final error {final_error}",
            joint["joint"]
        );
        assert!(joint["max_effort"].as_f64().unwrap() <= 87.0 + 1e-9);
    }
    assert!(summary["real_time_factor"].as_f64().unwrap() > 0.0);
    for name in ["positions", "errors", "efforts"] {
        let png = std::fs::read(dir.join(format!("{name}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{name}.png is not a PNG");
        assert_eq!(
            u32::from_be_bytes(png[16..20].try_into().unwrap()),
            1280,
            "{name}.png width"
        );
        assert_eq!(
            u32::from_be_bytes(png[20..24].try_into().unwrap()),
            720,
            "{name}.png height"
        );
        assert!(png.len() > 20_000, "{name}.png is suspiciously small");
        let svg = std::fs::read_to_string(dir.join(format!("{name}.svg"))).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
            "{name}.svg"
        );
    }
    let csv = std::fs::read_to_string(dir.join("run.csv")).unwrap();
    assert!(csv.starts_with("t,q_panda_joint1,"));
    assert_eq!(csv.lines().count(), 5001);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn follows_a_waypoint_file_and_the_table_names_every_joint() {
    let dir = out_dir("file");
    let (ok, out, err) = armctl(&[
        "sim",
        "--urdf",
        "urdf/panda.urdf",
        "--params",
        "config/panda_pd_gravity.yaml",
        "--trajectory",
        "config/trajectories/panda_wave.yaml",
        "--duration",
        "6",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    for i in 1..=7 {
        assert!(out.contains(&format!("panda_joint{i}")), "{out}");
    }
    assert!(out.contains("real-time factor"), "{out}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bad_input_is_named() {
    let cases: [(&[&str], &str); 11] = [
        (
            &["--trajectory", "setpoint:100,0,0,-2,0,1.5,0"],
            "panda_joint1 = 100",
        ),
        (&["--duration", "1e308"], "at most 1e6 are recorded"),
        (&["--duration", "1e9"], "at most 1e6 are recorded"),
        (&["--dt", "1e-12"], "--dt must be between"),
        (&["--params", "/dev/zero"], "not a regular file"),
        (&["--controller", "nope"], "'nope' is not one of"),
        (&["--trajectory", "zigzag"], "unknown trajectory 'zigzag'"),
        (&["--trajectory", "setpoint:1,2"], "expected 7 values"),
        (
            &["--trajectory", "quintic:0,0,0,-2,0,2,0:-1"],
            "duration -1 must be positive",
        ),
        (&["--q0", "0,0,0,x,0,0,0"], "'x' is not a number"),
        (&["--params", "Cargo.toml"], "parsing parameters"),
    ];
    for (extra, message) in cases {
        let mut args = vec![
            "sim",
            "--urdf",
            "urdf/panda.urdf",
            "--out",
            "/tmp/armctl-sim-bad",
        ];
        if !extra.contains(&"--duration") {
            args.extend_from_slice(&["--duration", "0.01"]);
        }
        args.extend_from_slice(extra);
        let (ok, _, err) = armctl(&args);
        assert!(!ok && err.contains(message), "{extra:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn invalid_gains_in_a_parameter_file_are_rejected_with_a_reason() {
    let dir = out_dir("params");
    std::fs::create_dir_all(&dir).unwrap();
    let params = dir.join("bad.yaml");
    std::fs::write(
        &params,
        "controller_node:\n  ros__parameters:\n    kp: [1, 2, 3]\n",
    )
    .unwrap();
    let (ok, _, err) = armctl(&[
        "sim",
        "--urdf",
        "urdf/panda.urdf",
        "--params",
        params.to_str().unwrap(),
        "--duration",
        "0.01",
    ]);
    assert!(
        !ok && err.contains("parameter 'kp': needs 7 values (one per joint), got 3"),
        "{err}"
    );
    std::fs::write(
        &params,
        "/**:\n  ros__parameters:\n    kd: [1, 1, 1, 1, 1, 1, -1]\n",
    )
    .unwrap();
    let (ok, _, err) = armctl(&[
        "sim",
        "--urdf",
        "urdf/panda.urdf",
        "--params",
        params.to_str().unwrap(),
        "--duration",
        "0.01",
    ]);
    assert!(
        !ok && err.contains("parameter 'kd': -1 is outside"),
        "{err}"
    );
    std::fs::write(&params, "kp_typo: [1, 1, 1, 1, 1, 1, 1]\n").unwrap();
    let (ok, _, err) = armctl(&[
        "sim",
        "--urdf",
        "urdf/panda.urdf",
        "--params",
        params.to_str().unwrap(),
        "--duration",
        "0.01",
    ]);
    assert!(
        !ok && err.contains("parameter 'kp_typo': not declared"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn simulator_settings_file_changes_the_plant_and_bad_keys_are_named() {
    let dir = out_dir("simconfig");
    let run = |config: &str| {
        armctl(&[
            "sim",
            "--urdf",
            "urdf/panda.urdf",
            "--params",
            "config/panda_pd_gravity.yaml",
            "--sim-config",
            config,
            "--trajectory",
            "setpoint:0.3,-0.5,0.2,-2.0,0.4,1.5,0.6",
            "--duration",
            "3",
            "--out",
            dir.to_str().unwrap(),
            "--json",
        ])
    };
    let (ok, out, err) = run("config/sim_realistic.yaml");
    assert!(ok, "{err}");
    let summary: serde_json::Value = serde_json::from_str(&out).unwrap();
    // PD + gravity with a payload and 10% heavier links than the model: a steady-state error
    // remains (the model's G is wrong), unlike the exact-model run.
    let worst = summary["joints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["final_error"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!(worst > 1e-4 && worst < 0.1, "final error {worst}");
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.yaml");
    std::fs::write(&bad, "noise: {position: -1, velocity: 0}\n").unwrap();
    let (ok, _, err) = run(bad.to_str().unwrap());
    assert!(!ok && err.contains("noise"), "{err}");
    std::fs::write(&bad, "frictoin: true\n").unwrap();
    let (ok, _, err) = run(bad.to_str().unwrap());
    assert!(!ok && err.contains("frictoin"), "{err}");
    std::fs::write(&bad, "limits: null\nintegrator: euler\n").unwrap();
    let (ok, _, err) = run(bad.to_str().unwrap());
    assert!(ok, "limits: null and euler are valid: {err}");
    // Play in the wrist's gear behind its rotor: the PD still holds the set point.
    let play = "integrator: euler\narmature: [0.3, 0.3, 0.2, 0.2, 0.05, 0.05, 0.05]\nbacklash: [0, 0, 0, 0, 0, 0, 0.004]\n";
    std::fs::write(&bad, play).unwrap();
    let (ok, out, err) = run(bad.to_str().unwrap());
    assert!(ok, "{err}");
    let summary: serde_json::Value = serde_json::from_str(&out).unwrap();
    let wrist = summary["joints"][6]["final_error"].as_f64().unwrap();
    assert!(wrist.abs() < 0.01, "the wrist ends {wrist} rad off");
    std::fs::write(&bad, play.replace("integrator: euler\n", "")).unwrap();
    let (ok, _, err) = run(bad.to_str().unwrap());
    assert!(
        !ok && err.contains("backlash") && err.contains("Euler"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The safety layer clips before the simulated drives see the command: the summary counts
/// those clipped efforts (it printed 0 while every joint sat at its limit), and run.csv writes
/// numbers in their shortest exact form.
#[test]
fn clipped_efforts_are_counted_and_the_csv_is_compact() {
    let dir = out_dir("saturation");
    std::fs::create_dir_all(&dir).unwrap();
    let params = dir.join("stiff.yaml");
    // Without the rate limit, which would keep these efforts from ever reaching the limits.
    std::fs::write(
        &params,
        "kp: [1e5, 1e5, 1e5, 1e5, 1e5, 1e5, 1e5]\neffort_rise_time: 0.0\n",
    )
    .unwrap();
    let (_, out, _) = armctl_ran(&[
        "sim",
        "--urdf",
        "urdf/panda.urdf",
        "--controller",
        "independent_pd",
        "--params",
        params.to_str().unwrap(),
        "--trajectory",
        "setpoint:0.3,-0.5,0.2,-2.0,0.4,1.5,0.6",
        "--duration",
        "0.2",
        "--out",
        dir.to_str().unwrap(),
        "--json",
    ]);
    // Gains this stiff overspeed the wrist, which is braked: the run still ends and reports.
    let summary: serde_json::Value = serde_json::from_str(&out).unwrap();
    let saturated = summary["saturated_commands"].as_u64().unwrap();
    assert!(saturated > 10, "saturated commands: {saturated}");
    let csv = std::fs::read_to_string(dir.join("run.csv")).unwrap();
    let longest = csv
        .lines()
        .skip(1)
        .flat_map(|l| l.split(','))
        .map(str::len)
        .max()
        .unwrap();
    assert!(longest <= 24, "a CSV cell of {longest} characters");
    let _ = std::fs::remove_dir_all(dir);
}

/// A task-space law given a joint `--trajectory` follows it with its tip (the reference through
/// forward kinematics); it used to hold still while errors were reported against a reference
/// it never saw. Both a trajectory and a pose target are refused.
#[test]
fn resolved_acceleration_follows_the_joint_trajectory_through_forward_kinematics() {
    let dir = out_dir("task-space-trajectory");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "sim",
            "--urdf",
            "urdf/panda.urdf",
            "--controller",
            "resolved_acceleration",
            "--trajectory",
            "quintic:0.2,-0.1,0.2,-2.0,0.2,1.9,0.7:2",
            "--duration",
            "3",
            "--out",
            dir.to_str().unwrap(),
            "--json",
        ];
        args.extend_from_slice(extra);
        armctl(&args)
    };
    let (ok, out, err) = run(&[]);
    assert!(ok, "{err}");
    let summary: serde_json::Value = serde_json::from_str(&out).unwrap();
    let tip = &summary["tip_error"];
    let (rms, last) = (tip["rms"].as_f64().unwrap(), tip["final"].as_f64().unwrap());
    assert!(rms < 1e-3 && last < 1e-4, "tip error {tip}");
    let (ok, _, err) = run(&["--target-pose", "0.5,0,0.5"]);
    assert!(!ok && err.contains("not both"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}

/// A law without G (`gravity_compensation: false`, as for a Franka arm, whose libfranka adds
/// the arm's gravity torque itself) on an arm that adds its own: `armctl sim` makes the
/// simulated arm add G and the law tracks; the same law with G on that arm is told to apply it
/// twice.
#[test]
fn a_law_without_g_runs_on_an_arm_that_adds_its_own() {
    let dir = out_dir("without_g");
    std::fs::create_dir_all(&dir).unwrap();
    let urdf = common::workspace().join("urdf/panda.urdf");
    let without_g = dir.join("computed_torque_without_g.yaml");
    std::fs::write(
        &without_g,
        "/**:\n  ros__parameters:\n    controller: computed_torque\n    gravity_compensation: false\n    kp: [900.0, 900.0, 900.0, 900.0, 900.0, 900.0, 900.0]\n    kd: [60.0, 60.0, 60.0, 60.0, 60.0, 60.0, 60.0]\n    state_timeout: 0.1\n    safe_mode: gravity\n",
    )
    .unwrap();
    let without_g = without_g.to_str().unwrap();
    let settings = dir.join("adds_gravity.yaml");
    std::fs::write(&settings, "robot_compensates_gravity: true\n").unwrap();
    let run = |params: &str, extra: &[&str]| {
        let mut args = vec![
            "sim",
            "--urdf",
            urdf.to_str().unwrap(),
            "--params",
            params,
            "--trajectory",
            "setpoint:0.3,-0.5,0.2,-2.0,0.4,1.5,0.6",
            "--duration",
            "3",
            "--out",
            dir.to_str().unwrap(),
            "--json",
        ];
        args.extend(extra);
        // G applied twice is held as a collision: the run still ends and reports.
        let (_, out, _) = armctl_ran(&args);
        serde_json::from_str::<serde_json::Value>(&out).unwrap()
    };
    let summary = run(without_g, &[]);
    for joint in summary["joints"].as_array().unwrap() {
        let final_error = joint["final_error"].as_f64().unwrap();
        assert!(final_error < 1e-4, "{}: {final_error}", joint["joint"]);
    }
    let twice = run(
        "config/panda_computed_torque.yaml",
        &["--sim-config", settings.to_str().unwrap()],
    );
    let warnings = twice["warnings"].to_string();
    assert!(warnings.contains("G is applied twice"), "{warnings}");
    // Told that the arm does not add its own: the sim-config wins, and the run says nothing
    // holds the weight.
    let nobody = dir.join("adds_nothing.yaml");
    std::fs::write(&nobody, "robot_compensates_gravity: false\n").unwrap();
    let sags = run(without_g, &["--sim-config", nobody.to_str().unwrap()]);
    let warnings = sags["warnings"].to_string();
    assert!(
        warnings.contains("nothing holds the arm's weight"),
        "{warnings}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// A damping beyond the sampled-data limit in a parameter file is warned about in the run's
/// summary, naming the parameter, the configuration and the joint the run-time bound cuts; the
/// run itself stays bounded (the bound limits it at every step).
#[test]
fn a_damping_beyond_the_sampled_data_limit_is_warned_about() {
    let dir = out_dir("heavy_damping");
    std::fs::create_dir_all(&dir).unwrap();
    let params = dir.join("heavy.yaml");
    std::fs::write(
        &params,
        "/**:\n  ros__parameters:\n    controller: pd_gravity\n    kd: [30.0, 50.0, 20.0, 20.0, 60.0, 60.0, 60.0]\n",
    )
    .unwrap();
    let urdf = common::workspace().join("urdf/panda.urdf");
    let (ok, out, err) = armctl(&[
        "sim",
        "--urdf",
        urdf.to_str().unwrap(),
        "--params",
        params.to_str().unwrap(),
        "--trajectory",
        "setpoint:0.3,-0.5,0.2,-2.0,0.4,1.5,0.6",
        "--duration",
        "3",
        "--out",
        dir.to_str().unwrap(),
        "--json",
    ]);
    assert!(ok, "{err}");
    let summary: serde_json::Value = serde_json::from_str(&out).unwrap();
    for joint in summary["joints"].as_array().unwrap() {
        let final_error = joint["final_error"].as_f64().unwrap();
        assert!(final_error < 1e-2, "{}: {final_error}", joint["joint"]);
    }
    let warnings = summary["warnings"].to_string();
    assert!(
        warnings.contains("kd: at 1000 Hz") && warnings.contains("panda_joint"),
        "{warnings}"
    );
    assert_eq!(summary["saturated_commands"].as_u64(), Some(0), "{summary}");
    let _ = std::fs::remove_dir_all(dir);
}

/// A set point on a joint's URDF limit: the joint-limit protection stops the Panda's first
/// joint on its soft limit (0.05 rad inside), the others reach theirs, and the summary counts
/// the bounded commands (the text says so too). PD with gravity compensation, whose joints do
/// not push each other: under computed torque the first joint's standing error reaches the
/// others through M (the second joint rests 0.003 rad off).
#[test]
fn a_set_point_on_a_joint_limit_rests_on_the_soft_limit_and_is_counted() {
    let dir = out_dir("soft-limit");
    let args = |json: bool| {
        let mut args = vec![
            "sim",
            "--urdf",
            "urdf/panda.urdf",
            "--controller",
            "pd_gravity",
            "--params",
            "config/panda_pd_gravity.yaml",
            "--trajectory",
            "setpoint:2.8973,-0.5,0.2,-2.0,0.4,1.5,0.6",
            "--duration",
            "6",
            "--out",
            dir.to_str().unwrap(),
        ];
        if json {
            args.push("--json");
        }
        armctl(&args)
    };
    let (ok, out, err) = args(true);
    assert!(ok, "{err}");
    let summary: serde_json::Value = serde_json::from_str(&out).unwrap();
    let bounded = summary["joint_limited_commands"].as_u64().unwrap();
    assert!(bounded > 100, "bounded commands: {bounded}");
    for (i, joint) in summary["joints"].as_array().unwrap().iter().enumerate() {
        let final_error = joint["final_error"].as_f64().unwrap();
        let expected = if i == 0 { 0.05 } else { 0.0 };
        assert!(
            (final_error - expected).abs() < 1e-3,
            "{}: final error {final_error}",
            joint["joint"]
        );
    }
    let (ok, out, err) = args(false);
    assert!(ok, "{err}");
    assert!(
        out.contains(&format!(
            "commands bounded at a soft joint limit: {bounded}"
        )),
        "{out}"
    );
}
