//! The default backend: ros2-client on RustDDS, no ROS installation needed. One DDS
//! participant per node. With `ROS_LOCALHOST_ONLY=1` (or `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`)
//! the participant only uses and advertises 127.0.0.1.
//!
//! Parameters: the node answers the ROS 2 parameter services itself
//! ([`crate::dds_parameters`]); `/clock` is read as rosgraph_msgs/Clock by a subscription of
//! ours (ros2-client's own sim-time subscription expects another type).

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use futures::FutureExt;
use ros2_client::dds::rustdds::DomainParticipantBuilder;
use ros2_client::qos::History;
use ros2_client::ros2::LogLevel as RosLogLevel;
use ros2_client::{
    rosout, Context, MessageTypeName, Name, Node, NodeName, NodeOptions, Publisher, QosProfile,
    ServiceMapping, Subscription,
};

use crate::transport::LogLevel;
mod parameters;

use crate::msgs;
use crate::parameter_services::ParameterResponse;
use crate::ticker::Ticker;
use crate::transport::{Incoming, NodeSpec, Outgoing, Topic, Transport};
use crate::RosError;
pub use parameters::ParameterClient;
use parameters::ParameterServers;

fn transport(e: impl std::fmt::Display) -> RosError {
    RosError::Transport {
        reason: e.to_string(),
    }
}

/// Where a node's DDS participant talks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DdsOptions {
    /// ROS domain (DDS domain id, 0..=232).
    pub domain_id: u16,
    /// Use and advertise 127.0.0.1 only.
    pub localhost_only: bool,
    /// Service requests and replies in rmw_cyclonedds's form (a request header in the
    /// payload) instead of the RPC-over-DDS "enhanced" form of Fast DDS, ROS 2's default.
    pub cyclone_services: bool,
}

impl DdsOptions {
    /// From ROS's environment: `ROS_DOMAIN_ID`; `ROS_LOCALHOST_ONLY=1` or
    /// `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST` for loopback only; `RMW_IMPLEMENTATION`
    /// naming Cyclone DDS for its service form (the peers' tools use the same variable).
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).ok();
        Self {
            domain_id: var("ROS_DOMAIN_ID")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
            localhost_only: var("ROS_LOCALHOST_ONLY").is_some_and(|v| v == "1")
                || var("ROS_AUTOMATIC_DISCOVERY_RANGE")
                    .is_some_and(|v| v.eq_ignore_ascii_case("LOCALHOST")),
            cyclone_services: var("RMW_IMPLEMENTATION").is_some_and(|v| v.contains("cyclonedds")),
        }
    }

    /// Loopback only, on `domain_id`.
    pub fn loopback(domain_id: u16) -> Self {
        Self {
            domain_id,
            localhost_only: true,
            cyclone_services: false,
        }
    }
}

fn service_mapping(options: &DdsOptions) -> ServiceMapping {
    if options.cyclone_services {
        ServiceMapping::Cyclone
    } else {
        ServiceMapping::Enhanced
    }
}

fn context(options: &DdsOptions) -> Result<Context, RosError> {
    if options.domain_id > 232 {
        return Err(RosError::Transport {
            reason: format!("ROS domain id {} is above 232", options.domain_id),
        });
    }
    if options.localhost_only {
        let participant = DomainParticipantBuilder::new(options.domain_id)
            .with_only_networks([IpAddr::V4(Ipv4Addr::LOCALHOST)])
            .build()
            .map_err(transport)?;
        Context::from_domain_participant(participant).map_err(transport)
    } else {
        Context::with_options(ros2_client::ContextOptions::new().domain_id(options.domain_id))
            .map_err(transport)
    }
}

/// A node on DDS.
pub struct DdsTransport {
    node: Node,
    _context: Context,
    qos: QosProfile,
    publishers: Publishers,
    joint_states: Option<Subscription<msgs::JointState>>,
    commands: Option<Subscription<msgs::Float64MultiArray>>,
    states: Option<Subscription<msgs::Float64MultiArray>>,
    references: Option<Subscription<msgs::JointTrajectory>>,
    target_poses: Option<Subscription<msgs::PoseStamped>>,
    wrenches: Option<Subscription<msgs::WrenchStamped>>,
    clock: Option<Subscription<msgs::Clock>>,
    rosout: Option<Subscription<msgs::Log>>,
    parameters: ParameterServers,
    service_mapping: ServiceMapping,
    read_errors: u64,
    publish_errors: u64,
    ticker: Option<Ticker>,
}

