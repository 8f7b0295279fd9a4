//! Two arms holding a box: holding, carrying with the squeeze, moves beyond reach, the
//! cooperative law only on a pair.

use super::*;

/// Two Pandas under computed torque hold the box of `config/scenes/two_pandas_box.yaml`: it
/// sags while their feedback takes up its weight (computed torque knows nothing of the box),
/// then stays; the internal force stays small; both arms and the box are in run.csv.
#[test]
fn two_pandas_hold_a_box_and_the_run_records_both_arms_and_the_box() {
    let dir = out_dir("pair");
    let (ok, out, err) = armctl(&[
        "sim",
        "--urdf",
        "urdf/panda.urdf",
        "--scene",
        "config/scenes/two_pandas_box.yaml",
        "--controller",
        "computed_torque",
        "--duration",
        "3",
        "--out",
        dir.to_str().unwrap(),
        "--json",
    ]);
    assert!(ok, "{err}");
    let summary: serde_json::Value = serde_json::from_str(&out).unwrap();
    let drift = summary["max_object_drift"].as_f64().unwrap();
    let squeeze = summary["final_internal_force"].as_f64().unwrap();
    println!("box drift {drift} m, internal force {squeeze} N");
    assert!(drift < 0.03, "the box fell: {drift} m");
    assert!(squeeze.abs() < 5.0, "internal force {squeeze} N");
    assert_eq!(summary["held_steps"], serde_json::json!([0, 0]));
    let csv = std::fs::read_to_string(dir.join("run.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    for column in [
        "left/q_panda_joint1",
        "right/effort_panda_joint7",
        "object_dz",
        "internal_force",
    ] {
        assert!(header.contains(column), "{column} missing from {header}");
    }
    assert_eq!(csv.lines().count(), 3001);
}

/// Two Pandas under the cooperative law carry a 2 kg box 0.3 m sideways in 1 s: the box
/// follows its reference within 2 mm all along (what is left is the grasps' sag under the
/// load) and the squeeze stays within 1 N of its 10 N set point once built up.
#[test]
fn two_pandas_carry_a_box_with_the_squeeze_held() {
    let summary = cooperative_run(
        "carry",
        &["--scene", "config/scenes/two_pandas_carry.yaml"],
        "0,0.3,0",
    );
    let tracking = &summary["object_tracking"];
    let number = |v: &serde_json::Value| v.as_f64().unwrap();
    println!("{tracking}");
    assert_eq!(summary["controller"], "cooperative");
    assert_eq!(summary["held_steps"], serde_json::json!([0, 0]));
    assert!((number(&summary["max_object_drift"]) - 0.3).abs() < 2e-3);
    assert!(number(&tracking["position_error_max"]) < 2e-3, "{tracking}");
    assert!(number(&tracking["rotation_error_max"]) < 1e-2, "{tracking}");
    assert_eq!(number(&tracking["internal_force_set_point"]), 10.0);
    assert!(
        number(&tracking["internal_force_error_max"]) < 1.0,
        "{tracking}"
    );
    assert!(number(&tracking["goal_error_final"]) < 2e-3, "{tracking}");
    assert!((number(&summary["final_internal_force"]) - 10.0).abs() < 1.0);
}

/// A move beyond the left Panda's reach stops where the arm nears its singularity, says so,
/// and leaves the box held (no hold, the squeeze within 1 N); the summary reports how far the
/// box ended from the commanded goal. The parameter file's scene_file is the scene when
/// --scene is not given.
#[test]
fn a_move_beyond_reach_stops_short_and_says_so() {
    let summary = cooperative_run("beyond-reach", &[], "0.3,0,0");
    let tracking = &summary["object_tracking"];
    let number = |v: &serde_json::Value| v.as_f64().unwrap();
    assert_eq!(summary["held_steps"], serde_json::json!([0, 0]));
    let events = summary["events"].to_string();
    assert!(
        events.contains(
            "the object's move stopped where it was: arm 'left' nears the edge of its reach"
        ),
        "{events}"
    );
    assert!(number(&tracking["goal_error_final"]) > 0.05, "{tracking}");
    assert!(
        number(&tracking["internal_force_error_max"]) < 1.0,
        "{tracking}"
    );
}

/// What cannot work is refused with the reason: the cooperative law without a pair, an
/// object move for laws that do not move an object, a joint trajectory for the pair's law.
#[test]
fn cooperative_runs_only_on_a_pair_and_moves_only_the_object() {
    let run = |extra: &[&str]| {
        let mut args = vec!["sim", "--urdf", "urdf/panda.urdf", "--duration", "0.01"];
        args.extend_from_slice(extra);
        armctl(&args)
    };
    let (ok, _, err) = run(&["--controller", "cooperative"]);
    assert!(!ok && err.contains("it needs a pair scene"), "{err}");
    let carry = ["--scene", "config/scenes/two_pandas_carry.yaml"];
    let (ok, _, err) = run(&[&carry[..], &["--object-move", "0,0.1,0"]].concat());
    assert!(
        !ok && err.contains("--object-move is for 'cooperative'"),
        "{err}"
    );
    let (ok, _, err) = run(&["--object-move", "0,0.1,0"]);
    assert!(
        !ok && err.contains("--object-move moves the object of a pair scene"),
        "{err}"
    );
    let cooperative = [&carry[..], &["--controller", "cooperative"]].concat();
    let (ok, _, err) = run(&[&cooperative[..], &["--trajectory", "sine:0.1:0.5"]].concat());
    assert!(
        !ok && err.contains("give --object-move, not --trajectory"),
        "{err}"
    );
    let (ok, _, err) = run(&[&cooperative[..], &["--object-move", "0,x,0"]].concat());
    assert!(!ok && err.contains("--object-move '0,x,0'"), "{err}");
}

/// The table says what each line is: a box commanded to move is not said to drift (its
/// travel was printed as "box drift"), and the held steps name each arm and the total.
#[test]
fn the_pair_table_names_each_arm_and_a_moved_box_does_not_drift() {
    let dir = out_dir("pair-table");
    let (ok, out, err) = armctl(&[
        "sim",
        "--urdf",
        "urdf/panda.urdf",
        "--scene",
        "config/scenes/two_pandas_carry.yaml",
        "--params",
        "config/two_pandas_cooperative.yaml",
        "--object-move",
        "0,0.3,0",
        "--duration",
        "3",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert!(!out.contains("box drift"), "{out}");
    assert!(
        out.contains("steps held in the safe mode: 0 of 3000 (left), 0 of 3000 (right)"),
        "{out}"
    );
    assert!(
        out.contains("object from its commanded goal at the end"),
        "{out}"
    );
}
