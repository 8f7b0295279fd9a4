//! sim_node's logic on a scripted in-memory transport (no middleware): with a scene, the arm
//! touches the table and the force/torque sensor is published on `~/wrench`; with a pair scene,
//! each arm has its own command and joint-state topics and the held box's pose is published.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};

use armctl_nodes::follow_joint_trajectory::{ActionOutput, ActionResponse};
use armctl_nodes::msgs::{Float64MultiArray, JointState, PoseStamped, WrenchStamped};
use armctl_nodes::nodes::sim_node::SimNode;
use armctl_nodes::parameter_services::ParameterResponse;
use armctl_nodes::transport::{Incoming, LogLevel, NodeLogic, Outgoing, Topic, Transport};
use armctl_runtime::ros_args::RosArgs;

/// Delivers its script, each item as if it came on the subscription of that index, and
/// records what the node publishes (joint states by publication index) and logs.
#[derive(Default)]
struct Scripted {
    script: VecDeque<(usize, Incoming)>,
    received_on: usize,
    wrenches: Vec<WrenchStamped>,
    states: usize,
    states_on: HashMap<usize, Vec<JointState>>,
    poses: Vec<PoseStamped>,
    warnings: RefCell<Vec<String>>,
}

impl Transport for Scripted {
    async fn next(&mut self) -> Option<Incoming> {
        let (slot, incoming) = self.script.pop_front()?;
        self.received_on = slot;
        Some(incoming)
    }

    fn publish(&mut self, msg: Outgoing<'_>) {
        match msg {
            Outgoing::ExternalWrench(w) => self.wrenches.push(w.clone()),
            Outgoing::JointStates(_) => self.states += 1,
            _ => {}
        }
    }

    fn publish_on(&mut self, slot: usize, msg: Outgoing<'_>) {
        match msg {
            Outgoing::JointStates(s) => self.states_on.entry(slot).or_default().push(s.clone()),
            Outgoing::TargetPose(p) => self.poses.push(p.clone()),
            _ => {}
        }
        self.publish(msg);
    }

    fn received_on(&self) -> usize {
        self.received_on
    }

    fn subscriber_count(&self, _topic: Topic) -> usize {
        1
    }

    fn respond(&mut self, _id: u64, _response: ParameterResponse) {}

    fn announce_parameters(&mut self, _changed: &[(String, armctl_control::ParameterValue)]) {}

    fn respond_action(&mut self, _id: u64, _response: ActionResponse) {}

    fn publish_action(&mut self, _output: ActionOutput<'_>) {}

    fn log(&self, level: LogLevel, text: &str) {
        if level == LogLevel::Warn {
            self.warnings.borrow_mut().push(text.to_string());
        }
    }
}

fn ticks(n: usize) -> VecDeque<(usize, Incoming)> {
    (0..n).map(|_| (0, Incoming::Tick)).collect()
}

fn workspace(path: &str) -> String {
    format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))
}

