//! The rcl backend (feature `r2r`): the same nodes through r2r, for workspaces with ROS 2
//! sourced, and so any middleware ROS 2 supports. rcl reads `--ros-args` itself as well;
//! parameter files and overrides agree because both read the same arguments.
//!
//! Parameters: the six parameter services and `/parameter_events` are served by us
//! ([`parameters`]), as on DDS: each request reaches the node, which answers it from its store.
//! /rosout: Jazzy's `rcl_node_init` no longer creates the node's rosout publisher and r2r does
//! not either, so the transport publishes rcl_interfaces/Log on `/rosout` itself.
//! Message conversions are in [`convert`]. rcl is spun by a thread of its own; the node's task
//! never takes that lock. Dropping the transport stops and joins that thread, which destroys
//! the node: it never outlives `main` into the middleware's own teardown at exit.

#[cfg(ros_control_msgs)]
mod action;
#[cfg(not(ros_control_msgs))]
#[path = "no_action.rs"]
mod action;
#[cfg(ros_control_msgs)]
mod control_msgs;
#[cfg(ros_controller_state_jazzy)]
mod controller_state;
mod convert;
mod parameters;

pub use convert::RclMessage;
use convert::{text, time_out};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::stream::{BoxStream, StreamExt};
use r2r::{rcl_interfaces, std_msgs, QosProfile, ServiceRequest};

use crate::follow_joint_trajectory::{ActionOutput, ActionResponse};
use crate::parameter_services::ParameterResponse;
use crate::ticker::Ticker;
use crate::transport::LogLevel;
use crate::transport::Message;
use crate::transport::{Codec, Incoming, NodeSpec, Outgoing, Topic, TopicVisitor, Transport};
use crate::RosError;

fn rcl(e: impl std::fmt::Display) -> RosError {
    RosError::Transport {
        reason: format!("rcl: {e}"),
    }
}

/// A subscription as the node receives it, and whether only the newest waiting message is
/// handed over (joint states: after a stall the node controls on the present, as on DDS).
struct Input {
    messages: BoxStream<'static, Incoming>,
    newest_only: bool,
    /// Its index in the spec's subscriptions.
    slot: usize,
}

/// A publisher, whatever its message type.
trait Output: Send {
    /// Publishes `msg` if it is this publisher's type.
    fn send(&self, msg: Outgoing<'_>);
    /// How many subscriptions match.
    fn subscribers(&self) -> usize;
}

struct TypedOutput<M: Message> {
    publisher: r2r::Publisher<M::Rcl>,
    unwrap: for<'a> fn(Outgoing<'a>) -> Option<&'a M>,
}

impl<M: Message> Output for TypedOutput<M> {
    fn send(&self, msg: Outgoing<'_>) {
        if let Some(m) = (self.unwrap)(msg) {
            if let Err(e) = self.publisher.publish(&m.to_rcl()) {
                eprintln!("publishing {:?}: {e}", msg.topic());
            }
        }
    }

    fn subscribers(&self) -> usize {
        self.publisher
            .get_inter_process_subscription_count()
            .unwrap_or(0)
    }
}

/// The publication of a topic rcl does not carry here: nothing is sent.
struct NotCarried;

impl Output for NotCarried {
    fn send(&self, _msg: Outgoing<'_>) {}

    fn subscribers(&self) -> usize {
        0
    }
}

/// Moves what r2r received on one subscription or service into the node's channel; run by the
/// spin thread after each spin, since r2r's own channel holds 10 and drops the newest beyond
/// (after a stall the node would control on old joint states, and a request go unanswered).
type Pump = Box<dyn FnMut() + Send>;

/// Serves the service named `name` (in full) with `qos`: its requests, each wrapped as the
/// caller keeps it until the node answers, and the [`Pump`] that moves them out of r2r's
/// channel after each spin (it holds 10 and drops a request beyond, unanswered).
fn serve<S, P, F>(
    node: &mut r2r::Node,
    name: &str,
    qos: QosProfile,
    wrap: F,
) -> Result<(BoxStream<'static, P>, Pump), RosError>
where
    S: r2r::WrappedServiceTypeSupport + 'static,
    P: Send + 'static,
    F: Fn(ServiceRequest<S>) -> P + Send + 'static,
{
    let mut received = node.create_service::<S>(name, qos).map_err(rcl)?;
    let (sender, requests) = futures::channel::mpsc::unbounded();
    let pump: Pump = Box::new(move || {
        let mut cx = Context::from_waker(futures::task::noop_waker_ref());
        while let Poll::Ready(Some(request)) = received.poll_next_unpin(&mut cx) {
            let _ = sender.unbounded_send(wrap(request));
        }
    });
    Ok((requests.boxed(), pump))
}

/// Creates the subscription of one topic, and its [`Pump`].
struct Subscribe<'a> {
    node: &'a mut r2r::Node,
    name: &'a str,
}

impl TopicVisitor for Subscribe<'_> {
    type Output = Result<(Input, Pump), RosError>;

