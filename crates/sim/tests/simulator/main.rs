//! The simulator's physics and each of its options.
//! The helpers are here; the tests in one file per part of the simulator (as in src/simulator/).

use armctl_dynamics::{gravity_torques, rnea_with_wrench, DynamicsWorkspace, Wrench};
use armctl_model::{ChainOptions, Robot};
use armctl_sim::{
    Integrator, LimitSpring, ModelMismatch, Payload, SensorNoise, SimConfig, SimError, Simulator,
};
use nalgebra::{Matrix2, Matrix3, Vector2, Vector3};

mod actuation;
mod checks;
mod integrator;
mod passive_torques;

fn robot(file: &str) -> Robot {
    let path = format!("{}/../../urdf/{file}", env!("CARGO_MANIFEST_DIR"));
    Robot::from_urdf_file(path, &ChainOptions::default()).unwrap()
}

/// Largest relative energy change over 10 s at 1 kHz with RK4, no torque, from rest at `q0`
/// with initial velocities `qd0`.
fn energy_drift(robot: &Robot, q0: &[f64], qd0: &[f64]) -> f64 {
    let mut sim = Simulator::new(robot, q0, SimConfig::ideal()).unwrap();
    sim.set_state(q0, qd0).unwrap();
    let e0 = sim.energy().unwrap();
    let zero = vec![0.0; robot.dof()];
    let mut worst = 0.0f64;
    for k in 0..10_000 {
        sim.step(&zero).unwrap();
        if k % 10 == 0 {
            worst = worst.max((sim.energy().unwrap() - e0).abs() / e0.abs());
        }
    }
    worst
}

/// docs/theory.md section 7: point masses m1 = 2, m2 = 1.5 at l1 = 1, l2 = 0.8.
fn two_link_qdd(q: Vector2<f64>, qd: Vector2<f64>) -> Vector2<f64> {
    let (m1, m2, l1, l2, g) = (2.0, 1.5, 1.0, 0.8, 9.81);
    let (c1, c2, s2, c12) = (q[0].cos(), q[1].cos(), q[1].sin(), (q[0] + q[1]).cos());
    let m12 = m2 * l2 * l2 + m2 * l1 * l2 * c2;
    let m = Matrix2::new(
        m2 * l2 * l2 + 2.0 * m2 * l1 * l2 * c2 + (m1 + m2) * l1 * l1,
        m12,
        m12,
        m2 * l2 * l2,
    );
    let h = m2 * l1 * l2 * s2;
    let c = Matrix2::new(-h * qd[1], -h * (qd[0] + qd[1]), h * qd[0], 0.0);
    let gv = Vector2::new(
        m2 * l2 * g * c12 + (m1 + m2) * l1 * g * c1,
        m2 * l2 * g * c12,
    );
    m.lu().solve(&(-(c * qd) - gv)).unwrap()
}

/// A three-joint arm with a light wrist and stiff URDF damping: a shoulder about the vertical,
/// an elbow about y carrying the forearm, and a wrist rolling about the forearm's axis with
/// 1.4e-4 kg m^2 about it. `damping` and `friction` are the URDF `<dynamics>` of each joint.
fn stiff_arm(damping: [f64; 3], friction: [f64; 3]) -> Robot {
    let joint = |i: usize, parent: &str, child: &str, xyz: &str, axis: &str, limit: f64| {
        format!(
            r#"<joint name="joint{i}" type="revolute"><parent link="{parent}"/><child link="{child}"/>
  <origin xyz="{xyz}" rpy="0 0 0"/><axis xyz="{axis}"/>
  <limit lower="-{limit}" upper="{limit}" effort="20" velocity="3"/>
  <dynamics damping="{}" friction="{}"/></joint>"#,
            damping[i - 1],
            friction[i - 1]
        )
    };
    let link = |name: &str, mass: f64, com: &str, [ixx, iyy, izz]: [f64; 3]| {
        format!(
            r#"<link name="{name}"><inertial><origin xyz="{com}"/><mass value="{mass}"/>
  <inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial></link>"#
        )
    };
    let urdf = format!(
        r#"<?xml version="1.0"?><robot name="stiff_wrist"><link name="base_link"/>
{}{}{}{}{}{}
<joint name="tool_joint" type="fixed"><parent link="link3"/><child link="tool0"/>
  <origin xyz="0.05 0 0" rpy="0 0 0"/></joint><link name="tool0"/></robot>"#,
        joint(1, "base_link", "link1", "0 0 0.3", "0 0 1", 2.9),
        link("link1", 3.0, "0 0 0.1", [0.02, 0.02, 0.01]),
        joint(2, "link1", "link2", "0 0 0.2", "0 1 0", 1.0),
        link("link2", 2.0, "0.2 0 0", [0.002, 0.02, 0.02]),
        joint(3, "link2", "link3", "0.4 0 0", "1 0 0", 2.9),
        link("link3", 0.3, "0 0 0", [1.4e-4, 2e-4, 2e-4]),
    );
    Robot::from_urdf_str(&urdf, &ChainOptions::default()).unwrap()
}