fn sim_node_with(scene: &str, more: &[(&str, &str)]) -> Result<SimNode, String> {
    let mut overrides = vec![
        ("urdf_path".to_string(), workspace("urdf/panda.urdf")),
        ("scene_file".to_string(), scene.to_string()),
        ("hold_until_command".to_string(), "false".to_string()),
    ];
    overrides.extend(more.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let args = RosArgs {
        overrides,
        ..RosArgs::default()
    };
    SimNode::new(&args).map_err(|e| e.to_string())
}

fn sim_node(scene: &str) -> Result<SimNode, String> {
    sim_node_with(scene, &[])
}

#[tokio::test]
async fn the_panda_falls_onto_the_table_and_the_sensor_is_published_on_wrench() {
    let node = sim_node(&workspace("config/scenes/panda_table.yaml")).unwrap();
    let publications = &node.spec().publications;
    assert!(
        publications
            .iter()
            .any(|(topic, name)| *topic == Topic::ExternalWrench && name == "/sim_node/wrench"),
        "{publications:?}"
    );
    let mut transport = Scripted {
        script: ticks(400),
        ..Scripted::default()
    };
    node.run(&mut transport).await.unwrap();
    assert_eq!(transport.wrenches.len(), transport.states);
    let last = transport.wrenches.last().unwrap();
    assert_eq!(last.header.frame_id, "panda_link8");
    let f = &last.wrench.force;
    let force = (f.x * f.x + f.y * f.y + f.z * f.z).sqrt();
    assert!(force > 1.0, "the flange rests on the table: {f:?}");
    assert!(last.header.stamp.sec > 0 || last.header.stamp.nanosec > 0);
}

#[test]
fn a_bad_scene_stops_sim_node_naming_the_item() {
    let dir = std::env::temp_dir().join(format!("armctl-sim-node-scene-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scene = dir.join("scene.yaml");
    std::fs::write(
        &scene,
        "obstacles: [{name: floor, plane: {point: [0, 0, 0], normal: [0, 0, 0]}, stiffness: 1000.0}]\n",
    )
    .unwrap();
    let e = sim_node(scene.to_str().unwrap()).unwrap_err();
    assert!(
        e.contains("obstacle 'floor'") && e.contains("normal"),
        "{e}"
    );
    let e = sim_node("/nonexistent/scene.yaml").unwrap_err();
    assert!(e.contains("/nonexistent/scene.yaml"), "{e}");
}

fn slot_of(topics: &[(Topic, String)], name: &str) -> usize {
    topics
        .iter()
        .position(|(_, n)| n == name)
        .unwrap_or_else(|| panic!("no {name} in {topics:?}"))
}

fn command(data: Vec<f64>) -> Incoming {
    Incoming::Commands(Float64MultiArray {
        data,
        ..Float64MultiArray::default()
    })
}

#[tokio::test]
async fn a_pair_scene_gives_each_arm_its_topics_and_publishes_the_box() {
    let node = sim_node(&workspace("config/scenes/two_pandas_box.yaml")).unwrap();
    let spec = node.spec();
    let commands = [
        slot_of(&spec.subscriptions, "/left/computed_torque/commands"),
        slot_of(&spec.subscriptions, "/right/computed_torque/commands"),
    ];
    let states = [
        slot_of(&spec.publications, "/left/joint_states"),
        slot_of(&spec.publications, "/right/joint_states"),
    ];
    slot_of(&spec.publications, "/sim_node/object_pose");
    // The left arm's shoulder pushed, the right arm's first command of the wrong length.
    let mut script = VecDeque::new();
    for _ in 0..200 {
        script.push_back((
            commands[0],
            command(vec![0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 5.0]),
        ));
        script.push_back((commands[1], command(vec![0.0; 6])));
        script.push_back((0, Incoming::Tick));
    }
    let mut transport = Scripted {
        script,
        ..Scripted::default()
    };
    node.run(&mut transport).await.unwrap();
    let last = |a: usize| transport.states_on[&states[a]].last().unwrap().clone();
    let (left, right) = (last(0), last(1));
    assert_eq!(transport.states_on[&states[0]].len(), 200);
    assert_eq!(left.effort[6], 5.0, "the left command went to the left arm");
    assert_eq!(
        right.effort[6], 0.0,
        "the refused right command was not applied"
    );
    assert!(left.position[6] != right.position[6]);
    let warnings = transport.warnings.borrow();
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("right: command refused: 6 values")),
        "{warnings:?}"
    );
    assert_eq!(transport.poses.len(), 200);
    let pose = transport.poses.last().unwrap();
    assert_eq!(pose.header.frame_id, "world");
    // The box starts midway between the flanges (x = 1.339 / 2) and falls with the unheld arms.
    assert!((pose.pose.position.x - 0.6695).abs() < 0.05, "{pose:?}");
    let q = &pose.pose.orientation;
    assert!((q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w - 1.0).abs() < 1e-9);
}

#[test]
fn a_pair_scene_refuses_what_cannot_apply_to_two_arms() {
    let scene = workspace("config/scenes/two_pandas_box.yaml");
    let e = sim_node_with(&scene, &[("command_topic", "/efforts")]).unwrap_err();
    assert!(e.contains("command_topic") && e.contains("relative"), "{e}");
    let e = sim_node_with(
        &scene,
        &[("initial_positions", "[0.0, 0.0, 0.0, -1.5, 0.0, 1.5, 0.0]")],
    )
    .unwrap_err();
    assert!(e.contains("initial_positions") && e.contains("q0"), "{e}");
    let dir = std::env::temp_dir().join(format!("armctl-sim-node-pair-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tilted = dir.join("tilted.yaml");
    let text = std::fs::read_to_string(&scene).unwrap().replace(
        "rpy: [0.0, 0.0, 3.141592653589793]",
        "rpy: [0.3, 0.0, 3.141592653589793]",
    );
    std::fs::write(&tilted, text).unwrap();
    let e = sim_node(tilted.to_str().unwrap()).unwrap_err();
    assert!(
        e.contains("pair arm 'right'") && e.contains("gravity"),
        "{e}"
    );
    let reaching = dir.join("reaching.yaml");
    let text = std::fs::read_to_string(&scene).unwrap().replacen(
        "q0: [0.0, 0.3, 0.0, -2.0",
        "q0: [0.0, 0.3, 0.0, 2.0",
        1,
    );
    std::fs::write(&reaching, text).unwrap();
    let e = sim_node(reaching.to_str().unwrap()).unwrap_err();
    assert!(
        e.contains("pair arm 'left'") && e.contains("panda_joint4") && e.contains("limits"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `lockstep`: after joint states go out, time stands still until the command answering them
/// comes (here a script delivers ticks far faster than the 0.1 s a step waits); a pair waits
/// for both arms. Refused without `publish_clock`, naming both.
#[tokio::test]
async fn lockstep_steps_only_once_every_arm_answered() {
    let scene = workspace("config/scenes/two_pandas_box.yaml");
    let e = sim_node_with(&scene, &[("lockstep", "true")]).unwrap_err();
    assert!(e.contains("lockstep") && e.contains("publish_clock"), "{e}");
    let lockstep = [("lockstep", "true"), ("publish_clock", "true")];
    let node = sim_node_with(&scene, &lockstep).unwrap();
    let spec = node.spec();
    let commands = [
        slot_of(&spec.subscriptions, "/left/computed_torque/commands"),
        slot_of(&spec.subscriptions, "/right/computed_torque/commands"),
    ];
    let left_states = slot_of(&spec.publications, "/left/joint_states");
    let answer = |arm: usize| (commands[arm], command(vec![0.0; 7]));
    // Stepped once (nothing asked yet), then waits: the left arm alone does not release it;
    // both do, once per answer.
    let mut script = ticks(5);
    script.push_back(answer(0));
    script.extend(ticks(5));
    script.push_back(answer(1));
    script.extend(ticks(5));
    script.push_back(answer(0));
    script.push_back(answer(1));
    script.extend(ticks(5));
    let mut transport = Scripted {
        script,
        ..Scripted::default()
    };
    node.run(&mut transport).await.unwrap();
    let stamps: Vec<f64> = transport.states_on[&left_states]
        .iter()
        .map(|s| s.header.stamp.seconds())
        .collect();
    assert_eq!(stamps.len(), 3, "{stamps:?}");
    assert!(stamps.windows(2).all(|w| w[1] > w[0]), "{stamps:?}");
}
