//! A running arm over ROS 2 as the arm commissioned: sensor_msgs/JointState in (the arm's
//! `joint_states`), std_msgs/Float64MultiArray efforts out (the URDF chain's joints in order,
//! as ros2_control's `effort_controllers/JointGroupEffortController` configured with them, or
//! sim_node, takes them), on rcl when the command is built with the `rcl` feature in a ROS 2
//! workspace, else on DDS (ROS_DOMAIN_ID and ROS_LOCALHOST_ONLY as ROS reads them).
//! Time is the joint states' stamps: an arm on simulated time (sim_node with `/clock`, Gazebo)
//! is commissioned on its own clock. Ctrl-C stops the run under way, which brakes the arm.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use armctl_nodes::msgs::{Float64MultiArray, JointState};
#[cfg(not(feature = "rcl"))]
use armctl_nodes::transport::dds::{DdsOptions, DdsTransport};
use armctl_nodes::transport::{Incoming, NodeSpec, Outgoing, Topic, Transport};
use armctl_runtime::node_parameters::ParameterStore;
use tokio::runtime::Runtime;

use super::arm::{Arm, ArmState};

/// The longest a run goes without a joint state before it says the arm stopped publishing
/// (generous: a loaded machine stalls the arm's process too). Meanwhile the controller keeps
/// commanding: its state timeout holds the arm in its safe mode.
const STATE_PATIENCE: Duration = Duration::from_secs(10);

/// How long a run waits for a joint state before the controller is stepped without one, at
/// the last state's time moved on by the wait: beyond its state timeout (0.1 s), so it holds
/// the arm in its safe mode and the run stops. Long enough that a slow arm process (sim_node
/// in lockstep on a loaded machine runs on after 0.1 s) is not taken for a lost one.
const STATE_SLICE: Duration = Duration::from_millis(500);

/// Where the arm is on ROS 2.
#[derive(Debug, Clone)]
pub(crate) struct RosTopics {
    pub(crate) joint_states: String,
    pub(crate) command_topic: String,
    /// The arm's control rate, Hz.
    pub(crate) rate: f64,
    /// How long to wait for the arm to appear, s.
    pub(crate) wait: f64,
}

/// The arm's topics, connected on the middleware `T`.
pub(crate) struct RosArm<T: Transport> {
    runtime: Runtime,
    transport: T,
    /// The middleware and the domain, for messages: `ROS domain 7 (DDS)`.
    domain: String,
    names: Vec<String>,
    command_joints: Vec<String>,
    command: Float64MultiArray,
    period: f64,
    topics: RosTopics,
    interrupted: Arc<AtomicBool>,
    /// Per joint of `names`: whether the URDF's chain has it (it must then be in every state).
    needed: Vec<bool>,
    /// The last state that came, and when (wall clock; none yet: never).
    last: ArmState,
    last_at: Option<std::time::Instant>,
}

/// The command's node: the arm's joint states in, efforts out.
fn node_spec(topics: &RosTopics) -> NodeSpec {
    NodeSpec {
        action: None,
        name: "armctl_commission".into(),
        namespace: "/".into(),
        subscriptions: vec![(Topic::JointStates, topics.joint_states.clone())],
        publications: vec![(Topic::Commands, topics.command_topic.clone())],
        tick_rate: None,
        parameters: ParameterStore::new(vec![]),
    }
}

fn check_topics(topics: &RosTopics) -> Result<()> {
    if !(topics.rate.is_finite() && (1.0..=10_000.0).contains(&topics.rate)) {
        bail!("--rate must be within [1, 10000] Hz, got {}", topics.rate);
    }
    if !(topics.wait.is_finite() && (0.0..=3600.0).contains(&topics.wait)) {
        bail!("--wait must be within [0, 3600] s, got {}", topics.wait);
    }
    Ok(())
}

#[cfg(not(feature = "rcl"))]
impl RosArm<DdsTransport> {
    /// Connects to the arm over DDS ([`RosArm::connect`]).
    pub(crate) fn over_dds(topics: RosTopics, command_joints: Vec<String>) -> Result<Self> {
        check_topics(&topics)?;
        let dds = DdsOptions::from_env()?;
        let runtime = crate::dds_runtime::dds_runtime()?;
        let spec = node_spec(&topics);
        let transport = runtime.block_on(async { DdsTransport::start(&spec, &dds) })?;
        let domain = format!("ROS domain {} (DDS)", dds.domain_id);
        Self::connect(runtime, transport, domain, topics, command_joints)
    }
}

