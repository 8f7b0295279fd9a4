//! `armctl sim`: a controller against the embedded simulator, in-process (no ROS): progress,
//! a summary table, `run.csv` and plots.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use armctl_control::Controller;
use armctl_control::ParameterValue as RosValue;
use armctl_model::{urdf_file_to_robot, BranchPolicy, ChainOptions, ConversionReport, Robot};
use armctl_runtime::controller_runtime::{ControllerRuntime, COOPERATIVE};
use armctl_runtime::pair_runtime::PairRuntime;
use armctl_runtime::simulated_loop::SimulatedLoop;
use armctl_runtime::startup::NodeStart;
use armctl_sim::{run_loop, Integrator, RunLog, SimConfig, Simulator};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use nalgebra::IsometryMatrix3;
use serde::Serialize;

use crate::plots::{line_chart, Series};
use crate::{pair_run, params_file, sim_config_file, trajectory_spec};
use armctl_runtime::scene_file;

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
    /// hold | setpoint:Q | quintic:Q:T | sine:AMP:FREQ | file:PATH.yaml (Q comma-separated).
    #[arg(long, default_value = "hold")]
    trajectory: String,
    /// Start configuration, comma-separated (default: the middle of each joint's range).
    #[arg(long)]
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
    #[arg(long)]
    target_pose: Option<String>,
    /// With a pair scene and `--controller cooperative`: move the held object by DX,DY,DZ
    /// (world axes, m) from the start, in 1 s or as `max_object_speed` allows.
    #[arg(long)]
    object_move: Option<String>,
    /// Folder for run.csv and the plots.
    #[arg(long, default_value = "out/sim")]
    out: PathBuf,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

/// Per-joint results.
#[derive(Debug, Serialize)]
pub(crate) struct JointSummary {
    joint: String,
    rms_error: f64,
    max_error: f64,
    final_error: f64,
    /// Largest effort applied (after saturation).
    max_effort: f64,
}

/// One contact point's forces.
#[derive(Debug, Serialize)]
pub(crate) struct ContactSummary {
    point: String,
    /// Force at the end, N, base link axes.
    final_force: [f64; 3],
    /// Largest magnitude, N.
    peak_force: f64,
}

/// The tip's position error against the joint reference through forward kinematics (what a
/// task-space law following `--trajectory` tracks), m.
#[derive(Debug, Default, Serialize)]
pub(crate) struct TipError {
    rms: f64,
    max: f64,
    #[serde(rename = "final")]
    last: f64,
}

/// The run's results.
#[derive(Debug, Serialize)]
pub(crate) struct Summary {
    robot: String,
    controller: String,
    trajectory: String,
    duration: f64,
    dt: f64,
    steps: usize,
    joints: Vec<JointSummary>,
    saturated_commands: usize,
    real_time_factor: f64,
    /// The tip's distance from where the joint reference puts it, m.
    tip_error: TipError,
    /// Per contact point of the scene.
    contacts: Vec<ContactSummary>,
    /// Conditions the controller's claims need that do not hold.
    warnings: Vec<String>,
    files: Vec<PathBuf>,
}

