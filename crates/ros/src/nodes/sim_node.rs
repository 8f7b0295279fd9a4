//! `sim_node`: the embedded simulator as a node, the stand-in for hardware and Gazebo. It
//! publishes `joint_states` (sensor_msgs/JointState, chain order, stamped with simulated time)
//! at `rate` and applies the newest effort command from `command_topic`
//! (std_msgs/Float64MultiArray, chain order). A command of the wrong length or with NaN is
//! refused with a reason; without a command for `command_timeout` the arm gets zero effort.
//! With a `scene_file` the arm touches its obstacles, and a force/torque sensor of the scene is
//! published on `~/wrench` (geometry_msgs/WrenchStamped, in the sensor link's frame, stamped
//! with simulated time): remap it to a controller's `~/external_wrench`.

use armctl_sim::{
    CooperativeSimulator, Integrator, ModelMismatch, Payload, SensorNoise, SimConfig, Simulator,
};
use nalgebra::{IsometryMatrix3, Matrix3, UnitQuaternion, Vector3};

use super::lockstep::{Lockstep, NextStep, LOCKSTEP_WAIT};
use crate::msgs::{
    Clock, Header, JointState, Pose, PoseStamped, Quaternion, Time, Vector3 as MsgVector3,
    WrenchStamped,
};
use crate::parameter_services::{handle_request, Fixed};
use crate::transport::LogLevel;
use crate::transport::{Incoming, NodeLogic, NodeSpec, Outgoing, Topic, Transport};
use crate::RosError;
use armctl_model::{Conversion, Robot};
use armctl_runtime::declarations::{sim_node_declarations, SimNodeSettings};
use armctl_runtime::names::resolve;
use armctl_runtime::node_parameters::ParameterStore;
use armctl_runtime::ros_args::RosArgs;
use armctl_runtime::startup::{load_conversion, NodeStart};
use armctl_runtime::RuntimeError;
use armctl_sim::scene_file::{PairSetup, SceneFile};

/// What the node simulates: one arm, or two holding a box (a `pair:` scene).
#[derive(Debug)]
enum Plant {
    One(Box<Simulator>),
    Pair(Box<CooperativeSimulator>),
}

impl Plant {
    fn time(&self) -> f64 {
        match self {
            Plant::One(sim) => sim.time(),
            Plant::Pair(pair) => pair.time(),
        }
    }

    fn step(&mut self, commands: [&[f64]; 2]) -> Result<(), armctl_sim::SimError> {
        match self {
            Plant::One(sim) => sim.step(commands[0]).map(|_| ()),
            Plant::Pair(pair) => pair.step(commands),
        }
    }

    fn measure(
        &mut self,
        a: usize,
        q: &mut [f64],
        qd: &mut [f64],
    ) -> Result<(), armctl_sim::SimError> {
        match self {
            Plant::One(sim) => sim.measure(q, qd),
            Plant::Pair(pair) => pair.measure(a, q, qd),
        }
    }

    fn applied_effort(&self, a: usize) -> &[f64] {
        match self {
            Plant::One(sim) => sim.applied_effort(),
            Plant::Pair(pair) => pair.arm(a).sim.applied_effort(),
        }
    }
}

/// One arm's traffic: its effort commands in, its joint states out.
#[derive(Debug)]
struct ArmPort {
    /// "" for a single arm, else "<arm>: " (log lines say which arm).
    label: String,
    /// Its command subscription's index in the spec.
    command_slot: usize,
    /// Its joint-state publication's index in the spec.
    state_slot: usize,
    command: Vec<f64>,
    last_command: Option<f64>,
    refused: bool,
    timed_out: bool,
    message: JointState,
}

impl ArmPort {
    fn new(label: String, slots: (usize, usize), names: &[String]) -> Self {
        let n = names.len();
        Self {
            label,
            command_slot: slots.0,
            state_slot: slots.1,
            command: vec![0.0; n],
            last_command: None,
            refused: false,
            timed_out: false,
            message: JointState {
                header: Header::default(),
                name: names.to_vec(),
                position: vec![0.0; n],
                velocity: vec![0.0; n],
                effort: vec![0.0; n],
            },
        }
    }
}

/// A configured simulator node.
pub struct SimNode {
    spec: NodeSpec,
    plant: Plant,
    arms: Vec<ArmPort>,
    command_timeout: f64,
    q: Vec<f64>,
    qd: Vec<f64>,
    zero: Vec<f64>,
    publish_clock: bool,
    clock: Clock,
    hold_until_command: bool,
    /// With `lockstep`: the arms' answers to the last joint states.
    lockstep: Option<Lockstep>,
    /// The sensor's message, when the scene has a sensor.
    wrench: Option<WrenchStamped>,
    /// The held box's pose and its publication's index, with a pair.
    object: Option<(usize, PoseStamped)>,
}

