//! The rcl backend (feature `r2r`): the same nodes through r2r, for workspaces with ROS 2
//! sourced, and so any middleware ROS 2 supports. rcl reads `--ros-args` itself as well;
//! parameter files and overrides agree because both read the same arguments.
//!
//! Parameters: r2r serves the parameter services. Our declarations are registered with their
//! descriptions through r2r's `RosParams` hook, which checks each change against the shared
//! declaration (type, range, read-only) and refuses it with the reason. A change that passes
//! reaches the node, over a channel of ours, as a one-item [`ParameterRequest::Set`]; if the
//! node then refuses it (a controller's own check), the old value is put back (unless a later
//! change replaced it) and the reason logged, since r2r has already answered the caller.
//! rcl is spun by a thread of its own; the node's task never takes that lock. Limitation:
//! r2r's describe service shows only descriptions, not ranges or read-only flags.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender};
use futures::stream::{BoxStream, StreamExt};
use futures::Stream;
use r2r::indexmap::IndexMap;
use r2r::{
    builtin_interfaces, geometry_msgs, rcl_interfaces, rosgraph_msgs, sensor_msgs, std_msgs,
    trajectory_msgs, Parameter, ParameterValue, QosProfile, RosParams,
};

use crate::msgs;
use crate::parameter_services::{ParameterRequest, ParameterResponse};
use crate::ticker::Ticker;
use crate::transport::LogLevel;
use crate::transport::{Incoming, NodeSpec, Outgoing, Topic, Transport};
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

type Messages<T> = Option<BoxStream<'static, T>>;

fn boxed<T: Send + 'static>(stream: impl Stream<Item = T> + Send + 'static) -> Messages<T> {
    Some(stream.boxed())
}

/// One optional publisher per topic.
#[derive(Default)]
struct Publishers {
    joint_states: Option<r2r::Publisher<sensor_msgs::msg::JointState>>,
    commands: Option<r2r::Publisher<std_msgs::msg::Float64MultiArray>>,
    state: Option<r2r::Publisher<std_msgs::msg::Float64MultiArray>>,
    reference: Option<r2r::Publisher<trajectory_msgs::msg::JointTrajectory>>,
    target_pose: Option<r2r::Publisher<geometry_msgs::msg::PoseStamped>>,
    external_wrench: Option<r2r::Publisher<geometry_msgs::msg::WrenchStamped>>,
    clock: Option<r2r::Publisher<rosgraph_msgs::msg::Clock>>,
}

/// One optional message stream per topic.
#[derive(Default)]
struct Subscriptions {
    joint_states: Messages<msgs::JointState>,
    commands: Messages<msgs::Float64MultiArray>,
    states: Messages<msgs::Float64MultiArray>,
    references: Messages<msgs::JointTrajectory>,
    target_poses: Messages<msgs::PoseStamped>,
    wrenches: Messages<msgs::WrenchStamped>,
    clock: Messages<f64>,
    rosout: Messages<msgs::Log>,
}