/// The largest `b_i dt / M_ii` of `robot` at `q` (M_ii the joint's own inertia).
fn largest_damping_ratio(robot: &Robot, q: &[f64], dt: f64) -> f64 {
    let n = robot.dof();
    let mut m = nalgebra::DMatrix::zeros(n, n);
    armctl_dynamics::mass_matrix(robot, &mut DynamicsWorkspace::new(robot), q, &mut m).unwrap();
    (0..n)
        .map(|i| robot.joints()[i].friction.viscous * dt / m[(i, i)])
        .fold(0.0, f64::max)
}

/// Runs `sim` for `steps` under `command`; the largest |q| and the last velocities.
fn run(sim: &mut Simulator, command: &[f64], steps: usize) -> (f64, Vec<f64>) {
    let mut largest = 0.0f64;
    for _ in 0..steps {
        if let Err(e) = sim.step(command) {
            panic!("{e}");
        }
        largest = sim.q().iter().fold(largest, |a, q| a.max(q.abs()));
    }
    (largest, sim.qd().to_vec())
}

fn armctl_dynamics_gravity(robot: &Robot, q: &[f64]) -> Vec<f64> {
    let mut g = vec![0.0; robot.dof()];
    gravity_torques(robot, &mut DynamicsWorkspace::new(robot), q, &mut g).unwrap();
    g
}

/// One joint about the vertical (gravity does not act on it) turning a body of `inertia`
/// kg m^2, with URDF damping and friction; limits at +-1000 rad, out of the way.
fn one_joint(inertia: f64, damping: f64, friction: f64) -> Robot {
    let urdf = format!(
        r#"<?xml version="1.0"?><robot name="one"><link name="base_link"/>
<joint name="spin" type="revolute"><parent link="base_link"/><child link="rotor"/>
  <origin xyz="0 0 0" rpy="0 0 0"/><axis xyz="0 0 1"/>
  <limit lower="-1000" upper="1000" effort="20" velocity="10"/>
  <dynamics damping="{damping}" friction="{friction}"/></joint>
<link name="rotor"><inertial><origin xyz="0 0 0"/><mass value="1"/>
  <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="{inertia}"/></inertial></link></robot>"#
    );
    Robot::from_urdf_str(&urdf, &ChainOptions::default()).unwrap()
}

/// RK4's factor per step on `qd' = -lambda qd` when the damping is implicit in each stage:
/// the stages see `-lambda / (1 + lambda dt)`, so `z = lambda dt / (1 + lambda dt) < 1`.
fn rk4_factor(x: f64) -> f64 {
    let z = x / (1.0 + x);
    1.0 - z + z * z / 2.0 - z.powi(3) / 6.0 + z.powi(4) / 24.0
}

/// Settings with stiction on the one joint: static friction `breakaway` over the URDF's
/// Coulomb friction.
fn with_stiction(breakaway: f64) -> SimConfig {
    SimConfig {
        joints: armctl_sim::JointEffects {
            static_friction: vec![breakaway],
            ..armctl_sim::JointEffects::default()
        },
        ..SimConfig::default()
    }
}

/// Settings with play `play` in the one joint's gear, behind a rotor of `rotor` kg m^2.
fn with_backlash(play: f64, rotor: f64, integrator: Integrator) -> SimConfig {
    SimConfig {
        integrator,
        joints: armctl_sim::JointEffects {
            backlash: vec![play],
            armature: vec![rotor],
            ..armctl_sim::JointEffects::default()
        },
        ..SimConfig::default()
    }
}

/// Steps under `torque` until the link's speed leaves `speed`; the time it took, s.
fn time_until_the_link_feels_it(sim: &mut Simulator, torque: f64, speed: f64) -> f64 {
    let start = sim.time();
    while (sim.qd()[0] - speed).abs() < 1e-9 * speed.abs().max(1.0) && sim.time() - start < 1.0 {
        sim.step(&[torque]).unwrap();
    }
    sim.time() - start
}
