//! Cartesian impedance: deflections, a moved target, inertia shaping, a redundant arm's spare
//! joint, a pose target refused while following joint references.

use super::*;

/// Static deflection of the tip under a constant force equals `K_x^-1 F` (within 2%).
#[test]
fn cartesian_impedance_deflects_by_k_inverse_f() {
    for (file, projector) in [
        ("panda.urdf", 0.0),
        ("puma560.urdf", 0.0),
        ("panda.urdf", 1.0),
    ] {
        let robot = robot(file);
        let (q0, _) = poses(&robot);
        let force = Vector3::new(10.0, -6.0, 8.0);
        let config = SimConfig {
            external_wrench: Some(Wrench {
                force,
                torque: Vector3::zeros(),
            }),
            ..SimConfig::default()
        };
        let mut controller = armctl_control::CartesianImpedance::new(&robot).unwrap();
        controller
            .set_parameter("projector", ParameterValue::Double(projector))
            .unwrap();
        set(
            &mut controller,
            "stiffness",
            vec![2000.0, 2000.0, 2000.0, 5.0, 5.0, 5.0],
        );
        let k = controller.parameters().values("stiffness").to_vec();
        let (start, moved) = tip_moved_holding(&robot, &mut controller, &q0, config, 6000);
        let predicted = Vector3::new(force.x / k[0], force.y / k[1], force.z / k[2]);
        eprintln!("{file}: stiffness {k:.3?}");
        let relative = (moved - predicted).norm() / predicted.norm();
        let turned = orientation_change(&controller, &start);
        eprintln!("{file} projector {projector}: deflection {:.4} m, predicted {:.4} m, relative difference {relative:.2e}, rotation {turned:.2e} rad", moved.norm(), predicted.norm());
        let bound = if projector == 0.0 { 0.02 } else { 0.05 };
        assert!(
            relative < bound,
            "{file}: moved {moved} predicted {predicted}"
        );
    }
}

/// Runs `controller` holding `q0` for `steps` under `config`: the tip's start pose and how far
/// the tip moved.
fn tip_moved_holding(
    robot: &Robot,
    controller: &mut armctl_control::CartesianImpedance,
    q0: &[f64],
    config: SimConfig,
    steps: usize,
) -> (nalgebra::IsometryMatrix3<f64>, Vector3<f64>) {
    let start = armctl_model::forward_kinematics(robot, &mut KinematicsWorkspace::new(robot), q0)
        .unwrap()
        .tip();
    let mut sim = Simulator::new(robot, q0, config).unwrap();
    run_closed_loop(
        &mut sim,
        controller,
        &SetPoint::new(q0.to_vec()),
        steps,
        |_, _, _| {},
    )
    .unwrap();
    let moved = controller.tip_pose().translation.vector - start.translation.vector;
    (start, moved)
}

/// An arm of fewer than six joints gets a position-only task by default: the planar two-link
/// arm holds its tip against a force in its plane with the deflection K^-1 F.
#[test]
fn cartesian_impedance_on_a_planar_arm_deflects_by_k_inverse_f() {
    let robot = robot("planar_2link.urdf");
    let q0 = vec![0.3, 0.8];
    let mut jac = nalgebra::Matrix6xX::zeros(2);
    let mut kin = KinematicsWorkspace::new(&robot);
    armctl_model::jacobian(&robot, &mut kin, &q0, armctl_model::FrameId::Tip, &mut jac).unwrap();
    let in_plane = jac.fixed_view::<3, 1>(0, 0) * 3.0 + jac.fixed_view::<3, 1>(0, 1) * 2.0;
    let force = in_plane.normalize() * 8.0;
    let config = SimConfig {
        external_wrench: Some(Wrench {
            force,
            torque: Vector3::zeros(),
        }),
        ..SimConfig::default()
    };
    let mut controller = armctl_control::CartesianImpedance::new(&robot).unwrap();
    let k = controller.parameters().values("stiffness").to_vec();
    assert!(
        k[..3].iter().all(|&k| k > 0.0) && k[3..].iter().all(|&k| k == 0.0),
        "{k:?}"
    );
    let (_, moved) = tip_moved_holding(&robot, &mut controller, &q0, config, 4000);
    let predicted = force / k[0];
    let relative = (moved - predicted).norm() / predicted.norm();
    eprintln!("planar: stiffness {:.1} N/m, deflection {:.5} m, predicted {:.5} m, relative difference {relative:.2e}", k[0], moved.norm(), predicted.norm());
    assert!(relative < 0.02, "moved {moved} predicted {predicted}");
}

