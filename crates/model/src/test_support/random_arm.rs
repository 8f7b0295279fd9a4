//! Random serial arms shaped like real ones, as URDF text: revolute joints, a heavy shoulder
//! and a light wrist (down to about 1e-5 kg m^2 about its axis), neighbouring axes
//! perpendicular or parallel, effort limits a few times the largest gravity torque, and, on
//! every other seed, URDF `<dynamics damping friction>` as simulator descriptions carry them.
//! For tests that must hold on "an arm the project has never seen".

use std::f64::consts::FRAC_PI_2;
use std::fmt::Write;

use nalgebra::Vector3;

use super::random_chain::Rng;

/// Standard gravity, m/s^2.
const G: f64 = 9.81;

/// One generated arm.
#[derive(Debug, Clone)]
pub struct RandomArm {
    /// URDF text: links `l0..l<dof>`, joints `j1..j<dof>`, a fixed `tool` link.
    pub urdf: String,
    /// Moving joints.
    pub dof: usize,
    /// Whether the joints carry URDF damping and friction.
    pub damped: bool,
}

/// A link as generated: the joint origin that leads to it and its inertial.
struct LinkSpec {
    origin: Vector3<f64>,
    roll: f64,
    mass: f64,
    com: Vector3<f64>,
    /// Box dimensions the inertia is taken from, m.
    size: Vector3<f64>,
}

impl RandomArm {
    /// The arm of `seed` (6 or 7 joints; damped on odd seeds).
    pub fn generate(seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        // Neighbouring seeds start with correlated draws: skip them.
        for _ in 0..16 {
            rng.unit();
        }
        let dof = 6 + rng.index(2);
        let damped = seed % 2 == 1;
        let links = links(&mut rng, dof);
        let efforts = effort_limits(&links);
        let mut urdf = String::from("<robot name=\"random_arm\">\n  <link name=\"l0\"/>\n");
        for (i, (link, effort)) in links.iter().zip(&efforts).enumerate() {
            write_link(&mut urdf, i + 1, link);
            let dynamics = damped.then(|| {
                let scale = if i + 1 >= dof - 2 { 1.0 } else { 5.0 };
                (rng.range(0.1, 2.0) * scale, rng.range(0.0, 0.2) * scale)
            });
            let range = rng.range(2.0, 3.0);
            write_joint(&mut urdf, i + 1, link, *effort, range, dynamics);
        }
        let _ = writeln!(
            urdf,
            "  <link name=\"tool\"/>\n  <joint name=\"tool_joint\" type=\"fixed\"><parent link=\"l{dof}\"/>\
             <child link=\"tool\"/><origin xyz=\"0 0 {:.4}\" rpy=\"0 0 0\"/></joint>\n</robot>",
            rng.range(0.02, 0.1)
        );
        Self { urdf, dof, damped }
    }
}

/// Lengths, twists and inertials base to tip: two long segments (upper arm, forearm), short
/// offsets elsewhere, masses falling from a few kg to a light wrist.
fn links(rng: &mut Rng, dof: usize) -> Vec<LinkSpec> {
    let shoulder_mass = rng.range(2.0, 8.0);
    let wrist_mass = rng.range(0.05, 0.5);
    let ratio = (wrist_mass / shoulder_mass).powf(1.0 / (dof - 1) as f64);
    let mut previous_roll = 0.0;
    (0..dof)
        .map(|i| {
            let long = i == 2 || i == 3;
            let length = if long {
                rng.range(0.2, 0.5)
            } else {
                rng.range(0.0, 0.12)
            };
            let origin = if i == 0 {
                Vector3::new(0.0, 0.0, rng.range(0.1, 0.3))
            } else if rng.unit() < 0.5 {
                Vector3::new(length, 0.0, 0.0)
            } else {
                Vector3::new(0.0, -length, 0.0)
            };
            // Perpendicular to the previous axis, or parallel (never twice in a row).
            let roll = match (i, rng.index(3)) {
                (0, _) => 0.0,
                (_, 0) if previous_roll != 0.0 => 0.0,
                (_, 1) => -FRAC_PI_2,
                _ => FRAC_PI_2,
            };
            previous_roll = roll;
            let mass: f64 = shoulder_mass * ratio.powi(i as i32);
            let extent = (0.3 * mass.cbrt()).max(0.03);
            let size = Vector3::from_fn(|_, _| extent * rng.range(0.4, 1.0));
            let com = Vector3::from_fn(|_, _| rng.range(-0.3, 0.3) * extent);
            LinkSpec {
                origin,
                roll,
                mass,
                com,
                size,
            }
        })
        .collect()
}

