//! The default backend: ros2-client on RustDDS, no ROS installation needed. One DDS
//! participant per node. With `ROS_LOCALHOST_ONLY=1` (or `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`)
//! the participant only uses and advertises 127.0.0.1.
//!
//! Parameters: every declaration becomes a ROS parameter served by the crate's parameter
//! services; the shared validation ([`crate::node_parameters`]) rejects bad values with a reason
//! through the crate's validator callback, and accepted changes reach the node as
//! [`Incoming::Parameter`]. `/clock` is read as rosgraph_msgs/Clock by a subscription of ours.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use futures::FutureExt;
use ros2_client::dds::rustdds::DomainParticipantBuilder;
use ros2_client::qos::History;
use ros2_client::ros2::LogLevel as RosLogLevel;
use ros2_client::{
    rosout, Context, MessageTypeName, Name, Node, NodeName, NodeOptions, ParameterValue, Publisher,
    QosProfile, Subscription,
};
use tokio::sync::mpsc;

use crate::controller_core::LogLevel;
use crate::msgs;
use crate::node_parameters::ParameterStore;
use crate::params_file::RosValue;
use crate::transport::{Incoming, NodeSpec, Topic, Transport};
use crate::RosError;

fn transport(e: impl std::fmt::Display) -> RosError {
    RosError::Transport {
        reason: e.to_string(),
    }
}

/// Whether ROS's environment asks for localhost-only discovery.
pub fn localhost_only() -> bool {
    std::env::var("ROS_LOCALHOST_ONLY").is_ok_and(|v| v == "1")
        || std::env::var("ROS_AUTOMATIC_DISCOVERY_RANGE")
            .is_ok_and(|v| v.eq_ignore_ascii_case("LOCALHOST"))
}

fn domain_id() -> u16 {
    std::env::var("ROS_DOMAIN_ID")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn context() -> Result<Context, RosError> {
    if localhost_only() {
        let participant = DomainParticipantBuilder::new(domain_id())
            .with_only_networks([IpAddr::V4(Ipv4Addr::LOCALHOST)])
            .build()
            .map_err(transport)?;
        Context::from_domain_participant(participant).map_err(transport)
    } else {
        Context::with_options(ros2_client::ContextOptions::new().domain_id(domain_id()))
            .map_err(transport)
    }
}

fn to_ros(value: &ParameterValue) -> Option<RosValue> {
    Some(match value {
        ParameterValue::Boolean(b) => RosValue::Bool(*b),
        ParameterValue::Integer(i) => RosValue::Integer(*i),
        ParameterValue::Double(d) => RosValue::Double(*d),
        ParameterValue::String(s) => RosValue::String(s.clone()),
        ParameterValue::DoubleArray(v) => RosValue::DoubleArray(v.clone()),
        ParameterValue::IntegerArray(v) => {
            RosValue::DoubleArray(v.iter().map(|i| *i as f64).collect())
        }
        ParameterValue::StringArray(v) => RosValue::StringArray(v.clone()),
        ParameterValue::BooleanArray(v) => RosValue::BoolArray(v.clone()),
        _ => return None,
    })
}

fn from_ros(value: &RosValue) -> ParameterValue {
    match value {
        RosValue::Bool(b) => ParameterValue::Boolean(*b),
        RosValue::Integer(i) => ParameterValue::Integer(*i),
        RosValue::Double(d) => ParameterValue::Double(*d),
        RosValue::String(s) => ParameterValue::String(s.clone()),
        RosValue::DoubleArray(v) => ParameterValue::DoubleArray(v.clone()),
        RosValue::StringArray(v) => ParameterValue::StringArray(v.clone()),
        RosValue::BoolArray(v) => ParameterValue::BooleanArray(v.clone()),
    }
}

fn options(
    parameters: &ParameterStore,
    changes: mpsc::UnboundedSender<(String, RosValue)>,
) -> NodeOptions {
    let mut options = NodeOptions::new()
        .enable_rosout(true)
        .start_parameter_services(true)
        .allow_undeclared_parameters(false);
    for d in parameters.declarations() {
        if d.name != "use_sim_time" {
            options = options.declare_parameter(
                &d.name,
                from_ros(parameters.get(&d.name).unwrap_or(&d.default)),
            );
        }
    }
    let store = parameters.clone();
    options
        .parameter_validator(Box::new(move |name: &str, value: &ParameterValue| {
            let Some(value) = to_ros(value) else {
                return Err("unsupported parameter type".into());
            };
            // Start values are accepted again (the crate re-validates them at creation);
            // read-only ones only at their start value.
            if store.get(name) == Some(&value) {
                return Ok(());
            }
            store
                .validate(name, &value, false)
                .map(|_| ())
                .map_err(|e| e.to_string())
        }))
        .parameter_set_action(Box::new(move |name: &str, value: &ParameterValue| {
            if let Some(value) = to_ros(value) {
                let _ = changes.send((name.to_string(), value));
            }
            Ok(())
        }))
}

/// A node on DDS.
pub struct DdsTransport {
    node: Node,
    _context: Context,
    qos: QosProfile,
    publishers: Vec<(Topic, Publisher<msgs::Float64MultiArray>)>,
    joint_state_publisher: Option<Publisher<msgs::JointState>>,
    joint_states: Option<Subscription<msgs::JointState>>,
    commands: Option<Subscription<msgs::Float64MultiArray>>,
    references: Option<Subscription<msgs::JointTrajectory>>,
    target_poses: Option<Subscription<msgs::PoseStamped>>,
    wrenches: Option<Subscription<msgs::WrenchStamped>>,
    clock: Option<Subscription<msgs::Clock>>,
    changes: mpsc::UnboundedReceiver<(String, RosValue)>,
    ticker: Option<tokio::time::Interval>,
    starting: bool,
}

impl std::fmt::Debug for DdsTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DdsTransport")
            .field("node", &self.node.fully_qualified_name())
            .finish()
    }
}

