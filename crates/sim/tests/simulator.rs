//! The simulator's physics and each of its options.

use armctl_dynamics::{gravity_torques, rnea_with_wrench, DynamicsWorkspace, Wrench};
use armctl_model::{ChainOptions, Robot};
use armctl_sim::{
    Integrator, LimitSpring, ModelMismatch, Payload, SensorNoise, SimConfig, SimError, Simulator,
};
use nalgebra::{Matrix2, Matrix3, Vector2, Vector3};

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

#[test]
fn energy_is_conserved_without_torque_friction_or_limits() {
    let panda = robot("panda.urdf");
    let drift = energy_drift(
        &panda,
        &[0.3, -0.5, 0.2, -1.8, 0.4, 1.2, -0.6],
        &[0.5, -0.3, 0.4, 0.2, -0.6, 0.3, 0.8],
    );
    eprintln!("Panda: largest relative energy change over 10 s {drift:e}");
    assert!(drift < 1e-6, "Panda energy drift {drift:e}");
    let puma = robot("puma560.urdf");
    let drift = energy_drift(
        &puma,
        &[0.2, -0.4, 0.6, 0.1, -0.5, 0.3],
        &[0.4, 0.2, -0.3, 0.6, 0.1, -0.5],
    );
    eprintln!("PUMA: largest relative energy change over 10 s {drift:e}");
    assert!(drift < 1e-6, "PUMA energy drift {drift:e}");
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

#[test]
fn free_fall_matches_independent_integration_of_the_closed_form() {
    let arm = robot("planar_2link.urdf");
    let q0 = [0.4, -0.3];
    let mut sim = Simulator::new(&arm, &q0, SimConfig::ideal()).unwrap();
    // Reference: the closed form integrated by RK4 with a 100x smaller step.
    let (mut q, mut qd) = (Vector2::from(q0), Vector2::zeros());
    let h = 1e-5;
    let mut worst = 0.0f64;
    for _ in 0..2000 {
        sim.step(&[0.0, 0.0]).unwrap();
        for _ in 0..100 {
            let k1 = (qd, two_link_qdd(q, qd));
            let k2 = (
                qd + k1.1 * h / 2.0,
                two_link_qdd(q + k1.0 * h / 2.0, qd + k1.1 * h / 2.0),
            );
            let k3 = (
                qd + k2.1 * h / 2.0,
                two_link_qdd(q + k2.0 * h / 2.0, qd + k2.1 * h / 2.0),
            );
            let k4 = (qd + k3.1 * h, two_link_qdd(q + k3.0 * h, qd + k3.1 * h));
            q += (k1.0 + 2.0 * k2.0 + 2.0 * k3.0 + k4.0) * h / 6.0;
            qd += (k1.1 + 2.0 * k2.1 + 2.0 * k3.1 + k4.1) * h / 6.0;
        }
        worst = worst.max((Vector2::from_column_slice(sim.q()) - q).amax());
    }
    // 2 s of swinging (several rad/s): RK4 at 1 kHz stays within 1e-6 rad of the reference.
    eprintln!("two-link free fall: largest difference from the reference {worst:e} rad");
    assert!(worst < 1e-6, "largest position difference {worst:e}");
    assert!(qd.amax() > 1.0, "the arm should have been swinging");
}

#[test]
fn semi_implicit_euler_also_falls_correctly_at_first_order() {
    let arm = robot("planar_2link.urdf");
    let config = SimConfig {
        integrator: Integrator::SemiImplicitEuler,
        ..SimConfig::ideal()
    };
    let mut euler = Simulator::new(&arm, &[0.4, -0.3], config).unwrap();
    let mut rk4 = Simulator::new(&arm, &[0.4, -0.3], SimConfig::ideal()).unwrap();
    for _ in 0..200 {
        euler.step(&[0.0, 0.0]).unwrap();
        rk4.step(&[0.0, 0.0]).unwrap();
    }
    let diff = (0..2)
        .map(|i| (euler.q()[i] - rk4.q()[i]).abs())
        .fold(0.0, f64::max);
    assert!(
        diff < 1e-2 && diff > 1e-7,
        "first-order difference expected, got {diff:e}"
    );
}

#[test]
fn commands_are_saturated_at_the_effort_limits() {
    let arm = robot("planar_2link.urdf");
    let mut sim = Simulator::new(&arm, &[0.0, 0.0], SimConfig::default()).unwrap();
    let report = sim.step(&[1e6, -1e6]).unwrap();
    assert_eq!(report.saturated, 2);
    assert_eq!(sim.applied_effort(), &[100.0, -50.0]);
    assert_eq!(sim.step(&[10.0, -5.0]).unwrap().saturated, 0);
}

#[test]
fn commands_act_after_the_configured_delay() {
    let arm = robot("planar_2link.urdf");
    let config = SimConfig {
        command_delay_steps: 3,
        ..SimConfig::default()
    };
    let mut sim = Simulator::new(&arm, &[0.0, 0.0], config).unwrap();
    for k in 0..6 {
        sim.step(&[k as f64 + 1.0, 0.0]).unwrap();
        let want = if k < 3 { 0.0 } else { (k - 2) as f64 };
        assert_eq!(sim.applied_effort()[0], want, "step {k}");
    }
}

#[test]
fn sensor_noise_has_the_configured_spread_and_repeats_with_its_seed() {
    let arm = robot("planar_2link.urdf");
    let noise = SensorNoise {
        position: 1e-3,
        velocity: 1e-2,
        seed: 42,
    };
    let config = SimConfig {
        noise: Some(noise),
        ..SimConfig::default()
    };
    let mut a = Simulator::new(&arm, &[0.1, 0.2], config.clone()).unwrap();
    let mut b = Simulator::new(&arm, &[0.1, 0.2], config).unwrap();
    let (mut q, mut qd, mut q2, mut qd2) = ([0.0; 2], [0.0; 2], [0.0; 2], [0.0; 2]);
    let (mut sum_q, mut sum_qd) = (0.0, 0.0);
    let samples = 4000;
    for _ in 0..samples {
        a.measure(&mut q, &mut qd).unwrap();
        b.measure(&mut q2, &mut qd2).unwrap();
        assert_eq!((q, qd), (q2, qd2), "same seed, same noise");
        sum_q += (q[0] - 0.1).powi(2);
        sum_qd += qd[1].powi(2);
    }
    let (std_q, std_qd) = (
        (sum_q / samples as f64).sqrt(),
        (sum_qd / samples as f64).sqrt(),
    );
    assert!(
        (std_q / 1e-3 - 1.0).abs() < 0.1,
        "position noise std {std_q}"
    );
    assert!(
        (std_qd / 1e-2 - 1.0).abs() < 0.1,
        "velocity noise std {std_qd}"
    );
}

#[test]
fn payload_and_mass_scale_change_the_plant_not_the_model() {
    let panda = robot("panda.urdf");
    let payload = Payload {
        mass: 2.0,
        com: Vector3::new(0.0, 0.0, 0.05),
        inertia: Matrix3::identity() * 1e-3,
    };
    let config = SimConfig {
        mismatch: ModelMismatch {
            payload: Some(payload),
            mass_scale: Some(1.2),
        },
        ..SimConfig::default()
    };
    let sim = Simulator::new(&panda, &[0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.7], config).unwrap();
    let model_mass: f64 = panda.links().iter().map(|l| l.mass).sum();
    let plant_mass: f64 = sim.plant().links().iter().map(|l| l.mass).sum();
    assert!((plant_mass - (1.2 * model_mass + 2.0)).abs() < 1e-12);
}

#[test]
fn torques_from_rnea_with_the_wrench_hold_the_arm_against_it() {
    let panda = robot("panda.urdf");
    let q = [0.1, -0.4, 0.2, -2.0, 0.1, 1.7, 0.3];
    let wrench = Wrench {
        force: Vector3::new(5.0, -3.0, 10.0),
        torque: Vector3::new(0.2, 0.0, -0.1),
    };
    let config = SimConfig {
        external_wrench: Some(wrench),
        ..SimConfig::ideal()
    };
    let mut sim = Simulator::new(&panda, &q, config).unwrap();
    let mut hold = [0.0; 7];
    rnea_with_wrench(
        &panda,
        &mut DynamicsWorkspace::new(&panda),
        &q,
        &[0.0; 7],
        &[0.0; 7],
        &wrench,
        &mut hold,
    )
    .unwrap();
    for _ in 0..100 {
        sim.step(&hold).unwrap();
    }
    let moved = sim
        .q()
        .iter()
        .zip(&q)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(moved < 1e-9, "arm moved by {moved:e}");
    // Without compensating the wrench (gravity only) it does move.
    let mut g = [0.0; 7];
    gravity_torques(&panda, &mut DynamicsWorkspace::new(&panda), &q, &mut g).unwrap();
    sim.set_state(&q, &[0.0; 7]).unwrap();
    for _ in 0..100 {
        sim.step(&g).unwrap();
    }
    assert!(sim.q().iter().zip(&q).any(|(a, b)| (a - b).abs() > 1e-4));
}

#[test]
fn a_joint_past_its_limit_is_pushed_back() {
    let arm = robot("planar_2link.urdf");
    let config = SimConfig {
        limits: Some(LimitSpring::default()),
        friction: false,
        ..SimConfig::default()
    };
    // Joint 2 starts 0.1 rad past its 3.1 rad limit: within 20 ms the spring has it moving back.
    let mut sim = Simulator::new(&arm, &[0.0, 3.2], config).unwrap();
    for _ in 0..20 {
        sim.step(&[0.0, 0.0]).unwrap();
    }
    assert!(
        sim.qd()[1] < -1.0 && sim.q()[1] < 3.2,
        "q {} qd {}",
        sim.q()[1],
        sim.qd()[1]
    );
    // Without limits it stays out there (gravity barely acts on the folded arm).
    let mut free = Simulator::new(
        &arm,
        &[0.0, 3.2],
        SimConfig {
            limits: None,
            ..SimConfig::ideal()
        },
    )
    .unwrap();
    for _ in 0..20 {
        free.step(&[0.0, 0.0]).unwrap();
    }
    assert!(
        free.qd()[1].abs() < sim.qd()[1].abs() / 10.0,
        "free qd {}",
        free.qd()[1]
    );
}

#[test]
fn bad_commands_and_settings_are_errors() {
    let arm = robot("planar_2link.urdf");
    let mut sim = Simulator::new(&arm, &[0.0, 0.0], SimConfig::default()).unwrap();
    assert!(matches!(
        sim.step(&[f64::NAN, 0.0]),
        Err(SimError::NonFinite { .. })
    ));
    assert!(matches!(sim.step(&[0.0]), Err(SimError::Dimension { .. })));
    let bad = SimConfig {
        dt: 0.0,
        ..SimConfig::default()
    };
    let e = Simulator::new(&arm, &[0.0, 0.0], bad).unwrap_err();
    assert!(e.to_string().contains("dt"), "{e}");
    let bad = SimConfig {
        mismatch: ModelMismatch {
            payload: None,
            mass_scale: Some(-1.0),
        },
        ..SimConfig::default()
    };
    assert!(Simulator::new(&arm, &[0.0, 0.0], bad)
        .unwrap_err()
        .to_string()
        .contains("mass_scale"));
}

/// A constant 5 N m on every Panda joint (within the limits) spins the light wrist until the
/// simulation leaves physics behind: it stops with an error naming the joint, at a speed a
/// real joint never reaches, instead of integrating positions up to 1e63 rad.
#[test]
fn a_runaway_stops_the_simulation_naming_the_joint() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/panda.urdf");
    let robot =
        armctl_model::Robot::from_urdf_file(path, &armctl_model::ChainOptions::default()).unwrap();
    let config = armctl_sim::SimConfig {
        limits: None,
        ..armctl_sim::SimConfig::default()
    };
    let mut sim =
        armctl_sim::Simulator::new(&robot, &robot.middle_configuration(), config).unwrap();
    let command = [5.0; 7];
    let mut stopped = None;
    for _ in 0..200_000 {
        if let Err(e) = sim.step(&command) {
            stopped = Some(e);
            break;
        }
    }
    let error = stopped.expect("the runaway is detected");
    match &error {
        armctl_sim::SimError::Diverged {
            joint, velocity, ..
        } => {
            assert!(joint.starts_with("panda_joint"), "{error}");
            assert!(velocity.abs() > armctl_sim::RUNAWAY_SPEED, "{error}");
        }
        other => panic!("not a divergence: {other}"),
    }
    assert!(
        sim.q().iter().all(|q| q.is_finite() && q.abs() < 1e6),
        "{:?}",
        sim.q()
    );
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

#[test]
fn a_stiffly_damped_light_wrist_is_stable_at_1_khz_with_both_integrators() {
    // Wrist damping 14 N m s/rad on 1.4e-4 kg m^2: b dt / I = 100 at 1 kHz.
    let arm = stiff_arm([2.0, 5.0, 14.0], [0.5, 0.5, 0.2]);
    let q0 = [0.3, -0.2, 0.5];
    let ratio = largest_damping_ratio(&arm, &q0, 1e-3);
    assert!(ratio > 99.0, "the wrist should be this stiff: {ratio}");
    for integrator in [Integrator::Rk4, Integrator::SemiImplicitEuler] {
        let config = SimConfig {
            integrator,
            ..SimConfig::default()
        };
        // Zero command from a moving start: everything comes to rest, the elbow on its limit.
        let mut sim = Simulator::new(&arm, &q0, config.clone()).unwrap();
        sim.set_state(&q0, &[2.0, -1.5, 3.0]).unwrap();
        let (largest, qd) = run(&mut sim, &[0.0; 3], 3000);
        eprintln!(
            "{integrator:?}, b dt/I = {ratio:.0}, zero command: |q| <= {largest:.3}, qd {qd:?}"
        );
        assert!(largest < 3.0, "{integrator:?}: |q| reached {largest}");
        assert!(
            qd.iter().all(|v| v.abs() < 1e-3),
            "{integrator:?}: qd {qd:?}"
        );
        // A constant command within the limits: shoulder and wrist slide at the speed where
        // viscous and Coulomb friction balance it, (tau - coulomb) / damping.
        let mut sim = Simulator::new(&arm, &q0, config).unwrap();
        let (largest, qd) = run(&mut sim, &[1.0, 3.0, 0.5], 3000);
        eprintln!("{integrator:?}, constant command: |q| <= {largest:.3}, qd {qd:?}");
        assert!(largest < 3.0, "{integrator:?}: |q| reached {largest}");
        for (joint, want) in [(0, (1.0 - 0.5) / 2.0), (2, (0.5 - 0.2) / 14.0)] {
            let got = qd[joint];
            assert!(
                (got / want - 1.0).abs() < 0.02,
                "{integrator:?}: joint {joint} slides at {got}, expected {want}"
            );
        }
    }
}

#[test]
fn a_light_wrist_pushed_into_a_stiff_limit_settles_on_it() {
    let arm = stiff_arm([2.0, 5.0, 14.0], [0.5, 0.5, 0.2]);
    // The stiffest spring the settings allow: w dt = 1, critically damped.
    let spring = LimitSpring {
        frequency: 1000.0,
        damping_ratio: 1.0,
    };
    for integrator in [Integrator::Rk4, Integrator::SemiImplicitEuler] {
        let config = SimConfig {
            integrator,
            limits: Some(spring),
            ..SimConfig::default()
        };
        let q0 = [0.0, 0.0, 2.8];
        let mut sim = Simulator::new(&arm, &q0, config).unwrap();
        sim.set_state(&q0, &[0.0, 0.0, 3.0]).unwrap();
        // The wrist pushed at its effort limit into its 2.9 rad limit; the arm held level.
        let command = [0.0, -armctl_dynamics_gravity(&arm, &q0)[1], 20.0];
        let (largest, qd) = run(&mut sim, &command, 2000);
        // At rest the spring holds the push less what Coulomb friction takes (at most 0.2 N m;
        // near rest the smoothed sign's slope 0.2 / 1e-3 N m s/rad creeps on slowly).
        let stiffness = spring.frequency.powi(2) * 1.4e-4;
        let band = (2.9 + 19.8 / stiffness, 2.9 + 20.0 / stiffness);
        let got = sim.q()[2];
        eprintln!("{integrator:?}: wrist on its limit at {got} (band {band:?}), |q| <= {largest}, qd {qd:?}");
        assert!(
            got > band.0 - 1e-6 && got < band.1 + 1e-6,
            "{integrator:?}: {got} not in {band:?}"
        );
        assert!(qd[2].abs() < 1e-3, "{integrator:?}: qd {qd:?}");
        assert!(
            largest < band.1 + 0.05,
            "{integrator:?}: overshoot to {largest}"
        );
    }
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

#[test]
fn viscous_damping_decays_as_implicit_euler_predicts_and_near_the_exponential() {
    let inertia = 1.4e-4;
    let dt = 1e-3;
    for x in [0.01, 1.0, 10.0, 100.0, 1000.0] {
        let arm = one_joint(inertia, x * inertia / dt, 0.0);
        for (integrator, factor) in [
            (Integrator::SemiImplicitEuler, 1.0 / (1.0 + x)),
            (Integrator::Rk4, rk4_factor(x)),
        ] {
            let config = SimConfig {
                integrator,
                ..SimConfig::default()
            };
            let mut sim = Simulator::new(&arm, &[0.0], config).unwrap();
            sim.set_state(&[0.0], &[1.0]).unwrap();
            let steps = (3.0 / x).ceil().max(3.0) as i32; // about 3 time constants
            for k in 1..=steps {
                sim.step(&[0.0]).unwrap();
                let (got, want) = (sim.qd()[0], factor.powi(k));
                assert!(
                    (got - want).abs() <= 1e-9 * want,
                    "{integrator:?}, b dt/I = {x}, step {k}: qd {got}, predicted {want}"
                );
            }
            let exact = (-x * f64::from(steps)).exp();
            let error = sim.qd()[0] / exact - 1.0;
            eprintln!(
                "{integrator:?}, b dt/I = {x}: qd after {steps} steps {:e}, exp(-b t / I) {exact:e}, relative difference {error:e}",
                sim.qd()[0]
            );
            if x <= 0.01 {
                // First order in b dt / I: about (b dt / I) (b t / I) / 2 for implicit Euler,
                // twice that for RK4 (it applies the implicit factor in every stage).
                assert!(error.abs() < 0.035, "{integrator:?}: {error}");
            }
        }
    }
}

#[test]
fn coulomb_friction_stops_a_spinning_joint_and_holds_it_without_chatter() {
    // 0.5 N m on the 1.4e-4 kg m^2 wrist: 3.6 rad/s of velocity per 1 ms step, more than the
    // joint has near the end, so an explicit step would overshoot the sign.
    for inertia in [1.4e-4, 1e-2] {
        let arm = one_joint(inertia, 0.0, 0.5);
        for integrator in [Integrator::Rk4, Integrator::SemiImplicitEuler] {
            let config = SimConfig {
                integrator,
                ..SimConfig::default()
            };
            let mut sim = Simulator::new(&arm, &[0.0], config).unwrap();
            sim.set_state(&[0.0], &[5.0]).unwrap();
            let stop_time = inertia * 5.0 / 0.5;
            let mut stopped_at = None;
            for k in 1..=1000 {
                sim.step(&[0.0]).unwrap();
                let qd = sim.qd()[0];
                assert!(
                    qd >= 0.0,
                    "{integrator:?}, I {inertia}: sign flipped at step {k}: {qd}"
                );
                if stopped_at.is_none() && qd < 1e-6 {
                    stopped_at = Some(sim.time());
                }
            }
            let stopped_at = stopped_at.expect("the joint stops");
            let stop_q = 0.5 * 5.0 * stop_time;
            eprintln!(
                "{integrator:?}, I {inertia}: stopped at {stopped_at} s (analytic {stop_time} s), q {} (analytic {stop_q})",
                sim.q()[0]
            );
            // Semi-implicit Euler stops within a step of the analytic time. RK4 applies the
            // implicit friction in each stage, and a stage can only damp the remainder by
            // 0.375 per step (its polynomial has no real root): some 15 more steps to 1e-6.
            let late = match integrator {
                Integrator::SemiImplicitEuler => 1.5e-3,
                Integrator::Rk4 => 20e-3,
            };
            assert!(
                stopped_at > stop_time - 1e-3 && stopped_at < stop_time + late,
                "{integrator:?}: stopped at {stopped_at}, expected {stop_time}"
            );
            assert!(
                (sim.q()[0] - stop_q).abs() < 0.01 + 0.01 * stop_q,
                "{}",
                sim.q()[0]
            );
            // Held: zero command keeps it still; a push below the Coulomb level only creeps at
            // the smoothed sign's width * atanh(tau / coulomb) (the model has no true stiction).
            let q = sim.q()[0];
            assert!(sim.qd()[0] < 1e-12);
            sim.step(&[0.3]).unwrap();
            for _ in 0..1000 {
                sim.step(&[0.3]).unwrap();
            }
            let creep = 1e-3 * (0.3f64 / 0.5).atanh();
            assert!(
                (sim.qd()[0] - creep).abs() < 1e-3 * creep,
                "{integrator:?}: creeps at {}, expected {creep}",
                sim.qd()[0]
            );
            assert!(sim.q()[0] - q < 1.01 * creep, "{}", sim.q()[0] - q);
        }
    }
}

#[test]
fn a_joint_that_moves_no_mass_is_refused_at_start_naming_it() {
    let path = format!(
        "{}/../../urdf/planar_2link.urdf",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).unwrap();
    let start = text.find("<link name=\"link2\">").unwrap();
    let end = start + text[start..].find("</link>").unwrap();
    let massless = format!("{}<link name=\"link2\">{}", &text[..start], &text[end..]);
    let robot = Robot::from_urdf_str(&massless, &ChainOptions::default()).unwrap();
    let error = Simulator::new(&robot, &[0.0, 0.0], SimConfig::default()).unwrap_err();
    assert!(
        matches!(&error, SimError::Massless { joint } if joint == "joint2"),
        "{error}"
    );
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

#[test]
fn stiction_holds_a_joint_below_breakaway_releases_above_and_sticks_again_when_it_stops() {
    let (inertia, kinetic, breakaway) = (0.01, 1.0, 2.0);
    let arm = one_joint(inertia, 0.0, kinetic);
    for integrator in [Integrator::Rk4, Integrator::SemiImplicitEuler] {
        let config = SimConfig {
            integrator,
            ..with_stiction(breakaway)
        };
        let mut sim = Simulator::new(&arm, &[0.0], config).unwrap();
        // Held: 1.5 N m (above the kinetic 1, below the breakaway 2) for a second.
        for _ in 0..1000 {
            sim.step(&[1.5]).unwrap();
        }
        let (q, qd) = (sim.q()[0], sim.qd()[0]);
        eprintln!("{integrator:?}: held at {q:e} rad, {qd:e} rad/s");
        assert!(
            q.abs() < 1e-4 && qd.abs() < 1e-6,
            "{integrator:?}: {q} {qd}"
        );
        assert!(sim.stuck().all(|s| s));
        // Released: 2.5 N m breaks it loose; it slides against the kinetic friction.
        for _ in 0..100 {
            sim.step(&[2.5]).unwrap();
        }
        let v0 = sim.qd()[0];
        for _ in 0..100 {
            sim.step(&[2.5]).unwrap();
        }
        let acceleration = (sim.qd()[0] - v0) / 0.1;
        let expected = (2.5 - kinetic) / inertia;
        assert!(
            (acceleration - expected).abs() < 1e-3 * expected,
            "{integrator:?}: slides at {acceleration}, expected {expected}"
        );
        assert!(sim.stuck().all(|s| !s));
        // Let go: friction stops it, and it sticks again where it stopped.
        for _ in 0..1000 {
            sim.step(&[0.0]).unwrap();
        }
        assert!(sim.stuck().all(|s| s), "{integrator:?}: sticks again");
        let stopped = sim.q()[0];
        for _ in 0..1000 {
            sim.step(&[1.5]).unwrap();
        }
        assert!(
            (sim.q()[0] - stopped).abs() < 1e-4,
            "{integrator:?}: held again ({} from {stopped})",
            sim.q()[0]
        );
    }
}

#[test]
fn static_friction_below_the_coulomb_friction_or_without_friction_is_refused() {
    let arm = one_joint(0.01, 0.0, 1.0);
    let e = Simulator::new(&arm, &[0.0], with_stiction(0.5)).unwrap_err();
    assert!(e.to_string().contains("joint 'spin'"), "{e}");
    let config = SimConfig {
        friction: false,
        ..with_stiction(2.0)
    };
    let e = Simulator::new(&arm, &[0.0], config).unwrap_err();
    assert!(e.to_string().contains("needs friction"), "{e}");
}

#[test]
fn armature_from_the_settings_adds_to_the_plant_s_inertia_not_the_model_s() {
    let (inertia, armature) = (0.01, 0.03);
    let arm = one_joint(inertia, 0.0, 0.0);
    let config = SimConfig {
        joints: armctl_sim::JointEffects {
            armature: vec![armature],
            ..armctl_sim::JointEffects::default()
        },
        ..SimConfig::ideal()
    };
    let mut sim = Simulator::new(&arm, &[0.0], config).unwrap();
    for _ in 0..100 {
        sim.step(&[1.0]).unwrap();
    }
    let expected = 1.0 / (inertia + armature) * 0.1;
    assert!(
        (sim.qd()[0] - expected).abs() < 1e-9,
        "{} {expected}",
        sim.qd()[0]
    );
    assert_eq!(sim.plant().joints()[0].armature, armature);
    assert_eq!(arm.joints()[0].armature, 0.0, "the model keeps its own");
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

#[test]
fn backlash_leaves_the_link_unpowered_while_the_rotor_crosses_the_play() {
    let (link, rotor, play, torque) = (0.01, 0.05, 0.02, 1.0);
    let arm = one_joint(link, 0.0, 0.0);
    {
        let integrator = Integrator::SemiImplicitEuler;
        let mut sim = Simulator::new(&arm, &[0.0], with_backlash(play, rotor, integrator)).unwrap();
        assert_eq!(
            sim.plant().joints()[0].armature,
            0.0,
            "the rotor is behind the gear"
        );
        // From the middle of the play to a flank: half the play at torque / rotor.
        let first = time_until_the_link_feels_it(&mut sim, torque, 0.0);
        let expected = (2.0 * (play / 2.0) * rotor / torque).sqrt();
        assert!(
            (first - expected).abs() < 2e-3,
            "{integrator:?}: {first} s, expected {expected}"
        );
        // Meshed, link and rotor turn together.
        for _ in 0..100 {
            sim.step(&[torque]).unwrap();
        }
        let v0 = sim.qd()[0];
        for _ in 0..100 {
            sim.step(&[torque]).unwrap();
        }
        let acceleration = (sim.qd()[0] - v0) / 0.1;
        let together = torque / (link + rotor);
        assert!(
            (acceleration - together).abs() < 0.02 * together,
            "{integrator:?}: {acceleration}, expected {together}"
        );
        // Reversed: the link coasts while the rotor crosses the whole play.
        let coasting = sim.qd()[0];
        let reversal = time_until_the_link_feels_it(&mut sim, -torque, coasting);
        let expected = (2.0 * play * rotor / torque).sqrt();
        assert!(
            (reversal - expected).abs() < 3e-3,
            "{integrator:?}: coasted {reversal} s, expected {expected}"
        );
        let gap = sim.rotor_angle(0).unwrap() - sim.q()[0];
        assert!(
            (gap + play / 2.0).abs() < 1e-3,
            "{integrator:?}: on the other flank: {gap}"
        );
    }
}

#[test]
fn backlash_is_off_by_default_and_needs_a_rotor() {
    assert!(armctl_sim::JointEffects::default().backlash.is_empty());
    let arm = one_joint(0.01, 0.0, 0.0);
    let sim = Simulator::new(&arm, &[0.0], SimConfig::default()).unwrap();
    assert_eq!(sim.rotor_angle(0), None);
    let euler = Integrator::SemiImplicitEuler;
    let e = Simulator::new(&arm, &[0.0], with_backlash(0.02, 0.0, euler)).unwrap_err();
    assert!(
        e.to_string().contains("'spin'") && e.to_string().contains("armature"),
        "{e}"
    );
    let e = Simulator::new(&arm, &[0.0], with_backlash(-0.02, 0.05, euler)).unwrap_err();
    assert!(e.to_string().contains("backlash"), "{e}");
    // RK4's stages would turn the implicit mesh into extra inertia (20 instead of 16.7 rad/s^2
    // in the test above): refused.
    let e = Simulator::new(&arm, &[0.0], with_backlash(0.02, 0.05, Integrator::Rk4)).unwrap_err();
    assert!(
        e.to_string().contains("backlash") && e.to_string().contains("Euler"),
        "{e}"
    );
}

/// The plant's friction ripple: refused without friction, and with it a joint sliding at
/// constant speed feels the Coulomb level of where it is.
#[test]
fn the_friction_ripple_acts_where_the_joint_is() {
    let plant = robot("planar_2link.urdf")
        .with_friction(&[0.0, 0.0], &[1.0, 1.0])
        .unwrap();
    let ripple = vec![vec![0.5, 0.0], vec![]];
    let mut config = SimConfig {
        joints: armctl_sim::JointEffects {
            friction_ripple: ripple,
            ..armctl_sim::JointEffects::default()
        },
        ..SimConfig::ideal()
    };
    let e = Simulator::new(&plant, &[0.0, 0.0], config.clone()).unwrap_err();
    assert!(e.to_string().contains("friction_ripple"), "{e}");
    config.friction = true;
    // At q1 = 0 the level is 1.5 N m, at q1 = pi/2 it is 1.0: a constant push of 1.2 N m
    // only creeps at 0 (the smoothed sign's creep, under 1 mrad in 0.5 s) and slides at pi/2.
    for (q1, moves) in [(0.0, false), (std::f64::consts::FRAC_PI_2, true)] {
        let mut sim = Simulator::new(
            &plant.with_gravity(Vector3::zeros()).unwrap(),
            &[q1, 0.0],
            config.clone(),
        )
        .unwrap();
        for _ in 0..500 {
            sim.step(&[1.2, 0.0]).unwrap();
        }
        let moved = (sim.q()[0] - q1).abs();
        assert_eq!(moved > 1e-3, moves, "q1 = {q1}: moved {moved}");
    }
}

/// An arm that compensates its own gravity (as libfranka does for a Franka arm) stays where it
/// is under zero command; the same arm without falls, and a command of G(q) is then G twice.
#[test]
fn a_robot_that_compensates_gravity_holds_itself_under_zero_command() {
    let panda = robot("panda.urdf");
    let q0 = [0.1, -0.4, 0.2, -2.0, 0.3, 1.6, 0.5];
    let drift = |compensates: bool, command: &[f64]| {
        let config = SimConfig {
            robot_compensates_gravity: compensates,
            ..SimConfig::ideal()
        };
        let mut sim = Simulator::new(&panda, &q0, config).unwrap();
        for _ in 0..500 {
            sim.step(command).unwrap();
        }
        let q = sim.q();
        q.iter()
            .zip(&q0)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max)
    };
    let zero = [0.0; 7];
    let mut g = [0.0; 7];
    gravity_torques(&panda, &mut DynamicsWorkspace::new(&panda), &q0, &mut g).unwrap();
    assert!(drift(true, &zero) < 1e-12, "{}", drift(true, &zero));
    assert!(drift(false, &zero) > 0.05, "{}", drift(false, &zero));
    assert!(drift(false, &g) < 1e-9);
    assert!(
        drift(true, &g) > 0.05,
        "G sent to an arm that adds its own is G twice"
    );
    // The arm compensates with its own (nominal) model: a payload it was not told of sags.
    let config = SimConfig {
        robot_compensates_gravity: true,
        mismatch: ModelMismatch {
            payload: Some(Payload {
                mass: 3.0,
                com: Vector3::zeros(),
                inertia: Matrix3::zeros(),
            }),
            ..ModelMismatch::default()
        },
        ..SimConfig::ideal()
    };
    let mut sim = Simulator::new(&panda, &q0, config).unwrap();
    for _ in 0..500 {
        sim.step(&zero).unwrap();
    }
    let sag = sim
        .q()
        .iter()
        .zip(&q0)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(sag > 0.01, "the unannounced payload sags: {sag}");
}
