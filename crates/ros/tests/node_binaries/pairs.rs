//! Two arms of a pair scene in sim_node: a controller_node per arm holds the box, and one
//! controller_node carries it with both arms.

use super::*;

/// The `urdf_path` (the Panda) and `scene_file` overrides of a pair scene.
fn pair_parameters(scene: &str) -> (String, String) {
    (
        format!("urdf_path:={}", workspace("urdf/panda.urdf")),
        format!("scene_file:={}", workspace(scene)),
    )
}

/// sim_node with the pair scene, taking each arm's efforts on `<arm>/<command_topic>`.
fn pair_sim_node(domain: u16, urdf: &str, scene: &str, command_topic: &str) -> Running {
    let topic = format!("command_topic:={command_topic}");
    quiet(node(
        env!("CARGO_BIN_EXE_sim_node"),
        domain,
        &["--ros-args", "-p", urdf, "-p", scene, "-p", &topic],
    ))
}

/// two_arms.launch.xml as processes: sim_node with the two-Panda scene and a controller_node in
/// each arm's namespace, over DDS. Both arms are controlled and the box, published on
/// `/sim_node/object_pose`, stays held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_controller_nodes_hold_the_box_of_a_pair_scene_in_sim_node() {
    let domain = 94;
    let (urdf, scene) = pair_parameters("config/scenes/two_pandas_box.yaml");
    let mut nodes = vec![pair_sim_node(domain, &urdf, &scene, "pd_gravity/commands")];
    for ns in ["/left", "/right"] {
        nodes.push(quiet(node(
            env!("CARGO_BIN_EXE_controller_node"),
            domain,
            &[
                "--ros-args",
                "-r",
                &format!("__ns:={ns}"),
                "--params-file",
                &workspace("config/panda_pd_gravity.yaml"),
                "-p",
                &urdf,
            ],
        )));
    }
    for ns in ["/left", "/right"] {
        let mut l = listener(domain, &format!("{ns}/controller_node/state"));
        assert!(
            controlling(&mut l, Duration::from_secs(30)).await,
            "{ns}/controller_node is not controlling"
        );
    }
    let spec = NodeSpec {
        action: None,
        name: "box_watcher".into(),
        namespace: "/".into(),
        subscriptions: vec![(Topic::TargetPose, "/sim_node/object_pose".into())],
        publications: vec![],
        tick_rate: None,
        parameters: ParameterStore::new(vec![]),
    };
    let mut watcher = DdsTransport::start(&spec, &DdsOptions::loopback(domain)).unwrap();
    let mut heights = vec![];
    let watching = tokio::time::timeout(Duration::from_secs(30), async {
        // Two simulated seconds of the box (1 kHz).
        while heights.len() < 2000 {
            if let Some(Incoming::TargetPose(pose)) = watcher.next().await {
                assert_eq!(pose.header.frame_id, "world");
                heights.push(pose.pose.position.z);
            }
        }
    });
    assert!(
        watching.await.is_ok(),
        "{} box poses in 30 s",
        heights.len()
    );
    for Running(child) in &mut nodes {
        assert!(child.try_wait().unwrap().is_none(), "a node exited");
    }
    // Each controller holds its arm where it found it, without knowing of the box: its weight
    // sags the tools by what the PD gains allow (4 mm in `armctl sim`).
    let sag = heights[0] - heights.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(sag < 0.02, "the box sagged {sag} m");
}

/// The newest box pose on sim_node's `~/object_pose` within `patience`, and the log lines that
/// came meanwhile.
async fn box_position(
    watcher: &mut DdsTransport,
    patience: Duration,
) -> (Option<[f64; 3]>, Vec<String>) {
    let (mut newest, mut lines) = (None, vec![]);
    let _ = tokio::time::timeout(patience, async {
        loop {
            match watcher.next().await {
                Some(Incoming::TargetPose(pose)) => {
                    let p = pose.pose.position;
                    newest = Some([p.x, p.y, p.z]);
                }
                // Where the node logged it, then the text.
                Some(Incoming::Rosout(log)) => {
                    lines.push(format!("{}:{} {}", log.file, log.line, log.msg))
                }
                _ => {}
            }
        }
    })
    .await;
    (newest, lines)
}

