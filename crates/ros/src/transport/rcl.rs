//! The rcl backend (feature `r2r`): the same nodes through r2r, for workspaces with ROS 2
//! sourced, and so any middleware ROS 2 supports. rcl reads `--ros-args` itself as well;
//! parameter files and overrides agree because both read the same arguments.
//!
//! Parameters: r2r serves the parameter services. Our declarations are registered with their
//! descriptions through r2r's `RosParams` hook, which checks each change against the shared
//! declaration (type, per-joint length, range, choices, read-only) and refuses it with the
//! reason before r2r answers, as the DDS backend does. That check is the whole check: the
//! runtime refuses nothing it accepts (`the_declaration_check_is_the_whole_check_for_every_controller`
//! in armctl_runtime). A change that passes reaches the node, over a channel of ours, as a
//! one-item [`ParameterRequest::Set`]; should the node still refuse it, the old value is put back
//! (unless a later change replaced it) and the reason logged.
//! rcl is spun by a thread of its own; the node's task never takes that lock. Limitation:
//! r2r's describe service shows only descriptions, not ranges or read-only flags.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender};
use futures::stream::{BoxStream, StreamExt};
use r2r::indexmap::IndexMap;
use r2r::{
    builtin_interfaces, diagnostic_msgs, geometry_msgs, rcl_interfaces, rosgraph_msgs, sensor_msgs,
    std_msgs, trajectory_msgs, Parameter, ParameterValue, QosProfile, RosParams,
};

use crate::follow_joint_trajectory::{ActionOutput, ActionResponse};
use crate::msgs;
use crate::msgs::Message;
use crate::parameter_services::{ParameterRequest, ParameterResponse};
use crate::ticker::Ticker;
use crate::transport::LogLevel;
use crate::transport::{Codec, Incoming, NodeSpec, Outgoing, Topic, TopicVisitor, Transport};
use crate::RosError;
use armctl_control::ParameterValue as RosValue;
use armctl_runtime::node_parameters::ParameterStore;

fn rcl(e: impl std::fmt::Display) -> RosError {
    RosError::Transport {
        reason: format!("rcl: {e}"),
    }
}

fn time_in(t: &builtin_interfaces::msg::Time) -> msgs::Time {
    msgs::Time {
        sec: t.sec,
        nanosec: t.nanosec,
    }
}

fn time_out(t: &msgs::Time) -> builtin_interfaces::msg::Time {
    builtin_interfaces::msg::Time {
        sec: t.sec,
        nanosec: t.nanosec,
    }
}

fn duration_in(t: &builtin_interfaces::msg::Duration) -> msgs::Duration {
    msgs::Duration {
        sec: t.sec,
        nanosec: t.nanosec,
    }
}

fn header_in(h: &std_msgs::msg::Header) -> msgs::Header {
    msgs::Header {
        stamp: time_in(&h.stamp),
        frame_id: h.frame_id.clone(),
    }
}

fn header_out(h: &msgs::Header) -> std_msgs::msg::Header {
    std_msgs::msg::Header {
        stamp: time_out(&h.stamp),
        frame_id: h.frame_id.clone(),
    }
}

fn diagnostics_in(m: diagnostic_msgs::msg::DiagnosticArray) -> msgs::DiagnosticArray {
    let status = m.status.into_iter().map(|s| msgs::DiagnosticStatus {
        level: s.level,
        name: s.name,
        message: s.message,
        hardware_id: s.hardware_id,
        values: s
            .values
            .into_iter()
            .map(|kv| msgs::KeyValue {
                key: kv.key,
                value: kv.value,
            })
            .collect(),
    });
    msgs::DiagnosticArray {
        header: header_in(&m.header),
        status: status.collect(),
    }
}

fn diagnostics_out(m: &msgs::DiagnosticArray) -> diagnostic_msgs::msg::DiagnosticArray {
    let status = m
        .status
        .iter()
        .map(|s| diagnostic_msgs::msg::DiagnosticStatus {
            level: s.level,
            name: s.name.clone(),
            message: s.message.clone(),
            hardware_id: s.hardware_id.clone(),
            values: s
                .values
                .iter()
                .map(|kv| diagnostic_msgs::msg::KeyValue {
                    key: kv.key.clone(),
                    value: kv.value.clone(),
                })
                .collect(),
        });
    diagnostic_msgs::msg::DiagnosticArray {
        header: header_out(&m.header),
        status: status.collect(),
    }
}

