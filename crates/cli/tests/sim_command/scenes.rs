//! Scenes with contact: pressing into the table, scenes refused.

use super::*;

/// The impedance law's promise against the table scene: pressed 1 cm into the table top, the
/// steady contact force is the law's stiffness times that centimetre, less the share the
/// table's own give takes (the two springs in series: K k / (K + k)), within 2%. The landing
/// peaks at 41 N, a collision at the default 30 N: work in contact raises the sensitivity.
#[test]
fn cartesian_impedance_presses_into_the_table_with_its_stiffness_times_the_depth() {
    let dir = out_dir("press");
    std::fs::create_dir_all(&dir).unwrap();
    let params = dir.join("gains.yaml");
    let stiffness = 500.0;
    std::fs::write(
        &params,
        format!("stiffness: [{stiffness}, {stiffness}, {stiffness}, 50.0, 50.0, 50.0]\ncollision_force: 100.0\n"),
    )
    .unwrap();
    let (ok, out, err) = armctl(&[
        "sim",
        "--urdf",
        "urdf/panda.urdf",
        "--scene",
        "config/scenes/panda_table.yaml",
        "--controller",
        "cartesian_impedance",
        "--params",
        params.to_str().unwrap(),
        "--target-pose",
        "0.58,0.0,0.59",
        "--duration",
        "5",
        "--out",
        dir.to_str().unwrap(),
        "--json",
    ]);
    assert!(ok, "{err}");
    let summary: serde_json::Value = serde_json::from_str(&out).unwrap();
    let flange = &summary["contacts"][0];
    assert_eq!(flange["point"], "flange");
    let force = flange["final_force"][2].as_f64().unwrap();
    let table = 50_000.0;
    let depth = 0.6 - 0.59;
    let expected = stiffness * table / (stiffness + table) * depth;
    println!(
        "steady force {force:.4} N, K d = {:.4} N, in series with the table {expected:.4} N",
        stiffness * depth
    );
    assert!(
        (force - expected).abs() < 0.02 * expected,
        "steady force {force} N, expected {expected} N"
    );
    assert!((force - stiffness * depth).abs() < 0.02 * stiffness * depth);
    let csv = std::fs::read_to_string(dir.join("run.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(header.contains("contact_flange_fz"), "{header}");
    assert!(dir.join("contact.png").is_file());
}

#[test]
fn a_scene_naming_a_link_off_the_chain_or_a_joint_space_target_is_refused() {
    let dir = out_dir("bad-scene");
    std::fs::create_dir_all(&dir).unwrap();
    let scene = dir.join("scene.yaml");
    std::fs::write(
        &scene,
        "obstacles: [{name: floor, plane: {point: [0, 0, 0], normal: [0, 0, 1]}, stiffness: 1000.0}]\npoints: [{link: gripper_finger}]\n",
    )
    .unwrap();
    let (ok, _, err) = armctl(&[
        "sim",
        "--urdf",
        "urdf/panda.urdf",
        "--scene",
        scene.to_str().unwrap(),
        "--duration",
        "0.01",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(
        err.contains("link 'gripper_finger' is not on the chain"),
        "{err}"
    );
    // Before, the reason was prefixed twice: "the scene: scene: ...".
    assert!(!err.contains("the scene: scene"), "{err}");
    let (ok, _, err) = armctl(&[
        "sim",
        "--urdf",
        "urdf/panda.urdf",
        "--controller",
        "computed_torque",
        "--target-pose",
        "0.5,0,0.5",
        "--duration",
        "0.01",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(
        err.contains("--target-pose needs a task-space law"),
        "{err}"
    );
}

/// The `armctl` command in a scene file's header (its comment lines, `\` continuing them).
fn header_command(text: &str) -> Option<Vec<String>> {
    let mut command = String::new();
    for line in text.lines().take_while(|l| l.starts_with('#')) {
        let line = line.trim_start_matches('#').trim();
        if command.is_empty() && !line.starts_with("armctl ") {
            continue;
        }
        command += line.trim_end_matches('\\');
        command.push(' ');
        if !line.ends_with('\\') {
            break;
        }
    }
    let words: Vec<String> = command.split_whitespace().map(str::to_string).collect();
    (!words.is_empty()).then_some(words)
}

/// Every scene file's header command runs as written (the UR5e's targets start with a minus
/// sign, which the command line once took for an option).
#[test]
fn each_scene_files_header_command_runs_as_written() {
    let mut ran = 0;
    for entry in std::fs::read_dir(workspace().join("config/scenes")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let Some(words) = header_command(&text) else {
            continue;
        };
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let dir = out_dir(&format!("header-{name}"));
        let mut args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
        args.extend(["--out", dir.to_str().unwrap()]);
        let (ok, _, err) = armctl(&args);
        assert!(ok, "{}: {}\n{err}", path.display(), words.join(" "));
        // The arm did what the header says, not a hold after a contact taken for a collision.
        assert!(!err.contains("holding"), "{}: {err}", path.display());
        ran += 1;
    }
    assert!(ran >= 4, "{ran} scene headers with a command");
}

/// Hybrid force/position control on the scene's force/torque sensor, as docs/controllers.md
/// shows it: the flange presses 10 N on the table. (The law refused at its first step, before
/// the sensor's first reading, and held the arm: "no measured wrench".)
#[test]
fn hybrid_force_control_presses_on_the_scenes_sensor() {
    let dir = out_dir("hybrid-sensor");
    std::fs::create_dir_all(&dir).unwrap();
    let params = dir.join("hybrid.yaml");
    std::fs::write(
        &params,
        "controller: hybrid_force_position\nselection: [0, 0, 1, 0, 0, 0]\ndesired_wrench: [0, 0, -10, 0, 0, 0]\n",
    )
    .unwrap();
    let (ok, out, err) = armctl(&[
        "sim",
        "--urdf",
        "urdf/panda.urdf",
        "--scene",
        "config/scenes/panda_table.yaml",
        "--params",
        params.to_str().unwrap(),
        "--target-pose",
        "0.58,0.1,0.6",
        "--duration",
        "4",
        "--out",
        dir.to_str().unwrap(),
        "--json",
    ]);
    assert!(ok, "{err}");
    assert!(!err.contains("holding"), "{err}");
    let summary: serde_json::Value = serde_json::from_str(&out).unwrap();
    let flange = &summary["contacts"][0];
    assert_eq!(flange["point"], "flange");
    let fz = flange["final_force"][2].as_f64().unwrap();
    assert!((fz - 10.0).abs() < 0.1, "{flange}");
}