/// A node on rcl.
pub struct RclTransport {
    spinning: Arc<AtomicBool>,
    logger: String,
    publishers: Publishers,
    subscriptions: Subscriptions,
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

fn subscribe(
    node: &mut r2r::Node,
    subs: &mut Subscriptions,
    topic: Topic,
    name: &str,
) -> Result<(), RosError> {
    let qos = QosProfile::default();
    match topic {
        Topic::JointStates => {
            subs.joint_states = boxed(node.subscribe(name, qos).map_err(rcl)?.map(joint_state_in));
        }
        Topic::Commands => {
            subs.commands = boxed(node.subscribe(name, qos).map_err(rcl)?.map(array_in))
        }
        Topic::State => subs.states = boxed(node.subscribe(name, qos).map_err(rcl)?.map(array_in)),
        Topic::Reference => {
            subs.references = boxed(node.subscribe(name, qos).map_err(rcl)?.map(trajectory_in))
        }
        Topic::TargetPose => {
            subs.target_poses = boxed(node.subscribe(name, qos).map_err(rcl)?.map(pose_in))
        }
        Topic::ExternalWrench => {
            subs.wrenches = boxed(node.subscribe(name, qos).map_err(rcl)?.map(wrench_in))
        }
        Topic::Clock => {
            let clock = node
                .subscribe::<rosgraph_msgs::msg::Clock>(name, QosProfile::default().best_effort());
            subs.clock = boxed(clock.map_err(rcl)?.map(|c| time_in(&c.clock).seconds()));
        }
        Topic::Rosout => {
            let deep = QosProfile::default().keep_last(1000);
            subs.rosout = boxed(node.subscribe(name, deep).map_err(rcl)?.map(log_in));
        }
    }
    Ok(())
}

fn advertise(
    node: &mut r2r::Node,
    p: &mut Publishers,
    topic: Topic,
    name: &str,
) -> Result<(), RosError> {
    let qos = QosProfile::default();
    match topic {
        Topic::JointStates => p.joint_states = Some(node.create_publisher(name, qos).map_err(rcl)?),
        Topic::Commands => p.commands = Some(node.create_publisher(name, qos).map_err(rcl)?),
        Topic::State => p.state = Some(node.create_publisher(name, qos).map_err(rcl)?),
        Topic::Reference => p.reference = Some(node.create_publisher(name, qos).map_err(rcl)?),
        Topic::TargetPose => p.target_pose = Some(node.create_publisher(name, qos).map_err(rcl)?),
        Topic::ExternalWrench => {
            p.external_wrench = Some(node.create_publisher(name, qos).map_err(rcl)?)
        }
        Topic::Clock => p.clock = Some(node.create_publisher(name, qos).map_err(rcl)?),
        Topic::Rosout => return Err(rcl("/rosout is written through Transport::log")),
    }
    Ok(())
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
        let mut subscriptions = Subscriptions::default();
        for (topic, name) in &spec.subscriptions {
            subscribe(&mut node, &mut subscriptions, *topic, name)?;
        }
        let mut publishers = Publishers::default();
        for (topic, name) in &spec.publications {
            advertise(&mut node, &mut publishers, *topic, name)?;
        }
        let logger = node.logger().to_string();
        let node = Arc::new(Mutex::new(node));
        let spinning = Arc::new(AtomicBool::new(true));
        spawn_spinner(node, spinning.clone())?;
        Ok(Self {
            spinning,
            logger,
            publishers,
            subscriptions,
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

async fn take<T>(stream: &mut Messages<T>) -> Option<T> {
    match stream {
        Some(s) => s.next().await,
        None => futures::future::pending().await,
    }
}

async fn tick(ticker: &Option<Ticker>) {
    match ticker {
        Some(t) => t.tick().await,
        None => futures::future::pending().await,
    }
}

fn send<T: r2r::WrappedTypesupport + 'static>(
    publisher: &Option<r2r::Publisher<T>>,
    msg: &T,
    topic: Topic,
) {
    if let Some(p) = publisher {
        if let Err(e) = p.publish(msg) {
            eprintln!("publishing {topic:?}: {e}");
        }
    }
}

fn count<T: r2r::WrappedTypesupport + 'static>(publisher: &Option<r2r::Publisher<T>>) -> usize {
    publisher
        .as_ref()
        .and_then(|p| p.get_inter_process_subscription_count().ok())
        .unwrap_or(0)
}

impl Transport for RclTransport {
    async fn next(&mut self) -> Option<Incoming> {
        let s = &mut self.subscriptions;
        tokio::select! {
            biased;
            // None: r2r's parameter services stopped, and the node with them.
            change = self.parameter_changes.next() => change.map(|c| self.parameter_request(c)),
            m = take(&mut s.clock) => m.map(Incoming::Clock),
            m = take(&mut s.joint_states) => m.map(Incoming::JointState),
            m = take(&mut s.commands) => m.map(Incoming::Command),
            m = take(&mut s.states) => m.map(Incoming::State),
            m = take(&mut s.references) => m.map(Incoming::Reference),
            m = take(&mut s.target_poses) => m.map(Incoming::TargetPose),
            m = take(&mut s.wrenches) => m.map(Incoming::ExternalWrench),
            m = take(&mut s.rosout) => m.map(Incoming::Log),
            _ = tick(&self.ticker) => Some(Incoming::Tick),
        }
    }

    fn publish(&mut self, msg: Outgoing<'_>) {
        let p = &self.publishers;
        match msg {
            Outgoing::JointState(m) => {
                send(&p.joint_states, &joint_state_out(m), Topic::JointStates)
            }
            Outgoing::Array(Topic::Commands, m) => {
                send(&p.commands, &array_out(m), Topic::Commands)
            }
            Outgoing::Array(Topic::State, m) => send(&p.state, &array_out(m), Topic::State),
            Outgoing::Array(..) => {}
            Outgoing::Reference(m) => send(&p.reference, &trajectory_out(m), Topic::Reference),
            Outgoing::TargetPose(m) => send(&p.target_pose, &pose_out(m), Topic::TargetPose),
            Outgoing::ExternalWrench(m) => {
                send(&p.external_wrench, &wrench_out(m), Topic::ExternalWrench)
            }
            Outgoing::Clock(m) => send(
                &p.clock,
                &rosgraph_msgs::msg::Clock {
                    clock: time_out(&m.clock),
                },
                Topic::Clock,
            ),
        }
    }

    fn subscriber_count(&self, topic: Topic) -> usize {
        let p = &self.publishers;
        match topic {
            Topic::JointStates => count(&p.joint_states),
            Topic::Commands => count(&p.commands),
            Topic::State => count(&p.state),
            Topic::Reference => count(&p.reference),
            Topic::TargetPose => count(&p.target_pose),
            Topic::ExternalWrench => count(&p.external_wrench),
            Topic::Clock => count(&p.clock),
            Topic::Rosout => 0,
        }
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

    fn log(&self, level: LogLevel, text: &str) {
        match level {
            LogLevel::Warn => r2r::log_warn!(&self.logger, "{}", text),
            LogLevel::Info => r2r::log_info!(&self.logger, "{}", text),
        }
    }
}
