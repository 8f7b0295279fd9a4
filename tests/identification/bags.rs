//! rosbag2 logs: MCAP and SQLite bags written by other tools identify as their CSV does, and
//! MCAP's own reader reads the joint states armctl writes (interop venv).

use super::*;

/// Runs `tests/interop/joint_state_bag.py` (the MCAP project's ROS 2 writer and reader).
fn bag_tool(args: &[&std::path::Path]) -> String {
    let python = armctl_e2e::interop_python::interop_python(std::path::Path::new(env!(
        "CARGO_TARGET_TMPDIR"
    )));
    let out = std::process::Command::new(python)
        .arg(armctl_e2e::workspace_dir().join("tests/interop/joint_state_bag.py"))
        .args(args)
        .output()
        .expect("running joint_state_bag.py");
    assert!(
        out.status.success(),
        "joint_state_bag.py {args:?}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn scratch_dir(name: &str) -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An exciting run of the Panda under computed torque, written as CSV to `dir`.
fn exciting_csv_log(dir: &std::path::Path) -> (Robot, JointLog, std::path::PathBuf) {
    let robot = panda();
    let trajectory = exciting(&robot);
    let mut controller = controller_by_name("computed_torque", &robot).unwrap();
    let log = record(
        &robot,
        SimConfig::ideal(),
        controller.as_mut(),
        &trajectory,
        12.0,
        false,
        0.02,
    );
    let csv = dir.join("run.csv");
    log.write_csv(&csv).unwrap();
    (robot, log, csv)
}

/// `from_bag`, read from a bag written of `csv` by another tool, is the log itself, and
/// identifies as the CSV does.
fn same_as_csv(robot: &Robot, log: &JointLog, from_bag: &JointLog, csv: &std::path::Path) {
    assert_eq!(from_bag.joint_names, log.joint_names);
    assert_eq!(from_bag.len(), log.len());
    for k in 0..log.len() {
        // Stamps are whole nanoseconds.
        assert!((from_bag.time[k] - log.time[k]).abs() < 1e-9, "time {k}");
        assert_eq!(from_bag.position[k], log.position[k], "position {k}");
        assert_eq!(from_bag.effort[k], log.effort[k], "effort {k}");
        assert_eq!(
            from_bag.velocity.as_ref().unwrap()[k],
            log.velocity.as_ref().unwrap()[k],
            "velocity {k}"
        );
    }
    let options = IdentifyOptions::default();
    let from_csv = identify(robot, &JointLog::read_csv(csv).unwrap(), &options).unwrap();
    let from_bag = identify(robot, from_bag, &options).unwrap();
    let scale = from_csv
        .base_values
        .iter()
        .fold(0.0_f64, |m, v| m.max(v.abs()));
    for ((name, a), b) in from_csv
        .base_names
        .iter()
        .zip(&from_csv.base_values)
        .zip(&from_bag.base_values)
    {
        assert!((a - b).abs() <= 1e-7 * scale, "{name}: csv {a}, bag {b}");
    }
    assert!(
        from_bag.holdout_overall < 0.05,
        "held-out error {}",
        from_bag.holdout_overall
    );
}

#[test]
fn a_rosbag2_mcap_log_written_by_mcap_tools_identifies_as_its_csv_does() {
    let dir = scratch_dir("identification-bag");
    let (robot, log, csv) = exciting_csv_log(&dir);
    let bag = dir.join("run.mcap");
    bag_tool(&[std::path::Path::new("write"), &csv, &bag]);
    let from_bag = armctl_nodes::bag::read_joint_states(&bag, "/joint_states").unwrap();
    same_as_csv(&robot, &log, &from_bag, &csv);
}

/// Humble's default storage: a bag directory with a `.db3` (SQLite) file and `metadata.yaml`,
/// written by the `rosbags` package; read as the directory and as the file. A wrong topic, a
/// bad directory and a damaged file are refused naming what is wrong.
#[test]
fn a_rosbag2_sqlite_bag_written_by_rosbags_identifies_as_its_csv_does() {
    let dir = scratch_dir("identification-db3");
    let (robot, log, csv) = exciting_csv_log(&dir);
    let bag = dir.join("run_bag");
    let _ = std::fs::remove_dir_all(&bag);
    let python = armctl_e2e::interop_python::interop_python(std::path::Path::new(env!(
        "CARGO_TARGET_TMPDIR"
    )));
    let out = std::process::Command::new(python)
        .arg(armctl_e2e::workspace_dir().join("tests/interop/db3_bag.py"))
        .args([&csv, &bag])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let from_dir = armctl_nodes::bag::read_joint_states(&bag, "/joint_states").unwrap();
    same_as_csv(&robot, &log, &from_dir, &csv);
    let db3 = std::fs::read_dir(&bag)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "db3"))
        .expect("a .db3 file in the bag");
    let from_file = armctl_nodes::bag::read_joint_states(&db3, "/joint_states").unwrap();
    assert_eq!(from_file.position, from_dir.position);

    let e = armctl_nodes::bag::read_joint_states(&bag, "/joint_state")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no topic /joint_state") && e.contains("/joint_states"),
        "{e}"
    );
    let e = armctl_nodes::bag::read_joint_states(&db3, "/chatter")
        .unwrap_err()
        .to_string();
    assert!(e.contains("std_msgs/msg/String"), "{e}");
    let metadata = std::fs::read_to_string(bag.join("metadata.yaml")).unwrap();
    let escaping = dir.join("escaping_bag");
    std::fs::create_dir_all(&escaping).unwrap();
    let name = db3.file_name().unwrap().to_str().unwrap();
    std::fs::write(
        escaping.join("metadata.yaml"),
        metadata.replace(name, "../run.csv"),
    )
    .unwrap();
    let compressed = dir.join("compressed_bag");
    std::fs::create_dir_all(&compressed).unwrap();
    let zstd = metadata.replace("compression_format: ''", "compression_format: zstd");
    assert_ne!(zstd, metadata, "rosbags writes compression_format: ''");
    std::fs::write(compressed.join("metadata.yaml"), zstd).unwrap();
    let e = armctl_nodes::bag::read_joint_states(&compressed, "/joint_states").unwrap_err();
    assert!(e.to_string().contains("compressed bag (zstd"), "{e}");
    let e = armctl_nodes::bag::read_joint_states(&escaping, "/joint_states")
        .unwrap_err()
        .to_string();
    assert!(e.contains("not inside the bag directory"), "{e}");
    let mut damaged = std::fs::read(&db3).unwrap();
    damaged.truncate(damaged.len() / 3);
    damaged[100..200].fill(0xA5);
    let damaged_path = dir.join("damaged.db3");
    std::fs::write(&damaged_path, damaged).unwrap();
    let e = armctl_nodes::bag::read_joint_states(&damaged_path, "/joint_states").unwrap_err();
    assert!(e.to_string().contains("damaged.db3"), "{e}");
    let e = armctl_nodes::bag::read_joint_states(&dir, "/joint_states")
        .unwrap_err()
        .to_string();
    assert!(e.contains("metadata.yaml"), "{e}");
}

