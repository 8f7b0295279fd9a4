//! Mistakes a user makes in a waypoint file (`armctl sim --trajectory FILE.yaml`), each refused
//! with a message that names the mistake, not a symptom of it.

mod common;

use common::armctl;

/// `armctl sim` on the Panda with a waypoint file of `points` (YAML lines), for 0.1 s: the
/// error it prints (it must fail).
fn refusal(name: &str, joint_names: &str, points: &str) -> String {
    let dir = std::env::temp_dir().join(format!("armctl-trajectory-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("waypoints.yaml");
    std::fs::write(
        &file,
        format!("joint_names: {joint_names}\npoints:\n{points}"),
    )
    .unwrap();
    let (ok, out, err) = armctl(&[
        "sim",
        "--urdf",
        "urdf/panda.urdf",
        "--controller",
        "pd_gravity",
        "--trajectory",
        file.to_str().unwrap(),
        "--duration",
        "0.1",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(!ok, "{name}: accepted\n{out}");
    err
}

const NAMES: &str = "[panda_joint1, panda_joint2, panda_joint3, panda_joint4, panda_joint5, panda_joint6, panda_joint7]";

#[test]
fn a_comma_for_a_decimal_point_in_a_time_is_named() {
    let err = refusal(
        "comma",
        NAMES,
        "  - positions: [0, 0, 0, -1.5, 0, 1.5, 0]\n    time_from_start: 1,0\n",
    );
    // It was "data did not match any variant of untagged enum TimeFromStart".
    assert!(
        err.contains("time_from_start '1,0' is not a time") && err.contains("point 0"),
        "{err}"
    );
}

#[test]
fn a_position_outside_the_joints_range_is_named() {
    let err = refusal(
        "range",
        NAMES,
        "  - {positions: [0, 0, 0, -23, 0, 1.5, 0], time_from_start: 2.0}\n",
    );
    // It was an acceleration the reference would need.
    assert!(
        err.contains("point 0: panda_joint4 at -23 is outside its range"),
        "{err}"
    );
}

#[test]
fn a_misspelled_joint_is_named_beside_the_missing_one() {
    let names = NAMES.replace("panda_joint3", "panda_jiont3");
    let err = refusal(
        "spelling",
        &names,
        "  - {positions: [0, 0, 0, -1.5, 0, 1.5, 0], time_from_start: 2.0}\n",
    );
    assert!(
        err.contains("joint 'panda_joint3' is missing from joint_names")
            && err.contains("'panda_jiont3', not joints of the robot"),
        "{err}"
    );
}
