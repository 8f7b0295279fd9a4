//! `armctl commission`: from a URDF and a running arm to a validated, tuned controller in one
//! command, each step gated: check -> plan -> excite and record -> identify (physically
//! consistent) -> validate on a held-out trajectory -> size the gains -> verify on the arm ->
//! deploy (one parameter file and a report). A gate that fails stops the command with a
//! non-zero exit and the reason, naming the joint; a run on the arm that stops early brakes it
//! to rest and keeps what it recorded. The arm is the embedded simulator standing in for a
//! real one ([`arm::SimulatedArm`]).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use armctl_control::ParameterValue as RosValue;
use armctl_model::{ChainOptions, Robot};
use armctl_runtime::group_loop::GroupLoop;
use armctl_runtime::startup::NodeStart;
use armctl_sim::SimConfig;
use clap::Args;

mod arm;
mod check;
mod deploy;
mod drive;
mod estimator;
mod model_steps;
mod plan;
mod recording;
mod ros_arm;

use arm::{Arm, SimulatedArm};
use drive::{Guard, Recording};

/// `armctl commission` arguments.
#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub(crate) struct CommissionArgs {
    /// The arm's URDF, as the user has it (its inertials and friction are what commissioning
    /// replaces).
    urdf: PathBuf,
    /// Tip link of the chain (default: the only leaf reached through moving joints).
    #[arg(long)]
    tip: Option<String>,
    /// The simulated arm's own URDF, standing in for the real arm's true model (default:
    /// the URDF).
    #[arg(long)]
    arm_urdf: Option<PathBuf>,
    /// The simulated arm's settings (YAML, as `armctl sim --sim-config`): friction, noise,
    /// delay, payload, mass scale.
    #[arg(long)]
    sim_config: Option<PathBuf>,
    /// What the simulated arm touches (YAML, as `armctl sim --scene`); replaces a scene of
    /// the settings file.
    #[arg(long)]
    scene: Option<PathBuf>,
    /// Where the simulated arm starts, comma-separated (default: the middle of each range).
    #[arg(long, allow_hyphen_values = true)]
    q0: Option<String>,
    /// Commission the arm running on ROS 2 (its joint_states in, efforts out, on DDS:
    /// ROS_DOMAIN_ID and ROS_LOCALHOST_ONLY as ROS reads them) instead of the embedded
    /// simulator.
    #[arg(long)]
    ros: bool,
    /// With --ros: the arm's sensor_msgs/JointState topic.
    #[arg(long, default_value = "/joint_states")]
    joint_states: String,
    /// With --ros: the std_msgs/Float64MultiArray effort command topic (the URDF chain's
    /// joints in order, as a JointGroupEffortController with those joints takes them).
    #[arg(long, default_value = "/effort_controller/commands")]
    command_topic: String,
    /// With --ros: the arm's control rate, Hz (one command per joint state).
    #[arg(long, default_value_t = 1000.0)]
    rate: f64,
    /// With --ros: seconds to wait for the arm's joint states and its command subscriber.
    #[arg(long, default_value_t = 10.0)]
    wait: f64,
    /// Stop after the check and print the plan: what each joint will need, the durations.
    #[arg(long)]
    dry_run: bool,
    /// Seconds of excitation recorded for the fit.
    #[arg(long, default_value_t = 60.0)]
    duration: f64,
    /// Seconds of the held-out validation trajectory (and of the verification on the arm).
    #[arg(long, default_value_t = 20.0)]
    validation_duration: f64,
    /// Period of the exciting series, s.
    #[arg(long, default_value_t = 10.0)]
    period: f64,
    /// Harmonics per joint.
    #[arg(long, default_value_t = 5)]
    harmonics: usize,
    /// Fraction of each joint's position range the excitation uses, about its middle.
    #[arg(long, default_value_t = 0.8)]
    range: f64,
    /// Fraction of each joint's velocity limit the excitation uses (tracking on a wrong model
    /// overshoots: the over-speed protection acts at 1.5 times the limit).
    #[arg(long, default_value_t = 0.5)]
    velocity: f64,
    /// Largest acceleration of the excitation, rad/s^2 (m/s^2).
    #[arg(long, default_value_t = 3.0)]
    acceleration: f64,
    /// Fraction of each joint's effort limit the plan may need, the model error included.
    #[arg(long, default_value_t = 1.0)]
    effort: f64,
    /// Share of the applied torque the URDF's model may get wrong while commissioning: sizes
    /// the collision thresholds (model_error) and the plan's effort allowance.
    #[arg(long, default_value_t = 0.5)]
    model_error: f64,
    /// Largest tracking error on any joint while exciting, rad (m): beyond it the run stops
    /// and brakes.
    #[arg(long, default_value_t = 1.0)]
    tracking_limit: f64,
    /// Largest held-out effort prediction error per joint, % of its effort range.
    #[arg(long, default_value_t = 3.0)]
    max_error: f64,
    /// Largest condition number of the base regressor the plan accepts.
    #[arg(long, default_value_t = 200.0)]
    max_condition: f64,
    /// Seconds the arm must hold still under gravity compensation in the check.
    #[arg(long, default_value_t = 2.0)]
    hold_seconds: f64,
    /// Largest drift of a joint while holding, rad (m).
    #[arg(long, default_value_t = 0.2)]
    hold_tolerance: f64,
    /// Seed of the trajectory search.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// How step 4 estimates: by instrumental variables, the excitation simulated on the
    /// previous estimate as instruments (closed-loop data share the encoders' noise with the
    /// efforts), or by weighted least squares alone.
    #[arg(long, value_enum, default_value = "idim-iv")]
    estimator: estimator::Estimator,
    /// Folder for the recordings, the parameter file and the report.
    #[arg(long, default_value = "out/commission")]
    out: PathBuf,
}

