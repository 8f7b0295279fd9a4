//! `armctl model` as a user runs it: tables, JSON, and clear errors.

mod common;

use common::armctl;

#[test]
fn table_names_every_joint() {
    let (ok, out, err) = armctl(&["model", "urdf/panda.urdf"]);
    assert!(ok, "{err}");
    for i in 1..=7 {
        assert!(out.contains(&format!("panda_joint{i}")), "{out}");
    }
    assert!(out.contains("off-chain moving joints: lock"), "{out}");
}

#[test]
fn json_follows_the_documented_schema() {
    let (ok, out, err) = armctl(&[
        "model",
        "urdf/puma560.urdf",
        "--base",
        "base_link",
        "--json",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    let joints = v["joints"].as_array().expect("joints");
    assert_eq!(joints.len(), 6);
    // The AKB table: joint 3 has a_2 = 0.4318, d_3 = -0.0934; joint 4 has a_3 = -0.0203.
    let close = |v: &serde_json::Value, want: f64| (v.as_f64().unwrap() - want).abs() < 1e-12;
    assert!(close(&joints[2]["a"], 0.4318));
    assert!(close(&joints[2]["d"], -0.0934));
    assert!(close(&joints[3]["a"], -0.0203));
    for key in [
        "name", "type", "a", "alpha", "d", "theta", "lower", "upper", "velocity", "effort",
    ] {
        assert!(joints[0].get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["base"].as_array().unwrap().len(), 4);
    assert!(close(&v["tool"][2][3], 0.0563));
    assert!(close(&v["links"][1]["mass"], 17.4));
    assert!(close(&v["links"][1]["inertia"][2][2], 0.539));
}

/// A URDF warning (here an inertia no real body has) is in the JSON's `warnings` and on
/// stderr, as without `--json` (it was in neither stream a reader of the JSON looks at).
#[test]
fn json_keeps_the_urdf_warnings_and_says_them_on_stderr() {
    let text = std::fs::read_to_string(common::workspace().join("urdf/panda.urdf")).unwrap();
    let bad = text.replacen(r#"<inertia ixx="0.70337""#, r#"<inertia ixx="50.0""#, 1);
    assert_ne!(bad, text, "the Panda's link 1 inertia changed");
    let path = std::env::temp_dir().join(format!("armctl-bad-inertia-{}.urdf", std::process::id()));
    std::fs::write(&path, bad).unwrap();
    let (ok, out, err) = armctl(&["model", path.to_str().unwrap(), "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    let warnings = v["warnings"].as_array().expect("warnings");
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("triangle inequality")),
        "{warnings:?}"
    );
    assert!(err.contains("warning: link 'panda_link1'"), "{err}");
    assert!(err.contains("triangle inequality"), "{err}");
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let (ok, _, err) = armctl(&["model", "no/such/file.urdf"]);
    assert!(!ok && err.contains("no/such/file.urdf"), "{err}");
    let (ok, _, err) = armctl(&["model", "urdf/panda.urdf", "--tip", "nowhere"]);
    assert!(!ok && err.contains("unknown tip link 'nowhere'"), "{err}");
    let (ok, _, err) = armctl(&["model", "urdf/panda.urdf", "--lock", "oops"]);
    assert!(!ok && err.contains("JOINT=VALUE"), "{err}");
    assert!(!err.contains("panicked"));
}

#[test]
fn a_malformed_urdf_is_refused_naming_the_joint_and_line() {
    let panda = std::fs::read_to_string(common::workspace().join("urdf/panda.urdf")).unwrap();
    let line = 1 + panda
        .lines()
        .position(|l| l.contains("name=\"panda_joint4\""))
        .unwrap();
    let bad = panda.replacen(
        "name=\"panda_joint4\" type=\"revolute\"",
        "name=\"panda_joint4\" type=\"REVOLUTE\"",
        1,
    );
    assert_ne!(bad, panda, "the edit must apply");
    let path = std::env::temp_dir().join(format!("armctl-bad-{}.urdf", std::process::id()));
    std::fs::write(&path, bad).unwrap();
    let (ok, _, err) = armctl(&["model", path.to_str().unwrap()]);
    std::fs::remove_file(&path).unwrap();
    let want =
        format!("line {line}: malformed URDF in joint 'panda_joint4': unknown variant `REVOLUTE`");
    assert!(!ok && err.contains(&want), "{err}");
}

/// `--closed-form` prints the two-link arm's M, C and G as the course derives them, and
/// refuses an arm of more than three joints with the reason.
#[test]
fn closed_forms_of_a_small_arm_and_a_refusal_for_a_large_one() {
    let (ok, out, err) = armctl(&["model", "urdf/planar_2link.urdf", "--closed-form"]);
    assert!(ok, "{err}");
    for line in [
        "M11 = a2^2 M2 + 2 c2 a2 MX2 + ZZ2 + ZZ1",
        "M22 = ZZ2",
        "C22 = 0",
    ] {
        assert!(out.contains(line), "{line} missing from\n{out}");
    }
    let (ok, _, err) = armctl(&["model", "urdf/panda.urdf", "--closed-form"]);
    assert!(
        !ok && err.contains("at most 3 joints, the arm has 7"),
        "{err}"
    );
}
