//! Every command that reads a URDF warns the same way about an inertia no real body has,
//! naming the link and the joint that moves it, and refuses a velocity limit that is not a
//! finite number, naming the joint.

mod common;

use common::armctl;

/// The bundled planar arm with `edit` applied to its text, written to a file of its own.
fn planar_with(name: &str, from: &str, to: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(common::workspace().join("urdf/planar_2link.urdf")).unwrap();
    let edited = text.replacen(from, to, 1);
    assert_ne!(edited, text, "the edit must apply");
    let path = std::env::temp_dir().join(format!("armctl-{name}-{}.urdf", std::process::id()));
    std::fs::write(&path, edited).unwrap();
    path
}

#[test]
fn an_inertia_breaking_the_triangle_inequality_is_warned_about_by_every_command() {
    // Link 2's moments 0.001 + 0.001 < 0.01: no rigid body has them.
    let path = planar_with(
        "triangle",
        r#"<mass value="1.5"/>
      <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/>"#,
        r#"<mass value="1.5"/>
      <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.01"/>"#,
    );
    let urdf = path.to_str().unwrap();
    let out_dir = std::env::temp_dir().join(format!("armctl-triangle-sim-{}", std::process::id()));
    let out_dir = out_dir.to_str().unwrap();
    let runs: [&[&str]; 4] = [
        &["model", urdf],
        &["params", urdf],
        &["params", urdf, "--base"],
        &[
            "sim",
            "--urdf",
            urdf,
            "--duration",
            "0.01",
            "--out",
            out_dir,
        ],
    ];
    for args in runs {
        let (ok, out, err) = armctl(args);
        let said = format!("{out}{err}");
        assert!(ok, "{args:?}: {err}");
        assert!(
            said.contains("link 'link2' (child of joint 'joint2')")
                && said.contains("triangle inequality"),
            "{args:?} does not warn:\n{said}"
        );
    }
    std::fs::remove_file(&path).unwrap();
    let _ = std::fs::remove_dir_all(out_dir);
}

#[test]
fn an_infinite_velocity_limit_is_refused_naming_the_joint() {
    let path = planar_with(
        "velocity",
        r#"effort="50" velocity="4""#,
        r#"effort="50" velocity="inf""#,
    );
    let urdf = path.to_str().unwrap();
    for args in [["model", urdf], ["params", urdf]] {
        let (ok, _, err) = armctl(&args);
        assert!(
            !ok && err.contains("joint2") && err.contains("velocity must be positive and finite"),
            "{args:?}: {err}"
        );
    }
    std::fs::remove_file(&path).unwrap();
}
