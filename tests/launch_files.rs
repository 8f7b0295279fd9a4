//! The launch files, checked without ROS (`armctl_e2e::launch_check`): with their defaults and
//! with every robot and controller that has a parameter file; and the checker is shown to
//! catch a missing file, an undeclared parameter, a misspelt executable, a wrong joint list,
//! an undeclared package, and a bad in-loop (controller manager plugin) configuration.

use std::path::{Path, PathBuf};

use armctl_e2e::launch_check::{check_launch_file, configured_pairs, workspace_share, Share};
use armctl_e2e::workspace_dir;

const LAUNCH_FILES: [&str; 5] = [
    "launch/sim.launch.xml",
    "launch/hardware.launch.xml",
    "launch/hardware_in_loop.launch.xml",
    "launch/gazebo.launch.xml",
    "launch/gazebo_in_loop.launch.xml",
];

/// Two Pandas holding a box: checked with each Panda controller that has a parameter file.
const PANDA_PAIR_LAUNCH_FILE: &str = "launch/two_arms.launch.xml";

/// Two Pandas carrying a box under one cooperative controller_node.
const COOPERATIVE_LAUNCH_FILE: &str = "launch/two_arms_cooperative.launch.xml";

fn share() -> Share {
    workspace_share(&workspace_dir())
}

#[test]
fn every_launch_file_is_checked() {
    let mut found: Vec<String> = std::fs::read_dir(workspace_dir().join("launch"))
        .unwrap()
        .map(|e| format!("launch/{}", e.unwrap().file_name().to_string_lossy()))
        .collect();
    found.sort();
    let mut listed: Vec<String> = LAUNCH_FILES
        .iter()
        .chain(&[PANDA_PAIR_LAUNCH_FILE, COOPERATIVE_LAUNCH_FILE])
        .map(|s| s.to_string())
        .collect();
    listed.sort();
    assert_eq!(found, listed);
}

#[test]
fn launch_files_check_out_with_defaults_and_every_configured_robot_and_controller() {
    let share = share();
    let pairs = configured_pairs(&share);
    assert!(pairs.len() >= 6, "{pairs:?}");
    for file in LAUNCH_FILES {
        let problems = check_launch_file(&share, file, &[]);
        assert!(problems.is_empty(), "{problems:#?}");
        for (robot, controller) in &pairs {
            let args = [
                ("robot", robot.as_str()),
                ("controller", controller.as_str()),
            ];
            let problems = check_launch_file(&share, file, &args);
            assert!(problems.is_empty(), "{robot} {controller}: {problems:#?}");
        }
    }
}

#[test]
fn the_cooperative_launch_file_checks_out() {
    let problems = check_launch_file(&share(), COOPERATIVE_LAUNCH_FILE, &[]);
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn the_two_arm_launch_file_checks_out_with_every_panda_controller() {
    let share = share();
    let problems = check_launch_file(&share, PANDA_PAIR_LAUNCH_FILE, &[]);
    assert!(problems.is_empty(), "{problems:#?}");
    let pairs = configured_pairs(&share);
    let controllers: Vec<&str> = pairs
        .iter()
        .filter(|(robot, _)| robot == "panda")
        .map(|(_, controller)| controller.as_str())
        .collect();
    assert!(controllers.len() >= 4, "{controllers:?}");
    for controller in controllers {
        let problems = check_launch_file(
            &share,
            PANDA_PAIR_LAUNCH_FILE,
            &[("controller", controller)],
        );
        assert!(problems.is_empty(), "{controller}: {problems:#?}");
    }
}

/// A copy of launch/, config/, urdf/ to break.
struct Copy {
    dir: PathBuf,
    share: Share,
}

impl Copy {
    fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("armctl-launch-{tag}-{}", std::process::id()));
        for sub in ["launch", "config", "urdf"] {
            copy_dir(&workspace_dir().join(sub), &dir.join(sub));
        }
        let share = Share {
            root: dir.clone(),
            ..share()
        };
        Self { dir, share }
    }

    fn edit(&self, file: &str, from: &str, to: &str) {
        let path = self.dir.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{file} lacks {from}");
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    }

    fn problems(&self, file: &str) -> String {
        check_launch_file(&self.share, file, &[]).join("\n")
    }
}