/// Angle between the measured tip orientation and `start`.
fn orientation_change(
    controller: &armctl_control::CartesianImpedance,
    start: &nalgebra::IsometryMatrix3<f64>,
) -> f64 {
    let d = (controller.tip_pose().rotation * start.rotation.inverse()).into_inner();
    Vector3::new(
        d[(2, 1)] - d[(1, 2)],
        d[(0, 2)] - d[(2, 0)],
        d[(1, 0)] - d[(0, 1)],
    )
    .norm()
        / 2.0
}

#[test]
fn cartesian_impedance_reaches_a_moved_target() {
    let robot = robot("panda.urdf");
    let (q0, _) = poses(&robot);
    let mut controller = armctl_control::CartesianImpedance::new(&robot).unwrap();
    let mut sim = Simulator::new(&robot, &q0, SimConfig::default()).unwrap();
    let start =
        armctl_model::forward_kinematics(&robot, &mut KinematicsWorkspace::new(&robot), &q0)
            .unwrap()
            .tip();
    let goal = nalgebra::IsometryMatrix3::from_parts(
        (start.translation.vector + Vector3::new(0.05, -0.08, 0.04)).into(),
        nalgebra::Rotation3::from_euler_angles(0.1, -0.1, 0.2) * start.rotation,
    );
    run_closed_loop(
        &mut sim,
        &mut controller,
        &SetPoint::new(q0.clone()),
        4000,
        |k, _, c| {
            if k == 500 {
                c.task_space().unwrap().set_target_pose(goal, 1.0).unwrap();
            }
        },
    )
    .unwrap();
    let error = (controller.tip_pose().translation.vector - goal.translation.vector).norm();
    let turned = orientation_change(&controller, &goal);
    eprintln!("Cartesian target: position error {error:.2e} m, orientation error {turned:.2e} rad");
    assert!(
        error < 1e-3 && turned < 1e-3,
        "position {error} orientation {turned}"
    );
}

/// With inertia shaping the tip answers a force step as the chosen target dynamics
/// (M_d = 8 kg, K = 2000 N/m, critical damping), and settles at K^-1 F.
#[test]
fn cartesian_inertia_shaping_gives_the_chosen_apparent_inertia() {
    let robot = robot("panda.urdf");
    let (q0, _) = poses(&robot);
    let force = Vector3::new(10.0, 0.0, 0.0);
    let config = SimConfig {
        external_wrench: Some(Wrench {
            force,
            torque: Vector3::zeros(),
        }),
        ..SimConfig::default()
    };
    let mut controller = armctl_control::CartesianImpedance::new(&robot).unwrap();
    set(
        &mut controller,
        "stiffness",
        vec![2000.0, 2000.0, 2000.0, 5.0, 5.0, 5.0],
    );
    controller
        .set_parameter(
            "inertia",
            ParameterValue::DoubleArray(vec![8.0, 8.0, 8.0, 0.5, 0.5, 0.5]),
        )
        .unwrap();
    let mut kin = KinematicsWorkspace::new(&robot);
    let start = armctl_model::forward_kinematics(&robot, &mut kin, &q0)
        .unwrap()
        .tip();
    let mut sim = Simulator::new(&robot, &q0, config).unwrap();
    let log = run_closed_loop(
        &mut sim,
        &mut controller,
        &SetPoint::new(q0.clone()),
        6000,
        |k, _, c| {
            if k == 0 {
                c.task_space()
                    .unwrap()
                    .set_external_wrench(&[force.x, force.y, force.z, 0.0, 0.0, 0.0]);
            }
        },
    )
    .unwrap();
    let tip_x = |k: usize| {
        let q: Vec<f64> = log.q.iter().map(|c| c[k]).collect();
        armctl_model::forward_kinematics(&robot, &mut KinematicsWorkspace::new(&robot), &q)
            .unwrap()
            .tip()
            .translation
            .x
    };
    // The target dynamics M_d x'' + D x' + K x = F, critically damped, from rest:
    // x(t) = (F/K)(1 - (1 + w t) e^(-w t)), w = sqrt(K / M_d).
    let w = (2000.0f64 / 8.0).sqrt();
    let settled = controller.tip_pose().translation.x - start.translation.x;
    for k in [10usize, 20, 50, 100, 200] {
        let t = k as f64 * 1e-3;
        let want = 10.0 / 2000.0 * (1.0 - (1.0 + w * t) * (-w * t).exp());
        let got = tip_x(k) - start.translation.x;
        eprintln!(
            "inertia shaping: t = {t:.3} s tip moved {got:.4e} m, target dynamics {want:.4e} m"
        );
        assert!((got / want - 1.0).abs() < 0.05, "t {t}: {got} vs {want}");
    }
    eprintln!(
        "inertia shaping: static deflection {settled:.5} m (K^-1 F = {:.5})",
        10.0 / 2000.0
    );
    assert!(
        (settled / (10.0 / 2000.0) - 1.0).abs() < 0.02,
        "deflection {settled}"
    );
}