fn joint_state_in(m: sensor_msgs::msg::JointState) -> msgs::JointState {
    msgs::JointState {
        header: header_in(&m.header),
        name: m.name,
        position: m.position,
        velocity: m.velocity,
        effort: m.effort,
    }
}

fn joint_state_out(m: &msgs::JointState) -> sensor_msgs::msg::JointState {
    sensor_msgs::msg::JointState {
        header: header_out(&m.header),
        name: m.name.clone(),
        position: m.position.clone(),
        velocity: m.velocity.clone(),
        effort: m.effort.clone(),
    }
}

fn array_in(m: std_msgs::msg::Float64MultiArray) -> msgs::Float64MultiArray {
    let dim = m
        .layout
        .dim
        .into_iter()
        .map(|d| msgs::MultiArrayDimension {
            label: d.label,
            size: d.size,
            stride: d.stride,
        })
        .collect();
    msgs::Float64MultiArray {
        layout: msgs::MultiArrayLayout {
            dim,
            data_offset: m.layout.data_offset,
        },
        data: m.data,
    }
}

fn array_out(m: &msgs::Float64MultiArray) -> std_msgs::msg::Float64MultiArray {
    let dim = m
        .layout
        .dim
        .iter()
        .map(|d| std_msgs::msg::MultiArrayDimension {
            label: d.label.clone(),
            size: d.size,
            stride: d.stride,
        })
        .collect();
    std_msgs::msg::Float64MultiArray {
        layout: std_msgs::msg::MultiArrayLayout {
            dim,
            data_offset: m.layout.data_offset,
        },
        data: m.data.clone(),
    }
}

fn trajectory_in(m: trajectory_msgs::msg::JointTrajectory) -> msgs::JointTrajectory {
    let points = m
        .points
        .into_iter()
        .map(|p| msgs::JointTrajectoryPoint {
            time_from_start: duration_in(&p.time_from_start),
            positions: p.positions,
            velocities: p.velocities,
            accelerations: p.accelerations,
            effort: p.effort,
        })
        .collect();
    msgs::JointTrajectory {
        header: header_in(&m.header),
        joint_names: m.joint_names,
        points,
    }
}

fn trajectory_out(m: &msgs::JointTrajectory) -> trajectory_msgs::msg::JointTrajectory {
    let points = m
        .points
        .iter()
        .map(|p| trajectory_msgs::msg::JointTrajectoryPoint {
            positions: p.positions.clone(),
            velocities: p.velocities.clone(),
            accelerations: p.accelerations.clone(),
            effort: p.effort.clone(),
            time_from_start: builtin_interfaces::msg::Duration {
                sec: p.time_from_start.sec,
                nanosec: p.time_from_start.nanosec,
            },
        })
        .collect();
    trajectory_msgs::msg::JointTrajectory {
        header: header_out(&m.header),
        joint_names: m.joint_names.clone(),
        points,
    }
}

fn vector_in(v: &geometry_msgs::msg::Vector3) -> msgs::Vector3 {
    msgs::Vector3 {
        x: v.x,
        y: v.y,
        z: v.z,
    }
}

fn vector_out(v: &msgs::Vector3) -> geometry_msgs::msg::Vector3 {
    geometry_msgs::msg::Vector3 {
        x: v.x,
        y: v.y,
        z: v.z,
    }
}

fn pose_in(m: geometry_msgs::msg::PoseStamped) -> msgs::PoseStamped {
    let (p, o) = (&m.pose.position, &m.pose.orientation);
    msgs::PoseStamped {
        header: header_in(&m.header),
        pose: msgs::Pose {
            position: msgs::Vector3 {
                x: p.x,
                y: p.y,
                z: p.z,
            },
            orientation: msgs::Quaternion {
                x: o.x,
                y: o.y,
                z: o.z,
                w: o.w,
            },
        },
    }
}

fn pose_out(m: &msgs::PoseStamped) -> geometry_msgs::msg::PoseStamped {
    let (p, o) = (&m.pose.position, &m.pose.orientation);
    geometry_msgs::msg::PoseStamped {
        header: header_out(&m.header),
        pose: geometry_msgs::msg::Pose {
            position: geometry_msgs::msg::Point {
                x: p.x,
                y: p.y,
                z: p.z,
            },
            orientation: geometry_msgs::msg::Quaternion {
                x: o.x,
                y: o.y,
                z: o.z,
                w: o.w,
            },
        },
    }
}

