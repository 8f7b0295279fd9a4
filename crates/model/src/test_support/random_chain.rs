//! Random serial chains written as URDF text, with their own plain URDF forward kinematics
//! (joint origins times joint motions), independent of armctl's conversion.
//!
//! Everything is deterministic in the seed, so a failing case reproduces.

// A test helper: misuse (too few positions) is a bug in the test, reported by a panic.
#![allow(clippy::expect_used)]

use nalgebra::{IsometryMatrix3, Matrix3, Rotation3, Translation3, Unit, Vector3};

/// A small deterministic generator (xorshift64*), so a failing seed reproduces.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (any value).
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
    /// Uniform integer in [0, n).
    pub fn index(&mut self, n: usize) -> usize {
        ((self.unit() * n as f64) as usize).min(n - 1)
    }
    /// A random unit vector.
    pub fn direction(&mut self) -> Vector3<f64> {
        loop {
            let v = Vector3::new(
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
            );
            if v.norm() > 0.2 && v.norm() < 1.0 {
                return v.normalize();
            }
        }
    }
    /// A random rotation.
    pub fn rotation(&mut self) -> Rotation3<f64> {
        Rotation3::from_euler_angles(
            self.range(-3.1, 3.1),
            self.range(-1.5, 1.5),
            self.range(-3.1, 3.1),
        )
    }
    /// A random vector with entries in [-s, s).
    pub fn vector(&mut self, s: f64) -> Vector3<f64> {
        Vector3::new(self.range(-s, s), self.range(-s, s), self.range(-s, s))
    }
}

/// How a generated axis relates to the previous one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// Any direction and place.
    Skew,
    /// Same direction, shifted sideways.
    Parallel,
    /// Opposite direction, shifted sideways.
    AntiParallel,
    /// Meets the previous axis.
    Intersecting,
    /// On the previous axis' line, either direction.
    Collinear,
}

const RELATIONS: [Relation; 5] = [
    Relation::Skew,
    Relation::Parallel,
    Relation::AntiParallel,
    Relation::Intersecting,
    Relation::Collinear,
];

/// One URDF joint of the generated description.
#[derive(Debug, Clone)]
pub struct UrdfJointSpec {
    /// "revolute", "continuous", "prismatic" or "fixed".
    pub kind: &'static str,
    /// Origin in the parent link frame.
    pub origin: IsometryMatrix3<f64>,
    /// Axis in the joint frame (not necessarily unit length).
    pub axis: Vector3<f64>,
}

/// A generated chain: its URDF text and what is needed for plain URDF FK.
#[derive(Debug, Clone)]
pub struct RandomChain {
    /// URDF text.
    pub urdf: String,
    /// All joints base to tip (fixed ones included).
    pub joints: Vec<UrdfJointSpec>,
    /// Relation of each moving axis to the previous moving axis (first: Skew).
    pub relations: Vec<Relation>,
    /// Position limits per moving joint.
    pub limits: Vec<(f64, f64)>,
}

impl RandomChain {
    /// A chain of `dof` moving joints with random fixed joints between them.
    pub fn generate(seed: u64, dof: usize) -> Self {
        let mut rng = Rng::new(seed);
        let mut joints = Vec::new();
        let mut relations = Vec::new();
        let mut limits = Vec::new();
        // World pose of the current (parent) link frame; previous axis line in the world.
        let mut parent = IsometryMatrix3::identity();
        let mut previous: Option<(Vector3<f64>, Vector3<f64>)> = None;
        for i in 0..dof {
            for _ in 0..rng.index(3).saturating_sub(1) {
                let origin = random_pose(&mut rng);
                joints.push(UrdfJointSpec {
                    kind: "fixed",
                    origin,
                    axis: Vector3::x(),
                });
                parent *= origin;
            }
            let relation = if i == 0 {
                Relation::Skew
            } else {
                RELATIONS[rng.index(RELATIONS.len())]
            };
            let (point, direction) = next_axis(&mut rng, previous, relation);
            // A random joint frame whose origin lies on the wanted line.
            let rotation = rng.rotation();
            let origin_world = point + direction * rng.range(-0.3, 0.3);
            let world = IsometryMatrix3::from_parts(Translation3::from(origin_world), rotation);
            let origin = parent.inverse() * world;
            let axis = rotation.inverse() * direction * rng.range(0.3, 3.0);
            let kind = match rng.index(10) {
                0..=5 => "revolute",
                6 => "continuous",
                _ => "prismatic",
            };
            limits.push(if kind == "prismatic" {
                (-0.5, 0.5)
            } else {
                (-3.0, 3.0)
            });
            joints.push(UrdfJointSpec { kind, origin, axis });
            relations.push(relation);
            parent = world;
            previous = Some((point, direction));
        }
        for _ in 0..rng.index(3) {
            let origin = random_pose(&mut rng);
            joints.push(UrdfJointSpec {
                kind: "fixed",
                origin,
                axis: Vector3::x(),
            });
        }
        let urdf = write_urdf(&mut rng, &joints, &limits);
        RandomChain {
            urdf,
            joints,
            relations,
            limits,
        }
    }

