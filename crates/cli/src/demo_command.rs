//! `armctl demo`: `sim_node` and `controller_node` talking ROS 2 over DDS on loopback, in this
//! process (each node its own DDS participant, as separate processes would be). The reference
//! goes to the controller on `~/reference`; its `~/state` is recorded and summarised, with
//! the same table, `run.csv` and plots as `armctl sim`.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use armctl_control::reference::Trajectory;
use armctl_control::JointReference;
use armctl_model::{ChainOptions, Robot};
use armctl_nodes::demo::{run_demo, DemoRecord, DemoSetup};
use armctl_nodes::msgs::{JointTrajectory, JointTrajectoryPoint, Time};
use armctl_nodes::transport::dds::DdsOptions;
use armctl_sim::RunLog;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use crate::run_files::{write_csv, write_plots};
use crate::run_summary::{render, summarize, ArmHeld, RunInfo, Summary};
use crate::sim_command::start_configuration;
use crate::trajectory_spec;

const PANDA_WAVE: &str = "config/trajectories/panda_wave.yaml";

/// The demo's ROS domain when neither --domain-id nor ROS_DOMAIN_ID gives one.
const DEMO_DOMAIN: u16 = 142;

/// `armctl demo` arguments.
#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub(crate) struct DemoArgs {
    /// The robot's URDF.
    #[arg(long, default_value = "urdf/panda.urdf")]
    urdf: PathBuf,
    /// The controller.
    #[arg(long, default_value = "computed_torque")]
    controller: String,
    /// ROS 2 parameter file for controller_node (`controller_node: ros__parameters: ...`).
    /// Default, as the launch files' `params_file`: `config/<robot>_<controller>.yaml` beside
    /// the URDF's folder, where it exists.
    #[arg(long)]
    params: Option<PathBuf>,
    /// A controller_node parameter, as `ros2 run ... -p` takes it (repeatable).
    #[arg(long = "set", value_name = "NAME:=VALUE", allow_hyphen_values = true)]
    set: Vec<String>,
    /// A scene for sim_node (`scene_file`): obstacles, contact points and a force/torque sensor,
    /// whose `~/wrench` the controller gets as its `~/external_wrench`.
    #[arg(long)]
    scene: Option<PathBuf>,
    /// A sim_node parameter, e.g. `noise_position:=0.001` (repeatable).
    #[arg(
        long = "sim-set",
        value_name = "NAME:=VALUE",
        allow_hyphen_values = true
    )]
    sim_set: Vec<String>,
    /// hold | setpoint:Q | quintic:Q:T | sine:AMP:FREQ | wave | file:PATH.yaml (default: the
    /// Panda wave for the bundled Panda, otherwise `wave`, within the robot's limits).
    #[arg(long, allow_hyphen_values = true)]
    trajectory: Option<String>,
    /// Start configuration, comma-separated (default: the middle of each joint's range).
    #[arg(long, allow_hyphen_values = true)]
    q0: Option<String>,
    /// Recorded time from the reference's start, s (simulated).
    #[arg(long, default_value_t = 6.0)]
    duration: f64,
    /// Simulator and /joint_states rate, Hz.
    #[arg(long, default_value_t = 1000.0)]
    rate: f64,
    /// ROS domain (default: ROS_DOMAIN_ID, else 142, a domain of the demo's own, away from
    /// domain 0 where real arms usually run). Traffic stays on loopback.
    #[arg(long)]
    domain_id: Option<u16>,
    /// Folder for run.csv and the plots.
    #[arg(long, default_value = "out/demo")]
    out: PathBuf,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

/// The demo's results: the simulation summary and what went over DDS.
#[derive(Debug, Serialize)]
struct DemoSummary {
    #[serde(flatten)]
    run: Summary,
    transport: String,
    control_steps: usize,
    holding_steps: usize,
}

fn assignments(list: &[String], flag: &str) -> Result<Vec<(String, String)>> {
    list.iter()
        .map(|a| {
            a.split_once(":=")
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .with_context(|| format!("{flag} expects NAME:=VALUE, got '{a}'"))
        })
        .collect()
}

fn default_trajectory(robot: &Robot) -> String {
    let panda = robot.joint_names().all(|j| j.starts_with("panda_joint"));
    if panda && Path::new(PANDA_WAVE).exists() {
        PANDA_WAVE.to_string()
    } else {
        "wave".to_string()
    }
}