fn wrench_in(m: geometry_msgs::msg::WrenchStamped) -> msgs::WrenchStamped {
    msgs::WrenchStamped {
        header: header_in(&m.header),
        wrench: msgs::Wrench {
            force: vector_in(&m.wrench.force),
            torque: vector_in(&m.wrench.torque),
        },
    }
}

fn wrench_out(m: &msgs::WrenchStamped) -> geometry_msgs::msg::WrenchStamped {
    geometry_msgs::msg::WrenchStamped {
        header: header_out(&m.header),
        wrench: geometry_msgs::msg::Wrench {
            force: vector_out(&m.wrench.force),
            torque: vector_out(&m.wrench.torque),
        },
    }
}

fn log_in(m: rcl_interfaces::msg::Log) -> msgs::Log {
    msgs::Log {
        stamp: time_in(&m.stamp),
        level: m.level,
        name: m.name,
        msg: m.msg,
        file: m.file,
        function: m.function,
        line: m.line,
    }
}

fn log_out(m: &msgs::Log) -> rcl_interfaces::msg::Log {
    rcl_interfaces::msg::Log {
        stamp: time_out(&m.stamp),
        level: m.level,
        name: m.name.clone(),
        msg: m.msg.clone(),
        file: m.file.clone(),
        function: m.function.clone(),
        line: m.line,
    }
}

/// A message type as rcl carries it: r2r's generated type and the conversions.
pub trait RclMessage: Sized {
    /// r2r's type.
    type Rcl: r2r::WrappedTypesupport + Send + 'static;
    /// Whether rcl carries it here: r2r's bindings without a ROS installation lack
    /// control_msgs, so its types are published by the DDS backend only.
    const CARRIED: bool = true;
    /// From rcl.
    fn from_rcl(m: Self::Rcl) -> Self;
    /// To rcl.
    fn to_rcl(&self) -> Self::Rcl;
}

macro_rules! rcl_messages {
    ($($ty:ident = $rcl:ty, $from:expr, $to:expr;)*) => {
        $(impl RclMessage for msgs::$ty {
            type Rcl = $rcl;
            fn from_rcl(m: Self::Rcl) -> Self {
                $from(m)
            }
            fn to_rcl(&self) -> Self::Rcl {
                $to(self)
            }
        })*
    };
}

rcl_messages! {
    JointState = sensor_msgs::msg::JointState, joint_state_in, joint_state_out;
    Float64MultiArray = std_msgs::msg::Float64MultiArray, array_in, array_out;
    JointTrajectory = trajectory_msgs::msg::JointTrajectory, trajectory_in, trajectory_out;
    PoseStamped = geometry_msgs::msg::PoseStamped, pose_in, pose_out;
    WrenchStamped = geometry_msgs::msg::WrenchStamped, wrench_in, wrench_out;
    DiagnosticArray = diagnostic_msgs::msg::DiagnosticArray, diagnostics_in, diagnostics_out;
    StringMsg = std_msgs::msg::String,
        |m: std_msgs::msg::String| msgs::StringMsg { data: m.data },
        |m: &msgs::StringMsg| std_msgs::msg::String { data: m.data.clone() };
    Clock = rosgraph_msgs::msg::Clock,
        |c: rosgraph_msgs::msg::Clock| msgs::Clock { clock: time_in(&c.clock) },
        |c: &msgs::Clock| rosgraph_msgs::msg::Clock { clock: time_out(&c.clock) };
    Log = rcl_interfaces::msg::Log, log_in, log_out;
}

/// A type rcl does not carry here ([`RclMessage::CARRIED`]): its topic is refused when
/// subscribed and not published; the conversions are never used.
macro_rules! not_carried {
    ($($ty:ident),*) => {
        $(impl RclMessage for msgs::$ty {
            type Rcl = std_msgs::msg::Empty;
            const CARRIED: bool = false;
            fn from_rcl(_: Self::Rcl) -> Self {
                Self::default()
            }
            fn to_rcl(&self) -> Self::Rcl {
                std_msgs::msg::Empty {}
            }
        })*
    };
}

not_carried!(ControllerState, ControllerStateHumble);