impl Drop for Copy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn a_missing_config_file_is_caught() {
    let copy = Copy::new("missing");
    std::fs::remove_file(copy.dir.join("config/panda_computed_torque.yaml")).unwrap();
    let problems = copy.problems("launch/sim.launch.xml");
    assert!(
        problems.contains("panda_computed_torque.yaml") && problems.contains("does not exist"),
        "{problems}"
    );
    std::fs::remove_file(copy.dir.join("config/panda_ros2_controllers.yaml")).unwrap();
    let problems = copy.problems("launch/hardware.launch.xml");
    assert!(
        problems.contains("panda_ros2_controllers.yaml"),
        "{problems}"
    );
}

#[test]
fn an_undeclared_or_invalid_parameter_is_caught() {
    let copy = Copy::new("param");
    copy.edit(
        "config/panda_computed_torque.yaml",
        "    kp: [",
        "    kq: [1.0]\n    kp: [",
    );
    let problems = copy.problems("launch/sim.launch.xml");
    assert!(
        problems.contains("controller_node would not start") && problems.contains("kq"),
        "{problems}"
    );
    let copy = Copy::new("value");
    copy.edit(
        "config/panda_computed_torque.yaml",
        "state_timeout: 0.1",
        "state_timeout: -1.0",
    );
    let problems = copy.problems("launch/gazebo.launch.xml");
    assert!(problems.contains("state_timeout"), "{problems}");
    let copy = Copy::new("launch-param");
    copy.edit(
        "launch/sim.launch.xml",
        "name=\"command_topic\"",
        "name=\"command_topik\"",
    );
    assert!(copy
        .problems("launch/sim.launch.xml")
        .contains("command_topik"));
}

#[test]
fn a_misspelt_executable_or_undeclared_package_is_caught() {
    let copy = Copy::new("exec");
    copy.edit(
        "launch/sim.launch.xml",
        "exec=\"controller_node\"",
        "exec=\"controler_node\"",
    );
    assert!(copy
        .problems("launch/sim.launch.xml")
        .contains("no executable 'controler_node'"));
    let copy = Copy::new("pkg");
    copy.edit(
        "launch/hardware.launch.xml",
        "exec=\"spawner\"",
        "exec=\"spawn\"",
    );
    assert!(copy
        .problems("launch/hardware.launch.xml")
        .contains("no executable 'spawn'"));
    let mut copy = Copy::new("depend");
    copy.share.exec_depends.retain(|d| d != "ros_gz_bridge");
    assert!(copy
        .problems("launch/gazebo.launch.xml")
        .contains("'ros_gz_bridge'"));
}

#[test]
fn a_ros2_control_configuration_that_misses_the_arm_is_caught() {
    let copy = Copy::new("joints");
    copy.edit(
        "config/panda_ros2_controllers.yaml",
        "panda_joint7]",
        "panda_joint8]",
    );
    let problems = copy.problems("launch/hardware.launch.xml");
    assert!(problems.contains("panda_joint8"), "{problems}");
    let copy = Copy::new("topic");
    copy.edit(
        "launch/gazebo.launch.xml",
        "/effort_controller/commands",
        "/effort/commands",
    );
    let problems = copy.problems("launch/gazebo.launch.xml");
    assert!(
        problems.contains("listens on /effort_controller/commands"),
        "{problems}"
    );
}