/// The numbers the steps use, checked.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) duration: f64,
    pub(crate) validation_duration: f64,
    pub(crate) period: f64,
    pub(crate) harmonics: usize,
    pub(crate) range: f64,
    pub(crate) velocity: f64,
    pub(crate) acceleration: f64,
    pub(crate) effort: f64,
    pub(crate) model_error: f64,
    pub(crate) tracking_limit: f64,
    pub(crate) max_error: f64,
    pub(crate) max_condition: f64,
    pub(crate) hold_seconds: f64,
    pub(crate) hold_tolerance: f64,
    pub(crate) seed: u64,
    pub(crate) estimator: estimator::Estimator,
}

impl Settings {
    fn of(args: &CommissionArgs) -> Result<Self> {
        let positive = [
            ("--duration", args.duration),
            ("--validation-duration", args.validation_duration),
            ("--period", args.period),
            ("--acceleration", args.acceleration),
            ("--tracking-limit", args.tracking_limit),
            ("--max-error", args.max_error),
            ("--max-condition", args.max_condition),
            ("--hold-seconds", args.hold_seconds),
            ("--hold-tolerance", args.hold_tolerance),
        ];
        for (name, value) in positive {
            if !(value.is_finite() && value > 0.0) {
                anyhow::bail!("{name} must be positive and finite, got {value}");
            }
        }
        for (name, value) in [
            ("--range", args.range),
            ("--velocity", args.velocity),
            ("--effort", args.effort),
        ] {
            if !(value > 0.0 && value <= 1.0) {
                anyhow::bail!("{name} must be within (0, 1], got {value}");
            }
        }
        if !(0.0..=2.0).contains(&args.model_error) {
            anyhow::bail!(
                "--model-error must be within [0, 2] (model_error's range), got {}",
                args.model_error
            );
        }
        let seconds = [
            ("--duration", args.duration, 1.0, 3600.0),
            (
                "--validation-duration",
                args.validation_duration,
                1.0,
                3600.0,
            ),
            ("--hold-seconds", args.hold_seconds, 0.1, 60.0),
            ("--period", args.period, 0.5, 600.0),
        ];
        for (name, value, low, high) in seconds {
            if !(low..=high).contains(&value) {
                anyhow::bail!("{name} must be within [{low}, {high}] s, got {value}");
            }
        }
        if !(2..=20).contains(&args.harmonics) {
            anyhow::bail!("--harmonics must be within [2, 20], got {}", args.harmonics);
        }
        Ok(Self {
            duration: args.duration,
            validation_duration: args.validation_duration,
            period: args.period,
            harmonics: args.harmonics,
            range: args.range,
            velocity: args.velocity,
            acceleration: args.acceleration,
            effort: args.effort,
            model_error: args.model_error,
            tracking_limit: args.tracking_limit,
            max_error: args.max_error / 100.0,
            max_condition: args.max_condition,
            hold_seconds: args.hold_seconds,
            hold_tolerance: args.hold_tolerance,
            seed: args.seed,
            estimator: args.estimator,
        })
    }