fn value_in(value: &ParameterValue) -> Option<RosValue> {
    Some(match value {
        ParameterValue::Bool(b) => RosValue::Bool(*b),
        ParameterValue::Integer(i) => RosValue::Integer(*i),
        ParameterValue::Double(d) => RosValue::Double(*d),
        ParameterValue::String(s) => RosValue::String(s.clone()),
        ParameterValue::DoubleArray(v) => RosValue::DoubleArray(v.clone()),
        ParameterValue::IntegerArray(v) => {
            RosValue::DoubleArray(v.iter().map(|i| *i as f64).collect())
        }
        ParameterValue::StringArray(v) => RosValue::StringArray(v.clone()),
        ParameterValue::BoolArray(v) => RosValue::BoolArray(v.clone()),
        ParameterValue::NotSet | ParameterValue::ByteArray(_) => return None,
    })
}

fn value_out(value: &RosValue) -> ParameterValue {
    match value {
        RosValue::Bool(b) => ParameterValue::Bool(*b),
        RosValue::Integer(i) => ParameterValue::Integer(*i),
        RosValue::Double(d) => ParameterValue::Double(*d),
        RosValue::String(s) => ParameterValue::String(s.clone()),
        RosValue::DoubleArray(v) => ParameterValue::DoubleArray(v.clone()),
        RosValue::StringArray(v) => ParameterValue::StringArray(v.clone()),
        RosValue::BoolArray(v) => ParameterValue::BoolArray(v.clone()),
    }
}

/// The node's declarations as r2r parameters, checked on every change.
struct DeclaredParameters {
    store: Arc<Mutex<ParameterStore>>,
    /// Every accepted change, `(name, new, old)`, for the node to apply (our own channel:
    /// r2r's drops changes beyond ten waiting).
    changes: UnboundedSender<Change>,
}

/// An accepted change: name, new value, the value before.
type Change = (String, RosValue, RosValue);

fn refused(name: &str, msg: String) -> r2r::Error {
    r2r::Error::ParameterValueConv {
        name: name.to_string(),
        msg,
    }
}

impl RosParams for DeclaredParameters {
    fn register_parameters(
        &mut self,
        _prefix: &str,
        _param: Option<Parameter>,
        params: &mut IndexMap<String, Parameter>,
    ) -> r2r::Result<()> {
        let store = self.store.lock().unwrap_or_else(PoisonError::into_inner);
        for d in store.declarations() {
            let value = store.get(&d.name).unwrap_or(&d.default);
            // r2r wants 'static descriptions: one small leak per parameter and node start.
            let description: &'static str = Box::leak(d.description.clone().into_boxed_str());
            params.insert(
                d.name.clone(),
                Parameter {
                    value: value_out(value),
                    description,
                },
            );
        }
        Ok(())
    }

    fn get_parameter(&mut self, name: &str) -> r2r::Result<ParameterValue> {
        let store = self.store.lock().unwrap_or_else(PoisonError::into_inner);
        store
            .get(name)
            .map(value_out)
            .ok_or_else(|| r2r::Error::InvalidParameterName { name: name.into() })
    }

    fn set_parameter(&mut self, name: &str, value: &ParameterValue) -> r2r::Result<()> {
        self.check_parameter(name, value)?;
        let value = value_in(value).ok_or_else(|| refused(name, "unsupported type".into()))?;
        let mut store = self.store.lock().unwrap_or_else(PoisonError::into_inner);
        let old = store.get(name).cloned().unwrap_or_else(|| value.clone());
        store
            .set(name, &value, false)
            .map_err(|e| refused(name, e.to_string()))?;
        let _ = self.changes.unbounded_send((name.to_string(), value, old));
        Ok(())
    }

    fn check_parameter(&self, name: &str, value: &ParameterValue) -> r2r::Result<()> {
        let value = value_in(value).ok_or_else(|| refused(name, "unsupported type".into()))?;
        let store = self.store.lock().unwrap_or_else(PoisonError::into_inner);
        store
            .validate(name, &value, false)
            .map(|_| ())
            .map_err(|e| refused(name, e.to_string()))
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

/// Creates the subscription of one topic.
struct Subscribe<'a> {
    node: &'a mut r2r::Node,
    name: &'a str,
}

impl TopicVisitor for Subscribe<'_> {
    type Output = Result<Input, RosError>;

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
            _ => QosProfile::default(),
        };
        let wrap = codec.wrap;
        let messages = self
            .node
            .subscribe::<M::Rcl>(self.name, qos)
            .map_err(rcl)?
            .map(move |m| wrap(M::from_rcl(m)))
            .boxed();
        Ok(Input {
            messages,
            newest_only: codec.topic == Topic::JointStates,
            slot: 0,
        })
    }
}

