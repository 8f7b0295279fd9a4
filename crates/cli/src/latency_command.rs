//! `armctl latency`: the joint_states -> command round trip of controller_node over DDS on
//! loopback. A probe node publishes `/joint_states` at `--rate` and times each command that
//! answers; a state still unanswered when the next one is due is a missed cycle. The
//! controller runs in this process (its own DDS participant) or, with `--node-binary`, as a
//! separate `controller_node` process. A benchmark, not a test: the numbers depend on the
//! machine's load.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use armctl_model::{ChainOptions, Robot};
use armctl_nodes::launch::{spawn, RunningNode};
use armctl_nodes::msgs::{labelled_block, JointState};
use armctl_nodes::nodes::controller_node::ControllerNode;
use armctl_nodes::ticker::Ticker;
use armctl_nodes::transport::dds::{DdsOptions, DdsTransport};
use armctl_nodes::transport::{Incoming, NodeSpec, Outgoing, Topic, Transport};
use armctl_runtime::node_parameters::ParameterStore;
use armctl_runtime::ros_args::RosArgs;
use armctl_runtime::startup::NodeStart;
use clap::Args;
use serde::Serialize;

/// `armctl latency` arguments.
#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub(crate) struct LatencyArgs {
    /// The robot's URDF.
    #[arg(long, default_value = "urdf/panda.urdf")]
    urdf: PathBuf,
    /// The controller.
    #[arg(long, default_value = "computed_torque")]
    controller: String,
    /// Measured time, s.
    #[arg(long, default_value_t = 60.0)]
    duration: f64,
    /// joint_states rate, Hz.
    #[arg(long, default_value_t = 1000.0)]
    rate: f64,
    /// ROS domain (traffic stays on loopback).
    #[arg(long, default_value_t = 42)]
    domain_id: u16,
    /// Run this controller_node binary as a separate process instead of in this process.
    #[arg(long)]
    node_binary: Option<PathBuf>,
    /// The node's `realtime_priority`: SCHED_FIFO priority of its control thread, memory
    /// locked (needs --node-binary: in this process the probe shares the node's threads).
    #[arg(long, default_value_t = 0)]
    realtime_priority: u8,
    /// The node's `cpu_affinity`: the CPU its control thread is pinned to (needs --node-binary).
    #[arg(long)]
    cpu_affinity: Option<u16>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

/// What was measured.
#[derive(Debug, Serialize)]
struct LatencyReport {
    controller: String,
    node: String,
    /// The node's control thread: "normal", or its SCHED_FIFO priority and CPU.
    control_thread: String,
    rate_hz: f64,
    states_sent: usize,
    commands_timed: usize,
    missed_cycles: usize,
    p50_us: f64,
    p90_us: f64,
    p99_us: f64,
    p999_us: f64,
    max_us: f64,
}

/// The controller node under test: a task here or a child process.
enum UnderTest {
    InProcess { _node: RunningNode },
    Process(Child),
}