    /// The excitation's law with the plan's gains and the protections commissioning keeps on:
    /// collision detection told how far off the model may be, its joint thresholds fixed at
    /// the plan's ([`plan::Plan::collision_thresholds`]).
    pub(crate) fn protections(&self, robot: &Robot, plan: &plan::Plan) -> Vec<(String, RosValue)> {
        let thresholds = plan.collision_thresholds(robot, self);
        let (kp, kd) = plan.hold_gains.clone();
        vec![
            (
                "controller".into(),
                RosValue::String(model_steps::EXCITATION_LAW.into()),
            ),
            ("kp".into(), RosValue::DoubleArray(kp)),
            ("kd".into(), RosValue::DoubleArray(kd)),
            ("collision_detection".into(), RosValue::String("on".into())),
            ("model_error".into(), RosValue::Double(self.model_error)),
            (
                "collision_thresholds".into(),
                RosValue::DoubleArray(thresholds),
            ),
        ]
    }

    /// The controller of the runs on the URDF's model: [`Self::protections`], and collision
    /// detection allowing for the joint friction the URDF lacks, up to
    /// [`plan::FRICTION_ALLOWANCE`] of each effort limit.
    pub(crate) fn excitation_controller(
        &self,
        robot: &Robot,
        plan: &plan::Plan,
    ) -> Result<GroupLoop> {
        let mut runtime = controller(robot, self.protections(robot, plan), None)?;
        let friction: Vec<[f64; 2]> = robot
            .joints()
            .iter()
            .map(|j| [plan::FRICTION_ALLOWANCE * j.limits.effort, 0.0])
            .collect();
        runtime.core_mut().allow_for_friction(&friction);
        Ok(runtime)
    }

    /// The guard of the runs on the URDF's model: slowed down as tracking worsens.
    pub(crate) fn guard(&self) -> Guard {
        Guard {
            tracking: self.tracking_limit,
            slow_down: true,
        }
    }

    /// The guard of a run on an identified model: stopped, never slowed (its tracking is
    /// what is measured).
    pub(crate) fn verify_guard(&self) -> Guard {
        Guard {
            tracking: self.tracking_limit,
            slow_down: false,
        }
    }
}

/// A gate that stopped the commissioning: the step and why.
#[derive(Debug)]
pub(crate) struct Gate {
    step: &'static str,
    reason: String,
}

impl Gate {
    pub(crate) fn check(reason: String) -> Self {
        Self {
            step: "check",
            reason,
        }
    }
    pub(crate) fn plan(reason: String) -> Self {
        Self {
            step: "plan",
            reason,
        }
    }
    pub(crate) fn at(step: &'static str, reason: String) -> Self {
        Self { step, reason }
    }
}

impl std::fmt::Display for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "commissioning stopped at the {} gate: {}",
            self.step, self.reason
        )
    }
}

impl std::error::Error for Gate {}