/// Creates the publisher of one topic.
struct Advertise<'a> {
    node: &'a mut r2r::Node,
    name: &'a str,
}

impl TopicVisitor for Advertise<'_> {
    type Output = Result<Box<dyn Output>, RosError>;

    fn visit<M: Message>(self, codec: Codec<M>) -> Self::Output {
        if codec.topic == Topic::Rosout {
            return Err(rcl("/rosout is written through Transport::log"));
        }
        if !M::CARRIED {
            r2r::log_warn!(
                self.node.logger(),
                "{} ({}/{}) is published by the DDS backend only",
                self.name,
                M::PACKAGE,
                M::NAME
            );
            return Ok(Box::new(NotCarried));
        }
        let publisher = self
            .node
            .create_publisher::<M::Rcl>(self.name, QosProfile::default())
            .map_err(rcl)?;
        Ok(Box::new(TypedOutput {
            publisher,
            unwrap: codec.unwrap,
        }))
    }
}

/// A node on rcl.
pub struct RclTransport {
    spinning: Arc<AtomicBool>,
    logger: String,
    /// Subscriptions in the order of [`Topic::ALL`] (served first to last).
    inputs: Vec<Input>,
    /// Publications in the spec's order.
    outputs: Vec<(Topic, Box<dyn Output>)>,
    /// The subscription of the last message handed over.
    received_on: usize,
    parameter_changes: UnboundedReceiver<Change>,
    /// r2r's parameter table, shared with its services (never locked with the node).
    params: Arc<Mutex<IndexMap<String, Parameter>>>,
    store: Arc<Mutex<ParameterStore>>,
    pending: HashMap<u64, Change>,
    next_id: u64,
    ticker: Option<Ticker>,
}

impl std::fmt::Debug for RclTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RclTransport")
            .field("node", &self.logger)
            .finish_non_exhaustive()
    }
}

impl RclTransport {
    /// Starts the node (inside a tokio runtime: the parameter services are spawned on it);
    /// a thread spins rcl until the transport is dropped.
    pub fn start(spec: &NodeSpec) -> Result<Self, RosError> {
        let context = r2r::Context::create().map_err(rcl)?;
        let mut node = r2r::Node::create(context, &spec.name, &spec.namespace).map_err(rcl)?;
        let store = Arc::new(Mutex::new(spec.parameters.clone()));
        let (changes, parameter_changes) = futures::channel::mpsc::unbounded();
        let declared = DeclaredParameters {
            store: store.clone(),
            changes,
        };
        // r2r's own change stream is not read: ours carries every change.
        let (services, _r2r_changes) = node
            .make_derived_parameter_handler(Arc::new(Mutex::new(declared)))
            .map_err(rcl)?;
        tokio::spawn(services);
        let params = node.params.clone();
        let mut inputs = Vec::new();
        for topic in Topic::ALL {
            let of_topic = spec.subscriptions.iter().enumerate();
            for (slot, (_, name)) in of_topic.filter(|(_, (t, _))| t == topic) {
                let mut input = topic.visit(Subscribe {
                    node: &mut node,
                    name,
                })?;
                input.slot = slot;
                inputs.push(input);
            }
        }
        let mut outputs = Vec::new();
        for (topic, name) in &spec.publications {
            let output = topic.visit(Advertise {
                node: &mut node,
                name,
            })?;
            outputs.push((*topic, output));
        }
        let logger = node.logger().to_string();
        if let Some(action) = &spec.action {
            // r2r serves actions only of types generated at build time, and its generated
            // bindings without a ROS installation lack control_msgs: not served yet.
            r2r::log_warn!(&logger, "{action} (control_msgs/FollowJointTrajectory) is served by the DDS backend only; with r2r, send trajectories on ~/reference");
        }
        let node = Arc::new(Mutex::new(node));
        let spinning = Arc::new(AtomicBool::new(true));
        spawn_spinner(node, spinning.clone())?;
        Ok(Self {
            spinning,
            logger,
            inputs,
            outputs,
            received_on: 0,
            parameter_changes,
            params,
            store,
            pending: HashMap::new(),
            next_id: 0,
            ticker: spec
                .tick_rate
                .map(|hz| Ticker::new(Duration::from_secs_f64(1.0 / hz)))
                .transpose()?,
        })
    }