/// Per joint: three times an upper bound of its gravity torque (every link beyond it at the
/// largest distance the chain allows), at least 2 N m, like the limits of real arms.
fn effort_limits(links: &[LinkSpec]) -> Vec<f64> {
    (0..links.len())
        .map(|i| {
            let mut reach = 0.0;
            let mut bound = 0.0;
            for (k, link) in links.iter().enumerate().skip(i) {
                if k > i {
                    reach += link.origin.norm();
                }
                bound += G * link.mass * (reach + link.com.norm());
            }
            (3.0 * bound).max(2.0)
        })
        .collect()
}

fn write_link(urdf: &mut String, index: usize, link: &LinkSpec) {
    let (m, s) = (link.mass, link.size);
    let ixx = m * (s.y * s.y + s.z * s.z) / 12.0;
    let iyy = m * (s.x * s.x + s.z * s.z) / 12.0;
    let izz = m * (s.x * s.x + s.y * s.y) / 12.0;
    let c = link.com;
    let _ = writeln!(
        urdf,
        "  <link name=\"l{index}\"><inertial><origin xyz=\"{} {} {}\" rpy=\"0 0 0\"/><mass value=\"{m}\"/>\
         <inertia ixx=\"{ixx}\" ixy=\"0\" ixz=\"0\" iyy=\"{iyy}\" iyz=\"0\" izz=\"{izz}\"/></inertial></link>",
        c.x, c.y, c.z
    );
}

fn write_joint(
    urdf: &mut String,
    index: usize,
    link: &LinkSpec,
    effort: f64,
    range: f64,
    dynamics: Option<(f64, f64)>,
) {
    let o = link.origin;
    let dynamics = dynamics.map_or_else(String::new, |(damping, friction)| {
        format!("<dynamics damping=\"{damping}\" friction=\"{friction}\"/>")
    });
    let _ = writeln!(
        urdf,
        "  <joint name=\"j{index}\" type=\"revolute\"><parent link=\"l{}\"/><child link=\"l{index}\"/>\
         <origin xyz=\"{} {} {}\" rpy=\"{} 0 0\"/><axis xyz=\"0 0 1\"/>\
         <limit lower=\"{}\" upper=\"{range}\" effort=\"{effort}\" velocity=\"2.5\"/>{dynamics}</joint>",
        index - 1,
        o.x,
        o.y,
        o.z,
        link.roll,
        -range
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ChainOptions, Robot};

    #[test]
    fn arms_load_with_light_wrists_and_damping_on_odd_seeds() {
        let mut lightest = f64::INFINITY;
        for seed in 0..50 {
            let arm = RandomArm::generate(seed);
            let robot = Robot::from_urdf_str(&arm.urdf, &ChainOptions::default())
                .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{}", arm.urdf));
            assert_eq!(robot.dof(), arm.dof);
            assert_eq!(arm.damped, robot.joints()[0].friction.viscous > 0.0);
            let wrist = robot.links().last().map_or(0.0, |l| l.mass);
            lightest = lightest.min(wrist);
        }
        assert!(lightest < 0.08, "no light wrist: {lightest}");
    }
}