/// A planar three-link arm (point masses, vertical x-z plane, like planar_2link.urdf).
fn planar_3link() -> Robot {
    let link = |i: usize, parent: &str, at: f64, length: f64, mass: f64| {
        format!(
            r#"<joint name="joint{i}" type="revolute"><parent link="{parent}"/><child link="link{i}"/>
  <origin xyz="{at} 0 0"/><axis xyz="0 -1 0"/><limit lower="-3.1" upper="3.1" effort="100" velocity="4"/></joint>
<link name="link{i}"><inertial><origin xyz="{length} 0 0"/><mass value="{mass}"/>
  <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>"#
        )
    };
    let urdf = format!(
        r#"<?xml version="1.0"?><robot name="planar_3link"><link name="base_link"/>{}{}{}
<joint name="tool_joint" type="fixed"><parent link="link3"/><child link="tool0"/><origin xyz="0.3 0 0"/></joint>
<link name="tool0"/></robot>"#,
        link(1, "base_link", 0.0, 0.5, 2.0),
        link(2, "link1", 0.5, 0.4, 1.5),
        link(3, "link2", 0.4, 0.3, 1.0),
    );
    Robot::from_urdf_str(&urdf, &ChainOptions::default()).unwrap()
}

/// On a redundant planar arm the position-only default leaves one joint direction to the
/// posture task: a self-motion started at 1 rad/s is damped out while the tip stays put, and a
/// tip force deflects it by K^-1 F.
#[test]
fn cartesian_impedance_holds_a_planar_redundant_arm_s_spare_joint() {
    let robot = planar_3link();
    let q0 = vec![0.4, 0.7, 0.5];
    let mut kin = KinematicsWorkspace::new(&robot);
    let mut jac = Matrix6xX::zeros(3);
    jacobian(&robot, &mut kin, &q0, FrameId::Tip, &mut jac).unwrap();
    let (x, z) = (jac.row(0).transpose(), jac.row(2).transpose());
    let self_motion = x.cross(&z).normalize();
    let mut controller = armctl_control::CartesianImpedance::new(&robot).unwrap();
    let k = controller.parameters().values("stiffness").to_vec();
    assert!(k[3..].iter().all(|&k| k == 0.0), "{k:?}");
    let start = armctl_model::forward_kinematics(&robot, &mut kin, &q0)
        .unwrap()
        .tip();
    let mut sim = Simulator::new(&robot, &q0, SimConfig::default()).unwrap();
    sim.set_state(&q0, self_motion.as_slice()).unwrap();
    let log = run_closed_loop(
        &mut sim,
        &mut controller,
        &SetPoint::new(q0.clone()),
        3000,
        |_, _, _| {},
    )
    .unwrap();
    let speed = log
        .qd
        .iter()
        .map(|c| c.last().unwrap().abs())
        .fold(0.0, f64::max);
    let moved = (controller.tip_pose().translation.vector - start.translation.vector).norm();
    eprintln!(
        "planar 3R: self-motion from 1 rad/s to {speed:.2e} rad/s in 3 s, tip moved {moved:.2e} m"
    );
    assert!(speed < 1e-3, "the spare joint still moves at {speed} rad/s");
    assert!(moved < 1e-3, "the tip moved {moved} m");
}

/// With `target_source: joint_reference` the tip follows the joint reference, so a pose
/// target is refused with the reason instead of being dropped.
#[test]
fn a_pose_target_is_refused_while_the_tip_follows_the_joint_reference() {
    let robot = robot("panda.urdf");
    let (q0, _) = poses(&robot);
    let mut law = armctl_control::ResolvedAcceleration::new(&robot).unwrap();
    law.set_parameter(
        "target_source",
        ParameterValue::String("joint_reference".into()),
    )
    .unwrap();
    let state = armctl_control::JointState {
        q: &q0,
        qd: &[0.0; 7],
    };
    law.reset(&state);
    let mut effort = [0.0; 7];
    let reference = armctl_control::JointReference::hold(&q0);
    law.update(&state, &reference, 1e-3, &mut effort).unwrap();
    let e = law
        .task_space()
        .unwrap()
        .set_target_pose(nalgebra::IsometryMatrix3::identity(), 1.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("target_source"), "{e}");
}