impl Drop for UnderTest {
    fn drop(&mut self) {
        if let UnderTest::Process(child) = self {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn start_node(args: &LatencyArgs, dds: &DdsOptions) -> Result<UnderTest> {
    let mut overrides = vec![
        ("urdf_path", args.urdf.display().to_string()),
        ("controller", args.controller.clone()),
        ("realtime_priority", args.realtime_priority.to_string()),
        // The probe's states are scripted, not an arm answering the commands: the external
        // torque estimate would read the difference as a collision, and the node would hold.
        ("collision_detection", "off".to_string()),
    ];
    if let Some(cpu) = args.cpu_affinity {
        overrides.push(("cpu_affinity", cpu.to_string()));
    }
    if let Some(binary) = &args.node_binary {
        let mut command = Command::new(binary);
        command.arg("--ros-args");
        for (name, value) in &overrides {
            command.args(["-p", &format!("{name}:={value}")]);
        }
        let child = command
            .env("ROS_LOCALHOST_ONLY", "1")
            .env("ROS_DOMAIN_ID", dds.domain_id.to_string())
            .stdout(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        return Ok(UnderTest::Process(child));
    }
    let ros_args = RosArgs {
        node_name: Some("controller_node".into()),
        overrides: overrides
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect(),
        ..RosArgs::default()
    };
    let start = NodeStart::new(&ros_args, "controller_node")?;
    let node = spawn(ControllerNode::one_arm(&start)?, dds)?;
    Ok(UnderTest::InProcess { _node: node })
}

fn probe(args: &LatencyArgs, dds: &DdsOptions) -> Result<DdsTransport> {
    let spec = NodeSpec {
        action: None,
        name: "latency_probe".into(),
        namespace: "/".into(),
        subscriptions: vec![
            (Topic::Commands, format!("/{}/commands", args.controller)),
            (Topic::State, "/controller_node/state".into()),
        ],
        publications: vec![(Topic::JointStates, "/joint_states".into())],
        tick_rate: None,
        parameters: ParameterStore::new(vec![]),
    };
    Ok(DdsTransport::start(&spec, dds)?)
}

/// A state near the middle of the joint ranges, moving a little so nothing is cached.
fn state_at(robot: &Robot, k: usize, msg: &mut JointState) {
    let phase = k as f64 * 1e-3;
    for ((joint, q), qd) in robot
        .joints()
        .iter()
        .zip(&mut msg.position)
        .zip(&mut msg.velocity)
    {
        *q = joint.limits.middle() + 0.1 * phase.sin();
        *qd = 0.1 * phase.cos();
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted
        .get(((sorted.len() as f64 - 1.0) * p).round() as usize)
        .copied()
        .unwrap_or(f64::NAN)
}

/// What the measurement saw besides the latencies.
#[derive(Debug, Default)]
struct Seen {
    sent: usize,
    missed: usize,
    /// `~/state` messages that said the node was holding instead of running the law.
    holding: usize,
}

/// Sends states at `rate` for `duration`; returns the latencies in us and what else it saw.
async fn measure(
    probe: &mut DdsTransport,
    robot: &Robot,
    rate: f64,
    duration: f64,
) -> Result<(Vec<f64>, Seen)> {
    let mut msg = JointState {
        name: robot.joint_names().map(str::to_string).collect(),
        position: vec![0.0; robot.dof()],
        velocity: vec![0.0; robot.dof()],
        ..JointState::default()
    };
    let ticker = Ticker::new(Duration::from_secs_f64(1.0 / rate))?;
    let total = (duration * rate).round() as usize;
    let mut latencies = Vec::with_capacity(total);
    let (mut seen, mut outstanding) = (Seen::default(), None::<Instant>);
    while seen.sent < total || outstanding.is_some() {
        tokio::select! {
            biased;
            incoming = probe.next() => match incoming {
                Some(Incoming::Commands(_)) => {
                    if let Some(at) = outstanding.take() {
                        latencies.push(at.elapsed().as_secs_f64() * 1e6);
                    }
                }
                Some(Incoming::State(state))
                    if labelled_block(&state, "holding").is_some_and(|h| h[0] != 0.0) =>
                {
                    seen.holding += 1;
                }
                _ => {}
            },
            _ = ticker.tick() => {
                if outstanding.is_some() {
                    seen.missed += 1;
                }
                if seen.sent == total {
                    break;
                }
                state_at(robot, seen.sent, &mut msg);
                probe.publish(Outgoing::JointStates(&msg));
                outstanding = Some(Instant::now());
                seen.sent += 1;
            }
        }
    }
    Ok((latencies, seen))
}

/// The control thread as the report names it.
fn control_thread(args: &LatencyArgs) -> String {
    let pinned = args
        .cpu_affinity
        .map_or(String::new(), |cpu| format!(", pinned to CPU {cpu}"));
    match args.realtime_priority {
        0 => format!("normal scheduler{pinned}"),
        p => format!("SCHED_FIFO priority {p}, memory locked{pinned}"),
    }
}

/// Whether the node under test has exited (then it said why on stderr).
fn exited(node: &mut UnderTest) -> bool {
    match node {
        UnderTest::Process(child) => child.try_wait().ok().flatten().is_some(),
        UnderTest::InProcess { .. } => false,
    }
}

pub(crate) fn run(args: &LatencyArgs) -> Result<()> {
    if !(args.duration > 0.0 && args.rate > 0.0) {
        bail!("--duration and --rate must be positive");
    }
    if (args.realtime_priority > 0 || args.cpu_affinity.is_some()) && args.node_binary.is_none() {
        bail!("--realtime-priority and --cpu-affinity apply to a controller_node process: give --node-binary (in this process the probe would share the node's threads)");
    }
    let robot = crate::robot_file::load_robot(&args.urdf, &ChainOptions::default())?;
    let dds = DdsOptions::loopback(args.domain_id);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let report = runtime.block_on(async {
        let mut node = start_node(args, &dds)?;
        let mut probe = probe(args, &dds)?;
        // Discovery and warm-up: until commands flow, then one more second.
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let (answered, _) = measure(&mut probe, &robot, args.rate, 0.1).await?;
            if !answered.is_empty() {
                break;
            }
            if exited(&mut node) {
                bail!("controller_node exited before answering (its message is above)");
            }
            if Instant::now() > deadline {
                bail!("controller_node did not answer within 20 s");
            }
        }
        measure(&mut probe, &robot, args.rate, 1.0).await?;
        eprintln!("measuring {} s at {} Hz ...", args.duration, args.rate);
        let (mut latencies, seen) = measure(&mut probe, &robot, args.rate, args.duration).await?;
        if seen.holding > 0 {
            bail!(
                "controller_node held the arm instead of running {} during the measurement \
                 ({} ~/state messages said holding; its reason is on /rosout): these would be \
                 a hold's latencies",
                args.controller,
                seen.holding
            );
        }
        latencies.sort_by(f64::total_cmp);
        Ok(LatencyReport {
            controller: args.controller.clone(),
            control_thread: control_thread(args),
            node: match &args.node_binary {
                Some(b) => format!("separate process ({})", b.display()),
                None => "in this process, own DDS participant".into(),
            },
            rate_hz: args.rate,
            states_sent: seen.sent,
            commands_timed: latencies.len(),
            missed_cycles: seen.missed,
            p50_us: percentile(&latencies, 0.5),
            p90_us: percentile(&latencies, 0.9),
            p99_us: percentile(&latencies, 0.99),
            p999_us: percentile(&latencies, 0.999),
            max_us: latencies.last().copied().unwrap_or(f64::NAN),
        })
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "joint_states -> command over DDS loopback, {} at {} Hz, controller_node {}\n\
             control thread: {}\n\
             states {}  timed {}  missed cycles {}\n\
             latency us: p50 {:.0}  p90 {:.0}  p99 {:.0}  p99.9 {:.0}  max {:.0}",
            report.controller,
            report.rate_hz,
            report.node,
            report.control_thread,
            report.states_sent,
            report.commands_timed,
            report.missed_cycles,
            report.p50_us,
            report.p90_us,
            report.p99_us,
            report.p999_us,
            report.max_us
        );
    }
    Ok(())
}