#[test]
fn the_in_loop_controller_s_joints_and_parameters_are_checked_as_the_plugin_applies_them() {
    let copy = Copy::new("in_loop_joints");
    copy.edit(
        "config/panda_armctl_controllers.yaml",
        "panda_joint7]",
        "panda_joint8]",
    );
    let problems = copy.problems("launch/hardware_in_loop.launch.xml");
    assert!(problems.contains("panda_joint8"), "{problems}");
    let copy = Copy::new("in_loop_gain");
    copy.edit(
        "config/panda_armctl_controllers.yaml",
        "kd: [60.0,",
        "kd: [-60.0,",
    );
    let problems = copy.problems("launch/hardware_in_loop.launch.xml");
    assert!(problems.contains("'kd'"), "{problems}");
    let copy = Copy::new("in_loop_unknown");
    copy.edit(
        "config/panda_armctl_controllers.yaml",
        "safe_mode: gravity",
        "safe_mode: gravity\n    kq: 1.0",
    );
    let problems = copy.problems("launch/hardware_in_loop.launch.xml");
    assert!(problems.contains("kq"), "{problems}");
    // controller_node's command topic means nothing in the controller manager: flagged, in
    // the Gazebo variant too (its controller manager reads the same file). A controller's own
    // update_rate is the controller manager's, and fine.
    let copy = Copy::new("in_loop_node_only");
    copy.edit(
        "config/panda_armctl_controllers.yaml",
        "safe_mode: gravity",
        "safe_mode: gravity\n    update_rate: 500\n    command_topic: /efforts",
    );
    let problems = copy.problems("launch/gazebo_in_loop.launch.xml");
    assert!(
        problems.contains("'command_topic': controller_node's own")
            && !problems.contains("update_rate"),
        "{problems}"
    );
}

/// Mock hardware and Gazebo start each joint at its `initial_value` (0 when absent, which is
/// outside the Panda's fourth joint's range): every bundled URDF gives one per joint, at the
/// middle of the joint's limits, where sim_node starts the arm too.
#[test]
fn the_ros2_control_blocks_start_every_joint_in_the_middle_of_its_range() {
    for robot in ["panda", "planar_2link", "puma560", "ur5e"] {
        let path = armctl_e2e::workspace_dir().join(format!("urdf/{robot}.urdf"));
        let text = std::fs::read_to_string(&path).unwrap();
        let document = roxmltree::Document::parse(&text).unwrap();
        let model = armctl_model::Robot::from_urdf_str(&text, &Default::default()).unwrap();
        let middle = model.middle_configuration();
        let block = document
            .root_element()
            .children()
            .find(|n| n.has_tag_name("ros2_control"))
            .expect("a <ros2_control> block");
        for (joint, mid) in model.joint_names().zip(&middle) {
            let element = block
                .children()
                .find(|n| n.has_tag_name("joint") && n.attribute("name") == Some(joint))
                .unwrap_or_else(|| panic!("{robot}: no <joint name=\"{joint}\">"));
            let initial: f64 = element
                .descendants()
                .find(|n| {
                    n.has_tag_name("state_interface") && n.attribute("name") == Some("position")
                })
                .and_then(|s| {
                    s.children()
                        .find(|p| p.attribute("name") == Some("initial_value"))
                })
                .and_then(|p| p.text())
                .unwrap_or_else(|| panic!("{robot} {joint}: no position initial_value"))
                .trim()
                .parse()
                .unwrap();
            assert!(
                (initial - mid).abs() < 1e-4,
                "{robot} {joint}: starts at {initial}, middle {mid}"
            );
        }
    }
}

/// MoveIt's controllers file names controller_node's action as the node serves it
/// (`/<controller name>/<action_ns>` = `/controller_node/follow_joint_trajectory`) with the
/// Panda's chain joints in order, which the node requires of a goal.
#[test]
fn the_moveit_controllers_file_names_the_node_s_action_and_the_panda_s_joints() {
    let path = armctl_e2e::workspace_dir().join("config/moveit/panda_moveit_controllers.yaml");
    let yaml: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let manager = &yaml["moveit_simple_controller_manager"];
    assert_eq!(
        manager["controller_names"][0].as_str(),
        Some("controller_node")
    );
    let controller = &manager["controller_node"];
    assert_eq!(controller["type"].as_str(), Some("FollowJointTrajectory"));
    assert_eq!(
        controller["action_ns"].as_str(),
        Some("follow_joint_trajectory")
    );
    let joints: Vec<&str> = controller["joints"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|j| j.as_str().unwrap())
        .collect();
    let urdf = armctl_e2e::workspace_dir().join("urdf/panda.urdf");
    let panda = armctl_model::Robot::from_urdf_file(urdf, &Default::default()).unwrap();
    assert_eq!(joints, panda.joint_names().collect::<Vec<_>>());
}