    fn visit<M: Message>(self, codec: Codec<M>) -> Self::Output {
        if !M::CARRIED {
            return Err(rcl(format!(
                "{} ({}/{}) is carried by the DDS backend only",
                self.name,
                M::PACKAGE,
                M::NAME
            )));
        }
        let qos = match codec.topic {
            // /clock is published best-effort by simulators.
            Topic::Clock => QosProfile::default().best_effort(),
            Topic::Rosout => QosProfile::default().keep_last(1000),
            Topic::ParameterEvents => QosProfile::parameter_events(),
            _ => QosProfile::default(),
        };
        let wrap = codec.wrap;
        let mut received = self.node.subscribe::<M::Rcl>(self.name, qos).map_err(rcl)?;
        let (sender, messages) = futures::channel::mpsc::unbounded();
        let pump: Pump = Box::new(move || {
            let mut cx = Context::from_waker(futures::task::noop_waker_ref());
            while let Poll::Ready(Some(m)) = received.poll_next_unpin(&mut cx) {
                let _ = sender.unbounded_send(wrap(M::from_rcl(m)));
            }
        });
        let input = Input {
            messages: messages.boxed(),
            newest_only: codec.topic == Topic::JointStates,
            slot: 0,
        };
        Ok((input, pump))
    }
}

/// Creates the publisher of one topic.
struct Advertise<'a> {
    node: &'a mut r2r::Node,
    name: &'a str,
    /// What is not published, said once the node can log.
    not_carried: &'a mut Vec<String>,
}

impl TopicVisitor for Advertise<'_> {
    type Output = Result<Box<dyn Output>, RosError>;

    fn visit<M: Message>(self, codec: Codec<M>) -> Self::Output {
        if codec.topic == Topic::Rosout {
            return Err(rcl("/rosout is written through Transport::log"));
        }
        if !M::CARRIED {
            self.not_carried.push(format!(
                "{} ({}/{}) is published by the DDS backend only",
                self.name,
                M::PACKAGE,
                M::NAME
            ));
            return Ok(Box::new(NotCarried));
        }
        let qos = match codec.topic {
            // rcl's /parameter_events profile: reliable, volatile, keep last 1000.
            Topic::ParameterEvents => QosProfile::parameter_events(),
            _ => QosProfile::default(),
        };
        let publisher = self
            .node
            .create_publisher::<M::Rcl>(self.name, qos)
            .map_err(rcl)?;
        Ok(Box::new(TypedOutput {
            publisher,
            unwrap: codec.unwrap,
        }))
    }
}

/// A node on rcl.
pub struct RclTransport {
    /// Spins and owns the node; dropping it (first: fields drop in order) joins the thread.
    _spinner: Spinner,
    /// The node's logger name (its fully qualified name without the leading '/', dotted).
    logger: String,
    /// The node's fully qualified name.
    node_name: String,
    rosout: r2r::Publisher<rcl_interfaces::msg::Log>,
    /// Subscriptions in the order of [`Topic::ALL`] (served first to last).
    inputs: Vec<Input>,
    /// Publications in the spec's order.
    outputs: Vec<(Topic, Box<dyn Output>)>,
    /// The subscription of the last message handed over.
    received_on: usize,
    parameters: parameters::ParameterServers,
    /// The slot of `/parameter_events` ([`NodeSpec::parameter_events_slot`]).
    events_slot: usize,
    /// The FollowJointTrajectory action, if the node serves one and control_msgs is bound.
    action: Option<action::TrajectoryActionServer>,
    ticker: Option<Ticker>,
}

impl std::fmt::Debug for RclTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RclTransport")
            .field("node", &self.node_name)
            .finish_non_exhaustive()
    }
}

/// rcl's /rosout profile: reliable, transient local, keep last 1000, 10 s lifespan (late
/// joiners such as rqt_console get the recent lines).
fn rosout_qos() -> QosProfile {
    QosProfile::default()
        .reliable()
        .transient_local()
        .keep_last(1000)
        .lifespan(Duration::from_secs(10))
}

