//! `armctl demo` on every bundled robot: its default reference lies within that robot's
//! limits (derived from them, not tuned per robot), so each tracks; a reference the node
//! refuses ends the demo with a failing exit and the node's reason, not a table of zeros.

mod common;

use common::armctl;

fn demo(urdf: &str, domain: &str, extra: &[&str]) -> (bool, String, String) {
    let name = urdf.trim_end_matches(".urdf");
    let out = std::env::temp_dir().join(format!("armctl-demo-{name}-{}", std::process::id()));
    let urdf = format!("urdf/{urdf}");
    let mut args = vec![
        "demo",
        "--urdf",
        &urdf,
        "--duration",
        "3",
        "--domain-id",
        domain,
        "--json",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    armctl(&args)
}

#[test]
fn the_default_demo_tracks_on_every_bundled_robot() {
    let robots = [
        "panda.urdf",
        "ur5e.urdf",
        "puma560.urdf",
        "planar_2link.urdf",
    ];
    for (k, urdf) in robots.iter().enumerate() {
        let (ok, out, err) = demo(urdf, &(160 + k).to_string(), &[]);
        assert!(ok, "{urdf}: {err}");
        let summary: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(summary["holding_steps"], 0, "{urdf}: {out}");
        let joints = summary["joints"].as_array().expect("joints");
        for joint in joints {
            let (rms, max) = (
                joint["rms_error"].as_f64().unwrap(),
                joint["max_error"].as_f64().unwrap(),
            );
            // Computed torque on an exact model: the error is the sampling of a 1 kHz loop
            // over DDS, well under a milliradian (the reference moves up to 0.3 rad).
            assert!(rms < 1e-3 && max < 5e-3, "{urdf}: {joint}");
        }
        // The reference moved: a refused or held reference would track with zero error.
        let moved = joints
            .iter()
            .map(|j| j["reference_travel"].as_f64().unwrap())
            .fold(0.0, f64::max);
        assert!(
            moved > 0.05,
            "{urdf}: the reference moved {moved} rad: {out}"
        );
    }
}

#[test]
fn a_refused_reference_fails_the_demo_with_the_nodes_reason() {
    // A sine starts at speed: from rest that needs more than the UR5e's acceleration limits.
    let (ok, out, err) = demo("ur5e.urdf", "170", &["--trajectory", "sine:0.4:0.8"]);
    assert!(!ok, "{out}");
    assert!(
        err.contains("refused the reference") && err.contains("acceleration_limits"),
        "{err}"
    );
    assert!(
        !out.contains("rms"),
        "no table for a reference that never ran: {out}"
    );
}
