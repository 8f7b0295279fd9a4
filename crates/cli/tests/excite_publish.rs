//! `armctl excite --publish` as a user runs it against a running controller_node (here sim_node
//! and controller_node in this process, on DDS over loopback, each with its own participant as
//! separate processes would have): the excitation reaches `~/reference` and the node takes it;
//! one the node refuses is reported with the node's reason; no node is reported by name.

mod common;

use armctl_nodes::launch::spawn;
use armctl_nodes::nodes::controller_node::ControllerNode;
use armctl_nodes::nodes::sim_node::SimNode;
use std::time::Duration;

use armctl_nodes::transport::dds::{DdsOptions, DdsTransport};
use armctl_nodes::transport::{Incoming, NodeSpec, Topic, Transport};
use armctl_runtime::node_parameters::ParameterStore;
use armctl_runtime::ros_args::RosArgs;

const DOMAIN: u16 = 98;

fn args(overrides: &[(&str, &str)]) -> RosArgs {
    let urdf = common::workspace().join("urdf/planar_2link.urdf");
    let mut all = vec![("urdf_path".to_string(), urdf.display().to_string())];
    all.extend(
        overrides
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    RosArgs {
        overrides: all,
        ..RosArgs::default()
    }
}

async fn excite_publish(extra: &[&str]) -> (bool, String, String) {
    let mut argv: Vec<String> = ["excite", "urdf/planar_2link.urdf", "--duration", "4"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let out =
        std::env::temp_dir().join(format!("armctl-excite-publish-{}.yaml", std::process::id()));
    argv.extend([
        "--out".to_string(),
        out.display().to_string(),
        "--publish".into(),
    ]);
    argv.extend(extra.iter().map(|s| s.to_string()));
    let domain = DOMAIN.to_string();
    tokio::task::spawn_blocking(move || {
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let env = [
            ("ROS_DOMAIN_ID", Some(domain.as_str())),
            ("ROS_LOCALHOST_ONLY", Some("1")),
        ];
        let result = common::armctl_with_env(&argv, &env);
        let _ = std::fs::remove_file(out);
        result
    })
    .await
    .unwrap()
}

/// Waits (bounded) for controller_node's `~/state`: it has a joint state and controls.
async fn controlling(dds: &DdsOptions) {
    let spec = NodeSpec {
        action: None,
        name: "watcher".into(),
        namespace: "/".into(),
        subscriptions: vec![(Topic::State, "/controller_node/state".into())],
        publications: vec![],
        tick_rate: None,
        parameters: ParameterStore::new(vec![]),
    };
    let mut watcher = DdsTransport::start(&spec, dds).unwrap();
    let state = async { while !matches!(watcher.next().await, Some(Incoming::State(_))) {} };
    tokio::time::timeout(Duration::from_secs(30), state)
        .await
        .expect("controller_node controls within 30 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_excitation_reaches_a_running_controller_node() {
    let dds = DdsOptions::loopback(DOMAIN);
    for bad in ["-1", "NaN", "1e30"] {
        let flag = format!("--wait={bad}");
        let (ok, _, err) = excite_publish(&[&flag]).await;
        assert!(
            !ok && err.contains("--wait within [0, 3600] s"),
            "{bad}: {err}"
        );
    }
    let (ok, _, err) = excite_publish(&["--wait", "1"]).await;
    assert!(
        !ok && err.contains("no subscription to /controller_node/reference"),
        "{err}"
    );

    let _sim = spawn(SimNode::new(&args(&[])).unwrap(), &dds).unwrap();
    let controller = ControllerNode::new(&args(&[("controller", "computed_torque")])).unwrap();
    let node = spawn(controller, &dds).unwrap();
    controlling(&dds).await;
    let (ok, out, err) = excite_publish(&[]).await;
    assert!(ok, "{err}");
    assert!(
        out.contains("/controller_node took the excitation: new reference: 81 points"),
        "{out}{err}"
    );
    drop(node);

    let few = [
        ("controller", "computed_torque"),
        ("max_reference_points", "10"),
    ];
    let _node = spawn(ControllerNode::new(&args(&few)).unwrap(), &dds).unwrap();
    controlling(&dds).await;
    let (ok, _, err) = excite_publish(&[]).await;
    assert!(!ok, "{err}");
    assert!(
        err.contains(
            "refused the excitation: reference refused: 81 points exceed max_reference_points (10)"
        ),
        "{err}"
    );
}
