//! `.xacro` robot descriptions: expanded with the xacro program (PyPI's, from the interop
//! venv of `tests/interop/setup_venv.sh`, which runs without ROS), with `--xacro-arg`; refused
//! with what to do when the program is missing; unexpanded markup in a `.urdf` named.

mod common;

use std::process::Command;

/// PATH with the interop venv's bin (where PyPI's xacro is) first.
fn path_with_xacro() -> String {
    let venv = format!("{}/cyclonedds-venv", env!("CARGO_TARGET_TMPDIR"));
    let setup = common::workspace().join("tests/interop/setup_venv.sh");
    let out = Command::new("sh").arg(setup).arg(&venv).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    format!("{venv}/bin:{}", std::env::var("PATH").unwrap_or_default())
}

fn armctl_with_path(path: &str, args: &[&str]) -> (bool, String, String) {
    common::armctl_with_env(args, &[("PATH", Some(path))])
}

const XACRO: &str = "tests/data/xacro/planar_2link.urdf.xacro";

#[test]
fn a_xacro_file_is_the_model_of_the_urdf_it_expands_to() {
    let path = path_with_xacro();
    let (ok, expanded, err) = armctl_with_path(&path, &["model", XACRO]);
    assert!(ok, "{err}");
    let (ok, plain, err) = armctl_with_path(&path, &["model", "urdf/planar_2link.urdf"]);
    assert!(ok, "{err}");
    let tables = |text: &str| {
        text.lines()
            .filter(|l| !l.starts_with("tip pose check"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(tables(&expanded), tables(&plain));
    let (ok, shorter, err) = armctl_with_path(&path, &["model", XACRO, "--xacro-arg", "l2:=0.5"]);
    assert!(ok, "{err}");
    assert!(
        shorter.contains("0.50000   0.00000   0.00000") && !shorter.contains("0.80000"),
        "{shorter}"
    );
    let (ok, _, err) = armctl_with_path(&path, &["model", XACRO, "--xacro-arg", "l2"]);
    assert!(!ok && err.contains("'l2' is not name:=value"), "{err}");
}

#[test]
fn without_the_xacro_program_the_error_says_how_to_get_it() {
    let (ok, _, err) = armctl_with_path("/usr/bin:/bin", &["model", XACRO]);
    assert!(!ok);
    assert!(
        err.contains("xacro program is not on PATH") && err.contains("pip install xacro"),
        "{err}"
    );
}

/// A .urdf still holding xacro markup is refused at its line, not read without the links the
/// markup stands for.
#[test]
fn unexpanded_xacro_in_a_urdf_is_refused_with_the_hint() {
    let dir = std::env::temp_dir().join(format!("armctl-xacro-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join("not_expanded.urdf");
    std::fs::copy(common::workspace().join(XACRO), &copy).unwrap();
    let (ok, _, err) = common::armctl(&["model", copy.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        err.contains("line 6")
            && err.contains("unexpanded xacro")
            && err.contains("pip install xacro"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}
