//! sim_node's logic on a scripted in-memory transport (no middleware): with a scene, the arm
//! touches the table and the force/torque sensor is published on `~/wrench`.

use std::collections::VecDeque;

use armctl_ros::msgs::WrenchStamped;
use armctl_ros::nodes::sim_node::SimNode;
use armctl_ros::parameter_services::ParameterResponse;
use armctl_ros::transport::{Incoming, LogLevel, NodeLogic, Outgoing, Topic, Transport};
use armctl_runtime::ros_args::RosArgs;

#[derive(Default)]
struct Scripted {
    script: VecDeque<Incoming>,
    wrenches: Vec<WrenchStamped>,
    states: usize,
}

impl Transport for Scripted {
    async fn next(&mut self) -> Option<Incoming> {
        self.script.pop_front()
    }

    fn publish(&mut self, msg: Outgoing<'_>) {
        match msg {
            Outgoing::ExternalWrench(w) => self.wrenches.push(w.clone()),
            Outgoing::JointStates(_) => self.states += 1,
            _ => {}
        }
    }

    fn subscriber_count(&self, _topic: Topic) -> usize {
        1
    }

    fn respond(&mut self, _id: u64, _response: ParameterResponse) {}

    fn log(&self, _level: LogLevel, _text: &str) {}
}

fn workspace(path: &str) -> String {
    format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))
}

fn sim_node(scene: &str) -> Result<SimNode, String> {
    let args = RosArgs {
        overrides: vec![
            ("urdf_path".into(), workspace("urdf/panda.urdf")),
            ("scene_file".into(), scene.to_string()),
            ("hold_until_command".into(), "false".into()),
        ],
        ..RosArgs::default()
    };
    SimNode::new(&args).map_err(|e| e.to_string())
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
        script: (0..400).map(|_| Incoming::Tick).collect(),
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
