//! A scene for the simulator (`armctl sim --scene FILE.yaml`, or `scene:` in the simulator
//! settings): obstacles, the arm's contact points, a force/torque sensor. Positions are in the
//! base link frame; points and the sensor sit on URDF links (`tip` for the chain's tip link),
//! in that link's frame.
//!
//! ```yaml
//! obstacles:
//!   - name: table
//!     plane: {point: [0.0, 0.0, 0.2], normal: [0.0, 0.0, 1.0]}
//!     stiffness: 20000.0       # N/m
//!     damping: 5.0             # Hunt-Crossley, s/m (0: elastic)
//!     friction: 0.5            # Coulomb coefficient
//!   - name: block
//!     box: {center: [0.5, 0.0, 0.25], rpy: [0.0, 0.0, 0.3], size: [0.1, 0.1, 0.1]}
//!     stiffness: 50000.0
//! points:
//!   - {link: tip, position: [0.0, 0.0, 0.0]}
//!   - {link: panda_link7, position: [0.0, 0.0, 0.1], name: wrist}
//! slip_velocity: 0.001         # m/s over which friction reaches mu f_n
//! sensor: {link: tip}          # also: position, rpy, noise (N), bias [f; m]
//! ```

use std::path::Path;

use anyhow::{bail, Context, Result};
use armctl_model::{ConversionReport, FrameId, Robot};
use armctl_sim::{ContactPoint, ForceSensor, Obstacle, Scene, Shape, DEFAULT_SLIP_VELOCITY};
use nalgebra::{IsometryMatrix3, Rotation3, Translation3, Unit, Vector3};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlaneFile {
    point: [f64; 3],
    normal: [f64; 3],
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BoxFile {
    center: [f64; 3],
    #[serde(default)]
    rpy: [f64; 3],
    size: [f64; 3],
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ObstacleFile {
    name: String,
    plane: Option<PlaneFile>,
    #[serde(rename = "box")]
    cuboid: Option<BoxFile>,
    stiffness: f64,
    #[serde(default)]
    damping: f64,
    #[serde(default)]
    friction: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PointFile {
    link: String,
    #[serde(default)]
    position: [f64; 3],
    name: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SensorFile {
    link: String,
    #[serde(default)]
    position: [f64; 3],
    #[serde(default)]
    rpy: [f64; 3],
    #[serde(default)]
    noise: f64,
    #[serde(default)]
    bias: [f64; 6],
}

/// The scene as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SceneFile {
    #[serde(default)]
    obstacles: Vec<ObstacleFile>,
    #[serde(default)]
    points: Vec<PointFile>,
    slip_velocity: Option<f64>,
    sensor: Option<SensorFile>,
}

/// A pose from a position and roll-pitch-yaw (URDF's convention).
fn pose(position: [f64; 3], rpy: [f64; 3]) -> IsometryMatrix3<f64> {
    IsometryMatrix3::from_parts(
        Translation3::from(Vector3::from(position)),
        Rotation3::from_euler_angles(rpy[0], rpy[1], rpy[2]),
    )
}

/// Where a point on URDF link `link` (its frame) sits on the model: the frame and the pose of
/// the link frame in it. `tip` is the chain's tip link.
fn on_link(
    link: &str,
    robot: &Robot,
    report: &ConversionReport,
) -> Result<(FrameId, IsometryMatrix3<f64>)> {
    if link == "tip" || link == robot.tip_link() {
        return Ok((FrameId::Tip, IsometryMatrix3::identity()));
    }
    match report.link_frame(link) {
        Some(frame) => Ok((FrameId::Mdh(frame.frame), frame.pose)),
        None => {
            let known: Vec<&str> = report.link_frames.iter().map(|f| f.link.as_str()).collect();
            bail!(
                "link '{link}' is not on the chain (its links: tip, {})",
                known.join(", ")
            )
        }
    }
}

fn obstacle(o: ObstacleFile) -> Result<Obstacle> {
    let shape = match (o.plane, o.cuboid) {
        (Some(p), None) => {
            let normal = Vector3::from(p.normal);
            if !(normal.norm() > 1e-9 && normal.iter().all(|v| v.is_finite())) {
                bail!(
                    "obstacle '{}': the plane's normal must be a finite, non-zero vector",
                    o.name
                );
            }
            Shape::Plane {
                point: Vector3::from(p.point),
                normal: Unit::new_normalize(normal),
            }
        }
        (None, Some(b)) => Shape::Box {
            pose: pose(b.center, b.rpy),
            half_extents: Vector3::from(b.size) / 2.0,
        },
        _ => bail!("obstacle '{}': give exactly one of plane or box", o.name),
    };
    Ok(Obstacle {
        name: o.name,
        shape,
        stiffness: o.stiffness,
        damping: o.damping,
        friction: o.friction,
    })
}

impl SceneFile {
    /// The scene on `robot`, its points and sensor placed through the conversion's link frames.
    pub(crate) fn resolve(self, robot: &Robot, report: &ConversionReport) -> Result<Scene> {
        let obstacles = self
            .obstacles
            .into_iter()
            .map(obstacle)
            .collect::<Result<_>>()?;
        let mut points = Vec::with_capacity(self.points.len());
        for p in self.points {
            let (frame, link_pose) =
                on_link(&p.link, robot, report).with_context(|| "a contact point".to_string())?;
            points.push(ContactPoint {
                name: p.name.unwrap_or_else(|| p.link.clone()),
                frame,
                position: (link_pose * nalgebra::Point3::from(Vector3::from(p.position))).coords,
            });
        }
        let sensor = match self.sensor {
            Some(s) => {
                let (frame, link_pose) =
                    on_link(&s.link, robot, report).with_context(|| "the sensor".to_string())?;
                Some(ForceSensor {
                    name: s.link,
                    frame,
                    pose: link_pose * pose(s.position, s.rpy),
                    noise: s.noise,
                    bias: s.bias,
                })
            }
            None => None,
        };
        let scene = Scene {
            obstacles,
            points,
            slip_velocity: self.slip_velocity.unwrap_or(DEFAULT_SLIP_VELOCITY),
            sensor,
        };
        if let Err((item, reason)) = scene.validate() {
            bail!("{item}: {reason}");
        }
        Ok(scene)
    }
}

/// Reads a scene file.
pub(crate) fn load(path: &Path) -> Result<SceneFile> {
    let text = crate::input_file::read_text(path, "scene", armctl_model::files::MAX_CONFIG_BYTES)?;
    if text.trim().is_empty() {
        return Ok(SceneFile::default());
    }
    serde_yaml::from_str(&text).with_context(|| format!("parsing scene {}", path.display()))
}
