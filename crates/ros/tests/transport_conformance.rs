//! One scenario every backend must pass, written once against the `Transport` trait: every
//! topic of the table carries its message unchanged from one node to another, a second topic of
//! the same type is told apart by its slot (`publish_on`, `received_on`), joint states are
//! handed over newest-first after a burst, and the timer ticks. Run on DDS (loopback, its own
//! ROS domain); on rcl it is type-checked (`cargo check --tests --features doc-only`),
//! since running it needs a ROS installation.

use std::future::Future;
use std::time::Duration;

use armctl_nodes::msgs::{
    Clock, DiagnosticArray, DiagnosticStatus, Float64MultiArray, JointState, JointTrajectory,
    JointTrajectoryPoint, KeyValue, PoseStamped, Time, WrenchStamped,
};
use armctl_nodes::services::parameter_msgs::{Parameter, ParameterEvent, ParameterValue};
use armctl_nodes::transport::{Incoming, NodeSpec, Outgoing, Topic, Transport};
use armctl_nodes::RosError;
use armctl_runtime::node_parameters::ParameterStore;

/// Every topic a node can publish (all but /rosout, which is written through `log`).
const PUBLISHED: [Topic; 12] = [
    Topic::Clock,
    Topic::JointStates,
    Topic::Commands,
    Topic::State,
    Topic::Reference,
    Topic::TargetPose,
    Topic::ExternalWrench,
    Topic::ExternalTorques,
    Topic::ExternalTorqueBounds,
    Topic::ExternalWrenchEstimate,
    Topic::Diagnostics,
    Topic::ParameterEvents,
];

fn topic_name(topic: Topic) -> String {
    format!("/conformance/{topic:?}").to_lowercase()
}

/// A second commands topic, last in both nodes' lists (slot [`SECOND_COMMANDS`]).
const SECOND_COMMANDS: usize = PUBLISHED.len();

/// The listener's subscription of `/parameter_events`, after the second commands topic.
const PARAMETER_EVENTS: usize = SECOND_COMMANDS + 1;

fn spec(name: &str, subscribe: bool, tick_rate: Option<f64>) -> NodeSpec {
    let mut topics: Vec<(Topic, String)> = PUBLISHED.iter().map(|t| (*t, topic_name(*t))).collect();
    topics.push((Topic::Commands, "/conformance/second_commands".into()));
    let (subscriptions, publications) = if subscribe {
        let mut subscriptions = topics;
        subscriptions.push((Topic::ParameterEvents, "/parameter_events".into()));
        (subscriptions, vec![])
    } else {
        (vec![], topics)
    };
    NodeSpec {
        action: None,
        name: name.into(),
        namespace: "/".into(),
        subscriptions,
        publications,
        tick_rate,
        parameters: ParameterStore::new(vec![]),
    }
}

fn joint_state(k: u32) -> JointState {
    JointState {
        header: armctl_nodes::msgs::Header {
            stamp: Time { sec: 7, nanosec: k },
            frame_id: "base".into(),
        },
        name: vec!["a".into(), "b".into()],
        position: vec![f64::from(k), -1.5],
        velocity: vec![0.25, 1e-300],
        effort: vec![],
    }
}

/// One message of each published topic, as the receiver must see it.
fn samples() -> Vec<Incoming> {
    let mut array = Float64MultiArray::default();
    armctl_nodes::msgs::labelled_array(&[("effort", &[1.0, -2.0])], &mut array);
    let mut pose = PoseStamped::default();
    pose.pose.position.x = 0.4;
    pose.pose.orientation.w = 1.0;
    let mut wrench = WrenchStamped::default();
    wrench.wrench.force.z = -9.81;
    let trajectory = JointTrajectory {
        joint_names: vec!["a".into(), "b".into()],
        points: vec![JointTrajectoryPoint {
            positions: vec![0.1, 0.2],
            time_from_start: armctl_nodes::msgs::Duration { sec: 1, nanosec: 5 },
            ..JointTrajectoryPoint::default()
        }],
        ..JointTrajectory::default()
    };
    vec![
        Incoming::Clock(Clock {
            clock: Time { sec: 3, nanosec: 4 },
        }),
        Incoming::JointStates(joint_state(1)),
        Incoming::Commands(array.clone()),
        Incoming::State(array),
        Incoming::Reference(trajectory),
        Incoming::TargetPose(pose),
        Incoming::ExternalWrench(wrench.clone()),
        Incoming::ExternalTorques(JointState {
            effort: vec![0.5, -3.25],
            ..joint_state(2)
        }),
        Incoming::ExternalTorqueBounds(JointState {
            effort: vec![0.25, 1.5],
            ..joint_state(2)
        }),
        Incoming::ExternalWrenchEstimate(wrench),
        Incoming::Diagnostics(DiagnosticArray {
            status: vec![DiagnosticStatus {
                level: DiagnosticStatus::WARN,
                name: "controller_node: control loop".into(),
                message: "3 late cycles".into(),
                hardware_id: "panda".into(),
                values: vec![KeyValue {
                    key: "late cycles".into(),
                    value: "3".into(),
                }],
            }],
            ..DiagnosticArray::default()
        }),
        Incoming::ParameterEvents(ParameterEvent {
            stamp: Time { sec: 5, nanosec: 6 },
            node: "/talker".into(),
            changed_parameters: vec![Parameter {
                name: "kp".into(),
                value: ParameterValue::from_value(&armctl_control::ParameterValue::DoubleArray(
                    vec![100.0, 50.5],
                )),
            }],
            ..ParameterEvent::default()
        }),
    ]
}