impl std::fmt::Debug for SimNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimNode")
            .field("name", &self.spec.name)
            .finish()
    }
}

fn config(settings: &SimNodeSettings, dt: f64) -> SimConfig {
    let noise =
        (settings.noise_position > 0.0 || settings.noise_velocity > 0.0).then_some(SensorNoise {
            position: settings.noise_position,
            velocity: settings.noise_velocity,
            seed: 1,
        });
    let payload = (settings.payload_mass > 0.0).then(|| Payload {
        mass: settings.payload_mass,
        // Three values, by the declaration.
        com: Vector3::from_fn(|k, _| settings.payload_com.get(k).copied().unwrap_or(0.0)),
        inertia: Matrix3::zeros(),
    });
    SimConfig {
        dt,
        integrator: if settings.integrator == "euler" {
            Integrator::SemiImplicitEuler
        } else {
            Integrator::Rk4
        },
        friction: settings.friction,
        robot_compensates_gravity: settings.robot_compensates_gravity,
        noise,
        command_delay_steps: usize::try_from(settings.command_delay_steps).unwrap_or(0),
        mismatch: ModelMismatch {
            payload,
            mass_scale: Some(settings.mass_scale).filter(|s| (*s - 1.0).abs() > 0.0),
        },
        joints: armctl_sim::JointEffects {
            friction_offset: settings.friction_offset.clone(),
            ..armctl_sim::JointEffects::default()
        },
        ..SimConfig::default()
    }
}

fn parameter_error(name: &str, reason: String) -> RosError {
    armctl_runtime::RuntimeError::Parameter {
        name: name.into(),
        reason,
    }
    .into()
}

/// `initial_positions`, checked against the joints' limits (empty: the middle of each range).
fn start_positions(settings: &SimNodeSettings, robot: &Robot) -> Result<Vec<f64>, RosError> {
    let q = &settings.initial_positions;
    if q.is_empty() {
        return Ok(robot.middle_configuration());
    }
    let n = robot.dof();
    if q.len() != n {
        return Err(parameter_error(
            "initial_positions",
            format!("{} values for {n} joints", q.len()),
        ));
    }
    if let Some((joint, q)) = robot.joints().iter().zip(q).find(|(j, q)| {
        !q.is_finite() || (j.limits.is_bounded() && !(j.limits.lower..=j.limits.upper).contains(q))
    }) {
        return Err(parameter_error(
            "initial_positions",
            format!(
                "{} = {q} is outside its limits [{}, {}]",
                joint.name, joint.limits.lower, joint.limits.upper
            ),
        ));
    }
    Ok(q.clone())
}

/// The plant: the arm with the scene's obstacles, or the scene's pair holding its box.
fn plant(
    settings: &SimNodeSettings,
    conversion: &Conversion,
    mut sim_config: SimConfig,
) -> Result<(Plant, Option<PairSetup>), RosError> {
    let robot = &conversion.robot;
    let scene = match settings.scene_file.as_str() {
        "" => SceneFile::default(),
        path => {
            armctl_sim::scene_file::load(std::path::Path::new(path)).map_err(RuntimeError::from)?
        }
    };
    let simulator_error = |e: armctl_sim::SimError| parameter_error("simulator", e.to_string());
    if let Some(pair) = armctl_runtime::scene::pair_of(&scene, robot)? {
        if !settings.initial_positions.is_empty() {
            return Err(parameter_error(
                "initial_positions",
                "a pair scene gives each arm's start (q0); leave it empty".into(),
            ));
        }
        let sim = pair
            .simulator(robot, &sim_config)
            .map_err(RuntimeError::from)?;
        return Ok((Plant::Pair(Box::new(sim)), Some(pair)));
    }
    let q0 = start_positions(settings, robot)?;
    sim_config.scene = scene
        .resolve(robot, &conversion.report)
        .map_err(RuntimeError::from)?;
    let sim = Simulator::new(robot, &q0, sim_config).map_err(simulator_error)?;
    Ok((Plant::One(Box::new(sim)), None))
}

/// Each arm's name prefix for its topics: none for one arm, `<arm>/` for a pair (whose
/// `command_topic` must then be relative, to resolve under each arm's name).
fn arm_prefixes(pair: Option<&PairSetup>, command_topic: &str) -> Result<Vec<String>, RosError> {
    let Some(pair) = pair else {
        return Ok(vec![String::new()]);
    };
    if command_topic.starts_with('/') || command_topic.starts_with('~') {
        return Err(parameter_error(
            "command_topic",
            format!("'{command_topic}' must be relative with a pair scene: each arm's commands come on <arm>/<command_topic>"),
        ));
    }
    Ok(pair
        .arms
        .iter()
        .map(|(name, _, _)| format!("{name}/"))
        .collect())
}

