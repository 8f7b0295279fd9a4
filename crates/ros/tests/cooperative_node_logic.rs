//! controller_node with `controller: cooperative` on a scripted in-memory transport: what
//! arrives is a fixed list of messages (each on its subscription slot) and ticks; what the node
//! publishes (on which slot) and logs is recorded.

use std::collections::VecDeque;
use std::sync::Mutex;

use armctl_control::ParameterValue;
use armctl_nodes::follow_joint_trajectory::{ActionOutput, ActionResponse};
use armctl_nodes::msgs::{DiagnosticArray, DiagnosticStatus, Float64MultiArray, JointState};
use armctl_nodes::nodes::controller_node::ControllerNode;
use armctl_nodes::parameter_services::{ParameterRequest, ParameterResponse};
use armctl_nodes::transport::{Incoming, LogLevel, NodeLogic, Outgoing, Topic, Transport};
use armctl_runtime::ros_args::RosArgs;

#[derive(Default)]
struct Scripted {
    /// What arrives, and on which subscription slot.
    script: VecDeque<(usize, Incoming)>,
    slot: usize,
    /// Commands sent, with their publication slot.
    commands: Vec<(usize, Vec<f64>)>,
    /// `~/state` messages sent.
    states: usize,
    logs: Mutex<Vec<String>>,
    diagnostics: Vec<DiagnosticArray>,
}

impl Transport for Scripted {
    async fn next(&mut self) -> Option<Incoming> {
        let (slot, incoming) = self.script.pop_front()?;
        self.slot = slot;
        Some(incoming)
    }

    fn publish(&mut self, msg: Outgoing<'_>) {
        if let Outgoing::Diagnostics(d) = msg {
            self.diagnostics.push(d.clone());
        }
        self.publish_on(usize::MAX, msg);
    }

    fn publish_on(&mut self, slot: usize, msg: Outgoing<'_>) {
        match msg {
            Outgoing::Commands(Float64MultiArray { data, .. }) => {
                self.commands.push((slot, data.clone()))
            }
            Outgoing::State(_) => self.states += 1,
            _ => {}
        }
    }

    fn received_on(&self) -> usize {
        self.slot
    }

    fn subscriber_count(&self, _topic: Topic) -> usize {
        1
    }

    fn respond(&mut self, _id: u64, _response: ParameterResponse) {}

    fn announce_parameters(&mut self, _changed: &[(String, armctl_control::ParameterValue)]) {}

    fn respond_action(&mut self, _id: u64, _response: ActionResponse) {}

    fn publish_action(&mut self, _output: ActionOutput<'_>) {}

    fn log(&self, _level: LogLevel, text: &str) {
        self.logs.lock().unwrap().push(text.to_string());
    }
}

fn workspace(path: &str) -> String {
    format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))
}

