//! The default backend: ros2-client on RustDDS, no ROS installation needed. One DDS
//! participant per node. With `ROS_LOCALHOST_ONLY=1` (or `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`)
//! the participant only uses and advertises 127.0.0.1.
//!
//! Parameters: the node answers the ROS 2 parameter services itself
//! ([`parameters`]); `/clock` is read as rosgraph_msgs/Clock by a subscription of
//! ours (ros2-client's own sim-time subscription expects another type).

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::FutureExt;
use ros2_client::dds::rustdds::DomainParticipantBuilder;
use ros2_client::qos::{Durability, History};
use ros2_client::ros2::LogLevel as RosLogLevel;
use ros2_client::rosout::RosoutRaw;
use ros2_client::{
    Context as DdsContext, MessageTypeName, Name, Node, NodeName, NodeOptions, Publisher,
    QosProfile, ServiceMapping, Subscription,
};

mod action;
mod parameter_client;
mod parameters;
mod trigger;

use crate::follow_joint_trajectory::{ActionOutput, ActionResponse};
use crate::msgs;
use crate::parameter_services::ParameterResponse;
use crate::ticker::Ticker;
use crate::transport::Message;
use crate::transport::{
    Codec, Incoming, LogLevel, NodeSpec, Outgoing, Topic, TopicVisitor, Transport,
};
use crate::RosError;
use action::TrajectoryActionServer;
pub use parameter_client::ParameterClient;
use parameters::ParameterServers;
pub use trigger::TriggerClient;

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
    /// An unset or empty `ROS_DOMAIN_ID` is domain 0, as in ROS; one that is not a number is
    /// refused, naming it (it used to mean domain 0 in silence).
    pub fn from_env() -> Result<Self, RosError> {
        let var = |name: &str| std::env::var(name).ok();
        Self::check_fast_dds_transports(var("FASTDDS_BUILTIN_TRANSPORTS").as_deref())?;
        Ok(Self {
            domain_id: Self::domain_from_env()?.unwrap_or(0),
            localhost_only: Self::localhost_only(
                var("ROS_LOCALHOST_ONLY").as_deref(),
                var("ROS_AUTOMATIC_DISCOVERY_RANGE").as_deref(),
            ),
            cyclone_services: var("RMW_IMPLEMENTATION").is_some_and(|v| v.contains("cyclonedds")),
        })
    }

    /// Loopback only, from `ROS_LOCALHOST_ONLY` and `ROS_AUTOMATIC_DISCOVERY_RANGE`: Jazzy's
    /// `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST` (any case), or Humble's `ROS_LOCALHOST_ONLY=1`,
    /// which Jazzy's rcl still honours (deprecated), ignoring the range then.
    fn localhost_only(localhost_only: Option<&str>, discovery_range: Option<&str>) -> bool {
        localhost_only.is_some_and(|v| v == "1")
            || discovery_range.is_some_and(|v| v.eq_ignore_ascii_case("LOCALHOST"))
    }

    /// Refuses a `FASTDDS_BUILTIN_TRANSPORTS` that takes the Fast DDS peers off UDPv4
    /// (`LARGE_DATA`: discovery and data over TCP and shared memory; `SHM`, `UDPv6`): the DDS
    /// backend (RustDDS) speaks UDPv4 only, and those peers would never see the node.
    pub fn check_fast_dds_transports(value: Option<&str>) -> Result<(), RosError> {
        match value.map(str::trim) {
            None | Some("") => Ok(()),
            Some(v) if v.eq_ignore_ascii_case("DEFAULT") || v.eq_ignore_ascii_case("UDPv4") => {
                Ok(())
            }
            Some(v) => Err(RosError::Transport {
                reason: format!(
                    "FASTDDS_BUILTIN_TRANSPORTS={}: Fast DDS nodes then talk over transports this DDS backend lacks (it speaks UDPv4 only), so none of them would see this node; unset it or set DEFAULT or UDPv4, or run the nodes built with the r2r backend",
                    armctl_control::shown(v)
                ),
            }),
        }
    }

    /// `ROS_DOMAIN_ID`, when set and not empty.
    pub fn domain_from_env() -> Result<Option<u16>, RosError> {
        match std::env::var("ROS_DOMAIN_ID") {
            Ok(v) if !v.trim().is_empty() => {
                let domain = v.trim().parse().ok().filter(|d| *d <= 232);
                domain.map(Some).ok_or_else(|| RosError::Transport {
                    reason: format!(
                        "ROS_DOMAIN_ID '{}' is not a ROS domain id (0 to 232)",
                        armctl_control::shown(&v)
                    ),
                })
            }
            _ => Ok(None),
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

fn context(options: &DdsOptions) -> Result<DdsContext, RosError> {
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
        DdsContext::from_domain_participant(participant).map_err(transport)
    } else {
        DdsContext::with_options(ros2_client::ContextOptions::new().domain_id(options.domain_id))
            .map_err(transport)
    }
}

/// A node on DDS.
pub struct DdsTransport {
    node: Node,
    _context: DdsContext,
    /// Subscriptions in the order of [`Topic::ALL`] (served first to last), each with its
    /// index in the spec's subscriptions.
    inputs: Vec<(usize, Box<dyn Input>)>,
    /// Publications in the spec's order.
    outputs: Vec<(Topic, Box<dyn Output>)>,
    /// The subscription of the last message handed over.
    received_on: usize,
    parameters: ParameterServers,
    /// The slot of `/parameter_events` ([`NodeSpec::parameter_events_slot`]).
    events_slot: usize,
    action: Option<TrajectoryActionServer>,
    service_mapping: ServiceMapping,
    read_errors: u64,
    publish_errors: u64,
    ticker: Option<Ticker>,
}

impl std::fmt::Debug for DdsTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DdsTransport")
            .field("node", &self.node.fully_qualified_name())
            .finish()
    }
}

