//! The demo, and the harness of the end-to-end tests: `sim_node` and `controller_node` in this
//! process, each on its own DDS participant, plus a driver node that waits until the
//! controller is running, sends the reference on `~/reference` (stamped a little ahead, so the
//! start time is known) and records the controller's `~/state` until the trajectory is done.
//! Both nodes run on the simulator's clock (`/clock`), so a slow machine slows the run down
//! instead of degrading it.

use std::time::{Duration, Instant};

use crate::launch::{spawn, RunningNode};
use crate::msgs::{labelled_block, Float64MultiArray, JointTrajectory, Time};
use crate::transport::dds::{DdsOptions, DdsTransport};
use crate::transport::{Incoming, NodeLogic, NodeSpec, Outgoing, Topic, Transport};
use crate::{nodes::controller_node::ControllerNode, nodes::sim_node::SimNode, RosError};
use armctl_runtime::node_parameters::ParameterStore;
use armctl_runtime::ros_args::RosArgs;
use armctl_runtime::startup::NodeStart;

/// What to run.
#[derive(Debug, Clone)]
pub struct DemoSetup {
    /// URDF file of the robot (both nodes).
    pub urdf_path: String,
    /// Controller name.
    pub controller: String,
    /// ROS parameter files for the controller node (node name `controller_node`).
    pub params_files: Vec<String>,
    /// Extra `-p` overrides for the controller node, as `name`, `value` text.
    pub controller_overrides: Vec<(String, String)>,
    /// Extra `-p` overrides for the simulator node (`initial_positions`, noise, ...).
    pub sim_overrides: Vec<(String, String)>,
    /// The reference, sent once the controller runs.
    pub trajectory: JointTrajectory,
    /// How long to record after the reference starts, s (simulated time).
    pub duration: f64,
    /// Simulator and joint_states rate, Hz.
    pub rate: f64,
    /// Namespace of both nodes ("/" for none).
    pub namespace: String,
    /// DDS domain and discovery range.
    pub dds: DdsOptions,
}

/// What the driver recorded from `~/state`, one row per control step from the reference start.
#[derive(Debug, Clone, Default)]
pub struct DemoRecord {
    /// Time since the reference started, s.
    pub time: Vec<f64>,
    /// Reference positions, one column per joint.
    pub reference: Vec<Vec<f64>>,
    /// Measured positions, one column per joint.
    pub position: Vec<Vec<f64>>,
    /// Measured velocities, one column per joint.
    pub velocity: Vec<Vec<f64>>,
    /// Commanded efforts, one column per joint (chain order).
    pub effort: Vec<Vec<f64>>,
    /// Controller estimates, one column each.
    pub estimates: Vec<Vec<f64>>,
    /// Steps in which the controller held in its safe mode.
    pub holding_steps: usize,
    /// The time of the first of them, s since the reference started.
    pub first_holding: Option<f64>,
    /// Commands the safety layer clipped at an effort limit (counted per joint, over every
    /// control step of the recorded part, not only the recorded rows).
    pub saturated: usize,
    /// The node's count of clipped commands when recording began.
    saturated_before: Option<f64>,
    /// Wall-clock time of the recorded part, s.
    pub wall_seconds: f64,
    /// What controller_node refused from the reference on, as it said on `/rosout` (a
    /// reference refused means the arm held instead of following it).
    pub refusals: Vec<String>,
}

impl DemoRecord {
    /// RMS over all joints and rows of `reference - position`.
    pub fn rms_error(&self) -> f64 {
        let (mut sum, mut count) = (0.0, 0usize);
        for (r, q) in self.reference.iter().zip(&self.position) {
            sum += r.iter().zip(q).map(|(r, q)| (r - q).powi(2)).sum::<f64>();
            count += r.len();
        }
        (sum / count.max(1) as f64).sqrt()
    }

