//! `armctl demo`'s ROS domain: its own (142) unless --domain-id or ROS_DOMAIN_ID gives one, so
//! a demo never mixes its joint states with a real arm's on domain 0; a ROS_DOMAIN_ID that is
//! not a number is refused, naming it.

mod common;

fn demo(domain_env: Option<&str>, extra: &[&str]) -> (bool, String, String) {
    let out_dir = std::env::temp_dir().join(format!("armctl-demo-domain-{}", std::process::id()));
    let out_dir = out_dir.to_str().unwrap();
    let mut args = vec!["demo", "--duration", "0.3", "--json", "--out", out_dir];
    args.extend(extra);
    let result = common::armctl_with_env(&args, &[("ROS_DOMAIN_ID", domain_env)]);
    let _ = std::fs::remove_dir_all(out_dir);
    result
}

#[test]
fn the_demo_runs_on_a_domain_of_its_own_unless_told() {
    let (ok, out, err) = demo(None, &[]);
    assert!(ok, "{err}");
    assert!(out.contains("ROS domain 142"), "{out}");
    let (ok, out, err) = demo(Some("151"), &[]);
    assert!(ok, "{err}");
    assert!(out.contains("ROS domain 151"), "{out}");
    // --domain-id wins over whatever the environment says.
    let out_dir = std::env::temp_dir().join(format!("armctl-demo-flag-{}", std::process::id()));
    let (ok, out, err) = common::armctl(&[
        "demo",
        "--duration",
        "0.3",
        "--json",
        "--domain-id",
        "152",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_dir_all(out_dir);
    assert!(ok, "{err}");
    assert!(out.contains("ROS domain 152"), "{out}");
    let (ok, _, err) = demo(Some("abc"), &[]);
    assert!(!ok && err.contains("ROS_DOMAIN_ID 'abc'"), "{err}");
}