/// One optional publisher per topic.
#[derive(Default)]
struct Publishers {
    joint_states: Option<Publisher<msgs::JointState>>,
    commands: Option<Publisher<msgs::Float64MultiArray>>,
    state: Option<Publisher<msgs::Float64MultiArray>>,
    reference: Option<Publisher<msgs::JointTrajectory>>,
    target_pose: Option<Publisher<msgs::PoseStamped>>,
    external_wrench: Option<Publisher<msgs::WrenchStamped>>,
    clock: Option<Publisher<msgs::Clock>>,
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
        Topic::Rosout => MessageTypeName::new("rcl_interfaces", "Log"),
    }
}

impl DdsTransport {
    /// Starts the node (must run inside a tokio runtime: the spinner is spawned on it).
    pub fn start(spec: &NodeSpec, dds: &DdsOptions) -> Result<Self, RosError> {
        let context = context(dds)?;
        let name = NodeName::new(&spec.namespace, &spec.name).map_err(transport)?;
        let mut node = context
            .new_node(
                name,
                NodeOptions::new()
                    .enable_rosout(true)
                    .start_parameter_services(false),
            )
            .map_err(transport)?;
        let parameters = ParameterServers::new(&mut node, service_mapping(dds))?;
        let spinner = node.spinner().map_err(transport)?;
        tokio::spawn(spinner.spin().map(|_| ()));
        // Reliable, keep-last 10: what rclcpp's QoS(10) is; best-effort publishers would need
        // a best-effort subscription.
        let qos = QosProfile::publisher_default().history(History::KeepLast { depth: 10 });
        let mut transport = Self {
            node,
            _context: context,
            qos,
            publishers: Publishers::default(),
            joint_states: None,
            commands: None,
            states: None,
            references: None,
            target_poses: None,
            wrenches: None,
            clock: None,
            rosout: None,
            parameters,
            service_mapping: service_mapping(dds),
            read_errors: 0,
            publish_errors: 0,
            ticker: spec
                .tick_rate
                .map(|hz| Ticker::new(Duration::from_secs_f64(1.0 / hz)))
                .transpose()?,
        };
        for (topic, name) in &spec.subscriptions {
            transport.subscribe(*topic, name)?;
        }
        for (topic, name) in &spec.publications {
            transport.advertise(*topic, name)?;
        }
        Ok(transport)
    }

    /// A client of another node's parameter services (`target` fully qualified).
    pub fn parameter_client(&mut self, target: &str) -> Result<ParameterClient, RosError> {
        ParameterClient::new(&mut self.node, self.service_mapping, target)
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
                self.states = Some(node.create_subscription(&t, None).map_err(transport)?)
            }
            Topic::Rosout => {
                let deep = self.qos.clone().history(History::KeepLast { depth: 1000 });
                self.rosout = Some(
                    node.create_subscription(&t, Some(deep))
                        .map_err(transport)?,
                )
            }
        }
        Ok(())
    }

    fn advertise(&mut self, topic: Topic, name: &str) -> Result<(), RosError> {
        let t = self.topic(topic, name)?;
        let (node, p) = (&mut self.node, &mut self.publishers);
        match topic {
            Topic::JointStates => {
                p.joint_states = Some(node.create_publisher(&t, None).map_err(transport)?)
            }
            Topic::Commands => {
                p.commands = Some(node.create_publisher(&t, None).map_err(transport)?)
            }
            Topic::State => p.state = Some(node.create_publisher(&t, None).map_err(transport)?),
            Topic::Reference => {
                p.reference = Some(node.create_publisher(&t, None).map_err(transport)?)
            }
            Topic::TargetPose => {
                p.target_pose = Some(node.create_publisher(&t, None).map_err(transport)?)
            }
            Topic::ExternalWrench => {
                p.external_wrench = Some(node.create_publisher(&t, None).map_err(transport)?)
            }
            Topic::Clock => p.clock = Some(node.create_publisher(&t, None).map_err(transport)?),
            Topic::Rosout => {
                return Err(RosError::Transport {
                    reason: "/rosout is written through Transport::log".into(),
                })
            }
        }
        Ok(())
    }
}