/// A subscription, whatever its message type.
trait Input: Send + Sync {
    /// The next message as the node receives it (`Some(None)`: an unreadable sample).
    fn poll_take(&self, cx: &mut Context<'_>) -> Poll<Option<Incoming>>;
}

struct TypedInput<M: Message> {
    subscription: Subscription<M>,
    wrap: fn(M) -> Incoming,
    /// Hand over only the newest waiting sample (the latest-value hand-off for joint states:
    /// after a stall the node controls on the present, not on a queue of old states).
    newest_only: bool,
}

impl<M: Message> Input for TypedInput<M> {
    fn poll_take(&self, cx: &mut Context<'_>) -> Poll<Option<Incoming>> {
        // A fresh take each poll, as a select over the topics does: the reader keeps the
        // waker, and nothing is lost when the future is dropped unfinished.
        let take = self.subscription.async_take();
        let mut take = std::pin::pin!(take);
        let Poll::Ready(taken) = take.as_mut().poll(cx) else {
            return Poll::Pending;
        };
        let Ok((mut newest, _)) = taken else {
            return Poll::Ready(None);
        };
        if self.newest_only {
            while let Ok(Some((newer, _))) = self.subscription.take() {
                newest = newer;
            }
        }
        Poll::Ready(Some((self.wrap)(newest)))
    }
}

/// A publisher, whatever its message type.
trait Output: Send + Sync {
    /// Publishes `msg` if it is this publisher's type.
    fn send(&self, msg: Outgoing<'_>) -> Result<(), String>;
    /// How many subscriptions match.
    fn subscribers(&self, node: &Node) -> usize;
}

struct TypedOutput<M: Message> {
    publisher: Publisher<M>,
    unwrap: for<'a> fn(Outgoing<'a>) -> Option<&'a M>,
}

impl<M: Message> Output for TypedOutput<M> {
    fn send(&self, msg: Outgoing<'_>) -> Result<(), String> {
        match (self.unwrap)(msg) {
            Some(m) => self
                .publisher
                .publish(m.clone())
                .map_err(|e| format!("publishing {:?}: {e:?}", msg.topic())),
            None => Ok(()),
        }
    }

    fn subscribers(&self, node: &Node) -> usize {
        self.publisher.get_subscription_count(node)
    }
}

/// The DDS topic `name` of message type `M`.
fn dds_topic<M: Message>(
    node: &mut Node,
    name: &str,
    qos: &QosProfile,
) -> Result<ros2_client::dds::rustdds::Topic, RosError> {
    let parsed = Name::parse(name).map_err(|e| RosError::Transport {
        reason: format!("topic '{name}': {e}"),
    })?;
    node.create_topic(&parsed, MessageTypeName::new(M::PACKAGE, M::NAME), qos)
        .map_err(transport)
}

/// Creates the subscription of one topic.
struct Subscribe<'a> {
    node: &'a mut Node,
    name: &'a str,
    qos: &'a QosProfile,
}

impl TopicVisitor for Subscribe<'_> {
    type Output = Result<Box<dyn Input>, RosError>;

    fn visit<M: Message>(self, codec: Codec<M>) -> Self::Output {
        let topic = dds_topic::<M>(self.node, self.name, self.qos)?;
        let qos = match codec.topic {
            // /clock is published best-effort by simulators.
            Topic::Clock => Some(QosProfile::subscription_default()),
            Topic::Rosout => Some(self.qos.clone().history(History::KeepLast { depth: 1000 })),
            _ => None,
        };
        let subscription = self
            .node
            .create_subscription::<M>(&topic, qos)
            .map_err(transport)?;
        Ok(Box::new(TypedInput {
            subscription,
            wrap: codec.wrap,
            newest_only: codec.topic == Topic::JointStates,
        }))
    }
}

