//! The summary says what ran: a run whose arm held says so and exits 3, a pose target's run
//! reports the tip's distance from that target, the chain the parameter files name is the
//! one simulated (or they are refused), and a start outside a joint's range is named.

use super::*;

/// `armctl sim ARGS --out DIR --json` on the Panda: held, the summary, stderr.
fn panda_run(name: &str, args: &[&str]) -> (bool, serde_json::Value, String) {
    let dir = out_dir(name);
    let out = dir.to_str().unwrap().to_string();
    let mut all = vec!["sim", "--urdf", "urdf/panda.urdf", "--out", &out, "--json"];
    all.extend_from_slice(args);
    let (held, stdout, stderr) = armctl_ran(&all);
    let summary = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    (held, summary, stderr)
}

/// A 3 kg tool the model lacks reads as a collision at once: before, the run exited 0 with
/// errors against the point where it held (1.2e-4 rad, "tracking").
#[test]
fn a_run_whose_arm_held_says_so_and_exits_3() {
    let tool = out_dir("heavy-tool").with_extension("yaml");
    std::fs::write(
        &tool,
        "payload: {mass: 3.0, com: [0, 0, 0.05], inertia: [[0.001, 0, 0], [0, 0.001, 0], [0, 0, 0.001]]}\n",
    )
    .unwrap();
    let (held, summary, stderr) = panda_run(
        "held",
        &[
            "--controller",
            "pd_gravity",
            "--params",
            "config/panda_pd_gravity.yaml",
            "--sim-config",
            tool.to_str().unwrap(),
            "--trajectory",
            "config/trajectories/panda_wave.yaml",
            "--duration",
            "2",
        ],
    );
    assert!(held);
    assert!(
        stderr.contains("the reference was cancelled there") && stderr.contains("collision"),
        "{stderr}"
    );
    let steps = summary["held_steps"].as_u64().unwrap();
    let from = summary["held_from"].as_f64().unwrap();
    assert!(steps > 1900 && from < 0.1, "{summary}");

    // The same without the tool: no hold, exit 0, no held_from.
    let (held, summary, _) = panda_run(
        "not-held",
        &[
            "--controller",
            "pd_gravity",
            "--params",
            "config/panda_pd_gravity.yaml",
            "--trajectory",
            "config/trajectories/panda_wave.yaml",
            "--duration",
            "2",
        ],
    );
    assert!(!held);
    assert_eq!(summary["held_steps"], 0);
    assert!(summary.get("held_from").is_none(), "{summary}");
}

/// Before, the tip row measured the tip against the joint reference, which a pose target
/// leaves at the start: an unreachable target read as a final error of 1.5e-7 m.
#[test]
fn a_pose_target_run_reports_the_tip_s_distance_from_the_target() {
    let run = |name: &str, target: &str| {
        panda_run(
            name,
            &[
                "--controller",
                "cartesian_impedance",
                "--target-pose",
                target,
                "--duration",
                "3",
            ],
        )
    };
    let (held, summary, stderr) = run("reachable", "0.5,0.1,0.5");
    assert!(!held, "{stderr}");
    let reached = summary["tip_to_target"]["final"].as_f64().unwrap();
    assert!(reached < 1e-3, "{summary}");
    // Before, the summary named the trajectory the run did not follow ("hold").
    assert_eq!(
        summary["trajectory"], "target pose 0.5,0.1,0.5",
        "{summary}"
    );
    let turned = summary["tip_to_target"]["final_orientation"]
        .as_f64()
        .unwrap();
    assert!(turned < 1e-2, "{summary}");

    // 2 m away: beyond the Panda's reach.
    let (_, summary, _) = run("unreachable", "2.0,0,0.5");
    let short = summary["tip_to_target"]["final"].as_f64().unwrap();
    assert!(short > 1.0, "{summary}");
}

#[test]
fn the_chain_of_the_parameter_files_is_the_one_simulated_or_refused() {
    let params = out_dir("chain").with_extension("yaml");
    let with = |text: &str, extra: &[&str]| {
        std::fs::write(&params, text).unwrap();
        let mut args = vec![
            "sim",
            "--urdf",
            "urdf/panda.urdf",
            "--params",
            params.to_str().unwrap(),
            "--duration",
            "0.2",
            "--out",
        ];
        let out = out_dir("chain-run");
        args.push(out.to_str().unwrap());
        args.push("--json");
        args.extend_from_slice(extra);
        armctl(&args)
    };
    // Before: tip_link was not read, and all seven joints were simulated.
    let (ok, out, err) = with("tip_link: panda_link5\n", &[]);
    assert!(ok, "{err}");
    let summary: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(summary["joints"].as_array().unwrap().len(), 5, "{out}");

    let (ok, _, err) = with("tip_link: panda_link5\n", &["--tip", "panda_link8"]);
    assert!(
        !ok && err.contains("tip_link 'panda_link5' disagrees with --tip"),
        "{err}"
    );
    let (ok, _, err) = with("tip_link: panda_lnk8\n", &[]);
    assert!(!ok && err.contains("panda_lnk8"), "{err}");
    let (ok, _, err) = with("urdf_path: urdf/ur5e.urdf\n", &[]);
    assert!(
        !ok && err.contains("urdf_path: armctl sim takes the robot from --urdf"),
        "{err}"
    );
    // The same URDF, as config/two_pandas_cooperative.yaml names it, is fine.
    let (ok, _, err) = with("urdf_path: urdf/panda.urdf\n", &[]);
    assert!(ok, "{err}");
}

#[test]
fn a_start_outside_a_joint_s_range_names_q0_and_the_joint() {
    let (ok, _, err) = armctl(&[
        "sim",
        "--urdf",
        "urdf/panda.urdf",
        "--q0",
        "4,0,0,-1.5,0,1.8,0",
        "--duration",
        "0.1",
    ]);
    assert!(!ok);
    assert!(
        err.contains("--q0: panda_joint1 = 4 is outside its range"),
        "{err}"
    );
}

/// Before, a step the simulator's joint-limit springs cannot integrate was refused as
/// "limits: frequency times dt must stay below 1", naming neither --dt nor its value.
#[test]
fn a_step_too_long_for_the_simulator_names_dt() {
    let (ok, _, err) = armctl(&[
        "sim",
        "--urdf",
        "urdf/panda.urdf",
        "--dt",
        "0.02",
        "--duration",
        "0.2",
    ]);
    assert!(!ok);
    assert!(
        err.contains("the simulator at --dt 0.02 s") && err.contains("frequency times dt"),
        "{err}"
    );
}