    /// Puts a change the node refused back to the value before, unless a later change has
    /// already replaced it; says why either way.
    fn restore(&mut self, (name, new, old): Change, reason: &str) {
        let mut store = self.store.lock().unwrap_or_else(PoisonError::into_inner);
        if store.get(&name) == Some(&new) {
            let _ = store.set(&name, &old, false);
            let mut params = self.params.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(p) = params.get_mut(&name) {
                p.value = value_out(&old);
            }
        }
        drop(store);
        self.log(
            LogLevel::Warn,
            &format!("parameter {name} refused and restored: {reason}"),
        );
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
    let node = Arc::new(Mutex::new(node));
    let spinning = Arc::new(AtomicBool::new(true));
    spawn_spinner(node, spinning.clone())?;
    let received = strings.next().await;
    spinning.store(false, Ordering::Relaxed);
    received.map(|m| m.data).ok_or_else(|| RosError::Transport {
        reason: format!("the subscription of {topic} ended"),
    })
}

fn spawn_spinner(node: Arc<Mutex<r2r::Node>>, spinning: Arc<AtomicBool>) -> Result<(), RosError> {
    std::thread::Builder::new()
        .name("armctl-rcl-spin".into())
        .spawn(move || {
            while spinning.load(Ordering::Relaxed) {
                node.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .spin_once(Duration::from_millis(1));
            }
        })
        .map(|_| ())
        .map_err(rcl)
}

impl RclTransport {
    /// A change r2r accepted, for the node to apply.
    fn parameter_request(&mut self, change: Change) -> Incoming {
        let request = ParameterRequest::Set(vec![(change.0.clone(), change.1.clone())]);
        self.next_id += 1;
        self.pending.insert(self.next_id, change);
        Incoming::ParameterRequest(self.next_id, request)
    }
}

impl Drop for RclTransport {
    fn drop(&mut self) {
        self.spinning.store(false, Ordering::Relaxed);
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

async fn tick(ticker: &Option<Ticker>) {
    match ticker {
        Some(t) => t.tick().await,
        None => futures::future::pending().await,
    }
}

impl Transport for RclTransport {
    async fn next(&mut self) -> Option<Incoming> {
        let inputs = &mut self.inputs;
        let (slot, incoming) = tokio::select! {
            biased;
            // None: r2r's parameter services stopped, and the node with them.
            change = self.parameter_changes.next() => (None, change.map(|c| self.parameter_request(c))),
            (slot, taken) = std::future::poll_fn(|cx| poll_inputs(inputs, cx)) => (Some(slot), taken),
            _ = tick(&self.ticker) => (None, Some(Incoming::Tick)),
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
        // r2r answered the caller already; only a refusal by the node needs action.
        let Some(change) = self.pending.remove(&id) else {
            return;
        };
        if let ParameterResponse::Set(results) = response {
            if let Some(Err(reason)) = results.first() {
                self.restore(change, reason);
            }
        }
    }

    /// No action is served on rcl (see [`RclTransport::start`]): nothing to answer.
    fn respond_action(&mut self, _id: u64, _response: ActionResponse) {}

    fn publish_action(&mut self, _output: ActionOutput<'_>) {}

    /// Values the node changed besides the one set (a gain design's kp and kd) go into the
    /// copy r2r answers queries from.
    fn show_parameters(&mut self, node: &ParameterStore) {
        let mut changed = Vec::new();
        {
            let mut store = self.store.lock().unwrap_or_else(PoisonError::into_inner);
            for declaration in node.declarations() {
                let name = &declaration.name;
                if let Some(value) = node.get(name).filter(|v| store.get(name) != Some(*v)) {
                    let _ = store.set(name, value, false);
                    changed.push((name.clone(), value_out(value)));
                }
            }
        }
        // One lock at a time: r2r's services take the table and then call into the store.
        let mut params = self.params.lock().unwrap_or_else(PoisonError::into_inner);
        for (name, value) in changed {
            if let Some(p) = params.get_mut(&name) {
                p.value = value;
            }
        }
    }

    fn log(&self, level: LogLevel, text: &str) {
        match level {
            LogLevel::Warn => r2r::log_warn!(&self.logger, "{}", text),
            LogLevel::Info => r2r::log_info!(&self.logger, "{}", text),
        }
    }
}