impl RclTransport {
    /// Starts the node (inside a tokio runtime); a thread spins rcl until the transport is
    /// dropped.
    pub fn start(spec: &NodeSpec) -> Result<Self, RosError> {
        let context = r2r::Context::create().map_err(rcl)?;
        let mut node = r2r::Node::create(context, &spec.name, &spec.namespace).map_err(rcl)?;
        // Trigger parameters the node declares get a std_srvs/Trigger service of their name.
        let triggers: Vec<String> = spec.parameters.triggers().map(String::from).collect();
        let (parameters, mut pumps) = parameters::ParameterServers::new(&mut node, &triggers)?;
        let rosout = node
            .create_publisher("/rosout", rosout_qos())
            .map_err(rcl)?;
        let mut inputs = Vec::new();
        for topic in Topic::ALL {
            let of_topic = spec.subscriptions.iter().enumerate();
            for (slot, (_, name)) in of_topic.filter(|(_, (t, _))| t == topic) {
                let (mut input, pump) = topic.visit(Subscribe {
                    node: &mut node,
                    name,
                })?;
                input.slot = slot;
                inputs.push(input);
                pumps.push(pump);
            }
        }
        let mut outputs = Vec::new();
        let mut not_carried = Vec::new();
        for (topic, name) in &spec.all_publications() {
            let output = topic.visit(Advertise {
                node: &mut node,
                name,
                not_carried: &mut not_carried,
            })?;
            outputs.push((*topic, output));
        }
        let action = match &spec.action {
            Some(name) => match action::TrajectoryActionServer::new(&mut node, name)? {
                Some((server, action_pumps)) => {
                    pumps.extend(action_pumps);
                    Some(server)
                }
                None => {
                    not_carried.push(format!("{name} (control_msgs/FollowJointTrajectory) is not served: control_msgs was not installed when r2r generated its bindings; send trajectories on ~/reference"));
                    None
                }
            },
            None => None,
        };
        let logger = node.logger().to_string();
        let node_name = node.fully_qualified_name().map_err(rcl)?;
        let transport = Self {
            _spinner: Spinner::start(node, pumps)?,
            logger,
            node_name,
            rosout,
            inputs,
            outputs,
            received_on: 0,
            parameters,
            events_slot: spec.parameter_events_slot(),
            action,
            ticker: spec
                .tick_rate
                .map(|hz| Ticker::new(Duration::from_secs_f64(1.0 / hz)))
                .transpose()?,
        };
        for text in &not_carried {
            transport.log(LogLevel::Warn, text);
        }
        Ok(transport)
    }
}

/// The first std_msgs/String on `topic` (reliable, transient local: one published before the
/// subscription arrives too, as robot_state_publisher latches the URDF), read by a node of its
/// own named `name` in `namespace`.
pub async fn receive_latched_string(
    name: &str,
    namespace: &str,
    topic: &str,
) -> Result<String, RosError> {
    let context = r2r::Context::create().map_err(rcl)?;
    let mut node = r2r::Node::create(context, name, namespace).map_err(rcl)?;
    let qos = QosProfile::default()
        .reliable()
        .transient_local()
        .keep_last(1);
    let mut strings = node
        .subscribe::<std_msgs::msg::String>(topic, qos)
        .map_err(rcl)?;
    let spinner = Spinner::start(node, vec![])?;
    let received = strings.next().await;
    spinner.stop();
    received.map(|m| m.data).ok_or_else(|| RosError::Transport {
        reason: format!("the subscription of {topic} ended"),
    })
}