/// One controller_node with `controller: cooperative` controls both arms of sim_node's
/// two-Panda scene over DDS, as config/two_pandas_cooperative.yaml configures it: it holds
/// the 2 kg box, then carries it 0.3 m to a target sent on `~/object_target` and stops there
/// (within 2 mm); a target in another frame is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_controller_node_carries_the_box_of_two_arms() {
    let domain = 95;
    let (urdf, scene) = pair_parameters("config/scenes/two_pandas_carry.yaml");
    let mut nodes = vec![pair_sim_node(
        domain,
        &urdf,
        &scene,
        "effort_controller/commands",
    )];
    nodes.push(quiet(node(
        env!("CARGO_BIN_EXE_controller_node"),
        domain,
        &[
            "--ros-args",
            "--params-file",
            &workspace("config/two_pandas_cooperative.yaml"),
            "-p",
            &urdf,
            "-p",
            &scene,
        ],
    )));
    let mut l = listener(domain, "/controller_node/state");
    assert!(
        controlling(&mut l, Duration::from_secs(30)).await,
        "controller_node is not controlling"
    );
    let spec = NodeSpec {
        action: None,
        name: "box_mover".into(),
        namespace: "/".into(),
        subscriptions: vec![
            (Topic::TargetPose, "/sim_node/object_pose".into()),
            (Topic::Rosout, "/rosout".into()),
        ],
        publications: vec![(Topic::TargetPose, "/controller_node/object_target".into())],
        tick_rate: None,
        parameters: ParameterStore::new(vec![]),
    };
    let mut mover = DdsTransport::start(&spec, &DdsOptions::loopback(domain)).unwrap();
    let start = box_position(&mut mover, Duration::from_millis(500))
        .await
        .0
        .expect("box poses");
    let waited = tokio::time::timeout(Duration::from_secs(10), async {
        while mover.subscriber_count(Topic::TargetPose) == 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    assert!(
        waited.await.is_ok(),
        "controller_node does not subscribe ~/object_target"
    );
    let mut target = armctl_nodes::msgs::PoseStamped::default();
    target.header.frame_id = "world".into();
    target.pose.orientation.w = 1.0;
    (
        target.pose.position.x,
        target.pose.position.y,
        target.pose.position.z,
    ) = (start[0], start[1] + 0.3, start[2]);
    mover.publish(Outgoing::TargetPose(&target));
    let mut elsewhere = target.clone();
    elsewhere.header.frame_id = "left/panda_link0".into();
    elsewhere.pose.position.z += 0.5;
    mover.publish(Outgoing::TargetPose(&elsewhere));
    // Simulated time runs at about real time: 1 s to move, then time to settle.
    let (end, lines) = box_position(&mut mover, Duration::from_secs(4)).await;
    let end = end.expect("box poses");
    let rejected = lines
        .iter()
        .find(|l| l.contains("object target rejected: frame 'left/panda_link0'"));
    // /rosout names the node's own call site, through the launch wrapper and the transport.
    assert!(
        rejected.is_some_and(|l| l.starts_with("crates/ros/src/nodes/controller_node/pair.rs:")),
        "{lines:?}"
    );
    for Running(child) in &mut nodes {
        assert!(child.try_wait().unwrap().is_none(), "a node exited");
    }
    let goal = [start[0], start[1] + 0.3, start[2]];
    let error = (0..3)
        .map(|k| (end[k] - goal[k]).powi(2))
        .sum::<f64>()
        .sqrt();
    println!("box from {start:?} to {end:?}: {error:e} m from the goal");
    assert!(error < 2e-3, "the box is {error} m from its goal");
}