fn type_name(topic: Topic) -> MessageTypeName {
    match topic {
        Topic::JointStates => MessageTypeName::new("sensor_msgs", "JointState"),
        Topic::Commands | Topic::State => MessageTypeName::new("std_msgs", "Float64MultiArray"),
        Topic::Reference => MessageTypeName::new("trajectory_msgs", "JointTrajectory"),
        Topic::TargetPose => MessageTypeName::new("geometry_msgs", "PoseStamped"),
        Topic::ExternalWrench => MessageTypeName::new("geometry_msgs", "WrenchStamped"),
        Topic::Clock => MessageTypeName::new("rosgraph_msgs", "Clock"),
    }
}

impl DdsTransport {
    /// Starts the node (must run inside a tokio runtime: the spinner is spawned on it).
    pub fn start(spec: &NodeSpec) -> Result<Self, RosError> {
        let context = context()?;
        let (tx, changes) = mpsc::unbounded_channel();
        let name = NodeName::new(&spec.namespace, &spec.name).map_err(transport)?;
        let mut node = context
            .new_node(name, options(&spec.parameters, tx))
            .map_err(transport)?;
        let spinner = node.spinner().map_err(transport)?;
        tokio::spawn(spinner.spin().map(|_| ()));
        // Reliable, keep-last 10: what rclcpp's QoS(10) is; best-effort publishers would need
        // a best-effort subscription.
        let qos = QosProfile::publisher_default().history(History::KeepLast { depth: 10 });
        let mut transport = Self {
            node,
            _context: context,
            qos,
            publishers: Vec::new(),
            joint_state_publisher: None,
            joint_states: None,
            commands: None,
            references: None,
            target_poses: None,
            wrenches: None,
            clock: None,
            changes,
            ticker: spec.tick_rate.map(|hz| {
                let mut interval = tokio::time::interval(Duration::from_secs_f64(1.0 / hz));
                interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
                interval
            }),
            starting: true,
        };
        for (topic, name) in &spec.subscriptions {
            transport.subscribe(*topic, name)?;
        }
        for (topic, name) in &spec.publications {
            transport.advertise(*topic, name)?;
        }
        Ok(transport)
    }

    fn topic(
        &mut self,
        topic: Topic,
        name: &str,
    ) -> Result<ros2_client::dds::rustdds::Topic, RosError> {
        let name = Name::parse(name).map_err(|e| RosError::Transport {
            reason: format!("topic '{name}': {e}"),
        })?;
        self.node
            .create_topic(&name, type_name(topic), &self.qos)
            .map_err(transport)
    }

