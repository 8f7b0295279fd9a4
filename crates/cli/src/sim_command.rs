//! `armctl sim`: a controller against the embedded simulator, in-process (no ROS): progress,
//! a summary table, `run.csv` and plots.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use armctl_control::ParameterValue as RosValue;
use armctl_model::{urdf_file_to_robot, BranchPolicy, ChainOptions, ConversionReport, Robot};
use armctl_runtime::configure::COOPERATIVE;
use armctl_runtime::group_loop::GroupLoop;

use armctl_runtime::simulated_loop::SimulatedLoop;
use armctl_runtime::startup::NodeStart;
use armctl_sim::{run_loop, Integrator, RunLog, SimConfig, Simulator};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::parameter_schedule::{self, ParameterSchedule};
use crate::run_files::{target_error, write_csv, write_plots, write_tip_pose_plot, TipTarget};
use crate::run_summary::{render, summarize, ArmHeld, RunInfo};
use crate::sim_targets::{object_move, target_pose, TARGET_POSE_SECONDS};
use crate::{pair_run, params_file, sim_config_file, trajectory_spec};
use armctl_sim::scene_file;

/// Integration scheme on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum IntegratorArg {
    /// Fourth-order Runge-Kutta.
    Rk4,
    /// Semi-implicit Euler.
    Euler,
}

/// `armctl sim` arguments.
#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub(crate) struct SimArgs {
    /// The robot's URDF (a .xacro file is expanded with the xacro program).
    #[arg(long)]
    urdf: PathBuf,
    /// For a .xacro --urdf: arguments for the xacro program, `name:=value` (repeatable).
    #[arg(long = "xacro-arg", value_name = "NAME:=VALUE")]
    xacro_args: Vec<String>,
    /// Base link (default: the root).
    #[arg(long)]
    base: Option<String>,
    /// Tip link (default: the only leaf reached through moving joints).
    #[arg(long)]
    tip: Option<String>,
    /// Drop off-chain moving joints instead of locking them.
    #[arg(long)]
    drop_branches: bool,
    /// The controller (default: a `controller` in the parameter files, else pd_gravity).
    #[arg(long)]
    controller: Option<String>,
    /// Controller parameters (ROS 2 parameter file or a plain mapping); repeatable, later
    /// files win. An identified model (`armctl identify --out`) makes the controller compute
    /// with it; the simulated arm stays the URDF's.
    #[arg(long)]
    params: Vec<PathBuf>,
    /// hold | setpoint:Q | quintic:Q:T | sine:AMP:FREQ | wave | file:PATH.yaml (Q comma-separated).
    #[arg(long, default_value = "hold", allow_hyphen_values = true)]
    trajectory: String,
    /// Start configuration, comma-separated (default: the middle of each joint's range).
    #[arg(long, allow_hyphen_values = true)]
    q0: Option<String>,
    /// Simulated time, s.
    #[arg(long, default_value_t = 5.0)]
    duration: f64,
    /// Step of simulator and controller, s.
    #[arg(long, default_value_t = 1e-3)]
    dt: f64,
    /// Integration scheme (overrides the settings file).
    #[arg(long, value_enum)]
    integrator: Option<IntegratorArg>,
    /// Simulator settings (YAML): friction, limits, noise, delay, payload, mass scale, wrench,
    /// scene.
    #[arg(long)]
    sim_config: Option<PathBuf>,
    /// What the arm touches (YAML: obstacles, contact points, a force/torque sensor); replaces
    /// a scene of the settings file. See config/scenes/.
    #[arg(long)]
    scene: Option<PathBuf>,
    /// A tip target for a task-space law, reached in 1 s from where the tip starts: X,Y,Z
    /// (base link frame, m; the start orientation kept) or X,Y,Z,QX,QY,QZ,QW.
    #[arg(long, allow_hyphen_values = true)]
    target_pose: Option<String>,
    /// With a pair scene and `--controller cooperative`: move the held object by DX,DY,DZ
    /// (world axes, m) from the start, in 1 s or as `max_object_speed` allows.
    #[arg(long, allow_hyphen_values = true)]
    object_move: Option<String>,
    /// Set a parameter at simulated time T (s), as `ros2 param set` does on a running node:
    /// T:NAME:=VALUE, the value in YAML (repeatable). A refused set ends the run in an error.
    #[arg(
        long = "set-at",
        value_name = "T:NAME:=VALUE",
        allow_hyphen_values = true
    )]
    set_at: Vec<String>,
    /// Folder for run.csv and the plots.
    #[arg(long, default_value = "out/sim")]
    out: PathBuf,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