/// The reference as a JointTrajectory: positions, velocities and accelerations every 50 ms
/// (the controller's quintic interpolation between them reproduces piecewise-quintic
/// references exactly when their knots fall on the grid, as the bundled waypoint files do).
fn sampled(trajectory: &dyn Trajectory, robot: &Robot, duration: f64) -> JointTrajectory {
    const STEP: f64 = 0.05;
    let mut reference = JointReference::hold(&vec![0.0; robot.dof()]);
    let points = (0..=(duration / STEP).ceil() as usize)
        .map(|k| {
            let t = k as f64 * STEP;
            trajectory.sample(t, &mut reference);
            JointTrajectoryPoint {
                positions: reference.q.clone(),
                velocities: reference.qd.clone(),
                accelerations: reference.qdd.clone(),
                effort: vec![],
                time_from_start: Time::from_seconds(t),
            }
        })
        .collect();
    JointTrajectory {
        joint_names: robot.joint_names().map(str::to_string).collect(),
        points,
        ..JointTrajectory::default()
    }
}

fn run_log(record: DemoRecord) -> RunLog {
    RunLog {
        time: record.time,
        q: record.position,
        qd: record.velocity,
        reference: record.reference,
        commanded: record.effort.clone(),
        effort: record.effort,
        estimates: record.estimates,
        saturated: record.saturated,
        wall_seconds: record.wall_seconds,
        ..RunLog::default()
    }
}

/// The demo drives one arm: a pair scene runs in `armctl sim` or two_arms.launch.xml.
fn refuse_pair_scene(sim_overrides: &[(String, String)], robot: &Robot) -> Result<()> {
    let Some((_, path)) = sim_overrides.iter().rev().find(|(n, _)| n == "scene_file") else {
        return Ok(());
    };
    let scene = armctl_sim::scene_file::load(Path::new(path))?;
    if armctl_runtime::scene::pair_of(&scene, robot)?.is_some() {
        bail!("{path}: armctl demo drives one arm; run a pair scene with armctl sim --scene, or two controller_nodes (launch/two_arms.launch.xml)");
    }
    Ok(())
}

/// `--params`, else the launch files' default `params_file` for this robot and controller:
/// `config/<urdf stem>_<controller>.yaml` beside the URDF's folder, where it exists.
fn params_file(args: &DemoArgs) -> Option<PathBuf> {
    if args.params.is_some() {
        return args.params.clone();
    }
    let stem = args.urdf.file_stem()?.to_str()?;
    let folder = args.urdf.parent()?;
    // `urdf/x.urdf` -> `config/`, shown as such rather than `urdf/../config/`.
    let config = match folder.parent() {
        Some(root) if folder.file_name().is_some() => root.join("config"),
        _ => folder.join("..").join("config"),
    };
    let file = config.join(format!("{stem}_{}.yaml", args.controller));
    file.is_file().then_some(file)
}

fn setup(args: &DemoArgs, robot: &Robot, trajectory: &str) -> Result<DemoSetup> {
    let q0 = start_configuration(args.q0.as_deref(), robot)?;
    let reference = sampled(
        trajectory_spec::parse(trajectory, robot, &q0)?.as_ref(),
        robot,
        args.duration,
    );
    let mut sim_overrides = vec![("initial_positions".to_string(), format!("{q0:?}"))];
    if let Some(scene) = &args.scene {
        sim_overrides.push(("scene_file".to_string(), scene.display().to_string()));
    }
    sim_overrides.extend(assignments(&args.sim_set, "--sim-set")?);
    refuse_pair_scene(&sim_overrides, robot)?;
    let mut dds = DdsOptions::from_env()?;
    dds.localhost_only = true;
    // A domain of its own unless told: on domain 0 a hardware launch on the same machine would
    // mix its joint_states with the simulator's.
    dds.domain_id = match args.domain_id {
        Some(domain) if domain > 232 => {
            bail!("--domain-id {domain} is not a ROS domain id (0 to 232)")
        }
        Some(domain) => domain,
        None => DdsOptions::domain_from_env()?.unwrap_or(DEMO_DOMAIN),
    };
    Ok(DemoSetup {
        urdf_path: args.urdf.display().to_string(),
        controller: args.controller.clone(),
        params_files: params_file(args)
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        controller_overrides: controller_overrides(args, robot)?,
        sim_overrides,
        trajectory: reference,
        duration: args.duration,
        rate: args.rate,
        namespace: "/".into(),
        dds,
    })
}