fn args(overrides: &[(&str, &str)], remaps: &[(&str, &str)]) -> RosArgs {
    let mut all = vec![
        ("controller".to_string(), "cooperative".to_string()),
        ("urdf_path".into(), workspace("urdf/panda.urdf")),
        (
            "scene_file".into(),
            workspace("config/scenes/two_pandas_carry.yaml"),
        ),
        ("update_rate".into(), "100.0".into()),
    ];
    all.extend(
        overrides
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    RosArgs {
        overrides: all,
        remaps: remaps
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
        ..RosArgs::default()
    }
}

fn panda_state() -> JointState {
    JointState {
        name: (1..=7).map(|k| format!("panda_joint{k}")).collect(),
        position: vec![0.0, 0.3, 0.0, -2.0, 0.0, 2.3, 0.8],
        velocity: vec![0.0; 7],
        ..JointState::default()
    }
}

/// Only the left arm reports: it holds (naming the right arm's missing state) and is
/// commanded; the right arm, which never reported, is never sent anything, not even at the
/// stop.
#[tokio::test]
async fn an_arm_that_never_reported_is_never_commanded() {
    let node = ControllerNode::new(&args(&[], &[])).unwrap();
    let mut transport = Scripted::default();
    for _ in 0..5 {
        transport
            .script
            .push_back((0, Incoming::JointStates(panda_state())));
        transport.script.push_back((0, Incoming::Tick));
    }
    transport
        .script
        .push_back((0, Incoming::Shutdown("SIGINT")));
    node.run(&mut transport).await.unwrap();
    assert!(!transport.commands.is_empty());
    assert!(
        transport.commands.iter().all(|(slot, _)| *slot == 0),
        "{:?}",
        transport.commands.iter().map(|c| c.0).collect::<Vec<_>>()
    );
    let logs = transport.logs.lock().unwrap();
    assert!(
        logs.iter()
            .any(|l| l.contains("arm 'right' holds: no joint state")),
        "{logs:?}"
    );
    assert!(
        logs.iter()
            .any(|l| l.contains("stopping on SIGINT") && !l.contains("; ")),
        "{logs:?}"
    );
}

/// Both arms on one topic is refused at start, naming it.
#[test]
fn two_arms_on_one_topic_are_refused() {
    let aliased = args(&[], &[("right/joint_states", "left/joint_states")]);
    let e = ControllerNode::new(&aliased).unwrap_err().to_string();
    assert!(e.contains("would both take /left/joint_states"), "{e}");
    let absolute = args(&[("command_topic", "/commands")], &[]);
    let e = ControllerNode::new(&absolute).unwrap_err().to_string();
    assert!(e.contains("must be relative"), "{e}");
}

/// The pair's `/diagnostics`: none before a second has passed; then one status for the node,
/// the cooperative law, ERROR (holding) while the right arm has sent nothing.
#[tokio::test]
async fn the_pair_reports_its_loop_while_an_arm_is_silent() {
    // The left arm's state and ticks, the last one `wait` after the node was made.
    let run = |wait: std::time::Duration| async move {
        let node = ControllerNode::new(&args(&[], &[])).unwrap();
        let mut transport = Scripted::default();
        transport
            .script
            .push_back((0, Incoming::JointStates(panda_state())));
        transport.script.push_back((0, Incoming::Tick));
        std::thread::sleep(wait);
        transport.script.push_back((0, Incoming::Tick));
        node.run(&mut transport).await.unwrap();
        transport
    };
    let transport = run(std::time::Duration::ZERO).await;
    assert!(transport.diagnostics.is_empty(), "not yet a second");
    let transport = run(std::time::Duration::from_millis(1050)).await;
    let status = &transport
        .diagnostics
        .last()
        .expect("a report after a second")
        .status[0];
    assert_eq!(status.name, "controller_node: control loop");
    assert_eq!(status.level, DiagnosticStatus::ERROR, "{status:?}");
    assert!(
        status.message.contains("no joint state"),
        "{}",
        status.message
    );
    let law = status
        .values
        .iter()
        .find(|kv| kv.key == "controller")
        .unwrap();
    assert_eq!(law.value, "cooperative");
}

/// `state_publish_rate` set while running takes effect: at 1 Hz one `~/state` for a burst of
/// steps, at 0 (every step) one per step (the two-arm node once stored it and kept its rate).
#[tokio::test]
async fn a_live_state_publish_rate_takes_effect() {
    let node = ControllerNode::new(&args(&[("state_publish_rate", "1.0")], &[])).unwrap();
    let mut transport = Scripted::default();
    let burst = |script: &mut VecDeque<(usize, Incoming)>| {
        for _ in 0..5 {
            script.push_back((0, Incoming::JointStates(panda_state())));
            script.push_back((1, Incoming::JointStates(panda_state())));
            script.push_back((0, Incoming::Tick));
        }
    };
    burst(&mut transport.script);
    let every_step = vec![("state_publish_rate".into(), ParameterValue::Double(0.0))];
    transport.script.push_back((
        0,
        Incoming::ParameterRequest(1, ParameterRequest::Set(every_step)),
    ));
    burst(&mut transport.script);
    node.run(&mut transport).await.unwrap();
    assert_eq!(
        transport.states,
        1 + 5,
        "one in the first burst, then one per step"
    );
}
