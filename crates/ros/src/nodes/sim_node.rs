//! `sim_node`: the embedded simulator as a node, the stand-in for hardware and Gazebo. It
//! publishes `joint_states` (sensor_msgs/JointState, chain order, stamped with simulated time)
//! at `rate` and applies the newest effort command from `command_topic`
//! (std_msgs/Float64MultiArray, chain order). A command of the wrong length or with NaN is
//! refused with a reason; without a command for `command_timeout` the arm gets zero effort.
//! With a `scene_file` the arm touches its obstacles, and a force/torque sensor of the scene is
//! published on `~/wrench` (geometry_msgs/WrenchStamped, in the sensor link's frame, stamped
//! with simulated time): remap it to a controller's `~/external_wrench`.

use armctl_sim::{Integrator, ModelMismatch, Payload, SensorNoise, SimConfig, Simulator};
use nalgebra::{Matrix3, Vector3};

use crate::msgs::{Clock, Header, JointState, Time, Vector3 as MsgVector3, WrenchStamped};
use crate::parameter_services::handle_request;
use crate::transport::LogLevel;
use crate::transport::{Incoming, NodeLogic, NodeSpec, Outgoing, Topic, Transport};
use crate::RosError;
use armctl_control::ParameterValue;
use armctl_runtime::declarations::sim_node_declarations;
use armctl_runtime::names::resolve;
use armctl_runtime::node_parameters::ParameterStore;
use armctl_runtime::ros_args::RosArgs;
use armctl_runtime::startup::{load_conversion, NodeStart};

/// A configured simulator node.
pub struct SimNode {
    spec: NodeSpec,
    sim: Simulator,
    command: Vec<f64>,
    last_command: Option<f64>,
    command_timeout: f64,
    message: JointState,
    q: Vec<f64>,
    qd: Vec<f64>,
    zero: Vec<f64>,
    publish_clock: bool,
    clock: Clock,
    hold_until_command: bool,
    refused: bool,
    timed_out: bool,
    /// The sensor's message, when the scene has a sensor.
    wrench: Option<WrenchStamped>,
}

impl std::fmt::Debug for SimNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimNode")
            .field("name", &self.spec.name)
            .finish()
    }
}

fn config(store: &ParameterStore, dt: f64) -> SimConfig {
    let integer = |name: &str| match store.get(name) {
        Some(ParameterValue::Integer(i)) => *i,
        _ => 0,
    };
    let noise = (store.double("noise_position") > 0.0 || store.double("noise_velocity") > 0.0)
        .then(|| SensorNoise {
            position: store.double("noise_position"),
            velocity: store.double("noise_velocity"),
            seed: 1,
        });
    let payload = (store.double("payload_mass") > 0.0).then(|| Payload {
        mass: store.double("payload_mass"),
        com: Vector3::zeros(),
        inertia: Matrix3::zeros(),
    });
    SimConfig {
        dt,
        integrator: if store.string("integrator") == "euler" {
            Integrator::SemiImplicitEuler
        } else {
            Integrator::Rk4
        },
        friction: store.get("friction") != Some(&ParameterValue::Bool(false)),
        noise,
        command_delay_steps: integer("command_delay_steps").max(0) as usize,
        mismatch: ModelMismatch {
            payload,
            mass_scale: Some(store.double("mass_scale")).filter(|s| (*s - 1.0).abs() > 0.0),
        },
        ..SimConfig::default()
    }
}

impl SimNode {
    /// Configures the node from the command line.
    pub fn new(args: &RosArgs) -> Result<Self, RosError> {
        let start = NodeStart::new(args, "sim_node")?;
        let mut store = ParameterStore::new(sim_node_declarations());
        if let Some(name) = start.apply(&mut store)?.first() {
            return Err(armctl_runtime::RuntimeError::Parameter {
                name: name.clone(),
                reason: "not declared by sim_node".into(),
            }
            .into());
        }
        let conversion = load_conversion(&store)?;
        let robot = conversion.robot;
        let n = robot.dof();
        let q0 = match store.get("initial_positions") {
            Some(ParameterValue::DoubleArray(q)) if !q.is_empty() => {
                if q.len() != n {
                    return Err(armctl_runtime::RuntimeError::Parameter {
                        name: "initial_positions".into(),
                        reason: format!("{} values for {n} joints", q.len()),
                    }
                    .into());
                }
                if let Some((joint, q)) = robot.joints().iter().zip(q).find(|(j, q)| {
                    !q.is_finite()
                        || (j.limits.is_bounded() && !(j.limits.lower..=j.limits.upper).contains(q))
                }) {
                    return Err(armctl_runtime::RuntimeError::Parameter {
                        name: "initial_positions".into(),
                        reason: format!(
                            "{} = {q} is outside its limits [{}, {}]",
                            joint.name, joint.limits.lower, joint.limits.upper
                        ),
                    }
                    .into());
                }
                q.clone()
            }
            _ => robot.middle_configuration(),
        };
        let rate = store.double("rate");
        let mut sim_config = config(&store, 1.0 / rate);
        let scene_path = store.string("scene_file");
        if !scene_path.is_empty() {
            sim_config.scene = armctl_runtime::scene_file::load(std::path::Path::new(&scene_path))
                .and_then(|scene| scene.resolve(&robot, &conversion.report))?;
        }
        let wrench = sim_config
            .scene
            .sensor
            .as_ref()
            .map(|sensor| WrenchStamped {
                header: Header {
                    frame_id: sensor.name.clone(),
                    ..Header::default()
                },
                ..WrenchStamped::default()
            });
        let sim = Simulator::new(&robot, &q0, sim_config).map_err(|e| {
            RosError::from(armctl_runtime::RuntimeError::Parameter {
                name: "simulator".into(),
                reason: e.to_string(),
            })
        })?;
        let resolve_name = |name: &str| resolve(name, &start.namespace, &start.name, &start.remaps);
        let publish_clock = store.get("publish_clock") == Some(&ParameterValue::Bool(true));
        let mut publications = vec![(Topic::JointStates, resolve_name("joint_states"))];
        if publish_clock {
            publications.push((Topic::Clock, resolve_name("/clock")));
        }
        if wrench.is_some() {
            publications.push((Topic::ExternalWrench, resolve_name("~/wrench")));
        }
        let names: Vec<String> = robot.joint_names().map(str::to_string).collect();
        let spec = NodeSpec {
            name: start.name.clone(),
            namespace: start.namespace.clone(),
            subscriptions: vec![(
                Topic::Commands,
                resolve_name(&store.string("command_topic")),
            )],
            publications,
            tick_rate: Some(rate),
            parameters: store.clone(),
        };
        Ok(Self {
            spec,
            sim,
            command: vec![0.0; n],
            last_command: None,
            command_timeout: store.double("command_timeout"),
            message: JointState {
                header: Header::default(),
                name: names,
                position: vec![0.0; n],
                velocity: vec![0.0; n],
                effort: vec![0.0; n],
            },
            q: vec![0.0; n],
            qd: vec![0.0; n],
            zero: vec![0.0; n],
            publish_clock,
            clock: Clock::default(),
            hold_until_command: store.get("hold_until_command")
                == Some(&ParameterValue::Bool(true)),
            refused: false,
            timed_out: false,
            wrench,
        })
    }