impl SimNode {
    /// Configures the node from the command line.
    pub fn new(args: &RosArgs) -> Result<Self, RosError> {
        Self::from_start(&NodeStart::new(args, "sim_node")?)
    }

    /// Configures the node from its start values.
    pub fn from_start(start: &NodeStart) -> Result<Self, RosError> {
        let mut store = ParameterStore::new(sim_node_declarations());
        if let Some(name) = start.apply(&mut store)?.first() {
            return Err(parameter_error(name, "not declared by sim_node".into()));
        }
        let settings = SimNodeSettings::from_store(&store);
        let conversion = load_conversion(&settings.robot)?;
        let rate = settings.rate;
        let (plant, pair) = plant(&settings, &conversion, config(&settings, 1.0 / rate))?;
        let resolve_name = |name: &str| resolve(name, &start.namespace, &start.name, &start.remaps);
        let command_topic = &settings.command_topic;
        let names: Vec<String> = conversion.robot.joint_names().map(str::to_string).collect();
        let (mut subscriptions, mut publications, mut arms) = (vec![], vec![], vec![]);
        for prefix in arm_prefixes(pair.as_ref(), command_topic)? {
            let label = prefix
                .strip_suffix('/')
                .map_or(String::new(), |a| format!("{a}: "));
            arms.push(ArmPort::new(
                label,
                (subscriptions.len(), publications.len()),
                &names,
            ));
            subscriptions.push((
                Topic::Commands,
                resolve_name(&format!("{prefix}{command_topic}")),
            ));
            publications.push((
                Topic::JointStates,
                resolve_name(&format!("{prefix}joint_states")),
            ));
        }
        let publish_clock = settings.publish_clock;
        if settings.lockstep && !publish_clock {
            return Err(parameter_error(
                "lockstep",
                "needs publish_clock: true (a controller on wall time cannot wait with the simulation)".into(),
            ));
        }
        if publish_clock {
            publications.push((Topic::Clock, resolve_name("/clock")));
        }
        let wrench = match &plant {
            Plant::One(sim) => sim.config().scene.sensor.as_ref().map(|sensor| {
                publications.push((Topic::ExternalWrench, resolve_name("~/wrench")));
                stamped_wrench(&sensor.name)
            }),
            Plant::Pair(_) => None,
        };
        // The box's pose goes out as a PoseStamped, the message type of the TargetPose topic.
        let object = pair.is_some().then(|| {
            publications.push((Topic::TargetPose, resolve_name("~/object_pose")));
            (publications.len() - 1, PoseStamped::default())
        });
        let spec = NodeSpec {
            action: None,
            name: start.name.clone(),
            namespace: start.namespace.clone(),
            subscriptions,
            publications,
            tick_rate: Some(rate),
            parameters: store,
        };
        let n = names.len();
        let arms_count = arms.len();
        Ok(Self {
            spec,
            plant,
            arms,
            command_timeout: settings.command_timeout,
            q: vec![0.0; n],
            qd: vec![0.0; n],
            zero: vec![0.0; n],
            publish_clock,
            clock: Clock::default(),
            hold_until_command: settings.hold_until_command,
            lockstep: settings.lockstep.then(|| Lockstep::new(arms_count)),
            wrench,
            object: object.map(|(slot, mut pose)| {
                pose.header.frame_id = "world".into();
                (slot, pose)
            }),
        })
    }

    /// Takes a command for the arm whose subscription it came on.
    fn on_command<T: Transport>(&mut self, transport: &mut T, data: &[f64]) {
        let slot = transport.received_on();
        let now = self.plant.time();
        let Some(arm) = self.arms.iter().position(|p| p.command_slot == slot) else {
            return;
        };
        let port = &mut self.arms[arm];
        let n = port.command.len();
        if data.len() == n && data.iter().all(|v| v.is_finite()) {
            port.command.copy_from_slice(data);
            port.last_command = Some(now);
            port.refused = false;
            if let Some(lockstep) = &mut self.lockstep {
                lockstep.answered(arm);
            }
        } else if !port.refused {
            transport.log(
                LogLevel::Warn,
                &format!(
                    "{}command refused: {} values for {n} joints, or not finite",
                    port.label,
                    data.len()
                ),
            );
            port.refused = true;
        }
    }

