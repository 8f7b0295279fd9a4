//! `armctl excite`: an exciting trajectory for identification, a Fourier series per joint
//! within the arm's limits, chosen for a well-conditioned base regressor. Follow it with
//! `armctl sim --trajectory FILE` (or send it to controller_node) and log the motion. With
//! `--payload`: poses at rest that determine a tool's mass and centre of mass instead
//! ([`crate::payload_excite`]).

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use armctl_control::reference::Trajectory;
use armctl_control::JointReference;
use armctl_ident::{excitation, ExcitationLimits};
use armctl_model::{ChainOptions, Robot};
use armctl_nodes::msgs::{JointTrajectory, JointTrajectoryPoint, Time};
use clap::Args;

/// `armctl excite` arguments.
#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub(crate) struct ExciteArgs {
    /// The URDF file.
    urdf: PathBuf,
    /// Tip link of the chain (default: the only leaf reached through moving joints).
    #[arg(long)]
    tip: Option<String>,
    /// How long to run it, s (several periods average the noise out).
    #[arg(long, default_value_t = 60.0)]
    duration: f64,
    /// Period of the series, s.
    #[arg(long, default_value_t = 10.0)]
    period: f64,
    /// Harmonics per joint.
    #[arg(long, default_value_t = 5)]
    harmonics: usize,
    /// Fraction of each joint's range used, about its middle.
    #[arg(long, default_value_t = 0.8)]
    range: f64,
    /// Fraction of each joint's velocity limit.
    #[arg(long, default_value_t = 0.8)]
    velocity: f64,
    /// Largest acceleration, rad/s^2 (m/s^2).
    #[arg(long, default_value_t = 6.0)]
    acceleration: f64,
    /// Seed of the search.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Poses at rest for `armctl identify --payload` instead of a Fourier series: the wrist
    /// turned so that the tool's weight pulls along each axis of the tip frame. Written as
    /// JointTrajectory waypoints (to --out, and --message/--publish as usual).
    #[arg(long)]
    payload: bool,
    /// With --payload: the poses to visit.
    #[arg(long, default_value_t = 8)]
    poses: usize,
    /// With --payload: seconds of each rest-to-rest move between poses.
    #[arg(long, default_value_t = 3.0)]
    move_time: f64,
    /// With --payload: seconds at rest in each pose.
    #[arg(long, default_value_t = 3.0)]
    dwell: f64,
    /// With --payload: the configuration the poses are about (comma-separated, chain order;
    /// default: the middle of each joint's range). Only the last three joints turn.
    #[arg(long, allow_hyphen_values = true)]
    from: Option<String>,
    /// Output file (YAML).
    #[arg(long, default_value = "out/excitation.yaml")]
    out: PathBuf,
    /// Also write the trajectory as a trajectory_msgs/JointTrajectory message (YAML) for a
    /// running controller_node: `ros2 topic pub --once /controller_node/reference
    /// trajectory_msgs/msg/JointTrajectory "$(cat FILE)"`.
    #[arg(long)]
    message: Option<PathBuf>,
    /// Send the message to a running controller_node's `~/reference` over DDS (ROS_DOMAIN_ID
    /// and ROS_LOCALHOST_ONLY as the ROS tools read them), once its subscription is seen, and
    /// report whether the node took it: no 128 kB command-line limit, no ros2 CLI needed.
    #[arg(long)]
    publish: bool,
    /// The controller_node for --publish (fully qualified).
    #[arg(long, default_value = "/controller_node")]
    node: String,
    /// Seconds --publish waits for the node's subscription.
    #[arg(long, default_value_t = 10.0)]
    wait: f64,
    /// Seconds the message gives the arm to reach the trajectory's start from where it is.
    #[arg(long, default_value_t = 5.0)]
    lead_in: f64,
    /// Time between the message's points, s (quintic segments join them with the series'
    /// velocities and accelerations).
    #[arg(long, default_value_t = 0.05)]
    message_step: f64,
}

/// The series sampled every `step` seconds for `duration`, starting `lead_in` seconds in, as
/// a trajectory_msgs/JointTrajectory (header stamp zero: "start now").
pub(crate) fn trajectory_message(
    robot: &Robot,
    trajectory: &dyn Trajectory,
    duration: f64,
    lead_in: f64,
    step: f64,
) -> JointTrajectory {
    let mut reference = JointReference::hold(&vec![0.0; robot.dof()]);
    let points = (0..=(duration / step).round() as usize).map(|k| {
        let t = k as f64 * step;
        trajectory.sample(t, &mut reference);
        let ns = ((lead_in + t) * 1e9).round() as u64;
        JointTrajectoryPoint {
            positions: reference.q.clone(),
            velocities: reference.qd.clone(),
            accelerations: reference.qdd.clone(),
            effort: vec![],
            time_from_start: Time {
                sec: (ns / 1_000_000_000) as i32,
                nanosec: (ns % 1_000_000_000) as u32,
            },
        }
    });
    JointTrajectory {
        joint_names: robot.joint_names().map(str::to_string).collect(),
        points: points.collect(),
        ..JointTrajectory::default()
    }
}