/// A controller as controller_node runs it on `robot`: `values`, then a parameter file's
/// (which win).
pub(crate) fn controller(
    robot: &Robot,
    mut values: Vec<(String, RosValue)>,
    file: Option<&Path>,
) -> Result<GroupLoop> {
    if let Some(path) = file {
        values.extend(crate::params_file::values(&[path.to_path_buf()])?);
    }
    let start = NodeStart {
        name: "controller_node".into(),
        namespace: "/".into(),
        remaps: vec![],
        values,
    };
    Ok(GroupLoop::lone_on(&start, robot.clone())?)
}

/// The simulated arm: `--arm-urdf` (else the URDF) with `--sim-config` and what it touches
/// (`--scene`, else the settings file's), at `--q0`.
fn simulated_arm(args: &CommissionArgs) -> Result<SimulatedArm> {
    let options = ChainOptions {
        tip_link: args.tip.clone(),
        ..ChainOptions::default()
    };
    let path = args.arm_urdf.as_ref().unwrap_or(&args.urdf);
    let plant = crate::robot_file::load_conversion(path, &options)
        .with_context(|| format!("the simulated arm {}", path.display()))?;
    let mut config = SimConfig::default();
    let mut scene = None;
    if let Some(file) = &args.sim_config {
        (config, scene) = crate::sim_config_file::load(file, config)?;
    }
    if let Some(file) = &args.scene {
        scene = Some(armctl_sim::scene_file::load(file)?);
    }
    if let Some(scene) = scene {
        config.scene = scene.resolve(&plant.robot, &plant.report)?;
    }
    let q0 = crate::sim_command::start_configuration(args.q0.as_deref(), &plant.robot)?;
    let label = match &args.arm_urdf {
        Some(path) => format!("the simulated arm ({})", path.display()),
        None => "the simulated arm".to_string(),
    };
    SimulatedArm::new(&plant.robot, &q0, config, label)
}

/// A run on `what` (the arm, or the simulated model) that must not stop: its recording, or
/// the gate naming why it stopped and how it was left.
pub(crate) fn completed(
    step: &'static str,
    recording: Recording,
    files: &[PathBuf],
    what: &str,
) -> Result<Recording> {
    let Some(stop) = &recording.stop else {
        if let Some((false, speed)) = recording.braked {
            return Err(Gate::at(
                step,
                format!("{what} did not come to rest after the run (largest speed {speed:.4} at the end of the brake): it needs attention"),
            )
            .into());
        }
        return Ok(recording);
    };
    let braked = braked(recording.braked, what);
    let kept: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    Err(Gate::at(step, format!("{stop}; {braked}; kept: {}", kept.join(", "))).into())
}

/// How a run's brake left `what`.
pub(crate) fn braked(braked: Option<(bool, f64)>, what: &str) -> String {
    match braked {
        Some((true, speed)) => format!("{what} braked to rest (largest speed {speed:.4})"),
        Some((false, speed)) => format!("{what} did NOT come to rest within the brake time (largest speed {speed:.4} at its end): it needs attention"),
        None => format!("{what} was not braked"),
    }
}

/// The arm: over ROS 2 with `--ros`, else the embedded simulator.
fn the_arm(args: &CommissionArgs, robot: &Robot) -> Result<Box<dyn Arm>> {
    if !args.ros {
        return Ok(Box::new(simulated_arm(args)?));
    }
    let simulated_only = [
        ("--arm-urdf", args.arm_urdf.is_some()),
        ("--sim-config", args.sim_config.is_some()),
        ("--scene", args.scene.is_some()),
        ("--q0", args.q0.is_some()),
    ];
    if let Some((name, _)) = simulated_only.iter().find(|(_, given)| *given) {
        anyhow::bail!("{name} describes the embedded simulator's arm; with --ros the arm is the one running on ROS 2");
    }
    let topics = ros_arm::RosTopics {
        joint_states: args.joint_states.clone(),
        command_topic: args.command_topic.clone(),
        rate: args.rate,
        wait: args.wait,
    };
    let joints = robot.joint_names().map(str::to_string).collect();
    // Built for a ROS 2 workspace (`--features rcl`), the command is a node of it; else DDS.
    #[cfg(feature = "rcl")]
    return Ok(Box::new(ros_arm::RosArm::over_rcl(topics, joints)?));
    #[cfg(not(feature = "rcl"))]
    Ok(Box::new(ros_arm::RosArm::over_dds(topics, joints)?))
}