#[test]
fn mcap_tools_read_the_joint_states_armctl_writes() {
    use armctl_nodes::msgs::{Header, JointState as JointStateMsg, Time};
    let states: Vec<JointStateMsg> = (0..200)
        .map(|k| {
            let t = 5.0 + k as f64 * 1e-3;
            JointStateMsg {
                header: Header {
                    stamp: Time::from_seconds(t),
                    frame_id: String::new(),
                },
                name: vec!["j1".into(), "j2".into()],
                position: vec![t.sin(), -0.5 * t],
                velocity: vec![t.cos(), -0.5],
                effort: vec![1.0 + t, f64::from(k)],
            }
        })
        .collect();
    let bag = scratch_dir("mcap-written").join("states.mcap");
    armctl_nodes::bag::write_joint_states(&bag, "/joint_states", &states).unwrap();
    let read: serde_json::Value =
        serde_json::from_str(&bag_tool(&[std::path::Path::new("read"), &bag])).unwrap();
    let read = read.as_array().unwrap();
    assert_eq!(read.len(), states.len());
    let floats = |v: &serde_json::Value| -> Vec<f64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    for (m, s) in read.iter().zip(&states) {
        assert_eq!(m["schema"], "sensor_msgs/msg/JointState");
        assert_eq!(m["name"], serde_json::json!(s.name));
        assert!((m["stamp"].as_f64().unwrap() - s.header.stamp.seconds()).abs() < 1e-9);
        assert_eq!(floats(&m["position"]), s.position);
        assert_eq!(floats(&m["velocity"]), s.velocity);
        assert_eq!(floats(&m["effort"]), s.effort);
    }
}