/// The robot and its conversion (what it noticed, where the URDF links are).
fn load_robot(args: &SimArgs) -> Result<(Robot, ConversionReport)> {
    let (base_link, tip_link) = chain_ends(args)?;
    let options = ChainOptions {
        base_link,
        tip_link,
        branches: if args.drop_branches {
            BranchPolicy::Drop
        } else {
            BranchPolicy::Lock
        },
        xacro_args: args.xacro_args.clone(),
        ..ChainOptions::default()
    };
    let conversion = urdf_file_to_robot(&args.urdf, &options)
        .with_context(|| format!("loading {}", args.urdf.display()))?;
    Ok((conversion.robot, conversion.report))
}

/// The chain's base and tip links: `--base`/`--tip`, else `base_link`/`tip_link` of the
/// parameter files (the last file's, as controller_node reads them). The robot itself comes
/// from `--urdf` only: a file's `urdf_path` naming another file, `robot_description` or
/// `xacro_args` are refused, as is a link that disagrees with its flag, rather than left unread.
fn chain_ends(args: &SimArgs) -> Result<(Option<String>, Option<String>)> {
    let mut from_files: [Option<(String, &PathBuf)>; 2] = [None, None];
    for path in &args.params {
        for (name, value) in params_file::values(std::slice::from_ref(path))? {
            let unset = match &value {
                RosValue::String(text) => text.is_empty(),
                RosValue::StringArray(list) => list.is_empty(),
                // A YAML `[]` reads as an empty list of doubles.
                RosValue::DoubleArray(list) => list.is_empty(),
                _ => false,
            };
            let end = match name.as_str() {
                _ if unset => continue,
                "base_link" => 0,
                "tip_link" => 1,
                "urdf_path" if same_file(&value, &args.urdf) => continue,
                "urdf_path" | "robot_description" | "xacro_args" => bail!(
                    "{}: {name}: armctl sim takes the robot from --urdf ({}); remove {name} from the file (controller_node reads it) or pass that URDF as --urdf",
                    path.display(),
                    args.urdf.display()
                ),
                _ => continue,
            };
            let RosValue::String(link) = value else {
                bail!("{}: {name} must be a link name", path.display());
            };
            from_files[end] = Some((link, path));
        }
    }
    let [base, tip] = from_files;
    Ok((
        agreed(args.base.clone(), base, "--base", "base_link")?,
        agreed(args.tip.clone(), tip, "--tip", "tip_link")?,
    ))
}

/// A flag's link, else the files'; refused when both are given and differ.
fn agreed(
    flag: Option<String>,
    file: Option<(String, &PathBuf)>,
    flag_name: &str,
    parameter: &str,
) -> Result<Option<String>> {
    match (flag, file) {
        (Some(given), Some((link, path))) if given != link => bail!(
            "{}: {parameter} '{link}' disagrees with {flag_name} {given}",
            path.display()
        ),
        (Some(given), _) => Ok(Some(given)),
        (None, file) => Ok(file.map(|(link, _)| link)),
    }
}