    fn push(&mut self, t: f64, state: &Float64MultiArray) -> Result<(), RosError> {
        let block = |label: &str| {
            labelled_block(state, label).ok_or_else(|| RosError::Transport {
                reason: format!("~/state has no '{label}' block"),
            })
        };
        self.time.push(t);
        if block("holding")?.first().is_some_and(|h| *h != 0.0) {
            self.holding_steps += 1;
            self.first_holding.get_or_insert(t);
        }
        if let Some(&total) = block("saturated")?.first() {
            let before = *self.saturated_before.get_or_insert(total);
            self.saturated = (total - before).max(0.0) as usize;
        }
        for (columns, label) in [
            (&mut self.reference, "reference"),
            (&mut self.position, "position"),
            (&mut self.velocity, "velocity"),
            (&mut self.effort, "effort"),
            (&mut self.estimates, "estimates"),
        ] {
            let values = block(label)?;
            if columns.is_empty() {
                columns.resize(values.len(), Vec::new());
            }
            for (column, v) in columns.iter_mut().zip(values) {
                column.push(*v);
            }
        }
        Ok(())
    }
}

fn args(name: &str, setup: &DemoSetup, overrides: Vec<(String, String)>) -> RosArgs {
    RosArgs {
        node_name: Some(name.into()),
        namespace: Some(setup.namespace.clone()),
        overrides,
        ..RosArgs::default()
    }
}

fn pairs(list: &[(&str, String)], extra: &[(String, String)]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = list
        .iter()
        .map(|(n, v)| (n.to_string(), v.clone()))
        .collect();
    out.extend_from_slice(extra);
    out
}

fn topic_of(spec: &NodeSpec, topic: Topic) -> String {
    spec.subscriptions
        .iter()
        .chain(&spec.publications)
        .find(|(t, _)| *t == topic)
        .map(|(_, name)| name.clone())
        .unwrap_or_default()
}

/// The two nodes, configured as `ros2 run` would with these arguments.
fn configure(setup: &DemoSetup) -> Result<(SimNode, ControllerNode), RosError> {
    let common = [
        ("urdf_path", setup.urdf_path.clone()),
        ("use_sim_time", "true".to_string()),
    ];
    // ~/state at every step: the demo records the whole run from it.
    let own = [
        common[0].clone(),
        common[1].clone(),
        ("controller", setup.controller.clone()),
        ("state_publish_rate", "0.0".to_string()),
    ];
    let mut controller_args = args(
        "controller_node",
        setup,
        pairs(&own, &setup.controller_overrides),
    );
    controller_args.params_files = setup.params_files.clone();
    // The simulator is the demo's only source of a measured wrench (a scene's sensor).
    controller_args
        .remaps
        .push(("~/external_wrench".into(), "sim_node/wrench".into()));
    let start = NodeStart::new(&controller_args, "controller_node")?;
    let controller = ControllerNode::one_arm(&start)?;
    let command_topic = topic_of(controller.spec(), Topic::Commands);
    let sim_args = args(
        "sim_node",
        setup,
        pairs(
            &[
                common[0].clone(),
                ("command_topic", command_topic),
                ("rate", format!("{:?}", setup.rate)),
                ("publish_clock", "true".to_string()),
                // A busy machine slows the simulated time instead of delaying the commands
                // (without it, a starved controller's arm is held, or falls once sim_node's
                // commands stop); `--sim-set lockstep:=false` runs on the wall clock's pace.
                ("lockstep", "true".to_string()),
            ],
            &setup.sim_overrides,
        ),
    );
    Ok((SimNode::new(&sim_args)?, controller))
}

/// The running demo: both nodes and the driver.
struct Demo {
    _nodes: [RunningNode; 2],
    driver: DdsTransport,
    state_topic: String,
}

impl Demo {
    fn start(setup: &DemoSetup) -> Result<Self, RosError> {
        let (sim, controller) = configure(setup)?;
        let reference_topic = topic_of(controller.spec(), Topic::Reference);
        let state_topic = topic_of(controller.spec(), Topic::State);
        let driver_spec = NodeSpec {
            action: None,
            name: "armctl_demo".into(),
            namespace: setup.namespace.clone(),
            subscriptions: vec![
                (Topic::State, state_topic.clone()),
                (Topic::Rosout, "/rosout".into()),
            ],
            publications: vec![(Topic::Reference, reference_topic)],
            tick_rate: None,
            parameters: ParameterStore::new(vec![]),
        };
        let nodes = [spawn(sim, &setup.dds)?, spawn(controller, &setup.dds)?];
        let driver = DdsTransport::start(&driver_spec, &setup.dds)?;
        Ok(Self {
            _nodes: nodes,
            driver,
            state_topic,
        })
    }

