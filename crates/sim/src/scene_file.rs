//! A scene for the simulator (`armctl sim --scene FILE.yaml`, `scene:` in its settings file,
//! sim_node's `scene_file`): obstacles, the arm's contact points, a force/torque sensor. Positions are in the
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

use crate::{
    ContactPoint, CooperativeSimulator, ForceSensor, HeldObject, Obstacle, PlacedArm, Scene, Shape,
    SimConfig, Simulator, DEFAULT_SLIP_VELOCITY,
};
use armctl_model::{forward_kinematics, ConversionReport, FrameId, KinematicsWorkspace, Robot};
use nalgebra::{IsometryMatrix3, Rotation3, Translation3, Unit, Vector3};
use serde::Deserialize;

/// Why a scene file is refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SceneFileError {
    /// The file cannot be read, or is not YAML of a scene (a misspelled key, a wrong type).
    #[error("scene file '{path}': {reason}")]
    File {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The scene is invalid (an obstacle, a contact point, the sensor, the pair).
    #[error("scene: {reason}")]
    Scene {
        /// What is wrong, naming the item.
        reason: String,
    },
}

type Result<T> = std::result::Result<T, SceneFileError>;

fn invalid(reason: String) -> SceneFileError {
    SceneFileError::Scene { reason }
}

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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlacementFile {
    #[serde(default)]
    xyz: [f64; 3],
    #[serde(default)]
    rpy: [f64; 3],
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PairArmFile {
    name: String,
    base: PlacementFile,
    q0: Vec<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeldBoxFile {
    mass: f64,
    size: [f64; 3],
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GraspFile {
    linear: f64,
    angular: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PairFile {
    arms: [PairArmFile; 2],
    object: HeldBoxFile,
    grasp: Option<GraspFile>,
}

/// Two copies of the arm holding a box between their tools (`pair:` in a scene file).
#[derive(Debug, Clone, PartialEq)]
pub struct PairSetup {
    /// Each arm's name (its columns' prefix), base pose in the world and start configuration.
    pub arms: [(String, IsometryMatrix3<f64>, Vec<f64>); 2],
    /// The box's mass, kg.
    pub mass: f64,
    /// The box's inertia about its centre, its axes, kg m^2.
    pub inertia: nalgebra::Matrix3<f64>,
    /// The couplings' stiffness (N/m, N m/rad).
    pub grasp: crate::GraspStiffness,
}

/// Refuses a base that turns the arm's gravity: each arm is simulated (and controlled) with the
/// URDF's gravity in its own base frame, which is the world's only when the base turns about
/// the gravity axis.
fn upright(name: &str, base: &IsometryMatrix3<f64>, robot: &Robot) -> Result<()> {
    let g = robot.gravity();
    if (base.rotation * g - g).norm() > 1e-9 * g.norm() {
        return Err(invalid(format!(
            "pair arm '{name}': its base turns about another axis than gravity's; only bases turned about the vertical are simulated (each arm keeps the URDF's gravity in its base frame)"
        )));
    }
    Ok(())
}

impl PairSetup {
    /// The two arms (each `robot` at its base and start configuration, simulated with
    /// `config`) holding the box, whose centre starts midway between their tools.
    pub fn simulator(&self, robot: &Robot, config: &SimConfig) -> Result<CooperativeSimulator> {
        let sim_error = |e: crate::SimError| invalid(format!("pair: {e}"));
        let mut tips = [Vector3::zeros(); 2];
        for ((_, base, q0), tip) in self.arms.iter().zip(&mut tips) {
            let mut ws = KinematicsWorkspace::new(robot);
            let poses = forward_kinematics(robot, &mut ws, q0)
                .map_err(|e| invalid(format!("pair: {e}")))?;
            *tip = (base * poses.tip()).translation.vector;
        }
        if (tips[0] - tips[1]).norm() < 1e-3 {
            return Err(invalid(format!(
                "pair: the tools of '{}' and '{}' start at one point ({:.1} mm apart): the box between them has no size (change a base or q0)",
                self.arms[0].0,
                self.arms[1].0,
                (tips[0] - tips[1]).norm() * 1e3
            )));
        }
        let object = HeldObject {
            mass: self.mass,
            inertia: self.inertia,
            pose: IsometryMatrix3::from_parts(
                Translation3::from((tips[0] + tips[1]) / 2.0),
                Rotation3::identity(),
            ),
        };
        let arm = |a: usize| -> Result<PlacedArm> {
            // Each arm's sensors with noise of their own.
            let mut config = config.clone();
            if let Some(noise) = &mut config.noise {
                noise.seed = noise.seed.wrapping_add(a as u64);
            }
            Ok(PlacedArm {
                sim: Simulator::new(robot, &self.arms[a].2, config).map_err(sim_error)?,
                base: self.arms[a].1,
            })
        };
        CooperativeSimulator::new([arm(0)?, arm(1)?], object, self.grasp).map_err(sim_error)
    }
}

/// The scene as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneFile {
    #[serde(default)]
    obstacles: Vec<ObstacleFile>,
    pair: Option<PairFile>,
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
            Err(invalid(format!(
                "link '{link}' is not on the chain (its links: tip, {})",
                known.join(", ")
            )))
        }
    }
}

fn obstacle(o: ObstacleFile) -> Result<Obstacle> {
    let shape = match (o.plane, o.cuboid) {
        (Some(p), None) => {
            let normal = Vector3::from(p.normal);
            if !(normal.norm() > 1e-9 && normal.iter().all(|v| v.is_finite())) {
                return Err(invalid(format!(
                    "obstacle '{}': the plane's normal must be a finite, non-zero vector",
                    o.name
                )));
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
        _ => {
            return Err(invalid(format!(
                "obstacle '{}': give exactly one of plane or box",
                o.name
            )))
        }
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
    /// The pair of arms and the box they hold, when the scene has one (checked: names, finite
    /// values, a positive mass and size, one start value per joint of `robot`).
    pub fn pair(&self, robot: &Robot) -> Result<Option<PairSetup>> {
        let Some(pair) = &self.pair else {
            return Ok(None);
        };
        let n = robot.dof();
        let arm = |a: &PairArmFile| -> Result<(String, IsometryMatrix3<f64>, Vec<f64>)> {
            let finite = a
                .base
                .xyz
                .iter()
                .chain(&a.base.rpy)
                .chain(&a.q0)
                .all(|v| v.is_finite());
            if a.q0.len() != n || !finite || a.name.is_empty() {
                return Err(invalid(format!(
                    "pair arm '{}': needs a name, a finite base and {n} finite start values (q0)",
                    a.name
                )));
            }
            let outside = robot.joints().iter().zip(&a.q0).find(|(j, q)| {
                j.limits.is_bounded() && !(j.limits.lower..=j.limits.upper).contains(*q)
            });
            if let Some((joint, q)) = outside {
                return Err(invalid(format!(
                    "pair arm '{}': q0 of {} = {q} is outside its limits [{}, {}]",
                    a.name, joint.name, joint.limits.lower, joint.limits.upper
                )));
            }
            Ok((a.name.clone(), pose(a.base.xyz, a.base.rpy), a.q0.clone()))
        };
        let arms = [arm(&pair.arms[0])?, arm(&pair.arms[1])?];
        for (name, base, _) in &arms {
            upright(name, base, robot)?;
        }
        if arms[0].0 == arms[1].0 {
            return Err(invalid("pair: the two arms need different names".into()));
        }
        let (m, [a, b, c]) = (pair.object.mass, pair.object.size);
        let ok = [m, a, b, c].iter().all(|v| v.is_finite() && *v > 0.0);
        if !ok {
            return Err(invalid(
                "pair object: mass and size must be positive and finite".into(),
            ));
        }
        let grasp = pair
            .grasp
            .as_ref()
            .map_or(crate::GraspStiffness::default(), |g| {
                crate::GraspStiffness {
                    linear: g.linear,
                    angular: g.angular,
                }
            });
        if !self.obstacles.is_empty() || !self.points.is_empty() || self.sensor.is_some() {
            return Err(invalid(
                "pair: obstacles, contact points and a sensor are not simulated with a pair yet"
                    .into(),
            ));
        }
        Ok(Some(PairSetup {
            arms,
            mass: m,
            inertia: nalgebra::Matrix3::from_diagonal(&Vector3::new(
                b * b + c * c,
                a * a + c * c,
                a * a + b * b,
            )) * (m / 12.0),
            grasp,
        }))
    }

    /// The scene on `robot`, its points and sensor placed through the conversion's link frames.
    pub fn resolve(self, robot: &Robot, report: &ConversionReport) -> Result<Scene> {
        let obstacles = self
            .obstacles
            .into_iter()
            .map(obstacle)
            .collect::<Result<_>>()?;
        let mut points = Vec::with_capacity(self.points.len());
        for p in self.points {
            let (frame, link_pose) = on_link(&p.link, robot, report)?;
            points.push(ContactPoint {
                name: p.name.unwrap_or_else(|| p.link.clone()),
                frame,
                position: (link_pose * nalgebra::Point3::from(Vector3::from(p.position))).coords,
            });
        }
        let sensor = match self.sensor {
            Some(s) => {
                let (frame, link_pose) = on_link(&s.link, robot, report)?;
                Some(ForceSensor {
                    // A frame a message can name: the tip link's own name for `tip`.
                    name: if s.link == "tip" {
                        robot.tip_link().to_string()
                    } else {
                        s.link
                    },
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
            return Err(invalid(format!("{item}: {reason}")));
        }
        Ok(scene)
    }
}

/// Reads a scene file (bounded in size like every configuration file).
pub fn load(path: &Path) -> Result<SceneFile> {
    let file = |reason: String| SceneFileError::File {
        path: path.display().to_string(),
        reason,
    };
    let text = armctl_model::files::read_text_bounded(path, armctl_model::files::MAX_CONFIG_BYTES)
        .map_err(file)?;
    if text.trim().is_empty() {
        return Ok(SceneFile::default());
    }
    serde_yaml::from_str(&text)
        .map_err(|e| file(armctl_model::files::short_message(&e.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panda() -> armctl_model::Conversion {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/panda.urdf");
        armctl_model::urdf_file_to_robot(Path::new(path), &Default::default()).unwrap()
    }

    fn resolved(text: &str) -> Result<Scene> {
        let c = panda();
        let file: SceneFile = serde_yaml::from_str(text)
            .map_err(|e| invalid(armctl_model::files::short_message(&e.to_string())))?;
        file.resolve(&c.robot, &c.report)
    }

    /// A typo in a scene file is reported as the scene file's, not a parameter file's: the
    /// message names the file as a scene and the misspelled key.
    #[test]
    fn a_misspelled_key_names_the_scene_file() {
        let dir = std::env::temp_dir().join(format!("armctl-scene-typo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("table.yaml");
        std::fs::write(
            &path,
            "obstacles:\n  - name: table\n    box: {center: [0.6, 0, 0.3], size: [0.8, 1.2, 0.6]}\n    stifness: 50000.0\n",
        )
        .unwrap();
        let e = load(&path).unwrap_err();
        let _ = std::fs::remove_dir_all(&dir);
        let shown = e.to_string();
        assert!(
            shown.starts_with(&format!("scene file '{}': ", path.display())),
            "{shown}"
        );
        assert!(shown.contains("unknown field `stifness`"), "{shown}");
        assert!(!shown.contains("parameter file"), "{shown}");
        let missing = load(&dir.join("missing.yaml")).unwrap_err().to_string();
        assert!(missing.starts_with("scene file '"), "{missing}");
    }

    #[test]
    fn bad_scenes_are_refused_naming_the_item() {
        let plane = "plane: {point: [0, 0, 0], normal: [0, 0, 1]}";
        for (text, named) in [
            (format!("obstacles: [{{name: a, {plane}, stiffness: 1.0, colour: red}}]"), "colour"),
            (format!("obstacles: [{{name: a, {plane}}}]"), "stiffness"),
            (format!("obstacles: [{{name: a, {plane}, stiffness: .nan}}]"), "obstacle 'a'"),
            (format!("obstacles: [{{name: a, {plane}, stiffness: -1.0}}]"), "obstacle 'a'"),
            ("obstacles: [{name: b, box: {center: [0, 0, 0], size: [1, -1, 1]}, stiffness: 1.0}]".into(), "obstacle 'b'"),
            ("obstacles: [{name: r, box: {center: [0, 0, 0], rpy: [.nan, 0, 0], size: [1, 1, 1]}, stiffness: 1.0}]".into(), "obstacle 'r'"),
            (format!("obstacles: [{{name: c, {plane}, box: {{center: [0, 0, 0], size: [1, 1, 1]}}, stiffness: 1.0}}]"), "exactly one"),
            ("obstacles: [{name: d, stiffness: 1.0}]".into(), "exactly one"),
            ("points: [{link: nowhere}]".into(), "link 'nowhere'"),
            ("points: [{link: tip, position: [0, .inf, 0]}]".into(), "contact point 'tip'"),
            ("sensor: {link: tip, noise: -1.0}".into(), "sensor 'panda_link8'"),
            ("slip_velocity: 0.0".into(), "slip_velocity"),
        ] {
            let e = resolved(&text).unwrap_err().to_string();
            assert!(e.contains(named), "{text}: {e}");
        }
    }

    fn pair(text: &str) -> Result<Option<PairSetup>> {
        let c = panda();
        let file: SceneFile = serde_yaml::from_str(text)
            .map_err(|e| invalid(armctl_model::files::short_message(&e.to_string())))?;
        file.pair(&c.robot)
    }

    #[test]
    fn bad_pairs_are_refused_naming_what_is_wrong() {
        let arm =
            |name: &str, q: &str| format!("{{name: {name}, base: {{xyz: [0, 0, 0]}}, q0: [{q}]}}");
        let seven = "0, 0, 0, -2, 0, 2, 0";
        let object = "object: {mass: 1.0, size: [0.1, 0.1, 0.1]}";
        for (text, named) in [
            (
                format!(
                    "pair: {{arms: [{}, {}], {object}}}",
                    arm("a", "0, 0"),
                    arm("b", seven)
                ),
                "pair arm 'a'",
            ),
            (
                format!(
                    "pair: {{arms: [{}, {}], {object}}}",
                    arm("a", seven),
                    arm("a", seven)
                ),
                "different names",
            ),
            (
                format!(
                    "pair: {{arms: [{}, {}], object: {{mass: 0.0, size: [1, 1, 1]}}}}",
                    arm("a", seven),
                    arm("b", seven)
                ),
                "mass and size",
            ),
            (
                format!(
                    "pair: {{arms: [{}, {}], {object}}}\npoints: [{{link: tip}}]",
                    arm("a", seven),
                    arm("b", seven)
                ),
                "not simulated with a pair",
            ),
            (
                format!("pair: {{arms: [{}], {object}}}", arm("a", seven)),
                "an array of length 2",
            ),
        ] {
            let e = pair(&text).unwrap_err().to_string();
            assert!(e.contains(named), "{text}: {e}");
        }
        let ok = pair(&format!(
            "pair: {{arms: [{}, {}], {object}}}",
            arm("a", seven),
            arm("b", seven)
        ));
        assert!(ok.unwrap().is_some());
    }

    #[test]
    fn a_pair_whose_tools_start_at_one_point_is_refused() {
        let arm = |name: &str| {
            format!("{{name: {name}, base: {{xyz: [0, 0, 0]}}, q0: [0, 0, 0, -2, 0, 2, 0]}}")
        };
        let setup = pair(&format!(
            "pair: {{arms: [{}, {}], object: {{mass: 1.0, size: [0.1, 0.1, 0.1]}}}}",
            arm("a"),
            arm("b")
        ))
        .unwrap()
        .unwrap();
        let e = setup
            .simulator(&panda().robot, &SimConfig::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("start at one point"), "{e}");
    }

    #[test]
    fn points_and_the_sensor_sit_on_the_links_they_name() {
        let scene = resolved(
            "points: [{link: panda_link7, position: [0, 0, 0.1]}, {link: tip}]\nsensor: {link: tip}",
        )
        .unwrap();
        assert_eq!(scene.points[0].frame, FrameId::Mdh(7));
        assert_eq!(scene.points[1].frame, FrameId::Tip);
        assert_eq!(scene.points[0].name, "panda_link7");
        let sensor = scene.sensor.unwrap();
        assert_eq!(
            (sensor.name.as_str(), sensor.frame),
            ("panda_link8", FrameId::Tip)
        );
        assert_eq!(scene.slip_velocity, DEFAULT_SLIP_VELOCITY);
    }
}