/// `--set`, after `target_source:=joint_reference` for a task-space law: the demo sends a
/// joint reference, which such a law follows through forward kinematics only then (its
/// default, `pose`, waits for `~/target_pose` and would ignore it).
fn controller_overrides(args: &DemoArgs, robot: &Robot) -> Result<Vec<(String, String)>> {
    let set = assignments(&args.set, "--set")?;
    let task_space = armctl_control::controller_by_name(&args.controller, robot)
        .is_ok_and(|mut law| law.task_space().is_some());
    if !task_space {
        return Ok(set);
    }
    if let Some((_, value)) = set.iter().rev().find(|(n, _)| n == "target_source") {
        if value != "joint_reference" {
            bail!("--set target_source:={value}: the demo sends a joint reference, which {} follows only with target_source:=joint_reference (send pose targets to a running controller_node's ~/target_pose instead)", args.controller);
        }
    }
    let mut overrides = vec![("target_source".to_string(), "joint_reference".to_string())];
    overrides.extend(set);
    Ok(overrides)
}

fn progress_bar(duration: f64) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(
        Some((duration * 1000.0) as u64),
        ProgressDrawTarget::stderr(),
    );
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {percent:>3}% of the reference over DDS {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

pub(crate) fn run(args: &DemoArgs) -> Result<()> {
    if !(args.rate.is_finite() && args.rate > 0.0) {
        bail!("--rate must be positive, got {}", args.rate);
    }
    crate::sim_command::check_duration(args.duration, 1.0 / args.rate)?;
    let robot = crate::robot_file::load_robot(&args.urdf, &ChainOptions::default())?;
    let trajectory = args
        .trajectory
        .clone()
        .unwrap_or_else(|| default_trajectory(&robot));
    let setup = setup(args, &robot, &trajectory)?;
    eprintln!(
        "sim_node and controller_node ({}) on DDS, loopback, ROS domain {}",
        args.controller, setup.dds.domain_id
    );
    if let (None, Some(file)) = (&args.params, setup.params_files.first()) {
        eprintln!("parameters: {file} (the launch files' default for this robot and controller; --params replaces it)");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let bar = progress_bar(args.duration);
    let record = runtime.block_on(run_demo(&setup, |t| {
        bar.set_position((t * 1000.0) as u64);
        bar.set_message(format!("{t:.1} s"));
    }));
    bar.finish_and_clear();
    let record = record?;
    if let Some(refusal) = record.refusals.first() {
        bail!("controller_node refused the reference, so the arm held instead of following it: {refusal}");
    }
    if !record.time.is_empty() && record.holding_steps == record.time.len() {
        bail!("controller_node held the arm for the whole run and never ran {} (its reason is in its log above)", args.controller);
    }
    let (control_steps, holding_steps) = (record.time.len(), record.holding_steps);
    let held = (record.holding_steps, record.first_holding);
    let log = run_log(record);
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let mut files = vec![write_csv(&args.out.join("run.csv"), &robot, &log)?];
    files.extend(write_plots(&args.out, &robot, &log)?);
    let info = RunInfo {
        controller: args.controller.clone(),
        warnings: vec![],
        trajectory,
        duration: args.duration,
        dt: 1.0 / args.rate,
        joint_limited: None,
        held,
        tip_to_target: None,
    };
    let summary = DemoSummary {
        run: summarize(info, &robot, &log, files),
        transport: format!(
            "DDS (ros2-client/RustDDS), loopback, ROS domain {}",
            setup.dds.domain_id
        ),
        control_steps,
        holding_steps,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print!("{}", render(&summary.run));
        // The controller steps once per period of the simulator's clock; a gap in `~/state`
        // is a message the recorder did not receive (keep-last 10: a recorder that falls
        // behind loses the oldest), not a step the loop skipped.
        let periods = (args.duration * args.rate).round() as usize;
        println!(
            "over {}: {} control steps recorded of {periods} periods ({} ~/state messages not received), {} holding",
            summary.transport,
            summary.control_steps,
            periods.saturating_sub(summary.control_steps),
            summary.holding_steps
        );
    }
    ArmHeld::check(
        &summary.run,
        Some("its reason is in controller_node's log above"),
    )?;
    Ok(())
}
