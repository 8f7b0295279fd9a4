//! The plots the commands write as a user finds them: `armctl identify` beside its parameter
//! file (held-out efforts and residuals), `armctl sim` of a task-space law the tip pose.

mod common;

use common::{armctl, panda_excitation, scratch, text};

use std::path::Path;

/// `path` is a PNG image and its `.svg` sibling an SVG drawing, both written by this run.
fn assert_png_and_svg(stem: &Path) {
    let png =
        std::fs::read(stem.with_extension("png")).unwrap_or_else(|e| panic!("{stem:?}.png: {e}"));
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{stem:?}.png is no PNG"
    );
    assert!(png.len() > 10_000, "{stem:?}.png has {} bytes", png.len());
    let svg = std::fs::read_to_string(stem.with_extension("svg")).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("<polyline"),
        "{stem:?}.svg"
    );
}

#[test]
fn identify_writes_its_plots_beside_the_parameter_file() {
    let dir = scratch("plots", "identify");
    let (excitation, _) = panda_excitation(&dir);
    let trajectory = format!("file:{}", text(&excitation));
    let run = dir.join("run");
    let (ok, _, err) = armctl(&[
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
        "--out",
        text(&run),
    ]);
    assert!(ok, "{err}");
    let model = dir.join("model.yaml");
    let log = run.join("run.csv");
    let (ok, stdout, err) = armctl(&[
        "identify",
        "urdf/panda.urdf",
        "--log",
        text(&log),
        "--friction",
        "--out",
        text(&model),
    ]);
    assert!(ok, "{err}");
    for name in ["model_efforts", "model_residuals"] {
        let stem = dir.join(name);
        assert_png_and_svg(&stem);
        for extension in ["png", "svg"] {
            let path = stem.with_extension(extension);
            assert!(
                stdout.contains(text(&path)),
                "{path:?} not named in: {stdout}"
            );
        }
    }
    // A panel per joint, with its measured and predicted efforts.
    let svg = std::fs::read_to_string(dir.join("model_efforts.svg")).unwrap();
    for label in ["panda_joint1", "panda_joint7", "measured", "predicted"] {
        assert!(
            svg.contains(&format!("\n{label}\n")),
            "no '{label}' in the efforts plot"
        );
    }

    // --json names them too, after the parameter file.
    let (ok, stdout, err) = armctl(&[
        "identify",
        "urdf/panda.urdf",
        "--log",
        text(&log),
        "--friction",
        "--out",
        text(&model),
        "--json",
    ]);
    assert!(ok, "{err}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let files: Vec<&str> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(files.len(), 5, "{files:?}");
    assert_eq!(files[0], text(&model));
    assert!(
        files.contains(&text(&dir.join("model_residuals.svg"))),
        "{files:?}"
    );
}

/// The summary's list of written files.
fn written(stdout: &str) -> &str {
    stdout
        .lines()
        .find(|l| l.starts_with("wrote: "))
        .unwrap_or_else(|| panic!("{stdout}"))
}

#[test]
fn a_task_space_run_writes_the_tip_pose_plot() {
    let out = scratch("plots", "tip");
    let (ok, stdout, err) = armctl(&[
        "sim",
        "--urdf",
        "urdf/panda.urdf",
        "--controller",
        "cartesian_impedance",
        "--target-pose",
        "0.5,0.1,0.5",
        "--duration",
        "1.5",
        "--out",
        text(&out),
    ]);
    assert!(ok, "{err}");
    let stem = out.join("tip_pose");
    assert_png_and_svg(&stem);
    assert!(
        written(&stdout).contains(text(&stem.with_extension("png"))),
        "{stdout}"
    );
    let svg = std::fs::read_to_string(stem.with_extension("svg")).unwrap();
    for label in [
        "tip x",
        "target x",
        "tip z",
        "target z",
        "orientation error about y",
    ] {
        assert!(
            svg.contains(&format!("\n{label}\n")),
            "no '{label}' in the tip pose plot"
        );
    }
}

#[test]
fn a_joint_space_run_writes_no_tip_pose_plot() {
    let out = scratch("plots", "joint");
    let (ok, stdout, err) = armctl(&[
        "sim",
        "--urdf",
        "urdf/panda.urdf",
        "--controller",
        "pd_gravity",
        "--duration",
        "0.2",
        "--out",
        text(&out),
    ]);
    assert!(ok, "{err}");
    assert!(!written(&stdout).contains("tip_pose"), "{stdout}");
    assert!(!out.join("tip_pose.png").exists());
}
