//! The small trait between the nodes' logic and a middleware. Each backend delivers messages,
//! timer ticks and accepted parameter changes as [`Incoming`] and publishes outgoing
//! messages; the node logic is the same for both.

pub mod backend;
#[cfg(feature = "dds")]
pub mod dds;
#[cfg(feature = "r2r")]
pub mod rcl;

mod message;
pub use message::{BackendMessage, Message};

use crate::follow_joint_trajectory::{ActionOutput, ActionRequest, ActionResponse};
use crate::msgs;
use crate::parameter_services::{ParameterRequest, ParameterResponse};
use crate::RosError;
use armctl_runtime::node_parameters::ParameterStore;

/// Severity of a log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    /// Information.
    Info,
    /// Warning.
    Warn,
}

/// The one table of topics: each topic with its message type. [`Topic`], [`Incoming`] and
/// [`Outgoing`] are generated from it, and the backends handle every topic through
/// [`Topic::visit`], generically over its [`Message`] type: adding a topic is one line here
/// (and a [`Message`] for a new type).
macro_rules! topics {
    ($($(#[$doc:meta])* $topic:ident: $msg:ty,)*) => {
        /// A topic a node uses.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Topic {
            $($(#[$doc])* $topic,)*
        }

        /// What a node receives.
        // The controller-state messages make it about 1 kB: a copy per message taken, small
        // next to decoding one, and no box to allocate.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone, PartialEq)]
        pub enum Incoming {
            $($(#[$doc])* $topic($msg),)*
            /// A parameter service request, to be answered with [`Transport::respond`] and
            /// its id.
            ParameterRequest(u64, ParameterRequest),
            /// A request to the node's action (see [`NodeSpec::action`]), to be answered with
            /// [`Transport::respond_action`] and its id.
            Action(u64, ActionRequest),
            /// The node's timer fired.
            Tick,
            /// The process was asked to stop (the signal's name: `SIGINT`, `SIGTERM`,
            /// `SIGHUP`): the node sends its last command and returns from `run`.
            Shutdown(&'static str),
        }

        /// What a node publishes (on the topic of the same name).
        #[derive(Debug, Clone, Copy)]
        pub enum Outgoing<'a> {
            $($(#[$doc])* $topic(&'a $msg),)*
        }

        impl Outgoing<'_> {
            /// The topic this message goes to.
            pub fn topic(&self) -> Topic {
                match self {
                    $(Outgoing::$topic(_) => Topic::$topic,)*
                }
            }
        }

        impl Topic {
            /// Every topic, in the order a backend serves them when several have messages
            /// waiting.
            pub const ALL: &'static [Topic] = &[$(Topic::$topic,)*];

            /// Calls `visitor` with this topic's message type and how its messages go into
            /// [`Incoming`] and come out of [`Outgoing`].
            pub fn visit<V: TopicVisitor>(self, visitor: V) -> V::Output {
                match self {
                    $(Topic::$topic => visitor.visit(Codec::<$msg> {
                        topic: self,
                        wrap: Incoming::$topic,
                        unwrap: |out| match out {
                            Outgoing::$topic(m) => Some(m),
                            #[allow(unreachable_patterns)]
                            _ => None,
                        },
                    }),)*
                }
            }
        }
    };
}

topics! {
    /// The simulation clock (rosgraph_msgs/Clock), served first: a joint state must be taken
    /// at the time it was sent at.
    Clock: msgs::Clock,
    /// Joint states (sensor_msgs/JointState); backends hand over only the newest waiting one.
    JointStates: msgs::JointState,
    /// Efforts (std_msgs/Float64MultiArray), in the order of the controller's `joints`.
    Commands: msgs::Float64MultiArray,
    /// A controller's labelled `~/state` (std_msgs/Float64MultiArray).
    State: msgs::Float64MultiArray,
    /// A joint trajectory reference (trajectory_msgs/JointTrajectory).
    Reference: msgs::JointTrajectory,
    /// A tip pose target (geometry_msgs/PoseStamped).
    TargetPose: msgs::PoseStamped,
    /// A measured tip wrench (geometry_msgs/WrenchStamped).
    ExternalWrench: msgs::WrenchStamped,
    /// A joint-space law's `~/controller_state` (control_msgs/JointTrajectoryControllerState
    /// in Jazzy's layout), as joint_trajectory_controller publishes it.
    ControllerState: msgs::ControllerState,
    /// `~/controller_state` in Humble's layout.
    ControllerStateHumble: msgs::ControllerStateHumble,
    /// The external joint torques a controller estimates from the motion
    /// (sensor_msgs/JointState: the joints' names and the torques as efforts), `~/external_torques`.
    ExternalTorques: msgs::JointState,
    /// Per joint, the bound of what that estimate may carry without any contact (the model's
    /// error, friction it leaves out or cannot sign at rest, delay, noise), as efforts,
    /// `~/external_torque_bounds`.
    ExternalTorqueBounds: msgs::JointState,
    /// The tip wrench that explains them (geometry_msgs/WrenchStamped in the tip link's
    /// frame), `~/external_wrench_estimate`.
    ExternalWrenchEstimate: msgs::WrenchStamped,
    /// The node's health on `/diagnostics` (diagnostic_msgs/DiagnosticArray), 1 Hz.
    Diagnostics: msgs::DiagnosticArray,
    /// Log lines on `/rosout` (rcl_interfaces/Log), read by tests and tools; nodes log with
    /// [`Transport::log`].
    Rosout: msgs::Log,
    /// Changed parameter values (rcl_interfaces/ParameterEvent) on `/parameter_events`,
    /// published by the backends for every node (see [`NodeSpec::all_publications`]).
    ParameterEvents: crate::services::parameter_msgs::ParameterEvent,
}

/// A topic's message type and its place in [`Incoming`] and [`Outgoing`].
#[derive(Debug, Clone, Copy)]
pub struct Codec<M: 'static> {
    /// The topic.
    pub topic: Topic,
    /// A received message as what the node receives.
    pub wrap: fn(M) -> Incoming,
    /// The message, if `Outgoing` is one of this topic's.
    pub unwrap: for<'a> fn(Outgoing<'a>) -> Option<&'a M>,
}

/// Something done for a topic, generically over its message type (see [`Topic::visit`]).
pub trait TopicVisitor {
    /// What it gives.
    type Output;
    /// Does it for the topic of `codec`.
    fn visit<M: Message>(self, codec: Codec<M>) -> Self::Output;
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
    /// The resolved name of the control_msgs/FollowJointTrajectory action to serve, if any.
    pub action: Option<String>,
    /// Declared parameters with their start values; changes are validated against them.
    pub parameters: ParameterStore,
}

/// Where every node announces changed parameter values.
pub const PARAMETER_EVENTS: &str = "/parameter_events";

impl NodeSpec {
    /// What the node publishes: its own publications (their order is
    /// [`NodeSpec::publications`]'s, so a slot means the same) and then what its parameter
    /// services publish, `/parameter_events`.
    pub fn all_publications(&self) -> Vec<(Topic, String)> {
        let mut all = self.publications.clone();
        all.push((Topic::ParameterEvents, PARAMETER_EVENTS.into()));
        all
    }

    /// The slot of `/parameter_events` among [`NodeSpec::all_publications`]: a node's own
    /// announcements go there, whatever else of that type its spec publishes.
    pub fn parameter_events_slot(&self) -> usize {
        self.publications.len()
    }
}

/// A running node's connection to the middleware.
pub trait Transport {
    /// The next message, tick or parameter request. `None` ends the node's `run`: rcl gives
    /// it when its parameter services stop with the node; the DDS backend never does (its
    /// node runs until the process ends); scripted test transports give it at their end.
    fn next(&mut self) -> impl std::future::Future<Output = Option<Incoming>> + Send;
    /// Publishes on the node's first publication of the message's topic (none: ignored).
    fn publish(&mut self, msg: Outgoing<'_>);
    /// Publishes on publication `slot` (its index in [`NodeSpec::publications`]): how a node
    /// with two publications of one topic (two arms' joint states) says which. Ignored when
    /// that publication is of another topic or there is none.
    fn publish_on(&mut self, slot: usize, msg: Outgoing<'_>);
    /// The subscription (its index in [`NodeSpec::subscriptions`]) of the message `next`
    /// returned last: how a node with two subscriptions of one topic tells them apart.
    fn received_on(&self) -> usize;
    /// How many subscriptions match the node's publication of `topic`.
    fn subscriber_count(&self, topic: Topic) -> usize;
    /// Answers the parameter service request `id` (announcing the accepted changes on
    /// `/parameter_events`).
    fn respond(&mut self, id: u64, response: ParameterResponse);
    /// Announces on `/parameter_events` values that changed because others were set (a gain
    /// design writing `kp` and `kd`), which the answer to the set did not name.
    fn announce_parameters(&mut self, changed: &[(String, armctl_control::ParameterValue)]);
    /// Answers the action request `id`.
    fn respond_action(&mut self, id: u64, response: ActionResponse);
    /// Publishes the action's feedback or goal statuses.
    fn publish_action(&mut self, output: ActionOutput<'_>);
    /// Logs to rosout (and stderr).
    fn log(&self, level: LogLevel, text: &str);
    /// Gives the middleware time to send what was published, before the process exits (the
    /// DDS writer and rcl hand samples to threads of their own).
    fn flush(&mut self) -> impl std::future::Future<Output = ()> + Send {
        tokio::time::sleep(std::time::Duration::from_millis(50))
    }
}

/// A node's logic, run on any [`Transport`].
pub trait NodeLogic: Send + Sized + 'static {
    /// What the middleware must provide.
    fn spec(&self) -> &NodeSpec;
    /// The parameter declarations as YAML (`--print-params`).
    fn describe_parameters(&self) -> String {
        self.spec().parameters.describe()
    }
    /// Runs until the middleware stops or a stop is requested (`Ok`), or until the node cannot
    /// go on (`Err`: the simulation diverged), which the process reports with a failing exit.
    fn run<T: Transport + Send>(
        self,
        transport: &mut T,
    ) -> impl std::future::Future<Output = Result<(), RosError>> + Send;
}
