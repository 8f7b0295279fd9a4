//! The small trait between the nodes' logic and a middleware. Each backend delivers messages,
//! timer ticks and accepted parameter changes as [`Incoming`] and publishes outgoing
//! messages; the node logic is the same for both.

#[cfg(feature = "dds")]
pub mod dds;
#[cfg(feature = "r2r")]
pub mod rcl;

use crate::msgs;
use crate::parameter_services::{ParameterRequest, ParameterResponse};
use armctl_runtime::node_parameters::ParameterStore;

/// Severity of a log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    /// Information.
    Info,
    /// Warning.
    Warn,
}

/// A topic a node uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Topic {
    /// sensor_msgs/JointState.
    JointStates,
    /// std_msgs/Float64MultiArray efforts.
    Commands,
    /// trajectory_msgs/JointTrajectory.
    Reference,
    /// geometry_msgs/PoseStamped.
    TargetPose,
    /// geometry_msgs/WrenchStamped.
    ExternalWrench,
    /// std_msgs/Float64MultiArray, labelled.
    State,
    /// rosgraph_msgs/Clock.
    Clock,
    /// rcl_interfaces/Log on `/rosout` (read by tests and tools; nodes log with
    /// [`Transport::log`]).
    Rosout,
}

/// What a node receives.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A joint state.
    JointState(msgs::JointState),
    /// An effort command.
    Command(msgs::Float64MultiArray),
    /// A controller's `~/state`.
    State(msgs::Float64MultiArray),
    /// A joint trajectory reference.
    Reference(msgs::JointTrajectory),
    /// A tip pose target.
    TargetPose(msgs::PoseStamped),
    /// A measured tip wrench.
    ExternalWrench(msgs::WrenchStamped),
    /// The simulation clock, s.
    Clock(f64),
    /// A log line from `/rosout`.
    Log(msgs::Log),
    /// A parameter service request, to be answered with [`Transport::respond`] and `id`.
    ParameterRequest(u64, ParameterRequest),
    /// The node's timer fired.
    Tick,
}

/// What a node publishes.
#[derive(Debug, Clone, Copy)]
pub enum Outgoing<'a> {
    /// Joint states.
    JointState(&'a msgs::JointState),
    /// Efforts on [`Topic::Commands`] or the labelled state on [`Topic::State`].
    Array(Topic, &'a msgs::Float64MultiArray),
    /// A joint trajectory reference.
    Reference(&'a msgs::JointTrajectory),
    /// A tip pose target.
    TargetPose(&'a msgs::PoseStamped),
    /// A measured tip wrench.
    ExternalWrench(&'a msgs::WrenchStamped),
    /// The simulation clock.
    Clock(&'a msgs::Clock),
}

/// What a node needs from the middleware.
#[derive(Debug, Clone)]
pub struct NodeSpec {
    /// Node name.
    pub name: String,
    /// Namespace ("/" or "/a/b").
    pub namespace: String,
    /// Topics to subscribe, with their resolved names.
    pub subscriptions: Vec<(Topic, String)>,
    /// Topics to publish, with their resolved names.
    pub publications: Vec<(Topic, String)>,
    /// Timer rate, Hz (none: no ticks).
    pub tick_rate: Option<f64>,
    /// Declared parameters with their start values; changes are validated against them.
    pub parameters: ParameterStore,
}

/// A running node's connection to the middleware.
pub trait Transport {
    /// The next message, tick or parameter change (`None`: the middleware is gone).
    fn next(&mut self) -> impl std::future::Future<Output = Option<Incoming>> + Send;
    /// Publishes on one of the node's publications (others are ignored).
    fn publish(&mut self, msg: Outgoing<'_>);
    /// How many subscriptions match the node's publication of `topic`.
    fn subscriber_count(&self, topic: Topic) -> usize;
    /// Answers the parameter service request `id`.
    fn respond(&mut self, id: u64, response: ParameterResponse);
    /// Logs to rosout (and stderr).
    fn log(&self, level: LogLevel, text: &str);
}

/// A node's logic, run on any [`Transport`].
pub trait NodeLogic: Send + Sized + 'static {
    /// What the middleware must provide.
    fn spec(&self) -> &NodeSpec;
    /// The parameter declarations as YAML (`--print-params`).
    fn describe_parameters(&self) -> String {
        self.spec().parameters.describe()
    }
    /// Runs until the middleware stops.
    fn run<T: Transport + Send>(
        self,
        transport: &mut T,
    ) -> impl std::future::Future<Output = ()> + Send;
}