    fn on_command<T: Transport>(&mut self, transport: &mut T, data: &[f64]) {
        let n = self.command.len();
        if data.len() == n && data.iter().all(|v| v.is_finite()) {
            self.command.copy_from_slice(data);
            self.last_command = Some(self.sim.time());
            self.refused = false;
        } else if !self.refused {
            transport.log(
                LogLevel::Warn,
                &format!(
                    "command refused: {} values for {n} joints, or not finite",
                    data.len()
                ),
            );
            self.refused = true;
        }
    }

    /// One simulation step with the newest fresh command (zero effort once commands stop);
    /// before the first command a braked arm: time stands still when `hold_until_command`.
    fn on_tick<T: Transport>(&mut self, transport: &mut T) -> Result<(), armctl_sim::SimError> {
        if self.hold_until_command && self.last_command.is_none() {
            self.publish(transport);
            return Ok(());
        }
        let fresh = self
            .last_command
            .is_some_and(|t| self.sim.time() - t <= self.command_timeout);
        let stopped = !fresh && self.last_command.is_some();
        if stopped && !self.timed_out {
            transport.log(
                LogLevel::Warn,
                &format!(
                    "no command for {} s: applying zero effort",
                    self.command_timeout
                ),
            );
        }
        self.timed_out = stopped;
        let command = if fresh { &self.command } else { &self.zero };
        self.sim.step(command)?;
        self.publish(transport);
        Ok(())
    }

    fn publish<T: Transport>(&mut self, transport: &mut T) {
        if self.sim.measure(&mut self.q, &mut self.qd).is_err() {
            return;
        }
        self.message.header.stamp = Time::from_seconds(self.sim.time());
        self.message.position.copy_from_slice(&self.q);
        self.message.velocity.copy_from_slice(&self.qd);
        self.message
            .effort
            .copy_from_slice(self.sim.applied_effort());
        // The clock before the state it stamps, so subscribers see them in that order.
        if self.publish_clock {
            self.clock.clock = self.message.header.stamp;
            transport.publish(Outgoing::Clock(&self.clock));
        }
        transport.publish(Outgoing::JointStates(&self.message));
        if let (Some(message), Some(sensed)) = (&mut self.wrench, self.sim.sensed_wrench()) {
            let [fx, fy, fz, mx, my, mz] = sensed.in_sensor_axes();
            message.header.stamp = self.message.header.stamp;
            message.wrench.force = MsgVector3 {
                x: fx,
                y: fy,
                z: fz,
            };
            message.wrench.torque = MsgVector3 {
                x: mx,
                y: my,
                z: mz,
            };
            transport.publish(Outgoing::ExternalWrench(message));
        }
    }
}

impl NodeLogic for SimNode {
    fn spec(&self) -> &NodeSpec {
        &self.spec
    }

    async fn run<T: Transport + Send>(mut self, transport: &mut T) -> Result<(), RosError> {
        while let Some(incoming) = transport.next().await {
            match incoming {
                Incoming::Commands(msg) => self.on_command(transport, &msg.data),
                Incoming::ParameterRequest(id, request) => {
                    // Every sim_node parameter is read-only: queries are answered, sets refused.
                    let store = &self.spec.parameters;
                    let response = handle_request(store, &request, |name, value| {
                        store
                            .validate(name, value, false)
                            .map(|_| ())
                            .map_err(|e| e.to_string())
                    });
                    transport.respond(id, response);
                }
                Incoming::Shutdown(signal) => {
                    transport.log(LogLevel::Info, &format!("stopping on {signal}"));
                    return Ok(());
                }
                Incoming::Tick => {
                    if let Err(e) = self.on_tick(transport) {
                        let text = format!("simulation stopped: {e}");
                        transport.log(LogLevel::Warn, &text);
                        return Err(RosError::Simulation {
                            reason: e.to_string(),
                        });
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
}
