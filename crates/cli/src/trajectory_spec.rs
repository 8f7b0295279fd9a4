//! `--trajectory SPEC`: the references `armctl sim` can follow.
//!
//! - `hold`: stay at the start configuration;
//! - `setpoint:Q`: jump to Q (comma-separated, one value per joint);
//! - `quintic:Q:T`: quintic point-to-point from the start to Q in T seconds;
//! - `sine:AMP:FREQ`: a sinusoid per joint about the start, AMP rad and FREQ Hz (one value for
//!   all joints or one per joint); it starts at speed, which a node refuses from rest where
//!   that needs more than the joints' acceleration limits;
//! - `wave`: every joint out and back about the start, from rest to rest, within half of each
//!   joint's velocity and reference acceleration limits ([`wave_within_limits`]): what any arm
//!   can follow;
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
        ("wave", []) => Box::new(wave_within_limits(robot, q0)?),
        ("file", [path]) => load_file(Path::new(path), robot, q0)?,
        _ if spec.ends_with(".yaml") || spec.ends_with(".yml") => load_file(Path::new(spec), robot, q0)?,
        _ => bail!(
            "unknown trajectory '{spec}': use hold, setpoint:Q, quintic:Q:T, sine:AMP:FREQ, wave or file:PATH.yaml (Q comma-separated, one value per joint)"
        ),
    };
    Ok(trajectory)
}

/// The share of each joint's velocity and reference acceleration limit a `wave` uses.
const WAVE_SHARE: f64 = 0.5;

/// Each joint out by `d`, back through the start to `-d` and home, at rest at every knot:
/// `d` is 0.3 rad (m), at most a fifth of the joint's range and half its room to the nearer
/// limit; each leg lasts what keeps every joint within [`WAVE_SHARE`] of its velocity limit
/// and of its reference acceleration limit (the node's default: what half of each effort
/// limit gives), and at least 1 s. A rest-to-rest quintic over `s` in `T` peaks at
/// `1.875 s / T` and `5.774 s / T^2`.
pub(crate) fn wave_within_limits(robot: &Robot, q0: &[f64]) -> Result<MultiPoint> {
    let accelerations = armctl_control::default_gains::acceleration_limits(robot)?;
    let out: Vec<f64> = robot
        .joints()
        .iter()
        .zip(q0)
        .map(|(joint, &q)| {
            let l = &joint.limits;
            if !l.is_bounded() {
                return 0.3;
            }
            let room = (q - l.lower).min(l.upper - q).max(0.0);
            (0.3f64).min(0.2 * (l.upper - l.lower)).min(0.5 * room)
        })
        .collect();
    let leg_time = |span: f64| -> f64 {
        robot
            .joints()
            .iter()
            .zip(&out)
            .zip(&accelerations)
            .map(|((joint, d), a)| {
                let s = span * d;
                let by_speed = 1.875 * s / (WAVE_SHARE * joint.limits.velocity);
                let by_acceleration = (5.774 * s / (WAVE_SHARE * a)).sqrt();
                by_speed.max(by_acceleration)
            })
            .fold(1.0, f64::max)
    };
    let knots = [(0.0, 0.0), (1.0, 1.0), (-1.0, 2.0), (0.0, 1.0)];
    let mut time = 0.0;
    let mut points = Vec::with_capacity(knots.len());
    for (side, span) in knots {
        time += if points.is_empty() {
            0.0
        } else {
            leg_time(span)
        };
        points.push(TrajectoryPoint {
            time,
            positions: q0.iter().zip(&out).map(|(q, d)| q + side * d).collect(),
            velocities: Some(vec![0.0; q0.len()]),
            accelerations: Some(vec![0.0; q0.len()]),
        });
    }
    Ok(MultiPoint::new(robot.dof(), &points)?)
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

/// Seconds, or builtin_interfaces/Duration as a message file has it; anything else is kept
/// to be refused with what was written.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum TimeFromStart {
    Seconds(f64),
    Duration { sec: i32, nanosec: u32 },
    Other(serde_yaml::Value),
}

impl TimeFromStart {
    fn seconds(&self) -> Result<f64> {
        match self {
            Self::Seconds(s) => Ok(*s),
            Self::Duration { sec, nanosec } => Ok(f64::from(*sec) + 1e-9 * f64::from(*nanosec)),
            Self::Other(value) => {
                let written = serde_yaml::to_string(value).unwrap_or_default();
                bail!(
                    "time_from_start '{}' is not a time: write seconds as a number (1.5, with a point) or {{sec: 1, nanosec: 500000000}}",
                    armctl_control::shown(written.trim())
                )
            }
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
        time: p.time_from_start.seconds()?,
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
    let strangers: Vec<String> = names
        .iter()
        .filter(|n| robot.joint_names().all(|j| j != n.as_str()))
        .map(|n| format!("'{}'", armctl_control::shown(n)))
        .collect();
    robot
        .joint_names()
        .map(|j| {
            names.iter().position(|n| n == j).with_context(|| {
                let instead = if strangers.is_empty() {
                    String::new()
                } else {
                    format!(
                        " (it names {}, not joints of the robot: a misspelling?)",
                        strangers.join(", ")
                    )
                };
                format!("joint '{j}' is missing from joint_names{instead}")
            })
        })
        .collect()
}

/// Each point's positions within the robot's joint ranges (a typo such as -23 for -2.3 is
/// named as such, not as the acceleration it would need).
fn check_ranges(points: &[TrajectoryPoint], robot: &Robot) -> Result<()> {
    for (k, p) in points.iter().enumerate() {
        for (joint, &q) in robot.joints().iter().zip(&p.positions) {
            let l = &joint.limits;
            if l.is_bounded() && !(l.lower..=l.upper).contains(&q) {
                bail!(
                    "point {k}: {} at {q} is outside its range [{}, {}]",
                    joint.name,
                    l.lower,
                    l.upper
                );
            }
        }
    }
    Ok(())
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
    check_ranges(&points, robot)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use armctl_control::JointReference;
    use armctl_model::ChainOptions;

    /// Sampled every millisecond, the wave of each bundled robot stays within half of every
    /// joint's velocity and reference acceleration limit, inside its range, and ends at rest
    /// where it started.
    #[test]
    fn the_wave_is_within_half_of_every_limit_on_every_bundled_robot() {
        for name in ["panda", "ur5e", "puma560", "planar_2link"] {
            let path = format!("{}/../../urdf/{name}.urdf", env!("CARGO_MANIFEST_DIR"));
            let robot = Robot::from_urdf_file(path, &ChainOptions::default()).unwrap();
            let q0 = robot.middle_configuration();
            let wave = wave_within_limits(&robot, &q0).unwrap();
            let limits = armctl_control::default_gains::acceleration_limits(&robot).unwrap();
            let mut r = JointReference::hold(&q0);
            let end = wave.duration();
            for k in 0..=(end * 1000.0) as usize {
                wave.sample(k as f64 * 1e-3, &mut r);
                for (i, joint) in robot.joints().iter().enumerate() {
                    let l = &joint.limits;
                    assert!(r.qd[i].abs() <= 0.5 * l.velocity + 1e-9, "{name} joint {i}");
                    assert!(r.qdd[i].abs() <= 0.5 * limits[i] + 1e-6, "{name} joint {i}");
                    assert!(r.q[i] > l.lower && r.q[i] < l.upper, "{name} joint {i}");
                }
            }
            wave.sample(end, &mut r);
            for ((q, start), qd) in r.q.iter().zip(&q0).zip(&r.qd) {
                assert!((q - start).abs() < 1e-12 && qd.abs() < 1e-12, "{name}");
            }
        }
    }
}