fn outgoing(incoming: &Incoming) -> Outgoing<'_> {
    match incoming {
        Incoming::Clock(m) => Outgoing::Clock(m),
        Incoming::JointStates(m) => Outgoing::JointStates(m),
        Incoming::Commands(m) => Outgoing::Commands(m),
        Incoming::State(m) => Outgoing::State(m),
        Incoming::Reference(m) => Outgoing::Reference(m),
        Incoming::TargetPose(m) => Outgoing::TargetPose(m),
        Incoming::ExternalWrench(m) => Outgoing::ExternalWrench(m),
        Incoming::ExternalTorques(m) => Outgoing::ExternalTorques(m),
        Incoming::ExternalTorqueBounds(m) => Outgoing::ExternalTorqueBounds(m),
        Incoming::ExternalWrenchEstimate(m) => Outgoing::ExternalWrenchEstimate(m),
        Incoming::Diagnostics(m) => Outgoing::Diagnostics(m),
        Incoming::ControllerState(m) => Outgoing::ControllerState(m),
        Incoming::ControllerStateHumble(m) => Outgoing::ControllerStateHumble(m),
        Incoming::ParameterEvents(m) => Outgoing::ParameterEvents(m),
        Incoming::Rosout(m) => unreachable!("not published: {m:?}"),
        Incoming::ParameterRequest(..)
        | Incoming::Action(..)
        | Incoming::Tick
        | Incoming::Shutdown(_) => {
            unreachable!("not a message")
        }
    }
}

/// The next message (ticks skipped), or `None` after `wait`.
async fn next_message<T: Transport>(transport: &mut T, wait: Duration) -> Option<Incoming> {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        match tokio::time::timeout_at(deadline, transport.next()).await {
            Ok(Some(Incoming::Tick)) => continue,
            Ok(other) => return other,
            Err(_) => return None,
        }
    }
}

/// The scenario, on any backend.
async fn scenario<T, F>(start: impl Fn(NodeSpec) -> F)
where
    T: Transport,
    F: Future<Output = Result<T, RosError>>,
{
    let mut talker = start(spec("talker", false, None)).await.expect("talker");
    let mut listener = start(spec("listener", true, Some(200.0)))
        .await
        .expect("listener");
    // Discovery: every publication matched (bounded wait).
    for _ in 0..500 {
        if PUBLISHED.iter().all(|t| talker.subscriber_count(*t) > 0) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    for topic in PUBLISHED {
        assert!(
            talker.subscriber_count(topic) > 0,
            "{topic:?} never matched"
        );
    }
    // The timer ticks.
    let ticked = tokio::time::timeout(Duration::from_secs(2), async {
        while listener.next().await != Some(Incoming::Tick) {}
    });
    assert!(ticked.await.is_ok(), "no tick within 2 s");
    // Each topic carries its message unchanged, as the variant of the same name.
    for sample in samples() {
        talker.publish(outgoing(&sample));
        let got = next_message(&mut listener, Duration::from_secs(5)).await;
        assert_eq!(got.as_ref(), Some(&sample));
    }
    // Two topics of one type: the slot says which.
    let first = PUBLISHED
        .iter()
        .position(|t| *t == Topic::Commands)
        .unwrap();
    for (slot, value) in [(SECOND_COMMANDS, 2.0), (first, 1.0)] {
        let command = Float64MultiArray {
            data: vec![value],
            ..Float64MultiArray::default()
        };
        talker.publish_on(slot, Outgoing::Commands(&command));
        let got = next_message(&mut listener, Duration::from_secs(5)).await;
        assert_eq!(got, Some(Incoming::Commands(command)));
        assert_eq!(listener.received_on(), slot);
    }
    // The node's own announcements go to /parameter_events, not to a topic of that type its
    // spec publishes.
    let changed = [(
        "kp".to_string(),
        armctl_control::ParameterValue::Double(3.0),
    )];
    talker.announce_parameters(&changed);
    let got = next_message(&mut listener, Duration::from_secs(5)).await;
    let Some(Incoming::ParameterEvents(event)) = got else {
        panic!("no parameter event: {got:?}")
    };
    assert_eq!(listener.received_on(), PARAMETER_EVENTS);
    assert_eq!(event.node, "/talker");
    assert_eq!(event.changed_parameters[0].name, "kp");
    // A burst of joint states while the node is busy: only the newest is handed over.
    let burst: Vec<JointState> = (10..20).map(joint_state).collect();
    for state in &burst {
        talker.publish(Outgoing::JointStates(state));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut delivered = Vec::new();
    while let Some(m) = next_message(&mut listener, Duration::from_millis(300)).await {
        delivered.push(m);
    }
    assert_eq!(
        delivered.first(),
        Some(&Incoming::JointStates(joint_state(19))),
        "the newest of the burst first, not the oldest ({} delivered)",
        delivered.len()
    );
    assert_eq!(delivered.len(), 1, "{delivered:?}");
}

#[cfg(feature = "dds")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dds_backend() {
    use armctl_nodes::transport::dds::{DdsOptions, DdsTransport};
    scenario(|spec| async move { DdsTransport::start(&spec, &DdsOptions::loopback(151)) }).await;
}

/// Type-checked only: running it needs ROS 2 (rcl) installed.
#[cfg(feature = "r2r")]
#[allow(dead_code)]
async fn rcl_backend() {
    use armctl_nodes::transport::rcl::RclTransport;
    scenario(|spec| async move { RclTransport::start(&spec) }).await;
}
