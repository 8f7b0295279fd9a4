//! `--trajectory SPEC`: the references `armctl sim` can follow.
//!
//! - `hold`: stay at the start configuration;
//! - `setpoint:Q`: jump to Q (comma-separated, one value per joint);
//! - `quintic:Q:T`: quintic point-to-point from the start to Q in T seconds;
//! - `sine:AMP:FREQ`: a sinusoid per joint about the start, AMP rad and FREQ Hz (one value for
//!   all joints or one per joint);
//! - `file:PATH` (or a path ending in .yaml/.yml): an excitation of `armctl excite`, or waypoints
//!   in the shape of
//!   trajectory_msgs/JointTrajectory: `{joint_names: [..], points: [{positions: [..],
//!   velocities: [..], accelerations: [..], time_from_start: S}]}` (S in seconds, or
//!   `{sec, nanosec}` as in a message file for `ros2 topic pub`); joints are matched by name,
//!   and a start at t = 0 is added when the first point comes later.

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use armctl_control::reference::{
    MultiPoint, Quintic, SetPoint, Sinusoid, Trajectory, TrajectoryPoint,
};
use armctl_model::Robot;
use serde::Deserialize;

/// Comma-separated numbers, one per joint (or one for all when `broadcast`).
pub(crate) fn parse_values(text: &str, n: usize, what: &str, broadcast: bool) -> Result<Vec<f64>> {
    let values = text
        .split(',')
        .map(|v| {
            v.trim()
                .parse::<f64>()
                .with_context(|| format!("{what}: '{v}' is not a number"))
        })
        .collect::<Result<Vec<f64>>>()?;
    if values.iter().any(|v| !v.is_finite()) {
        bail!("{what}: values must be finite");
    }
    match values.len() {
        1 if broadcast => Ok(vec![values[0]; n]),
        len if len == n => Ok(values),
        len => bail!("{what}: expected {n} values (one per joint), got {len}"),
    }
}