/// Creates the publisher of one topic.
struct Advertise<'a> {
    node: &'a mut Node,
    name: &'a str,
    qos: &'a QosProfile,
}

impl TopicVisitor for Advertise<'_> {
    type Output = Result<Box<dyn Output>, RosError>;

    fn visit<M: Message>(self, codec: Codec<M>) -> Self::Output {
        if codec.topic == Topic::Rosout {
            return Err(RosError::Transport {
                reason: "/rosout is written through Transport::log".into(),
            });
        }
        let topic = dds_topic::<M>(self.node, self.name, self.qos)?;
        // rcl's /parameter_events profile: reliable, volatile, keep last 1000.
        let qos = (codec.topic == Topic::ParameterEvents)
            .then(|| self.qos.clone().history(History::KeepLast { depth: 1000 }));
        let publisher = self
            .node
            .create_publisher::<M>(&topic, qos)
            .map_err(transport)?;
        Ok(Box::new(TypedOutput {
            publisher,
            unwrap: codec.unwrap,
        }))
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
        // Trigger parameters the node declares get a std_srvs/Trigger service of their name.
        let triggers: Vec<String> = spec.parameters.triggers().map(String::from).collect();
        let mapping = service_mapping(dds);
        let parameters = ParameterServers::new(&mut node, mapping, dds.localhost_only, &triggers)?;
        let action = match &spec.action {
            Some(name) => Some(TrajectoryActionServer::new(
                &mut node,
                service_mapping(dds),
                name,
            )?),
            None => None,
        };
        let spinner = node.spinner().map_err(transport)?;
        tokio::spawn(spinner.spin().map(|_| ()));
        // Reliable, keep-last 10: what rclcpp's QoS(10) is; best-effort publishers would need
        // a best-effort subscription.
        let qos = QosProfile::publisher_default().history(History::KeepLast { depth: 10 });
        let mut inputs = Vec::new();
        for topic in Topic::ALL {
            let of_topic = spec.subscriptions.iter().enumerate();
            for (slot, (_, name)) in of_topic.filter(|(_, (t, _))| t == topic) {
                let (node, qos) = (&mut node, &qos);
                inputs.push((slot, topic.visit(Subscribe { node, name, qos })?));
            }
        }
        let mut outputs = Vec::new();
        for (topic, name) in &spec.all_publications() {
            let (node, qos) = (&mut node, &qos);
            outputs.push((*topic, topic.visit(Advertise { node, name, qos })?));
        }
        Ok(Self {
            node,
            _context: context,
            inputs,
            outputs,
            received_on: 0,
            parameters,
            events_slot: spec.parameter_events_slot(),
            action,
            service_mapping: service_mapping(dds),
            read_errors: 0,
            publish_errors: 0,
            ticker: spec
                .tick_rate
                .map(|hz| Ticker::new(Duration::from_secs_f64(1.0 / hz)))
                .transpose()?,
        })
    }

    /// Said at the 1st, 2nd, 4th, 8th ... failure: a 1 kHz loop must not flood stderr.
    fn on_publish_error(&mut self, e: String) {
        self.publish_errors += 1;
        if self.publish_errors.is_power_of_two() {
            eprintln!("{e} ({} failures so far)", self.publish_errors);
        }
    }

    /// A client of another node's parameter services (`target` fully qualified).
    pub fn parameter_client(&mut self, target: &str) -> Result<ParameterClient, RosError> {
        ParameterClient::new(&mut self.node, self.service_mapping, target)
    }

    /// A client of another node's std_srvs/Trigger `service` (fully qualified).
    pub fn trigger_client(&mut self, service: &str) -> Result<TriggerClient, RosError> {
        TriggerClient::new(&mut self.node, self.service_mapping, service)
    }
}

/// The first std_msgs/String on `topic` (reliable, transient local: one published before the
/// subscription arrives too, as robot_state_publisher latches the URDF), read by a node of its
/// own named `name` in `namespace`.
pub async fn receive_latched_string(
    name: &str,
    namespace: &str,
    topic: &str,
    dds: &DdsOptions,
) -> Result<String, RosError> {
    let context = context(dds)?;
    let node_name = NodeName::new(namespace, name).map_err(transport)?;
    let options = NodeOptions::new()
        .enable_rosout(false)
        .start_parameter_services(false);
    let mut node = context.new_node(node_name, options).map_err(transport)?;
    let spinner = node.spinner().map_err(transport)?;
    let spinning = tokio::spawn(spinner.spin().map(|_| ()));
    let qos = QosProfile::publisher_default()
        .durability(Durability::TransientLocal)
        .history(History::KeepLast { depth: 1 });
    let dds_topic = dds_topic::<msgs::StringMsg>(&mut node, topic, &qos)?;
    let strings = node
        .create_subscription::<msgs::StringMsg>(&dds_topic, None)
        .map_err(transport)?;
    let received = loop {
        match strings.async_take().await {
            Ok((m, _)) => break m.data,
            // An unreadable sample: wait for the next.
            Err(e) => eprintln!("{topic}: unreadable sample skipped ({e:?})"),
        }
    };
    spinning.abort();
    Ok(received)
}

