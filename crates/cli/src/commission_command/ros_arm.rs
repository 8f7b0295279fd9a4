//! A running arm over ROS 2 as the arm commissioned: sensor_msgs/JointState in (the arm's
//! `joint_states`), std_msgs/Float64MultiArray efforts out (the URDF chain's joints in order,
//! as ros2_control's `effort_controllers/JointGroupEffortController` configured with them, or
//! sim_node, takes them), on DDS (ROS_DOMAIN_ID and ROS_LOCALHOST_ONLY as ROS reads them).
//! Time is the joint states' stamps: an arm on simulated time (sim_node with `/clock`, Gazebo)
//! is commissioned on its own clock. Ctrl-C stops the run under way, which brakes the arm.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use armctl_nodes::msgs::{Float64MultiArray, JointState};
use armctl_nodes::transport::dds::{DdsOptions, DdsTransport};
use armctl_nodes::transport::{Incoming, NodeSpec, Outgoing, Topic, Transport};
use armctl_runtime::node_parameters::ParameterStore;
use tokio::runtime::Runtime;

use super::arm::{Arm, ArmState};

/// The longest a run waits for the next joint state before it says the arm stopped
/// publishing (generous: a loaded machine stalls the arm's process too).
const STATE_PATIENCE: Duration = Duration::from_secs(10);

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

/// The arm's topics, connected.
pub(crate) struct RosArm {
    runtime: Runtime,
    transport: DdsTransport,
    names: Vec<String>,
    command_joints: Vec<String>,
    command: Float64MultiArray,
    period: f64,
    topics: RosTopics,
    interrupted: Arc<AtomicBool>,
}

impl RosArm {
    /// Connects to the arm: its first joint state (which names its joints and must carry
    /// efforts) and a subscriber of the command topic, each within `topics.wait`. `command_joints`
    /// are the URDF chain's joints, the order of the command.
    pub(crate) fn connect(topics: RosTopics, command_joints: Vec<String>) -> Result<Self> {
        if !(topics.rate.is_finite() && (1.0..=10_000.0).contains(&topics.rate)) {
            bail!("--rate must be within [1, 10000] Hz, got {}", topics.rate);
        }
        if !(topics.wait.is_finite() && (0.0..=3600.0).contains(&topics.wait)) {
            bail!("--wait must be within [0, 3600] s, got {}", topics.wait);
        }
        let dds = DdsOptions::from_env()?;
        let spec = NodeSpec {
            action: None,
            name: "armctl_commission".into(),
            namespace: "/".into(),
            subscriptions: vec![(Topic::JointStates, topics.joint_states.clone())],
            publications: vec![(Topic::Commands, topics.command_topic.clone())],
            tick_rate: None,
            parameters: ParameterStore::new(vec![]),
        };
        let runtime = crate::dds_runtime::dds_runtime()?;
        let transport = runtime.block_on(async { DdsTransport::start(&spec, &dds) })?;
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
            names: vec![],
            command_joints,
            command: Float64MultiArray {
                data: vec![0.0; n],
                ..Float64MultiArray::default()
            },
            period: 1.0 / topics.rate,
            topics,
            interrupted,
        };
        arm.wait_for_the_arm(dds.domain_id)?;
        Ok(arm)
    }

    /// The first joint state and the command's subscriber, within `--wait`.
    fn wait_for_the_arm(&mut self, domain: u16) -> Result<()> {
        let wait = Duration::from_secs_f64(self.topics.wait);
        let first = self.next_state(wait).with_context(|| {
            format!(
                "is the arm running on ROS domain {domain} (ROS_DOMAIN_ID), publishing {}?",
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
                "nothing subscribes to {} within {} s: is the arm's effort controller running on ROS domain {domain}?",
                self.topics.command_topic,
                self.topics.wait
            );
        }
        Ok(())
    }

    /// The next joint state within `patience`.
    fn next_state(&mut self, patience: Duration) -> Result<JointState> {
        let transport = &mut self.transport;
        let topic = &self.topics.joint_states;
        self.runtime.block_on(async {
            let wait = async {
                loop {
                    if let Some(Incoming::JointStates(state)) = transport.next().await {
                        return state;
                    }
                }
            };
            tokio::time::timeout(patience, wait).await.map_err(|_| {
                anyhow::anyhow!("no joint state on {topic} for {} s", patience.as_secs_f64())
            })
        })
    }
}

impl Arm for RosArm {
    fn joint_names(&self) -> &[String] {
        &self.names
    }

    fn command_joints(&self) -> &[String] {
        &self.command_joints
    }

    fn period(&self) -> f64 {
        self.period
    }

    /// The newest joint state, its joints in the order the first one named them.
    fn measure(&mut self, state: &mut ArmState) -> Result<()> {
        let message = self.next_state(STATE_PATIENCE)?;
        let n = self.names.len();
        state.position.resize(n, f64::NAN);
        state.velocity.resize(n, f64::NAN);
        state.effort.resize(n, f64::NAN);
        state.time = message.header.stamp.seconds();
        for (a, name) in self.names.iter().enumerate() {
            let Some(k) = message.name.iter().position(|m| m == name) else {
                bail!(
                    "joint '{name}' is missing from a joint state on {}",
                    self.topics.joint_states
                );
            };
            let value = |v: &[f64]| v.get(k).copied().unwrap_or(f64::NAN);
            state.position[a] = value(&message.position);
            state.velocity[a] = value(&message.velocity);
            state.effort[a] = value(&message.effort);
        }
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
            "the arm on {} and {}",
            self.topics.joint_states, self.topics.command_topic
        )
    }
}

impl Drop for RosArm {
    /// The last command (the brake's hold that ends every run) reaches the arm before the
    /// middleware goes.
    fn drop(&mut self) {
        let transport = &mut self.transport;
        self.runtime.block_on(async { transport.flush().await });
    }
}