/// The robot and its conversion (what it noticed, where the URDF links are).
fn load_robot(args: &SimArgs) -> Result<(Robot, ConversionReport)> {
    let options = ChainOptions {
        base_link: args.base.clone(),
        tip_link: args.tip.clone(),
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

/// `--q0`, or the middle of each joint's range.
pub(crate) fn start_configuration(q0: Option<&str>, robot: &Robot) -> Result<Vec<f64>> {
    match q0 {
        Some(text) => trajectory_spec::parse_values(text, robot.dof(), "--q0", false),
        None => Ok(robot.middle_configuration()),
    }
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
        if let Some(setup) = scene.pair(&robot).context("the scene")? {
            return run_pair(args, &robot, &setup, config, steps);
        }
        config.scene = scene.resolve(&robot, &report).context("the scene")?;
    }
    if args.object_move.is_some() {
        bail!("--object-move moves the object of a pair scene (--scene, e.g. config/scenes/two_pandas_carry.yaml)");
    }
    let mut runtime = controller_runtime(args, &robot)?;
    let gravity_warning = gravity_mismatch(&config, runtime.settings());
    let q0 = start_configuration(args.q0.as_deref(), &robot)?;
    let trajectory = trajectory_spec::parse(&args.trajectory, &robot, &q0)?;
    let mut sim = Simulator::new(&robot, &q0, config)?;
    runtime
        .core_mut()
        .follow(trajectory, 0.0)
        .with_context(|| format!("trajectory '{}'", args.trajectory))?;
    let target = target_pose(args.target_pose.as_deref(), &robot, &q0)?;
    if target.is_some() && runtime.core_mut().controller_mut().task_space().is_none() {
        bail!(
            "--target-pose needs a task-space law (cartesian_impedance, resolved_acceleration), not '{}'",
            runtime.core().controller().name()
        );
    }
    let mut control = SimulatedLoop::new(runtime.core_mut());
    control.target_pose = target.map(|pose| (pose, TARGET_POSE_SECONDS));
    let mut log = simulate(&mut sim, &mut control, steps)?;
    // Clipped by the safety layer, plus any the simulated drives clip on their own.
    log.saturated += control.clipped;
    let events = control.events;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let mut files = vec![write_csv(&args.out.join("run.csv"), &robot, &log)?];
    files.extend(write_plots(&args.out, &robot, &log)?);
    runtime.core_mut().controller_mut().check_damping();
    let controller = runtime.core().controller();
    let mut warnings: Vec<String> = model_warnings
        .iter()
        .map(|w| format!("robot model: {w}"))
        .collect();
    warnings.extend(controller.warnings().iter().cloned());
    warnings.extend(gravity_warning);
    warnings.extend(events);
    let info = RunInfo {
        controller: controller.name().to_string(),
        warnings,
        trajectory: args.trajectory.clone(),
        duration: args.duration,
        dt: args.dt,
    };
    let summary = summarize(info, &robot, &log, files);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print!("{}", render(&summary));
    }
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
    setup: &armctl_runtime::scene_file::PairSetup,
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
        let mut pair = PairRuntime::with_pair(&start, robot.clone(), setup)
            .with_context(|| configuring(args))?;
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
    let runtime = |a: usize| -> Result<ControllerRuntime> {
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
            pair_run::PairControl::Separate(&mut runtimes),
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
    Ok(())
}

/// The comma-separated numbers of option `flag`.
fn numbers(flag: &str, text: &str) -> Result<Vec<f64>> {
    text.split(',')
        .map(|v| v.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .with_context(|| format!("{flag} '{text}': numbers separated by commas"))
}

/// `--object-move DX,DY,DZ`: the object's displacement (world axes, m); none: hold it.
fn object_move(text: Option<&str>) -> Result<Option<nalgebra::Vector3<f64>>> {
    let Some(text) = text else {
        return Ok(None);
    };
    let values = numbers("--object-move", text)?;
    if values.len() != 3 || values.iter().any(|v| !v.is_finite()) {
        bail!("--object-move '{text}': give DX,DY,DZ (finite numbers, m)");
    }
    Ok(Some(nalgebra::Vector3::new(
        values[0], values[1], values[2],
    )))
}

/// The time a `--target-pose` is reached in, s (as controller_node's `~/target_pose`).
const TARGET_POSE_SECONDS: f64 = 1.0;

/// `--target-pose`: X,Y,Z keeps the tip's orientation at `q0`; X,Y,Z,QX,QY,QZ,QW sets it.
fn target_pose(
    text: Option<&str>,
    robot: &Robot,
    q0: &[f64],
) -> Result<Option<IsometryMatrix3<f64>>> {
    let Some(text) = text else {
        return Ok(None);
    };
    let values = numbers("--target-pose", text)?;
    if values.iter().any(|v| !v.is_finite()) || !(values.len() == 3 || values.len() == 7) {
        bail!("--target-pose '{text}': give X,Y,Z or X,Y,Z,QX,QY,QZ,QW (finite numbers)");
    }
    let mut ws = armctl_model::KinematicsWorkspace::new(robot);
    let start = armctl_model::forward_kinematics(robot, &mut ws, q0)?.tip();
    let rotation = if values.len() == 7 {
        let q = nalgebra::Quaternion::new(values[6], values[3], values[4], values[5]);
        if q.norm() < 1e-9 {
            bail!("--target-pose '{text}': the quaternion is zero");
        }
        nalgebra::UnitQuaternion::from_quaternion(q).to_rotation_matrix()
    } else {
        start.rotation
    };
    Ok(Some(IsometryMatrix3::from_parts(
        nalgebra::Translation3::new(values[0], values[1], values[2]),
        rotation,
    )))
}

/// The controller as controller_node configures it (the same parameters, identified model,
/// safety layer and hold rules), on the URDF's robot: `--controller` wins over a `controller`
/// in the files.
/// The controller as the arguments configure it. A task-space law given a `--trajectory` (and
/// no `--target-pose`) follows it with its tip: `target_source` is `joint_reference`.
fn controller_runtime(args: &SimArgs, robot: &Robot) -> Result<ControllerRuntime> {
    let runtime = configured_runtime(args, robot, None)?;
    let task_space = runtime.parameter("target_source").is_some();
    if !task_space || args.trajectory == "hold" {
        return Ok(runtime);
    }
    if args.target_pose.is_some() {
        bail!(
            "'{}' follows one tip target: give --trajectory (followed through forward kinematics) or --target-pose, not both",
            runtime.core().controller().name()
        );
    }
    configured_runtime(args, robot, Some(("target_source", "joint_reference")))
}

fn configured_runtime(
    args: &SimArgs,
    robot: &Robot,
    extra: Option<(&str, &str)>,
) -> Result<ControllerRuntime> {
    let start = node_start(args, extra)?;
    ControllerRuntime::with_robot(&start, robot.clone()).with_context(|| configuring(args))
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

/// The control loop with a progress bar that appears once the run has taken a second.
fn simulate(sim: &mut Simulator, control: &mut SimulatedLoop<'_>, steps: usize) -> Result<RunLog> {
    let progress = ProgressBar::with_draw_target(Some(steps as u64), ProgressDrawTarget::hidden());
    progress.set_style(
        ProgressStyle::with_template("{bar:40} {percent:>3}% simulated {msg} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let start = Instant::now();
    let dt = sim.config().dt;
    let log = run_loop(sim, control, steps, |k, t, _| {
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

/// The shortest text that reads back as exactly `v` (`1.38e-17`, not 35 digits of zeros);
/// `NaN`, `inf` and `-inf` for the rest.
fn csv_number(buffer: &mut ryu::Buffer, v: f64) -> &str {
    if v.is_finite() {
        buffer.format_finite(v)
    } else if v.is_nan() {
        "NaN"
    } else if v > 0.0 {
        "inf"
    } else {
        "-inf"
    }
}

pub(crate) fn write_csv(path: &Path, robot: &Robot, log: &RunLog) -> Result<PathBuf> {
    let names: Vec<&str> = robot.joint_names().collect();
    let mut text = String::from("t");
    for prefix in ["q", "qd", "q_ref", "error", "effort"] {
        for name in &names {
            let _ = write!(text, ",{prefix}_{name}");
        }
    }
    for k in 0..log.estimates.len() {
        let _ = write!(text, ",estimate_{k}");
    }
    for name in &log.contact_names {
        for axis in ["x", "y", "z"] {
            let _ = write!(text, ",contact_{name}_f{axis}");
        }
    }
    text.push('\n');
    let mut number = ryu::Buffer::new();
    // Every cell but the first of a row starts with a comma.
    let mut cell = |text: &mut String, v: f64| {
        if !text.ends_with('\n') {
            text.push(',');
        }
        text.push_str(csv_number(&mut number, v));
    };
    for (row, t) in log.time.iter().enumerate() {
        cell(&mut text, *t);
        let n = names.len();
        let error = |i: usize| log.reference[i][row] - log.q[i][row];
        let blocks: [&dyn Fn(usize) -> f64; 5] = [
            &|i| log.q[i][row],
            &|i| log.qd.get(i).map_or(f64::NAN, |c| c[row]),
            &|i| log.reference[i][row],
            &error,
            &|i| log.effort[i][row],
        ];
        for block in blocks {
            for i in 0..n {
                cell(&mut text, block(i));
            }
        }
        for column in log.estimates.iter().chain(&log.contact) {
            cell(&mut text, column[row]);
        }
        text.push('\n');
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    Ok(path.to_path_buf())
}

pub(crate) fn write_plots(dir: &Path, robot: &Robot, log: &RunLog) -> Result<Vec<PathBuf>> {
    let names: Vec<&str> = robot.joint_names().collect();
    let errors: Vec<Vec<f64>> = (0..names.len())
        .map(|i| {
            log.reference[i]
                .iter()
                .zip(&log.q[i])
                .map(|(r, q)| r - q)
                .collect()
        })
        .collect();
    fn curves<'a>(
        names: &[&str],
        data: &'a [Vec<f64>],
        suffix: &str,
        dashed: bool,
    ) -> Vec<Series<'a>> {
        data.iter()
            .enumerate()
            .map(|(i, v)| Series {
                label: format!("{}{suffix}", names.get(i).copied().unwrap_or("")),
                values: v,
                color: i,
                dashed,
            })
            .collect()
    }
    let mut positions = curves(&names, &log.q, "", false);
    positions.extend(curves(&names, &log.reference, " ref", true));
    let mut files = Vec::new();
    files.extend(line_chart(
        &dir.join("positions"),
        "Joint positions (solid) and references (dashed)",
        "position [rad, m]",
        &log.time,
        &positions,
    )?);
    files.extend(line_chart(
        &dir.join("errors"),
        "Tracking error q_ref - q",
        "error [rad, m]",
        &log.time,
        &curves(&names, &errors, "", false),
    )?);
    files.extend(line_chart(
        &dir.join("efforts"),
        "Efforts applied (after saturation)",
        "effort [N m, N]",
        &log.time,
        &curves(&names, &log.effort, "", false),
    )?);
    if !log.contact_names.is_empty() {
        let magnitudes: Vec<Vec<f64>> = log
            .contact
            .chunks(3)
            .map(|xyz| {
                (0..log.time.len())
                    .map(|row| xyz.iter().map(|c| c[row] * c[row]).sum::<f64>().sqrt())
                    .collect()
            })
            .collect();
        let names: Vec<&str> = log.contact_names.iter().map(String::as_str).collect();
        files.extend(line_chart(
            &dir.join("contact"),
            "Contact force on the arm, magnitude per contact point",
            "force [N]",
            &log.time,
            &curves(&names, &magnitudes, "", false),
        )?);
    }
    if !log.estimates.is_empty() {
        // Ten parameters per link: plot the link masses (the last of each ten), else all.
        let per_link = log.estimates.len() == 10 * names.len();
        let estimates: Vec<Series<'_>> = log
            .estimates
            .iter()
            .enumerate()
            .filter(|(k, _)| !per_link || k % 10 == 9)
            .map(|(k, v)| Series {
                label: if per_link {
                    format!("mass of {}", names[k / 10])
                } else {
                    format!("p{k}")
                },
                values: v,
                color: if per_link { k / 10 } else { k },
                dashed: false,
            })
            .collect();
        let title = if per_link {
            "Estimated link masses"
        } else {
            "Parameter estimates"
        };
        files.extend(line_chart(
            &dir.join("estimates"),
            title,
            if per_link { "mass [kg]" } else { "value" },
            &log.time,
            &estimates,
        )?);
    }
    Ok(files)
}

/// What a run was, for its summary.
#[derive(Debug, Clone)]
pub(crate) struct RunInfo {
    /// Controller name.
    pub(crate) controller: String,
    /// The controller's warnings.
    pub(crate) warnings: Vec<String>,
    /// Trajectory spec.
    pub(crate) trajectory: String,
    /// Duration, s.
    pub(crate) duration: f64,
    /// Step, s.
    pub(crate) dt: f64,
}

pub(crate) fn summarize(
    info: RunInfo,
    robot: &Robot,
    log: &RunLog,
    files: Vec<PathBuf>,
) -> Summary {
    let joints = robot
        .joint_names()
        .enumerate()
        .map(|(i, name)| {
            let errors: Vec<f64> = log.reference[i]
                .iter()
                .zip(&log.q[i])
                .map(|(r, q)| r - q)
                .collect();
            let rms =
                (errors.iter().map(|e| e * e).sum::<f64>() / errors.len().max(1) as f64).sqrt();
            JointSummary {
                joint: name.to_string(),
                rms_error: rms,
                max_error: errors.iter().fold(0.0, |m, e| m.max(e.abs())),
                final_error: errors.last().copied().unwrap_or(0.0).abs(),
                max_effort: log.effort[i].iter().fold(0.0, |m, e| m.max(e.abs())),
            }
        })
        .collect();
    Summary {
        robot: robot.name().to_string(),
        controller: info.controller,
        warnings: info.warnings,
        trajectory: info.trajectory,
        duration: info.duration,
        dt: info.dt,
        steps: log.time.len(),
        joints,
        saturated_commands: log.saturated,
        real_time_factor: info.duration / log.wall_seconds.max(1e-9),
        tip_error: tip_error(robot, log),
        contacts: contact_summaries(log),
        files,
    }
}

fn tip_error(robot: &Robot, log: &RunLog) -> TipError {
    let mut ws = armctl_model::KinematicsWorkspace::new(robot);
    let mut tip = |row: usize, columns: &[Vec<f64>]| {
        let q: Vec<f64> = columns.iter().map(|c| c[row]).collect();
        armctl_model::forward_kinematics(robot, &mut ws, &q)
            .map(|poses| poses.tip().translation.vector)
            .ok()
    };
    let errors: Vec<f64> = (0..log.time.len())
        .filter_map(|row| Some((tip(row, &log.reference)? - tip(row, &log.q)?).norm()))
        .collect();
    let rms = (errors.iter().map(|e| e * e).sum::<f64>() / errors.len().max(1) as f64).sqrt();
    TipError {
        rms,
        max: errors.iter().copied().fold(0.0, f64::max),
        last: errors.last().copied().unwrap_or(0.0),
    }
}

fn contact_summaries(log: &RunLog) -> Vec<ContactSummary> {
    log.contact_names
        .iter()
        .zip(log.contact.chunks(3))
        .map(|(name, xyz)| {
            let at = |row: usize| [xyz[0][row], xyz[1][row], xyz[2][row]];
            let rows = log.time.len();
            ContactSummary {
                point: name.clone(),
                final_force: if rows > 0 { at(rows - 1) } else { [0.0; 3] },
                peak_force: (0..rows)
                    .map(|row| at(row).iter().map(|v| v * v).sum::<f64>().sqrt())
                    .fold(0.0, f64::max),
            }
        })
        .collect()
}

pub(crate) fn render(s: &Summary) -> String {
    let mut out = format!(
        "{} with {} following '{}' for {} s (dt {} s, {} steps)\n\n{:<24} {:>12} {:>12} {:>12} {:>12}\n",
        s.robot, s.controller, s.trajectory, s.duration, s.dt, s.steps, "joint", "rms error", "max error", "final error", "max effort"
    );
    for j in &s.joints {
        let _ = writeln!(
            out,
            "{:<24} {:>12.3e} {:>12.3e} {:>12.3e} {:>12.3}",
            j.joint, j.rms_error, j.max_error, j.final_error, j.max_effort
        );
    }
    let _ = writeln!(
        out,
        "{:<24} {:>12.3e} {:>12.3e} {:>12.3e}   (m, from the reference through FK)",
        "tip position", s.tip_error.rms, s.tip_error.max, s.tip_error.last
    );
    for c in &s.contacts {
        let [x, y, z] = c.final_force;
        let _ = write!(
            out,
            "{}contact at {}: final force [{x:.3}, {y:.3}, {z:.3}] N, peak {:.3} N",
            if out.ends_with("\n\n") { "" } else { "\n" },
            c.point,
            c.peak_force
        );
    }
    let _ = writeln!(
        out,
        "\nsaturated commands: {}\nreal-time factor: {:.0}x",
        s.saturated_commands, s.real_time_factor
    );
    let _ = writeln!(
        out,
        "wrote: {}",
        s.files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    for warning in &s.warnings {
        let _ = writeln!(out, "warning: {warning}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::csv_number;

    #[test]
    fn csv_numbers_are_the_shortest_that_read_back_exactly() {
        let mut buffer = ryu::Buffer::new();
        for v in [1.38e-17, 0.1, -2.5, 1e300, 123456.789, 0.0, 6.02214076e23] {
            let text = csv_number(&mut buffer, v).to_string();
            assert_eq!(text.parse::<f64>().unwrap(), v, "{text}");
            assert!(text.len() <= 16, "{text}");
        }
        assert_eq!(csv_number(&mut buffer, 1.38e-17), "1.38e-17");
        assert_eq!(csv_number(&mut buffer, f64::NAN), "NaN");
        assert_eq!(csv_number(&mut buffer, f64::NEG_INFINITY), "-inf");
    }
}