/// Whether a parameter's path names the file at `path`.
fn same_file(value: &RosValue, path: &std::path::Path) -> bool {
    let RosValue::String(named) = value else {
        return false;
    };
    match (std::fs::canonicalize(named), std::fs::canonicalize(path)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// `--q0`, or the middle of each joint's range.
pub(crate) fn start_configuration(q0: Option<&str>, robot: &Robot) -> Result<Vec<f64>> {
    let Some(text) = q0 else {
        return Ok(robot.middle_configuration());
    };
    let q0 = trajectory_spec::parse_values(text, robot.dof(), "--q0", false)?;
    for (joint, q) in robot.joints().iter().zip(&q0) {
        let (lower, upper) = (joint.limits.lower, joint.limits.upper);
        if !(lower..=upper).contains(q) {
            bail!(
                "--q0: {} = {q} is outside its range [{lower}, {upper}]",
                joint.name
            );
        }
    }
    Ok(q0)
}

/// The most steps a run records (in memory: about 350 MB for a 7-joint arm).
pub(crate) const MAX_STEPS: f64 = 1e6;

/// Checks `--duration` and the step: positive, finite, at most [`MAX_STEPS`] steps.
pub(crate) fn check_duration(duration: f64, dt: f64) -> Result<usize> {
    if !(duration.is_finite() && duration > 0.0) {
        bail!("--duration must be positive and finite, got {duration}");
    }
    if !(dt.is_finite() && (1e-6..=0.1).contains(&dt)) {
        bail!("--dt must be between 1e-6 and 0.1 s, got {dt}");
    }
    let steps = (duration / dt).round();
    if steps > MAX_STEPS {
        bail!(
            "--duration {duration} s at a step of {dt} s is {steps:e} steps; at most {MAX_STEPS:e} are recorded (shorten --duration or lengthen --dt)"
        );
    }
    Ok(steps.max(1.0) as usize)
}

pub(crate) fn run(args: &SimArgs) -> Result<()> {
    let steps = check_duration(args.duration, args.dt)?;
    let (robot, report) = load_robot(args)?;
    let model_warnings = report.warnings.clone();
    // A law without G runs on an arm that adds its own, as the Franka arm it is meant for
    // does, unless the simulator settings say otherwise.
    let law_omits_gravity = matches!(
        node_start(args, None)?.value("gravity_compensation"),
        Some(RosValue::Bool(false))
    );
    let mut config = SimConfig {
        dt: args.dt,
        robot_compensates_gravity: law_omits_gravity,
        ..SimConfig::default()
    };
    let mut scene = None;
    if let Some(path) = &args.sim_config {
        (config, scene) = sim_config_file::load(path, config)?;
    }
    // The scene: --scene, else a scene_file of the parameter files (as controller_node reads
    // it for a pair).
    let scene_path = match (&args.scene, node_start(args, None)?.value("scene_file")) {
        (Some(path), _) => Some(path.clone()),
        (None, Some(RosValue::String(path))) if !path.is_empty() => Some(PathBuf::from(path)),
        _ => None,
    };
    if let Some(path) = &scene_path {
        scene = Some(scene_file::load(path)?);
    }
    if let Some(integrator) = args.integrator {
        config.integrator = match integrator {
            IntegratorArg::Rk4 => Integrator::Rk4,
            IntegratorArg::Euler => Integrator::SemiImplicitEuler,
        };
    }
    if let Some(scene) = scene {
        if let Some(setup) = armctl_runtime::scene::pair_of(&scene, &robot)? {
            if !args.set_at.is_empty() {
                bail!("--set-at sets one arm's parameters: a pair scene's run takes its parameters from --params only");
            }
            return run_pair(args, &robot, &setup, config, steps);
        }
        config.scene = scene.resolve(&robot, &report)?;
    }
    if args.object_move.is_some() {
        bail!("--object-move moves the object of a pair scene (--scene, e.g. config/scenes/two_pandas_carry.yaml)");
    }
    let mut runtime = controller_runtime(args, &robot)?;
    let gravity_warning = gravity_mismatch(&config, runtime.settings());
    let q0 = start_configuration(args.q0.as_deref(), &robot)?;
    let trajectory = trajectory_spec::parse(&args.trajectory, &robot, &q0)?;
    let mut sim = Simulator::new(&robot, &q0, config)
        .with_context(|| format!("the simulator at --dt {} s", args.dt))?;
    runtime
        .core_mut()
        .follow(trajectory, 0.0)
        .with_context(|| format!("trajectory '{}'", args.trajectory))?;
    let target = target_pose(args.target_pose.as_deref(), &robot, &q0)?;
    let task_space = runtime.task_space().is_some();
    if target.is_some() && !task_space {
        bail!(
            "--target-pose needs a task-space law (cartesian_impedance, resolved_acceleration, hybrid_force_position), not '{}'",
            runtime.law_name()
        );
    }
    let tip_target = task_space.then_some(match target {
        Some(goal) => TipTarget::Pose {
            goal,
            seconds: TARGET_POSE_SECONDS,
        },
        None => TipTarget::JointReference,
    });
    let mut schedule = scheduled_sets(args, &runtime, steps, sim.config().dt)?;
    let mut control = SimulatedLoop::new(&mut runtime);
    control.target_pose = target.map(|pose| (pose, TARGET_POSE_SECONDS));
    let mut log = simulate(&mut sim, &mut control, steps, &mut schedule)?;
    if let Some(refusal) = schedule.refused {
        bail!(refusal);
    }
    // Clipped by the safety layer, plus any the simulated drives clip on their own.
    log.saturated += control.clipped();
    let joint_limited = control.joint_limited();
    let held = (control.held, control.first_held);
    let events = control.events;
    // The first hold's reason, without its time ("t = 0.023 s: holding ...").
    let hold_reason = events.iter().find(|e| e.contains("holding")).map(|e| {
        e.split_once(" s: ")
            .map_or(e.as_str(), |(_, r)| r)
            .to_string()
    });
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let mut files = vec![write_csv(&args.out.join("run.csv"), &robot, &log)?];
    files.extend(write_plots(&args.out, &robot, &log)?);
    let mut tip_to_target = None;
    if let Some(tip_target) = &tip_target {
        files.extend(write_tip_pose_plot(&args.out, &robot, &log, tip_target)?);
        tip_to_target = target_error(&robot, &log, tip_target)?;
    }
    // Read after the run: a `--set-at` may have changed what they warn about.
    let settings_warnings = runtime.settings().warnings();
    runtime.recheck_law();
    // The conversion's notes, then what configuring noticed (what collision detection can
    // sense on this arm), as controller_node logs them at start.
    let mut warnings: Vec<String> = model_warnings
        .iter()
        .chain(runtime.model_warnings())
        .map(|w| format!("robot model: {w}"))
        .collect();
    warnings.extend(runtime.law_warnings().iter().cloned());
    warnings.extend(gravity_warning);
    warnings.extend(
        settings_warnings
            .into_iter()
            .map(|w| format!("parameters: {w}")),
    );
    warnings.extend(events);
    let info = RunInfo {
        controller: runtime.law_name().to_string(),
        warnings,
        trajectory: followed(args),
        duration: args.duration,
        dt: args.dt,
        joint_limited: Some(joint_limited),
        held,
        tip_to_target,
    };
    let summary = summarize(info, &robot, &log, files);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print!("{}", render(&summary));
    }
    ArmHeld::check(&summary, hold_reason.as_deref())?;
    Ok(())
}

/// What is wrong when the law and the simulated arm disagree on who adds gravity: G applied
/// twice, or not at all.
fn gravity_mismatch(
    config: &SimConfig,
    settings: &armctl_runtime::declarations::ControllerNodeSettings,
) -> Option<String> {
    match (settings.gravity_compensation, config.robot_compensates_gravity) {
        (true, true) => Some("the simulated arm compensates its own gravity (robot_compensates_gravity) and the controller adds G too (gravity_compensation: true): G is applied twice".into()),
        (false, false) => Some("the controller leaves out G (gravity_compensation: false) and the simulated arm does not add it (robot_compensates_gravity: false): nothing holds the arm's weight".into()),
        _ => None,
    }
}

/// A `pair:` scene: each arm under its own runtime (same law and parameters), following
/// `--trajectory` from its own start configuration.
fn run_pair(
    args: &SimArgs,
    robot: &Robot,
    setup: &armctl_sim::scene_file::PairSetup,
    config: SimConfig,
    steps: usize,
) -> Result<()> {
    if args.target_pose.is_some() || args.q0.is_some() {
        bail!(
            "--target-pose and --q0 are not used with a pair scene (its arms carry their own q0)"
        );
    }
    let start = node_start(args, None)?;
    if start.controller() == Some(COOPERATIVE) {
        if args.trajectory != "hold" {
            bail!("'{COOPERATIVE}' moves the object: give --object-move, not --trajectory");
        }
        let mut pair =
            GroupLoop::pair_on(&start, robot.clone(), setup).with_context(|| configuring(args))?;
        let movement = object_move(args.object_move.as_deref())?;
        return finish_pair(args, || {
            pair_run::run(
                robot,
                setup,
                config,
                pair_run::PairControl::cooperative(&mut pair, movement),
                steps,
                &args.out,
            )
        });
    }
    if args.object_move.is_some() {
        bail!("--object-move is for '{COOPERATIVE}' with a pair scene (each arm under its own law follows --trajectory)");
    }
    let runtime = |a: usize| -> Result<GroupLoop> {
        let mut runtime = controller_runtime(args, robot)?;
        let trajectory = trajectory_spec::parse(&args.trajectory, robot, &setup.arms[a].2)?;
        runtime
            .core_mut()
            .follow(trajectory, 0.0)
            .with_context(|| format!("trajectory '{}'", args.trajectory))?;
        Ok(runtime)
    };
    let mut runtimes = [runtime(0)?, runtime(1)?];
    finish_pair(args, || {
        pair_run::run(
            robot,
            setup,
            config,
            pair_run::PairControl::separate(&mut runtimes),
            steps,
            &args.out,
        )
    })
}

/// Runs a pair and prints its summary.
fn finish_pair(args: &SimArgs, run: impl FnOnce() -> Result<pair_run::PairSummary>) -> Result<()> {
    let summary = run()?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print!("{}", pair_run::render(&summary));
    }
    summary.check_held()?;
    Ok(())
}