#[cfg(feature = "rcl")]
impl RosArm<armctl_nodes::transport::rcl::RclTransport> {
    /// Connects to the arm over rcl, as a ROS 2 node of the installation sourced
    /// ([`RosArm::connect`]).
    pub(crate) fn over_rcl(topics: RosTopics, command_joints: Vec<String>) -> Result<Self> {
        use armctl_nodes::transport::rcl::RclTransport;
        check_topics(&topics)?;
        let runtime = crate::dds_runtime::dds_runtime()?;
        let spec = node_spec(&topics);
        let transport = runtime.block_on(async { RclTransport::start(&spec) })?;
        let id = std::env::var("ROS_DOMAIN_ID").unwrap_or_else(|_| "0".into());
        let domain = format!("ROS domain {id} (rcl)");
        Self::connect(runtime, transport, domain, topics, command_joints)
    }
}

impl<T: Transport> RosArm<T> {
    /// Connects to the arm on `transport`: its first joint state (which names its joints and
    /// must carry efforts) and a subscriber of the command topic, each within `topics.wait`.
    /// `command_joints` are the URDF chain's joints, the order of the command.
    fn connect(
        runtime: Runtime,
        transport: T,
        domain: String,
        topics: RosTopics,
        command_joints: Vec<String>,
    ) -> Result<Self> {
        let interrupted = Arc::new(AtomicBool::new(false));
        let flag = interrupted.clone();
        runtime.spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                flag.store(true, Ordering::SeqCst);
            }
        });
        let n = command_joints.len();
        let mut arm = Self {
            runtime,
            transport,
            domain,
            names: vec![],
            command_joints,
            command: Float64MultiArray {
                data: vec![0.0; n],
                ..Float64MultiArray::default()
            },
            period: 1.0 / topics.rate,
            topics,
            interrupted,
            needed: vec![],
            last: ArmState::default(),
            last_at: None,
        };
        arm.wait_for_the_arm()?;
        Ok(arm)
    }

    /// The first joint state and the command's subscriber, within `--wait`.
    fn wait_for_the_arm(&mut self) -> Result<()> {
        let wait = Duration::from_secs_f64(self.topics.wait);
        let domain = self.domain.clone();
        let first = self.first_state(wait).with_context(|| {
            format!(
                "is the arm running on {domain} (ROS_DOMAIN_ID), publishing {}?",
                self.topics.joint_states
            )
        })?;
        for (what, count, why) in [
            (
                "velocities",
                first.velocity.len(),
                "the controller runs on them",
            ),
            (
                "efforts",
                first.effort.len(),
                "commissioning identifies the arm from its measured efforts",
            ),
        ] {
            if count != first.name.len() {
                bail!(
                    "the joint states on {} carry {count} {what} for {} joints: {why}",
                    self.topics.joint_states,
                    first.name.len()
                );
            }
        }
        self.needed = first
            .name
            .iter()
            .map(|n| self.command_joints.contains(n))
            .collect();
        self.names = first.name;
        let transport = &self.transport;
        let subscribed = self.runtime.block_on(async {
            let deadline = tokio::time::Instant::now() + wait;
            while transport.subscriber_count(Topic::Commands) == 0 {
                if tokio::time::Instant::now() >= deadline {
                    return false;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            true
        });
        if !subscribed {
            bail!(
                "nothing subscribes to {} within {} s: is the arm's effort controller running on {domain}?",
                self.topics.command_topic,
                self.topics.wait
            );
        }
        Ok(())
    }

    /// The first joint state, within `wait` (Ctrl-C ends the wait).
    fn first_state(&mut self, wait: Duration) -> Result<JointState> {
        let start = std::time::Instant::now();
        loop {
            if let Some(state) = self.next_state(STATE_SLICE) {
                return Ok(state);
            }
            if let Some(why) = self.interrupted() {
                bail!("{why} while waiting for the arm");
            }
            if start.elapsed() >= wait {
                bail!(
                    "no joint state on {} for {} s",
                    self.topics.joint_states,
                    wait.as_secs_f64()
                );
            }
        }
    }

    /// The next joint state within `patience`, if one comes.
    fn next_state(&mut self, patience: Duration) -> Option<JointState> {
        let transport = &mut self.transport;
        self.runtime.block_on(async {
            let wait = async {
                loop {
                    if let Some(Incoming::JointStates(state)) = transport.next().await {
                        return state;
                    }
                }
            };
            tokio::time::timeout(patience, wait).await.ok()
        })
    }

    /// `message` into `state`, kept as the last state.
    fn take(&mut self, message: &JointState, state: &mut ArmState) -> Result<()> {
        self.read(message, state)?;
        self.last.clone_from(state);
        self.last_at = Some(std::time::Instant::now());
        Ok(())
    }

    /// `message` into `state`, in the order of `names`: each of the URDF's joints must be in
    /// it (a value it lacks is not a number, which the controller holds on); the others are
    /// taken as they come, zero when absent.
    fn read(&self, message: &JointState, state: &mut ArmState) -> Result<()> {
        let n = self.names.len();
        state.position.resize(n, 0.0);
        state.velocity.resize(n, 0.0);
        state.effort.resize(n, 0.0);
        state.time = message.header.stamp.seconds();
        state.fresh = true;
        for (a, name) in self.names.iter().enumerate() {
            let missing = if self.needed[a] { f64::NAN } else { 0.0 };
            let Some(k) = message.name.iter().position(|m| m == name) else {
                if self.needed[a] {
                    bail!(
                        "joint '{name}' is missing from the joint state stamped {:.3} s on {}",
                        state.time,
                        self.topics.joint_states
                    );
                }
                continue;
            };
            let value = |v: &[f64]| v.get(k).copied().unwrap_or(missing);
            state.position[a] = value(&message.position);
            state.velocity[a] = value(&message.velocity);
            state.effort[a] = value(&message.effort);
        }
        Ok(())
    }
}

impl<T: Transport> Arm for RosArm<T> {
    fn joint_names(&self) -> &[String] {
        &self.names
    }

    fn command_joints(&self) -> &[String] {
        &self.command_joints
    }

    fn period(&self) -> f64 {
        self.period
    }

    /// The newest joint state, its joints in the order the first one named them. None within
    /// [`STATE_SLICE`]: the last one again, not fresh, its time moved on by the wait (the
    /// controller's state timeout then holds the arm in its safe mode, and states that come
    /// later, older than that, get that safe command again), until [`STATE_PATIENCE`] is out.
    fn measure(&mut self, state: &mut ArmState) -> Result<()> {
        let Some(when) = self.last_at else {
            let message = self.first_state(STATE_PATIENCE)?;
            return self.take(&message, state);
        };
        if let Some(message) = self.next_state(STATE_SLICE) {
            return self.take(&message, state);
        }
        let waited = when.elapsed();
        if waited > STATE_PATIENCE {
            bail!(
                "no joint state on {} for {:.1} s",
                self.topics.joint_states,
                waited.as_secs_f64()
            );
        }
        state.clone_from(&self.last);
        state.time = self.last.time + waited.as_secs_f64();
        state.fresh = false;
        Ok(())
    }

    fn apply(&mut self, effort: &[f64]) -> Result<()> {
        self.command.data.copy_from_slice(effort);
        self.transport.publish(Outgoing::Commands(&self.command));
        Ok(())
    }

    fn time_runs_on(&self) -> bool {
        true
    }

    fn interrupted(&self) -> Option<String> {
        self.interrupted
            .load(Ordering::SeqCst)
            .then(|| "interrupted (Ctrl-C)".to_string())
    }

    fn describe(&self) -> String {
        format!(
            "the arm on {} and {} ({})",
            self.topics.joint_states, self.topics.command_topic, self.domain
        )
    }
}

impl<T: Transport> Drop for RosArm<T> {
    /// The last command (the brake's hold that ends every run) reaches the arm before the
    /// middleware goes.
    fn drop(&mut self) {
        let transport = &mut self.transport;
        self.runtime.block_on(async { transport.flush().await });
    }
}
