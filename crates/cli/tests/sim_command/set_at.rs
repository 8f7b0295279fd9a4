//! `--set-at T:NAME:=VALUE`: a parameter set during the run, as `ros2 param set` sets it on a
//! running node; what cannot be applied is refused before the run, naming the set.

use super::*;

const STIFFER: &str = "1:kp:=[900, 900, 900, 900, 375, 225, 75]";

#[test]
fn a_set_during_the_run_is_applied_at_its_time_and_listed() {
    let dir = out_dir("set-at");
    let out = dir.to_str().unwrap();
    let args = |extra: &[&'static str]| {
        let mut all = vec![
            "sim",
            "--urdf",
            "urdf/panda.urdf",
            "--params",
            "config/panda_pd_gravity.yaml",
            "--trajectory",
            "sine:0.2:0.5",
            "--duration",
            "2",
            "--out",
            out,
            "--json",
        ];
        all.extend_from_slice(extra);
        all
    };
    let (_, before, _) = armctl_ran(&args(&[]));
    let (_, after, _) = armctl_ran(&args(&["--set-at", STIFFER]));
    let summary = |text: &str| -> serde_json::Value { serde_json::from_str(text).unwrap() };
    let (before, after) = (summary(&before), summary(&after));
    let warnings = after["warnings"].to_string();
    assert!(
        warnings.contains("t = 1.000 s: parameter kp set to [900.0, 900.0"),
        "{warnings}"
    );
    // Stiffer from 1 s on: the second half tracks more closely, the first is the same.
    let rms = |s: &serde_json::Value| s["joints"][0]["rms_error"].as_f64().unwrap();
    assert!(
        rms(&after) < rms(&before),
        "{} vs {}",
        rms(&after),
        rms(&before)
    );
}

#[test]
fn a_set_that_cannot_apply_is_refused_before_the_run() {
    let dir = out_dir("set-at-refused");
    let out = dir.to_str().unwrap();
    for (set, named) in [
        ("1:kq:=1", "kq"),
        ("1:kp:=-3", "kp"),
        ("2.5:kp:=[1, 1, 1, 1, 1, 1, 1]", "outside the run's steps"),
        ("one:kp:=1", "T:NAME:=VALUE"),
    ] {
        let (ok, _, stderr) = armctl(&[
            "sim",
            "--urdf",
            "urdf/panda.urdf",
            "--duration",
            "2",
            "--set-at",
            set,
            "--out",
            out,
        ]);
        assert!(!ok, "{set} ran");
        assert!(
            stderr.contains(&format!("--set-at '{set}'")) && stderr.contains(named),
            "{set}: {stderr}"
        );
        assert!(!dir.join("run.csv").exists(), "{set}: a run was written");
    }
    let (ok, _, stderr) = armctl(&[
        "sim",
        "--urdf",
        "urdf/panda.urdf",
        "--scene",
        "config/scenes/two_pandas_box.yaml",
        "--set-at",
        STIFFER,
        "--out",
        out,
    ]);
    assert!(
        !ok && stderr.contains("--set-at sets one arm's parameters"),
        "{stderr}"
    );
}
