//! controller_node's logic on a scripted in-memory transport (no middleware): what arrives is a
//! fixed list of messages, ticks and pauses; the efforts the node publishes are recorded.

use std::collections::VecDeque;
use std::time::Duration;

use armctl_ros::msgs::{Float64MultiArray, JointState};
use armctl_ros::nodes::controller_node::ControllerNode;
use armctl_ros::parameter_services::ParameterResponse;
use armctl_ros::transport::{Incoming, LogLevel, NodeLogic, Outgoing, Topic, Transport};
use armctl_runtime::ros_args::RosArgs;

/// One scripted event.
enum Step {
    Deliver(Incoming),
    /// The node's thread is late by this long (a stall: the ticker merges missed ticks).
    Pause(Duration),
}

#[derive(Default)]
struct Scripted {
    script: VecDeque<Step>,
    commands: Vec<Vec<f64>>,
    states: Vec<Float64MultiArray>,
}

impl Transport for Scripted {
    async fn next(&mut self) -> Option<Incoming> {
        loop {
            match self.script.pop_front()? {
                Step::Deliver(incoming) => return Some(incoming),
                Step::Pause(pause) => std::thread::sleep(pause),
            }
        }
    }

    fn publish(&mut self, msg: Outgoing<'_>) {
        match msg {
            Outgoing::Commands(Float64MultiArray { data, .. }) => self.commands.push(data.clone()),
            Outgoing::State(state) => self.states.push(state.clone()),
            _ => {}
        }
    }

    fn publish_on(&mut self, _slot: usize, msg: Outgoing<'_>) {
        self.publish(msg);
    }

    fn received_on(&self) -> usize {
        0
    }

    fn subscriber_count(&self, _topic: Topic) -> usize {
        1
    }

    fn respond(&mut self, _id: u64, _response: ParameterResponse) {}

    fn log(&self, _level: LogLevel, _text: &str) {}
}

fn node(overrides: &[(&str, &str)]) -> ControllerNode {
    let urdf = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/planar_2link.urdf");
    let mut all = vec![("urdf_path".to_string(), urdf.to_string())];
    all.extend(
        overrides
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    let args = RosArgs {
        overrides: all,
        ..RosArgs::default()
    };
    ControllerNode::new(&args).expect("node configures")
}

fn state(q: [f64; 2]) -> Incoming {
    Incoming::JointStates(JointState {
        name: vec!["joint1".into(), "joint2".into()],
        position: q.to_vec(),
        velocity: vec![0.0, 0.0],
        ..JointState::default()
    })
}

/// Wall-clock node at 100 Hz: after a 60 ms stall (the ticker merges the missed ticks into one)
/// the next step advances by the time that passed, not by the nominal 10 ms. Seen through the
/// rate limit, which lets an effort move `rate_limit * dt` per step.
#[tokio::test]
async fn a_step_after_a_stall_advances_by_the_measured_time() {
    let node = node(&[
        ("controller", "independent_pd"),
        ("update_rate", "100.0"),
        ("state_timeout", "5.0"),
        ("rate_limit", "10.0"),
    ]);
    let mut transport = Scripted {
        script: VecDeque::from([
            Step::Deliver(state([0.0, 0.0])),
            Step::Deliver(Incoming::Tick),
            // The arm is pushed away: the PD effort wants to jump far beyond 10 N m/s.
            Step::Deliver(state([0.5, -0.5])),
            Step::Deliver(Incoming::Tick),
            Step::Pause(Duration::from_millis(60)),
            Step::Deliver(Incoming::Tick),
        ]),
        ..Scripted::default()
    };
    node.run(&mut transport).await.unwrap();
    let c = &transport.commands;
    assert_eq!(c.len(), 3, "{c:?}");
    let moved = (c[2][0] - c[1][0]).abs();
    // Measured dt >= 60 ms (capped at 0.1 s): 0.6..1.0 N m. The nominal 10 ms gave 0.1 N m.
    assert!(
        (0.55..=1.0 + 1e-9).contains(&moved),
        "effort moved {moved} N m in the step after the stall"
    );
}

/// `~/state` counts the efforts the safety layer clipped at their limits (what `armctl demo`
/// reports as saturated commands; it printed a constant 0).
#[tokio::test]
async fn the_state_counts_clipped_efforts() {
    let node = node(&[
        ("controller", "independent_pd"),
        ("kp", "[1e5, 1e5]"),
        ("state_publish_rate", "0.0"),
    ]);
    let mut transport = Scripted {
        // Per-message mode: each state is answered; the arm is far from the held reference.
        script: VecDeque::from([
            Step::Deliver(state([0.0, 0.0])),
            Step::Deliver(state([0.5, -0.5])),
            Step::Deliver(state([0.5, -0.5])),
        ]),
        ..Scripted::default()
    };
    node.run(&mut transport).await.unwrap();
    let saturated: Vec<f64> = transport
        .states
        .iter()
        .map(|s| armctl_ros::msgs::labelled_block(s, "saturated").unwrap()[0])
        .collect();
    assert_eq!(
        saturated,
        vec![0.0, 2.0, 4.0],
        "both joints clipped in the last two steps"
    );
}