/// `message` in the YAML `ros2 topic pub` takes.
pub(crate) fn message_yaml(message: &JointTrajectory) -> String {
    let list = |v: &[f64]| {
        let items: Vec<String> = v.iter().map(|x| format!("{x:?}")).collect();
        format!("[{}]", items.join(", "))
    };
    let mut text = format!(
        "joint_names: [{}]\npoints:\n",
        message.joint_names.join(", ")
    );
    for p in &message.points {
        let (sec, nanosec) = (p.time_from_start.sec, p.time_from_start.nanosec);
        text += &format!(
            "- positions: {}\n  velocities: {}\n  accelerations: {}\n  time_from_start: {{sec: {sec}, nanosec: {nanosec}}}\n",
            list(&p.positions),
            list(&p.velocities),
            list(&p.accelerations)
        );
    }
    text
}

fn write(path: &std::path::Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

pub(crate) fn run(args: &ExciteArgs) -> Result<()> {
    if !(args.duration > 0.0
        && args.period > 0.0
        && (0.0..=1.0).contains(&args.range)
        && (0.0..=1.0).contains(&args.velocity)
        && args.acceleration > 0.0
        && args.lead_in >= 0.0
        && args.message_step > 0.0
        && (0.0..=3600.0).contains(&args.wait))
    {
        bail!("--duration, --period, --acceleration and --message-step must be positive, --lead-in not negative, --range and --velocity within [0, 1], --wait within [0, 3600] s");
    }
    let options = ChainOptions {
        tip_link: args.tip.clone(),
        ..ChainOptions::default()
    };
    let robot = crate::robot_file::load_robot(&args.urdf, &options)?;
    if args.payload {
        return run_payload(args, &robot);
    }
    let limits = ExcitationLimits {
        range: args.range,
        velocity: args.velocity,
        acceleration: args.acceleration,
    };
    let whole = excitation(&robot, 1.0 / args.period, args.harmonics, limits, args.seed)?;
    let found = whole.cut_to(&robot, args.duration)?;
    if args.duration < args.period {
        eprintln!(
            "warning: --duration {} s is shorter than --period {} s: the series runs for part of a period, which conditions the base regressor at {:.1} (a whole period: {:.1}); identify from at least one period",
            args.duration, args.period, found.condition_number, whole.condition_number
        );
    }
    write(&args.out, &found.to_yaml(&robot, args.duration)?)?;
    let message = || {
        let step = args.message_step;
        trajectory_message(&robot, &found.trajectory, args.duration, args.lead_in, step)
    };
    if let Some(path) = &args.message {
        write(path, &message_yaml(&message()))?;
    }
    println!(
        "{}: {} harmonics, period {} s, condition number of the base regressor {:.1} -> {}",
        robot.name(),
        args.harmonics,
        args.period,
        found.condition_number,
        args.out.display()
    );
    if args.publish {
        crate::excite_publish::publish(&message(), &args.node, args.wait)?;
    }
    Ok(())
}

/// `--payload`: the poses as waypoints, written and sent as the series would be.
fn run_payload(args: &ExciteArgs, robot: &Robot) -> Result<()> {
    if !(args.poses >= 2 && args.poses <= 64 && args.move_time > 0.0 && args.dwell >= 0.5) {
        bail!("--poses must be within [2, 64], --move-time positive, --dwell at least 0.5 s");
    }
    let q0 = match &args.from {
        Some(text) => crate::trajectory_spec::parse_values(text, robot.dof(), "--from", false)?,
        None => robot.middle_configuration(),
    };
    let timing = crate::payload_excite::PoseTiming {
        poses: args.poses,
        move_time: args.move_time,
        dwell: args.dwell,
    };
    let message = crate::payload_excite::payload_trajectory(robot, &q0, timing)?;
    let yaml = message_yaml(&message);
    write(&args.out, &yaml)?;
    if let Some(path) = &args.message {
        write(path, &yaml)?;
    }
    let end = message
        .points
        .last()
        .map_or(0.0, |p| p.time_from_start.seconds());
    println!(
        "{}: {} poses at rest for a payload, {end:.0} s -> {}",
        robot.name(),
        args.poses,
        args.out.display()
    );
    if args.publish {
        crate::excite_publish::publish(&message, &args.node, args.wait)?;
    }
    Ok(())
}