/// The first topic in table order with a message waiting, and its subscription's slot.
fn poll_inputs(
    inputs: &[(usize, Box<dyn Input>)],
    cx: &mut Context<'_>,
) -> Poll<(usize, Option<Incoming>)> {
    for (slot, input) in inputs {
        if let Poll::Ready(taken) = input.poll_take(cx) {
            return Poll::Ready((*slot, taken));
        }
    }
    Poll::Pending
}

/// The next action request, if the node serves an action.
fn poll_action(
    action: &mut Option<TrajectoryActionServer>,
    cx: &mut Context<'_>,
) -> Poll<Option<Incoming>> {
    match action {
        Some(server) => server
            .poll_request(cx)
            .map(|r| r.map(|(id, request)| Incoming::Action(id, request))),
        None => Poll::Pending,
    }
}

impl Transport for DdsTransport {
    async fn next(&mut self) -> Option<Incoming> {
        loop {
            let (slot, incoming) = tokio::select! {
                biased;
                (id, request) = self.parameters.next() => (None, Some(Incoming::ParameterRequest(id, request))),
                request = std::future::poll_fn(|cx| poll_action(&mut self.action, cx)) => (None, request),
                (slot, taken) = std::future::poll_fn(|cx| poll_inputs(&self.inputs, cx)) => (Some(slot), taken),
                _ = Ticker::next_tick(&self.ticker) => (None, Some(Incoming::Tick)),
            };
            if let Some(slot) = slot {
                self.received_on = slot;
            }
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
        let topic = msg.topic();
        if let Some(slot) = self.outputs.iter().position(|(t, _)| *t == topic) {
            self.publish_on(slot, msg);
        }
    }

    fn publish_on(&mut self, slot: usize, msg: Outgoing<'_>) {
        let sent = match self.outputs.get(slot) {
            Some((_, output)) => output.send(msg),
            None => Ok(()),
        };
        if let Err(e) = sent {
            self.on_publish_error(e);
        }
    }

    fn received_on(&self) -> usize {
        self.received_on
    }

    fn subscriber_count(&self, topic: Topic) -> usize {
        self.outputs
            .iter()
            .filter(|(t, _)| *t == topic)
            .map(|(_, output)| output.subscribers(&self.node))
            .sum()
    }

    fn respond(&mut self, id: u64, response: ParameterResponse) {
        let Some(answer) = self.parameters.answer(id, response) else {
            return;
        };
        // Announced first, as rclcpp does.
        self.announce_parameters(&answer.changed);
        let withheld = self.parameters.send(answer);
        if !withheld.is_empty() {
            self.log(LogLevel::Warn, &format!("parameter reply cut: {}: a reply larger than one datagram (here {} bytes: this host's smallest interface MTU less RustDDS's headers) does not reach a Fast DDS client from this backend (RustDDS fragments it in a form Fast DDS drops); read the URDF from /robot_description, or run the r2r backend", withheld.join(", "), self.parameters.reply_limit().unwrap_or(usize::MAX)));
        }
    }

    fn announce_parameters(&mut self, changed: &[(String, armctl_control::ParameterValue)]) {
        let (node, stamp) = (self.node.fully_qualified_name(), msgs::Time::now());
        if let Some(event) = crate::services::parameters::event(&node, stamp, changed) {
            self.publish_on(self.events_slot, Outgoing::ParameterEvents(&event));
        }
    }

    fn respond_action(&mut self, id: u64, response: ActionResponse) {
        if let Some(Err(e)) = self.action.as_mut().map(|a| a.respond(id, response)) {
            self.on_publish_error(e);
        }
    }

    fn publish_action(&mut self, output: ActionOutput<'_>) {
        if let Some(Err(e)) = self.action.as_mut().map(|a| a.publish(output)) {
            self.on_publish_error(e);
        }
    }

    /// Also on /rosout, with the file and line of the caller (the function is not known in
    /// Rust).
    #[track_caller]
    fn log(&self, level: LogLevel, text: &str) {
        let caller = std::panic::Location::caller();
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
        self.node.rosout_raw(
            ros2_client::builtin_interfaces::Time::now(),
            level,
            self.node.base_name(),
            text,
            caller.file(),
            "<unknown_func>",
            caller.line(),
        );
    }
}

#[cfg(test)]
mod tests;