/// The `--set-at` sets, each checked as the node checks a value (name, type, range) before the
/// run: only what depends on the run's state can still be refused during it.
fn scheduled_sets(
    args: &SimArgs,
    runtime: &GroupLoop,
    steps: usize,
    dt: f64,
) -> Result<ParameterSchedule> {
    let last_step = (steps - 1) as f64 * dt;
    let sets = parameter_schedule::parse(&args.set_at, last_step, dt)?;
    for set in &sets {
        runtime
            .validate_parameter(&set.name, &set.value)
            .with_context(|| format!("--set-at '{}'", set.text))?;
    }
    Ok(ParameterSchedule::new(sets))
}

/// What the arm followed, as the summary names it: a `--target-pose` run follows its pose.
fn followed(args: &SimArgs) -> String {
    match &args.target_pose {
        Some(pose) => format!("target pose {pose}"),
        None => args.trajectory.clone(),
    }
}

/// The controller as the arguments configure it. A task-space law given a `--trajectory` (and
/// no `--target-pose`) follows it with its tip: `target_source` is `joint_reference`.
fn controller_runtime(args: &SimArgs, robot: &Robot) -> Result<GroupLoop> {
    let runtime = configured_runtime(args, robot, None)?;
    let task_space = runtime.parameter("target_source").is_some();
    if !task_space || args.trajectory == "hold" {
        return Ok(runtime);
    }
    if args.target_pose.is_some() {
        bail!(
            "'{}' follows one tip target: give --trajectory (followed through forward kinematics) or --target-pose, not both",
            runtime.law_name()
        );
    }
    configured_runtime(args, robot, Some(("target_source", "joint_reference")))
}

