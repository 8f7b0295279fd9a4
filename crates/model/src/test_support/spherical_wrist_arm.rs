//! Random 6-joint arms with a spherical wrist, built so that their zero configuration is a
//! double singularity: the elbow stretched (joints 2 and 3 parallel, the forearm in line with
//! the upper arm) and the wrist aligned (joints 4 and 6 on one axis). Light distal links, down
//! to about 1e-5 kg m^2 about the wrist axes, where `M^-1` peaks. For the tests that must hold
//! at the configurations random sampling misses.

use std::f64::consts::FRAC_PI_2;
use std::fmt::Write;

use super::random_chain::Rng;

/// One generated arm.
#[derive(Debug, Clone)]
pub struct SphericalWristArm {
    /// URDF text: links `base`, `l1..l6`, `tool`; joints `j1..j6`.
    pub urdf: String,
}

/// A link's inertial: mass, centre of mass along the link's own axis, and a box's moments.
struct Inertial {
    mass: f64,
    com: [f64; 3],
    moments: [f64; 3],
}

impl SphericalWristArm {
    /// The arm of `seed`.
    pub fn generate(seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        for _ in 0..16 {
            rng.unit();
        }
        let (upper, fore) = (rng.range(0.25, 0.45), rng.range(0.2, 0.4));
        let wrist = rng.range(0.04, 0.1);
        let (shoulder_mass, wrist_mass) = (rng.range(2.0, 6.0), rng.range(0.05, 0.4));
        let masses = [
            shoulder_mass,
            0.8 * shoulder_mass,
            0.4 * shoulder_mass,
            wrist_mass,
            wrist_mass,
            0.6 * wrist_mass,
        ];
        // Joint origins (in the parent link) and rolls: j1 vertical; j2, j3 horizontal and
        // parallel; j4 along the forearm (+y of link 3); j5 across it; j6 along the forearm
        // again at q5 = 0.
        let joints: [([f64; 3], f64); 6] = [
            ([0.0, 0.0, rng.range(0.1, 0.3)], 0.0),
            ([0.0, 0.0, rng.range(0.05, 0.15)], -FRAC_PI_2),
            ([0.0, upper, 0.0], 0.0),
            ([0.0, fore, 0.0], -FRAC_PI_2),
            ([0.0, 0.0, wrist], FRAC_PI_2),
            ([0.0, wrist, 0.0], -FRAC_PI_2),
        ];
        let coms = [
            [0.0, 0.0, -0.03],
            [0.0, 0.5 * upper, 0.0],
            [0.0, 0.5 * fore, 0.0],
            [0.0, 0.0, 0.5 * wrist],
            [0.0, 0.5 * wrist, 0.0],
            [0.0, 0.0, 0.03],
        ];
        let mut urdf =
            String::from("<robot name=\"spherical_wrist_arm\">\n  <link name=\"base\"/>\n");
        for i in 0..6 {
            let mass = masses[i];
            // Light links get light moments about every axis (down to about 1e-5 kg m^2).
            let extent = if i < 3 { 0.08 } else { rng.range(0.01, 0.03) };
            let inertial = Inertial {
                mass,
                com: coms[i],
                moments: box_moments(mass, extent, rng.range(0.5, 1.0)),
            };
            write_link(&mut urdf, i + 1, &inertial);
            let (origin, roll) = joints[i];
            let parent = if i == 0 {
                "base".to_string()
            } else {
                format!("l{i}")
            };
            let effort = if i < 3 {
                3.0 * 9.81 * shoulder_mass * (upper + fore)
            } else {
                5.0
            };
            let _ = writeln!(
                urdf,
                "  <joint name=\"j{}\" type=\"revolute\"><parent link=\"{parent}\"/><child link=\"l{}\"/>\
                 <origin xyz=\"{} {} {}\" rpy=\"{roll} 0 0\"/><axis xyz=\"0 0 1\"/>\
                 <limit lower=\"-3.0\" upper=\"3.0\" effort=\"{effort}\" velocity=\"{}\"/></joint>",
                i + 1,
                i + 1,
                origin[0],
                origin[1],
                origin[2],
                if i < 3 { 1.5 } else { 2.5 }
            );
        }
        let _ = writeln!(
            urdf,
            "  <link name=\"tool\"/>\n  <joint name=\"tool_joint\" type=\"fixed\"><parent link=\"l6\"/>\
             <child link=\"tool\"/><origin xyz=\"0 0 0.08\" rpy=\"0 0 0\"/></joint>\n</robot>"
        );
        Self { urdf }
    }
}

/// Principal moments of a box of `mass` with sides `extent`, `extent` and `ratio * extent`.
fn box_moments(mass: f64, extent: f64, ratio: f64) -> [f64; 3] {
    let (a, b, c) = (extent, extent, ratio * extent);
    [
        mass * (b * b + c * c) / 12.0,
        mass * (a * a + c * c) / 12.0,
        mass * (a * a + b * b) / 12.0,
    ]
}

fn write_link(urdf: &mut String, index: usize, link: &Inertial) {
    let [x, y, z] = link.com;
    let [ixx, iyy, izz] = link.moments;
    let _ = writeln!(
        urdf,
        "  <link name=\"l{index}\"><inertial><origin xyz=\"{x} {y} {z}\" rpy=\"0 0 0\"/><mass value=\"{}\"/>\
         <inertia ixx=\"{ixx}\" ixy=\"0\" ixz=\"0\" iyy=\"{iyy}\" iyz=\"0\" izz=\"{izz}\"/></inertial></link>",
        link.mass
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ChainOptions, Robot};

    /// At q = 0 the wrist's joints 4 and 6 share one axis and joints 2 and 3 are parallel with
    /// the forearm in line: the MDH table has those axes parallel and the tip on the line.
    #[test]
    fn the_zero_configuration_aligns_the_wrist_and_stretches_the_elbow() {
        for seed in 0..8 {
            let arm = SphericalWristArm::generate(seed);
            let robot = Robot::from_urdf_str(&arm.urdf, &ChainOptions::default())
                .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{}", arm.urdf));
            assert_eq!(robot.dof(), 6);
            let mut ws = crate::KinematicsWorkspace::new(&robot);
            let poses = crate::forward_kinematics(&robot, &mut ws, &[0.0; 6]).unwrap();
            // MDH frame {i}'s z axis is joint i's.
            let axis = |i: usize| poses.mdh_frames()[i].rotation * nalgebra::Vector3::z();
            assert!(
                axis(4).cross(&axis(6)).norm() < 1e-9,
                "seed {seed}: wrist not aligned"
            );
            assert!(
                axis(2).cross(&axis(3)).norm() < 1e-9,
                "seed {seed}: elbow axes"
            );
            let lightest = robot
                .links()
                .iter()
                .map(|l| l.mass)
                .fold(f64::INFINITY, f64::min);
            assert!(lightest < 0.3, "seed {seed}: {lightest}");
        }
    }
}