/// Refuses an `--out` that cannot be a folder, before anything moves.
fn check_out(out: &Path) -> Result<()> {
    if out.exists() && !out.is_dir() {
        anyhow::bail!("--out {}: not a folder", out.display());
    }
    Ok(())
}

/// A previous commissioning's parameter file and report in `out` are moved aside (renamed
/// `.previous`), so that a commissioning that stops leaves nothing that looks deployed.
fn set_aside_previous(out: &Path) -> Result<()> {
    for name in [
        "commissioned.yaml",
        "report.md",
        "commissioned.candidate.yaml",
    ] {
        let path = out.join(name);
        if path.exists() {
            let aside = path.with_extension(format!(
                "previous.{}",
                path.extension().and_then(|e| e.to_str()).unwrap_or("")
            ));
            std::fs::rename(&path, &aside)
                .with_context(|| format!("moving {} aside", path.display()))?;
            println!(
                "   the previous {name} is moved aside to {}",
                aside.display()
            );
        }
    }
    Ok(())
}

/// Step 1 and the plan: what the arm is, whether it holds, and what it will be asked.
fn check_and_plan(robot: &Robot, arm: &mut dyn Arm, settings: &Settings) -> Result<plan::Plan> {
    println!("1. check: {} against {}", robot.name(), arm.describe());
    check::check_joints(robot, arm)?;
    check::check_limits(robot)?;
    check::check_positions(robot, arm)?;
    let plan = plan::plan(robot, settings)?;
    let held = check::check_hold(robot, arm, settings, &plan)?;
    println!(
        "   ok: the same {} joints, inside their limits, held still for {:.1} s under gravity compensation with the URDF's model",
        robot.dof(),
        held.log.time[..held.tracked.max(1)].last().map_or(0.0, |t| t - held.log.time[0])
    );
    print!("{}", plan::render(robot, &plan, settings));
    Ok(plan)
}

pub(crate) fn run(args: &CommissionArgs) -> Result<()> {
    let settings = Settings::of(args)?;
    check_out(&args.out)?;
    let options = ChainOptions {
        tip_link: args.tip.clone(),
        ..ChainOptions::default()
    };
    let robot = crate::robot_file::load_robot(&args.urdf, &options)?;
    let mut arm = the_arm(args, &robot)?;
    let arm = arm.as_mut();
    let plan = check_and_plan(&robot, arm, &settings)?;
    if args.dry_run {
        println!("dry run: stopped after the check; nothing moved beyond the hold");
        return Ok(());
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    set_aside_previous(&args.out)?;
    let trajectories = plan.write(&robot, &settings, &args.out)?;
    println!(
        "   trajectories: {}",
        trajectories
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let steps = model_steps::Steps {
        robot: &robot,
        settings: &settings,
        out: &args.out,
        urdf: &args.urdf,
    };
    let outcome = steps.run(arm, &plan)?;
    if let Some(why) = arm.interrupted() {
        model_steps::reject(&outcome.candidate);
        anyhow::bail!("{why}: nothing deployed; the arm braked to rest");
    }
    let holder = || settings.excitation_controller(&robot, &plan);
    let deployed = drive::hold_while(arm, holder, || deploy::deploy(&steps, &outcome));
    if let Err(e) = deployed.and_then(|written| written) {
        model_steps::reject(&outcome.candidate);
        let _ = std::fs::remove_file(args.out.join("report.md"));
        anyhow::bail!("deploying: {e:#}; nothing deployed");
    }
    if arm.time_runs_on() {
        println!("   the arm's last command is a hold at rest, a constant effort with no feedback: start its controller with the parameter file before the arm's effort controller times out (sim_node's command_timeout) or lets it drift");
    }
    Ok(())
}