    /// The next `~/state`, or an error after `patience` without one; a refusal the
    /// controller logs meanwhile goes into `refusals`.
    async fn next_state(
        &mut self,
        patience: Duration,
        refusals: &mut Vec<String>,
    ) -> Result<Float64MultiArray, RosError> {
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            match tokio::time::timeout_at(deadline, self.driver.next()).await {
                Ok(Some(Incoming::State(state))) => return Ok(state),
                Ok(Some(Incoming::Rosout(log)))
                    if log.level >= 30
                        && log.name.ends_with("controller_node")
                        && log.msg.contains("refused") =>
                {
                    refusals.push(log.msg);
                }
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => {
                    return Err(RosError::Transport {
                        reason: format!(
                            "no message on {} for {:.0} s",
                            self.state_topic,
                            patience.as_secs_f64()
                        ),
                    })
                }
            }
        }
    }

    /// Waits until the controller runs on valid states and hears the driver; returns its time.
    async fn wait_until_controlling(&mut self) -> Result<f64, RosError> {
        let patience = Duration::from_secs(20);
        let deadline = Instant::now() + patience;
        loop {
            let state = self.next_state(patience, &mut Vec::new()).await?;
            let holding = labelled_block(&state, "holding").and_then(|h| h.first().copied());
            let time = labelled_block(&state, "time").and_then(|t| t.first().copied());
            if let (Some(0.0), Some(time), true) = (
                holding,
                time,
                self.driver.subscriber_count(Topic::Reference) > 0,
            ) {
                return Ok(time);
            }
            if Instant::now() > deadline {
                return Err(RosError::Transport {
                    reason: "the controller did not start controlling within 20 s (holding, or not subscribed to ~/reference)".into(),
                });
            }
        }
    }
}

/// Runs the demo: starts the nodes, sends the reference `lead` s ahead of the controller's
/// clock, records `~/state` for `setup.duration` s, calling `progress(t)` along the way.
pub async fn run_demo(
    setup: &DemoSetup,
    mut progress: impl FnMut(f64),
) -> Result<DemoRecord, RosError> {
    const LEAD: f64 = 0.05;
    let mut demo = Demo::start(setup)?;
    let now = demo.wait_until_controlling().await?;
    let start = now + LEAD;
    let mut reference = setup.trajectory.clone();
    reference.header.stamp = Time::from_seconds(start);
    demo.driver.publish(Outgoing::Reference(&reference));
    let mut record = DemoRecord::default();
    let wall = Instant::now();
    loop {
        let state = demo
            .next_state(Duration::from_secs(5), &mut record.refusals)
            .await?;
        let Some(time) = labelled_block(&state, "time").and_then(|t| t.first().copied()) else {
            continue;
        };
        let t = time - start;
        if t >= setup.duration {
            break;
        }
        // (-1e-9: the first step lands on the start up to rounding.)
        if t >= -1e-9 {
            record.push(t, &state)?;
            progress(t);
        }
    }
    record.wall_seconds = wall.elapsed().as_secs_f64();
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scene_s_sensor_reaches_the_controller_s_external_wrench() {
        let workspace = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let setup = DemoSetup {
            urdf_path: format!("{workspace}/urdf/panda.urdf"),
            controller: "cartesian_impedance".into(),
            params_files: vec![],
            controller_overrides: vec![],
            sim_overrides: vec![(
                "scene_file".into(),
                format!("{workspace}/config/scenes/panda_table.yaml"),
            )],
            trajectory: JointTrajectory::default(),
            duration: 1.0,
            rate: 1000.0,
            namespace: "/demo".into(),
            dds: DdsOptions::loopback(0),
        };
        let (sim, controller) = configure(&setup).unwrap();
        let published = topic_of(sim.spec(), Topic::ExternalWrench);
        assert_eq!(published, "/demo/sim_node/wrench");
        assert_eq!(
            topic_of(controller.spec(), Topic::ExternalWrench),
            published
        );
    }
}