/// The trajectory for `spec`, starting from `q0`.
pub(crate) fn parse(spec: &str, robot: &Robot, q0: &[f64]) -> Result<Box<dyn Trajectory>> {
    let n = robot.dof();
    let (kind, rest) = spec.split_once(':').unwrap_or((spec, ""));
    let parts: Vec<&str> = if rest.is_empty() {
        vec![]
    } else {
        rest.split(':').collect()
    };
    let trajectory: Box<dyn Trajectory> = match (kind, parts.as_slice()) {
        ("hold", []) => Box::new(SetPoint::new(q0.to_vec())),
        ("setpoint", [q]) => Box::new(SetPoint::new(parse_values(q, n, "setpoint", false)?)),
        ("quintic", [q, t]) => {
            let duration: f64 = t.trim().parse().with_context(|| format!("quintic: duration '{t}' is not a number"))?;
            Box::new(Quintic::new(q0.to_vec(), parse_values(q, n, "quintic goal", false)?, duration)?)
        }
        ("sine", [amplitude, frequency]) => Box::new(Sinusoid::new(
            q0.to_vec(),
            parse_values(amplitude, n, "sine amplitude", true)?,
            parse_values(frequency, n, "sine frequency", true)?,
            vec![0.0; n],
        )?),
        ("file", [path]) => load_file(Path::new(path), robot, q0)?,
        _ if spec.ends_with(".yaml") || spec.ends_with(".yml") => load_file(Path::new(spec), robot, q0)?,
        _ => bail!(
            "unknown trajectory '{spec}': use hold, setpoint:Q, quintic:Q:T, sine:AMP:FREQ or file:PATH.yaml (Q comma-separated, one value per joint)"
        ),
    };
    Ok(trajectory)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrajectoryFile {
    joint_names: Option<Vec<String>>,
    points: Vec<PointFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PointFile {
    positions: Vec<f64>,
    velocities: Option<Vec<f64>>,
    accelerations: Option<Vec<f64>>,
    time_from_start: TimeFromStart,
}

/// Seconds, or builtin_interfaces/Duration as a message file has it.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum TimeFromStart {
    Seconds(f64),
    Duration { sec: i32, nanosec: u32 },
}

impl TimeFromStart {
    fn seconds(&self) -> f64 {
        match *self {
            Self::Seconds(s) => s,
            Self::Duration { sec, nanosec } => f64::from(sec) + 1e-9 * f64::from(nanosec),
        }
    }
}

/// A YAML parser's error about the file, its quotes shortened.
fn yaml_error(path: &Path, e: &serde_yaml::Error) -> anyhow::Error {
    let reason = armctl_model::files::short_message(&e.to_string());
    anyhow!("parsing trajectory {}: {reason}", path.display())
}

/// One value per name (in `names` order), reordered into the robot's joint order.
fn reorder(values: &[f64], order: &[usize], names: usize, what: &str) -> Result<Vec<f64>> {
    if values.len() != names {
        bail!("{} {what} for {names} joint names", values.len());
    }
    Ok(order.iter().map(|&i| values[i]).collect())
}

/// A point of the file in the robot's joint order.
fn point(p: PointFile, order: &[usize], names: usize) -> Result<TrajectoryPoint> {
    let optional = |values: Option<Vec<f64>>, what| {
        values.map(|v| reorder(&v, order, names, what)).transpose()
    };
    Ok(TrajectoryPoint {
        time: p.time_from_start.seconds(),
        positions: reorder(&p.positions, order, names, "positions")?,
        velocities: optional(p.velocities, "velocities")?,
        accelerations: optional(p.accelerations, "accelerations")?,
    })
}

/// For each of the robot's joints, its index in `names` (listed once; others are ignored).
fn joint_order(names: &[String], robot: &Robot) -> Result<Vec<usize>> {
    if let Some(twice) = names
        .iter()
        .enumerate()
        .find(|(k, n)| names[..*k].contains(n))
    {
        bail!(
            "joint '{}' is listed twice in joint_names",
            armctl_control::shown(twice.1)
        );
    }
    robot
        .joint_names()
        .map(|j| {
            names
                .iter()
                .position(|n| n == j)
                .with_context(|| format!("joint '{j}' is missing from joint_names"))
        })
        .collect()
}

/// The waypoints of a file in the JointTrajectory shape, from `q0` at t = 0 when the first
/// point comes later.
fn waypoints(file: TrajectoryFile, robot: &Robot, q0: &[f64]) -> Result<Vec<TrajectoryPoint>> {
    let names: Vec<String> = file
        .joint_names
        .unwrap_or_else(|| robot.joint_names().map(str::to_string).collect());
    let order = joint_order(&names, robot)?;
    let mut points: Vec<TrajectoryPoint> = Vec::with_capacity(file.points.len() + 1);
    for (k, p) in file.points.into_iter().enumerate() {
        points.push(point(p, &order, names.len()).with_context(|| format!("point {k}"))?);
    }
    if points.first().is_some_and(|p| p.time > 0.0) {
        let start = TrajectoryPoint {
            time: 0.0,
            positions: q0.to_vec(),
            velocities: None,
            accelerations: None,
        };
        points.insert(0, start);
    }
    Ok(points)
}

fn load_file(path: &Path, robot: &Robot, q0: &[f64]) -> Result<Box<dyn Trajectory>> {
    let text =
        crate::input_file::read_text(path, "trajectory", armctl_model::files::MAX_CONFIG_BYTES)?;
    // A YAML error is reported as such, before the keys say which kind of file this is (a
    // broken excitation would otherwise be "unknown field `fourier`").
    let yaml: serde_yaml::Value = serde_yaml::from_str(&text).map_err(|e| yaml_error(path, &e))?;
    if yaml.get("fourier").is_some() {
        let names: Vec<String> = robot.joint_names().map(str::to_string).collect();
        let (fourier, _) = armctl_ident::fourier_from_yaml(&text, &names)
            .with_context(|| format!("excitation {}", path.display()))?;
        return Ok(Box::new(fourier));
    }
    let file: TrajectoryFile = serde_yaml::from_str(&text).map_err(|e| yaml_error(path, &e))?;
    let points = waypoints(file, robot, q0).with_context(|| path.display().to_string())?;
    Ok(Box::new(
        MultiPoint::new(robot.dof(), &points).with_context(|| path.display().to_string())?,
    ))
}