fn configured_runtime(
    args: &SimArgs,
    robot: &Robot,
    extra: Option<(&str, &str)>,
) -> Result<GroupLoop> {
    let start = node_start(args, extra)?;
    GroupLoop::lone_on(&start, robot.clone()).with_context(|| configuring(args))
}

/// The context of a configuration error: which parameter files it came from.
fn configuring(args: &SimArgs) -> String {
    let files: Vec<String> = args
        .params
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    if files.is_empty() {
        "configuring the controller".to_string()
    } else {
        format!("configuring the controller from {}", files.join(", "))
    }
}

/// The controller's start values as controller_node would get them: the parameter files,
/// `--controller` and `extra`.
fn node_start(args: &SimArgs, extra: Option<(&str, &str)>) -> Result<NodeStart> {
    let mut values = vec![(
        "controller".to_string(),
        RosValue::String("pd_gravity".into()),
    )];
    values.extend(params_file::values(&args.params)?);
    if let Some(name) = &args.controller {
        values.push(("controller".into(), RosValue::String(name.clone())));
    }
    if let Some((name, value)) = extra {
        values.push((name.into(), RosValue::String(value.into())));
    }
    Ok(NodeStart {
        name: "controller_node".into(),
        namespace: "/".into(),
        remaps: vec![],
        values,
    })
}

/// The control loop with a progress bar that appears once the run has taken a second, and
/// the `--set-at` sets applied when due.
fn simulate(
    sim: &mut Simulator,
    control: &mut SimulatedLoop<&mut GroupLoop>,
    steps: usize,
    schedule: &mut ParameterSchedule,
) -> Result<RunLog> {
    let progress = ProgressBar::with_draw_target(Some(steps as u64), ProgressDrawTarget::hidden());
    progress.set_style(
        ProgressStyle::with_template("{bar:40} {percent:>3}% simulated {msg} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let start = Instant::now();
    let dt = sim.config().dt;
    let log = run_loop(sim, control, steps, |k, t, control| {
        let mut set_events = Vec::new();
        schedule.apply_due(t, dt, &mut set_events, |name, value| {
            control.group_mut().set_parameter(name, value)
        });
        control.events.extend(set_events);
        if k % 1000 == 999 {
            if progress.is_hidden() && start.elapsed().as_secs_f64() > 1.0 {
                progress.set_draw_target(ProgressDrawTarget::stderr());
            }
            progress.set_position(k as u64 + 1);
            progress.set_message(format!("{:.1} s", t + dt));
        }
    })?;
    progress.finish_and_clear();
    Ok(log)
}
