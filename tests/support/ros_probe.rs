//! A test node standing in for the robot and the operator: it publishes `/joint_states` and
//! references, and records the commands, `~/state` and `/rosout` lines of a controller node,
//! all over DDS on loopback.

use std::time::Duration;

use armctl_nodes::msgs::{labelled_block, Float64MultiArray, JointState, JointTrajectory, Log};
use armctl_nodes::transport::dds::{DdsOptions, DdsTransport, ParameterClient};
use armctl_nodes::transport::{Incoming, NodeSpec, Outgoing, Topic, Transport};
use armctl_runtime::node_parameters::ParameterStore;

/// What the probe received, in order.
#[derive(Debug, Default)]
pub struct Received {
    /// Effort commands.
    pub commands: Vec<Vec<f64>>,
    /// `~/state` messages.
    pub states: Vec<Float64MultiArray>,
    /// `/rosout` lines.
    pub logs: Vec<Log>,
}

impl Received {
    /// Rosout lines containing `text`.
    pub fn logs_containing(&self, text: &str) -> Vec<&Log> {
        self.logs.iter().filter(|l| l.msg.contains(text)).collect()
    }

    /// The `label` block of the newest `~/state`.
    pub fn last_state(&self, label: &str) -> Option<Vec<f64>> {
        self.states
            .last()
            .and_then(|s| labelled_block(s, label))
            .map(<[f64]>::to_vec)
    }
}

/// The probe node.
pub struct Probe {
    transport: DdsTransport,
    /// Everything received so far.
    pub received: Received,
    controller: String,
}

impl Probe {
    /// A probe for the controller node `/controller_node` commanding on `command_topic`.
    pub fn start(domain_id: u16, command_topic: &str) -> Self {
        let spec = NodeSpec {
            action: None,
            name: "probe".into(),
            namespace: "/".into(),
            subscriptions: vec![
                (Topic::Commands, command_topic.into()),
                (Topic::State, "/controller_node/state".into()),
                (Topic::Rosout, "/rosout".into()),
            ],
            publications: vec![
                (Topic::JointStates, "/joint_states".into()),
                (Topic::Reference, "/controller_node/reference".into()),
            ],
            tick_rate: None,
            parameters: ParameterStore::new(vec![]),
        };
        let transport =
            DdsTransport::start(&spec, &DdsOptions::loopback(domain_id)).expect("probe node");
        Self {
            transport,
            received: Received::default(),
            controller: "/controller_node".into(),
        }
    }

    /// A parameter client of the controller node.
    pub fn parameter_client(&mut self) -> ParameterClient {
        self.transport
            .parameter_client(&self.controller)
            .expect("parameter client")
    }

    /// Publishes a joint state.
    pub fn send_state(&mut self, names: &[&str], position: &[f64], velocity: &[f64]) {
        let msg = JointState {
            name: names.iter().map(|n| n.to_string()).collect(),
            position: position.to_vec(),
            velocity: velocity.to_vec(),
            ..JointState::default()
        };
        self.transport.publish(Outgoing::JointStates(&msg));
    }

    /// Publishes a reference.
    pub fn send_reference(&mut self, msg: &JointTrajectory) {
        self.transport.publish(Outgoing::Reference(msg));
    }

    /// Records what arrives for `duration`.
    pub async fn pump(&mut self, duration: Duration) {
        let _ = tokio::time::timeout(duration, async {
            loop {
                self.receive_one().await;
            }
        })
        .await;
    }

    /// Records until `done` holds (true) or `patience` passes (false).
    pub async fn wait_until(
        &mut self,
        patience: Duration,
        done: impl Fn(&Received) -> bool,
    ) -> bool {
        tokio::time::timeout(patience, async {
            while !done(&self.received) {
                self.receive_one().await;
            }
        })
        .await
        .is_ok()
    }

    async fn receive_one(&mut self) {
        match self.transport.next().await {
            Some(Incoming::Commands(c)) => self.received.commands.push(c.data),
            Some(Incoming::State(s)) => self.received.states.push(s),
            Some(Incoming::Rosout(l)) => self.received.logs.push(l),
            Some(_) => {}
            None => std::future::pending().await,
        }
    }

    /// Waits until the controller and the probe see each other (commands answer states): up to
    /// 30 s, for a node process starting on a loaded machine.
    pub async fn connect(&mut self, names: &[&str], position: &[f64]) {
        let velocity = vec![0.0; position.len()];
        for _ in 0..600 {
            self.send_state(names, position, &velocity);
            let before = self.received.commands.len();
            if self
                .wait_until(Duration::from_millis(50), |r| r.commands.len() > before)
                .await
            {
                // Answers to the states sent while waiting may still come (late, from a node
                // in another process): taken here, they are not mistaken for the answer to a
                // test's first state.
                self.pump(Duration::from_millis(300)).await;
                return;
            }
        }
        panic!("the controller node did not answer joint states within 30 s");
    }

    /// Sends a state and returns the command answering it. The state goes twice: the first
    /// answer may still be one to a state sent before (a node in another process answers
    /// those late); once it has answered, older states are gone (nodes take only the newest
    /// waiting one), so the answer to the second is this state's.
    pub async fn command_for(
        &mut self,
        names: &[&str],
        position: &[f64],
        velocity: &[f64],
    ) -> Vec<f64> {
        for _ in 0..2 {
            let before = self.received.commands.len();
            self.send_state(names, position, velocity);
            assert!(
                self.wait_until(Duration::from_secs(5), |r| r.commands.len() > before)
                    .await,
                "no command answered the state within 5 s"
            );
        }
        self.received.commands.last().cloned().unwrap_or_default()
    }

    /// The command answering a state the node keeps receiving: [`Probe::command_for`] until two
    /// answers in a row agree (within 1e-9 N m). On a loaded machine a node in another process
    /// can still be answering the states of [`Probe::connect`] after two new ones were sent.
    pub async fn steady_command_for(
        &mut self,
        names: &[&str],
        position: &[f64],
        velocity: &[f64],
    ) -> Vec<f64> {
        let mut last = self.command_for(names, position, velocity).await;
        for _ in 0..100 {
            let next = self.command_for(names, position, velocity).await;
            let agree = next.len() == last.len()
                && next.iter().zip(&last).all(|(a, b)| (a - b).abs() <= 1e-9);
            if agree {
                return next;
            }
            last = next;
        }
        panic!("the commands answering one state kept changing: last {last:?}");
    }
}