    fn subscribe(&mut self, topic: Topic, name: &str) -> Result<(), RosError> {
        let t = self.topic(topic, name)?;
        let node = &mut self.node;
        match topic {
            Topic::JointStates => {
                self.joint_states = Some(node.create_subscription(&t, None).map_err(transport)?)
            }
            Topic::Commands => {
                self.commands = Some(node.create_subscription(&t, None).map_err(transport)?)
            }
            Topic::Reference => {
                self.references = Some(node.create_subscription(&t, None).map_err(transport)?)
            }
            Topic::TargetPose => {
                self.target_poses = Some(node.create_subscription(&t, None).map_err(transport)?)
            }
            Topic::ExternalWrench => {
                self.wrenches = Some(node.create_subscription(&t, None).map_err(transport)?)
            }
            Topic::Clock => {
                let best_effort = QosProfile::subscription_default();
                self.clock = Some(
                    node.create_subscription(&t, Some(best_effort))
                        .map_err(transport)?,
                );
            }
            Topic::State => {
                return Err(RosError::Transport {
                    reason: "~/state is published, not subscribed".into(),
                })
            }
        }
        Ok(())
    }

    fn advertise(&mut self, topic: Topic, name: &str) -> Result<(), RosError> {
        let t = self.topic(topic, name)?;
        match topic {
            Topic::JointStates => {
                self.joint_state_publisher =
                    Some(self.node.create_publisher(&t, None).map_err(transport)?)
            }
            Topic::Commands | Topic::State => {
                let publisher = self.node.create_publisher(&t, None).map_err(transport)?;
                self.publishers.push((topic, publisher));
            }
            other => {
                return Err(RosError::Transport {
                    reason: format!("{other:?} is not published by armctl nodes"),
                })
            }
        }
        Ok(())
    }
}

/// A future that never resolves when the subscription is absent.
async fn take<M: serde::de::DeserializeOwned + 'static>(
    sub: &Option<Subscription<M>>,
) -> Option<M> {
    match sub {
        Some(s) => s.async_take().await.ok().map(|(m, _)| m),
        None => futures::future::pending().await,
    }
}

async fn tick(ticker: &mut Option<tokio::time::Interval>) {
    match ticker {
        Some(t) => {
            t.tick().await;
        }
        None => futures::future::pending().await,
    }
}

impl Transport for DdsTransport {
    async fn next(&mut self) -> Option<Incoming> {
        if self.starting {
            // The set action also runs once per start value at creation: not changes.
            while self.changes.try_recv().is_ok() {}
            self.starting = false;
        }
        loop {
            let incoming = tokio::select! {
                biased;
                change = self.changes.recv() => change.map(|(n, v)| Incoming::Parameter(n, v)),
                m = take(&self.joint_states) => m.map(Incoming::JointState),
                m = take(&self.commands) => m.map(Incoming::Command),
                m = take(&self.references) => m.map(Incoming::Reference),
                m = take(&self.target_poses) => m.map(Incoming::TargetPose),
                m = take(&self.wrenches) => m.map(Incoming::ExternalWrench),
                m = take(&self.clock) => m.map(|c| Incoming::Clock(c.clock.seconds())),
                _ = tick(&mut self.ticker) => Some(Incoming::Tick),
            };
            // A read error on one topic (a malformed sample) is skipped, not fatal.
            if incoming.is_some() {
                return incoming;
            }
        }
    }

    fn publish_array(&mut self, topic: Topic, msg: &msgs::Float64MultiArray) {
        if let Some((_, publisher)) = self.publishers.iter().find(|(t, _)| *t == topic) {
            if let Err(e) = publisher.publish(msg.clone()) {
                eprintln!("publishing {topic:?}: {e:?}");
            }
        }
    }

    fn publish_joint_state(&mut self, msg: &msgs::JointState) {
        if let Some(publisher) = &self.joint_state_publisher {
            if let Err(e) = publisher.publish(msg.clone()) {
                eprintln!("publishing joint states: {e:?}");
            }
        }
    }

    fn log(&self, level: LogLevel, text: &str) {
        eprintln!(
            "[{}] {}: {text}",
            if level == LogLevel::Warn {
                "WARN"
            } else {
                "INFO"
            },
            self.node.fully_qualified_name()
        );
        let level = if level == LogLevel::Warn {
            RosLogLevel::Warn
        } else {
            RosLogLevel::Info
        };
        rosout!(self.node, level, "{}", text);
    }
}