fn send<M: serde::Serialize + Clone + std::fmt::Debug>(
    publisher: &Option<Publisher<M>>,
    msg: &M,
    topic: Topic,
) -> Result<(), String> {
    match publisher {
        Some(p) => p
            .publish(msg.clone())
            .map_err(|e| format!("publishing {topic:?}: {e:?}")),
        None => Ok(()),
    }
}

fn count<M: serde::Serialize>(publisher: &Option<Publisher<M>>, node: &Node) -> usize {
    publisher
        .as_ref()
        .map_or(0, |p| p.get_subscription_count(node))
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

/// The newest waiting sample: the latest-value hand-off for joint states, so that after a
/// stall the node controls on the present, not on a queue of old states.
async fn take_newest<M: serde::de::DeserializeOwned + 'static>(
    sub: &Option<Subscription<M>>,
) -> Option<M> {
    let mut newest = take(sub).await?;
    if let Some(s) = sub {
        while let Ok(Some((newer, _))) = s.take() {
            newest = newer;
        }
    }
    Some(newest)
}

async fn tick(ticker: &Option<Ticker>) {
    match ticker {
        Some(t) => t.tick().await,
        None => futures::future::pending().await,
    }
}

impl Transport for DdsTransport {
    async fn next(&mut self) -> Option<Incoming> {
        loop {
            let incoming = tokio::select! {
                biased;
                (id, request) = self.parameters.next() => Some(Incoming::ParameterRequest(id, request)),
                // The clock first: a joint state must be stamped with the time it was sent at.
                m = take(&self.clock) => m.map(|c| Incoming::Clock(c.clock.seconds())),
                m = take_newest(&self.joint_states) => m.map(Incoming::JointState),
                m = take(&self.commands) => m.map(Incoming::Command),
                m = take(&self.states) => m.map(Incoming::State),
                m = take(&self.references) => m.map(Incoming::Reference),
                m = take(&self.target_poses) => m.map(Incoming::TargetPose),
                m = take(&self.wrenches) => m.map(Incoming::ExternalWrench),
                m = take(&self.rosout) => m.map(Incoming::Log),
                _ = tick(&self.ticker) => Some(Incoming::Tick),
            };
            // A read error on one topic (a malformed sample) is skipped, not fatal; yield so a
            // persistent one cannot starve the rest of the runtime.
            if incoming.is_some() {
                return incoming;
            }
            self.read_errors += 1;
            if self.read_errors.is_power_of_two() {
                eprintln!(
                    "{}: {} unreadable samples skipped",
                    self.node.fully_qualified_name(),
                    self.read_errors
                );
            }
            tokio::task::yield_now().await;
        }
    }

    fn publish(&mut self, msg: Outgoing<'_>) {
        let p = &self.publishers;
        let sent = match msg {
            Outgoing::JointState(m) => send(&p.joint_states, m, Topic::JointStates),
            Outgoing::Array(Topic::Commands, m) => send(&p.commands, m, Topic::Commands),
            Outgoing::Array(Topic::State, m) => send(&p.state, m, Topic::State),
            Outgoing::Array(..) => Ok(()),
            Outgoing::Reference(m) => send(&p.reference, m, Topic::Reference),
            Outgoing::TargetPose(m) => send(&p.target_pose, m, Topic::TargetPose),
            Outgoing::ExternalWrench(m) => send(&p.external_wrench, m, Topic::ExternalWrench),
            Outgoing::Clock(m) => send(&p.clock, m, Topic::Clock),
        };
        // Said at the 1st, 2nd, 4th, 8th ... failure: a 1 kHz loop must not flood stderr.
        if let Err(e) = sent {
            self.publish_errors += 1;
            if self.publish_errors.is_power_of_two() {
                eprintln!("{e} ({} failures so far)", self.publish_errors);
            }
        }
    }

    fn subscriber_count(&self, topic: Topic) -> usize {
        let (p, node) = (&self.publishers, &self.node);
        match topic {
            Topic::JointStates => count(&p.joint_states, node),
            Topic::Commands => count(&p.commands, node),
            Topic::State => count(&p.state, node),
            Topic::Reference => count(&p.reference, node),
            Topic::TargetPose => count(&p.target_pose, node),
            Topic::ExternalWrench => count(&p.external_wrench, node),
            Topic::Clock => count(&p.clock, node),
            Topic::Rosout => 0,
        }
    }

    fn respond(&mut self, id: u64, response: ParameterResponse) {
        self.parameters.respond(id, response);
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