    /// Tip pose by plain URDF kinematics at the moving-joint positions `q`.
    pub fn tip_pose(&self, q: &[f64]) -> IsometryMatrix3<f64> {
        let mut pose = IsometryMatrix3::identity();
        let mut moving = q.iter();
        for joint in &self.joints {
            pose *= joint.origin;
            if joint.kind == "fixed" {
                continue;
            }
            let qi = *moving.next().expect("one position per moving joint");
            let axis = Unit::new_normalize(joint.axis);
            pose *= if joint.kind == "prismatic" {
                IsometryMatrix3::from_parts(
                    Translation3::from(axis.into_inner() * qi),
                    Rotation3::identity(),
                )
            } else {
                IsometryMatrix3::from_parts(
                    Translation3::identity(),
                    Rotation3::from_axis_angle(&axis, qi),
                )
            };
        }
        pose
    }
}

fn random_pose(rng: &mut Rng) -> IsometryMatrix3<f64> {
    IsometryMatrix3::from_parts(Translation3::from(rng.vector(0.3)), rng.rotation())
}

/// A point and unit direction for the next axis, in the world.
fn next_axis(
    rng: &mut Rng,
    previous: Option<(Vector3<f64>, Vector3<f64>)>,
    relation: Relation,
) -> (Vector3<f64>, Vector3<f64>) {
    let Some((p, u)) = previous else {
        return (rng.vector(0.3), rng.direction());
    };
    let sideways = {
        let v = rng.vector(1.0);
        (v - u * u.dot(&v)).normalize() * rng.range(0.05, 0.4)
    };
    match relation {
        Relation::Skew => (p + rng.vector(0.4), rng.direction()),
        Relation::Parallel => (p + sideways, u),
        Relation::AntiParallel => (p + sideways, -u),
        Relation::Intersecting => (p + u * rng.range(-0.3, 0.3), rng.direction()),
        Relation::Collinear => (
            p + u * rng.range(-0.3, 0.3),
            if rng.unit() < 0.5 { u } else { -u },
        ),
    }
}

fn fmt3(v: &Vector3<f64>) -> String {
    format!("{} {} {}", v.x, v.y, v.z)
}

fn write_urdf(rng: &mut Rng, joints: &[UrdfJointSpec], limits: &[(f64, f64)]) -> String {
    let mut text = String::from("<robot name=\"random\">\n  <link name=\"l0\"/>\n");
    let mut moving = 0;
    for (i, joint) in joints.iter().enumerate() {
        let (roll, pitch, yaw) = joint.origin.rotation.euler_angles();
        let mass = rng.range(0.1, 5.0);
        let principal = Vector3::new(
            rng.range(0.01, 0.1),
            rng.range(0.01, 0.1),
            rng.range(0.01, 0.1),
        );
        let r = rng.rotation();
        let inertia: Matrix3<f64> =
            r.matrix() * Matrix3::from_diagonal(&principal) * r.matrix().transpose();
        let com = rng.vector(0.2);
        text += &format!(
            "  <link name=\"l{}\"><inertial><origin xyz=\"{}\" rpy=\"0 0 0\"/><mass value=\"{mass}\"/>\
             <inertia ixx=\"{}\" ixy=\"{}\" ixz=\"{}\" iyy=\"{}\" iyz=\"{}\" izz=\"{}\"/></inertial></link>\n",
            i + 1,
            fmt3(&com),
            inertia[(0, 0)], inertia[(0, 1)], inertia[(0, 2)], inertia[(1, 1)], inertia[(1, 2)], inertia[(2, 2)],
        );
        let limit = if joint.kind == "fixed" {
            String::new()
        } else {
            let (lo, hi) = limits[moving];
            moving += 1;
            format!("<limit lower=\"{lo}\" upper=\"{hi}\" effort=\"100\" velocity=\"2\"/>")
        };
        text += &format!(
            "  <joint name=\"j{}\" type=\"{}\"><parent link=\"l{}\"/><child link=\"l{}\"/>\
             <origin xyz=\"{}\" rpy=\"{roll} {pitch} {yaw}\"/><axis xyz=\"{}\"/>{limit}</joint>\n",
            i + 1,
            joint.kind,
            i,
            i + 1,
            fmt3(&joint.origin.translation.vector),
            fmt3(&joint.axis),
        );
    }
    text + "</robot>\n"
}