/// The thread that spins a node and runs the subscriptions' and services' [`Pump`]s; it owns the node and
/// destroys it when stopped, before [`Spinner::stop`] (or dropping it) returns.
struct Spinner {
    spinning: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Spinner {
    fn start(mut node: r2r::Node, mut pumps: Vec<Pump>) -> Result<Self, RosError> {
        let spinning = Arc::new(AtomicBool::new(true));
        let flag = spinning.clone();
        let thread = std::thread::Builder::new()
            .name("armctl-rcl-spin".into())
            .spawn(move || {
                while flag.load(Ordering::Relaxed) {
                    node.spin_once(Duration::from_millis(1));
                    for pump in &mut pumps {
                        pump();
                    }
                }
            })
            .map_err(rcl)?;
        Ok(Self {
            spinning,
            thread: Some(thread),
        })
    }

    /// Stops spinning and waits until the node is destroyed.
    fn stop(mut self) {
        self.join();
    }

    fn join(&mut self) {
        self.spinning.store(false, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            if thread.join().is_err() {
                eprintln!("the rcl spin thread panicked");
            }
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.join();
    }
}

/// The first topic in table order with a message waiting (the newest one, for latest-value
/// topics).
fn poll_inputs(inputs: &mut [Input], cx: &mut Context<'_>) -> Poll<(usize, Option<Incoming>)> {
    for input in inputs {
        if let Poll::Ready(first) = input.messages.poll_next_unpin(cx) {
            let mut newest = first;
            while input.newest_only {
                match input.messages.poll_next_unpin(cx) {
                    Poll::Ready(Some(newer)) => newest = Some(newer),
                    _ => break,
                }
            }
            return Poll::Ready((input.slot, newest));
        }
    }
    Poll::Pending
}

/// The next action request, if the node serves an action (`None`: its services ended with
/// the node).
async fn next_action(
    action: &mut Option<action::TrajectoryActionServer>,
) -> Option<(u64, crate::follow_joint_trajectory::ActionRequest)> {
    match action {
        Some(server) => server.next().await,
        None => futures::future::pending().await,
    }
}

impl Transport for RclTransport {
    async fn next(&mut self) -> Option<Incoming> {
        let inputs = &mut self.inputs;
        let (slot, incoming) = tokio::select! {
            biased;
            // None: the parameter services ended with the node.
            request = self.parameters.next() => (None, request.map(|(id, r)| Incoming::ParameterRequest(id, r))),
            request = next_action(&mut self.action) => (None, request.map(|(id, r)| Incoming::Action(id, r))),
            (slot, taken) = std::future::poll_fn(|cx| poll_inputs(inputs, cx)) => (Some(slot), taken),
            _ = Ticker::next_tick(&self.ticker) => (None, Some(Incoming::Tick)),
        };
        if let Some(slot) = slot {
            self.received_on = slot;
        }
        incoming
    }

    fn publish(&mut self, msg: Outgoing<'_>) {
        let topic = msg.topic();
        if let Some(slot) = self.outputs.iter().position(|(t, _)| *t == topic) {
            self.publish_on(slot, msg);
        }
    }

    fn publish_on(&mut self, slot: usize, msg: Outgoing<'_>) {
        if let Some((_, output)) = self.outputs.get(slot) {
            output.send(msg);
        }
    }

    fn received_on(&self) -> usize {
        self.received_on
    }

    fn subscriber_count(&self, topic: Topic) -> usize {
        self.outputs
            .iter()
            .filter(|(t, _)| *t == topic)
            .map(|(_, output)| output.subscribers())
            .sum()
    }

    fn respond(&mut self, id: u64, response: ParameterResponse) {
        let Some(answer) = self.parameters.answer(id, response) else {
            return;
        };
        // Announced first, as rclcpp does.
        self.announce_parameters(&answer.changed);
        parameters::send_answer(answer);
    }

    fn announce_parameters(&mut self, changed: &[(String, armctl_control::ParameterValue)]) {
        let stamp = crate::msgs::Time::now();
        if let Some(event) = crate::services::parameters::event(&self.node_name, stamp, changed) {
            self.publish_on(self.events_slot, Outgoing::ParameterEvents(&event));
        }
    }

    fn respond_action(&mut self, id: u64, response: ActionResponse) {
        if let Some(Err(e)) = self.action.as_mut().map(|a| a.respond(id, response)) {
            self.log(LogLevel::Warn, &e);
        }
    }

    fn publish_action(&mut self, output: ActionOutput<'_>) {
        if let Some(Err(e)) = self.action.as_ref().map(|a| a.publish(output)) {
            self.log(LogLevel::Warn, &e);
        }
    }

    /// On stderr and /rosout, with the file and line of the caller (the function is not
    /// known in Rust).
    #[track_caller]
    fn log(&self, level: LogLevel, text: &str) {
        let caller = std::panic::Location::caller();
        let (tag, severity) = match level {
            LogLevel::Warn => ("WARN", 30),
            LogLevel::Info => ("INFO", 20),
        };
        eprintln!("[{tag}] {}: {text}", self.node_name);
        let line = rcl_interfaces::msg::Log {
            stamp: time_out(&crate::msgs::Time::now()),
            level: severity,
            name: self.logger.clone(),
            msg: self::text(text),
            file: caller.file().to_string(),
            function: "<unknown_func>".into(),
            line: caller.line(),
        };
        if let Err(e) = self.rosout.publish(&line) {
            eprintln!("/rosout: {e}");
        }
    }
}