    /// One simulation step with each arm's newest fresh command (zero effort once its
    /// commands stop); before every arm's first command a braked arm: time stands still when
    /// `hold_until_command`.
    fn on_tick<T: Transport>(&mut self, transport: &mut T) -> Result<(), armctl_sim::SimError> {
        if self.hold_until_command && self.arms.iter().any(|p| p.last_command.is_none()) {
            self.publish(transport);
            return Ok(());
        }
        if !self.lockstep_allows_step(transport) {
            return Ok(());
        }
        let now = self.plant.time();
        for port in &mut self.arms {
            port.watch(transport, now, self.command_timeout);
        }
        let command = |a: usize| match self.arms.get(a) {
            Some(port) if port.last_command.is_some() && !port.timed_out => &port.command[..],
            _ => &self.zero[..],
        };
        self.plant.step([command(0), command(1)])?;
        self.publish(transport);
        if let Some(lockstep) = &mut self.lockstep {
            lockstep.asked(std::time::Instant::now());
        }
        Ok(())
    }

    /// With `lockstep`: false while a command answering the last joint states is due; says
    /// when the simulation runs on without one.
    fn lockstep_allows_step<T: Transport>(&mut self, transport: &mut T) -> bool {
        let Some(lockstep) = &mut self.lockstep else {
            return true;
        };
        match lockstep.next(std::time::Instant::now()) {
            NextStep::Step => true,
            NextStep::Wait => false,
            NextStep::RunOn => {
                transport.log(
                    LogLevel::Warn,
                    &format!(
                        "lockstep: no command within {} s of the joint states; the simulation runs on without waiting until one comes",
                        LOCKSTEP_WAIT.as_secs_f64()
                    ),
                );
                true
            }
        }
    }

    fn publish<T: Transport>(&mut self, transport: &mut T) {
        let stamp = Time::from_seconds(self.plant.time());
        // The clock before the states it stamps, so subscribers see them in that order.
        if self.publish_clock {
            self.clock.clock = stamp;
            transport.publish(Outgoing::Clock(&self.clock));
        }
        for (a, port) in self.arms.iter_mut().enumerate() {
            if self.plant.measure(a, &mut self.q, &mut self.qd).is_err() {
                return;
            }
            let message = &mut port.message;
            message.header.stamp = stamp;
            message.position.copy_from_slice(&self.q);
            message.velocity.copy_from_slice(&self.qd);
            message.effort.copy_from_slice(self.plant.applied_effort(a));
            transport.publish_on(port.state_slot, Outgoing::JointStates(message));
        }
        if let (Some(message), Plant::One(sim)) = (&mut self.wrench, &self.plant) {
            if let Some(sensed) = sim.sensed_wrench() {
                message.header.stamp = stamp;
                fill_wrench(message, sensed.in_sensor_axes());
                transport.publish(Outgoing::ExternalWrench(message));
            }
        }
        if let (Some((slot, message)), Plant::Pair(pair)) = (&mut self.object, &self.plant) {
            message.header.stamp = stamp;
            message.pose = pose_message(&pair.object_pose());
            transport.publish_on(*slot, Outgoing::TargetPose(message));
        }
    }
}

impl ArmPort {
    /// Notes (and says once) when this arm's commands have stopped for `timeout`.
    fn watch<T: Transport>(&mut self, transport: &mut T, now: f64, timeout: f64) {
        let fresh = self.last_command.is_some_and(|t| now - t <= timeout);
        let stopped = !fresh && self.last_command.is_some();
        if stopped && !self.timed_out {
            transport.log(
                LogLevel::Warn,
                &format!(
                    "{}no command for {timeout} s: applying zero effort",
                    self.label
                ),
            );
        }
        self.timed_out = stopped;
    }
}

fn stamped_wrench(frame: &str) -> WrenchStamped {
    WrenchStamped {
        header: Header {
            frame_id: frame.to_string(),
            ..Header::default()
        },
        ..WrenchStamped::default()
    }
}

fn fill_wrench(message: &mut WrenchStamped, [fx, fy, fz, mx, my, mz]: [f64; 6]) {
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
}

fn pose_message(pose: &IsometryMatrix3<f64>) -> Pose {
    let p = pose.translation.vector;
    let r = UnitQuaternion::from_rotation_matrix(&pose.rotation);
    Pose {
        position: MsgVector3 {
            x: p.x,
            y: p.y,
            z: p.z,
        },
        orientation: Quaternion {
            x: r.i,
            y: r.j,
            z: r.k,
            w: r.w,
        },
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
                    let apply = |name: &str, value: &armctl_control::ParameterValue| {
                        store
                            .validate(name, value, false)
                            .map_err(|e| e.to_string())
                    };
                    let response = handle_request(&mut Fixed { store, apply }, &request);
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
