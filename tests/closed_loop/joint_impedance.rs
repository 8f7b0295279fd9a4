//! Joint impedance: the deflection under a tip force, smooth stiffness changes, refused
//! parameters.

use super::*;

/// Static deflection of joint impedance under a tip wrench equals `K^-1 J^T F`.
#[test]
fn joint_impedance_deflects_by_k_inverse_j_transpose_f() {
    for file in ["panda.urdf", "puma560.urdf"] {
        let robot = robot(file);
        let (q0, _) = poses(&robot);
        let force = Wrench {
            force: Vector3::new(8.0, -5.0, 6.0),
            torque: Vector3::zeros(),
        };
        let config = SimConfig {
            external_wrench: Some(force),
            ..SimConfig::default()
        };
        let mut controller = JointImpedance::new(&robot).unwrap();
        let k = controller.parameters().values("stiffness").to_vec();
        let log = run(
            &robot,
            &mut controller,
            &SetPoint::new(q0.clone()),
            &q0,
            8.0,
            config,
        );
        let q = final_q(&log);
        let mut j = Matrix6xX::zeros(robot.dof());
        jacobian(
            &robot,
            &mut KinematicsWorkspace::new(&robot),
            &q,
            FrameId::Tip,
            &mut j,
        )
        .unwrap();
        let torque = j.transpose() * Vector6::new(8.0, -5.0, 6.0, 0.0, 0.0, 0.0);
        // Where the damping passes the sampled-data margin (joints lined up) the law applies
        // s_j^2 K_j: the spring the arm is.
        let damping = controller.parameters().values("damping").to_vec();
        let s = DampingBound::new(robot.dof())
            .diagonal_scales(
                &robot,
                &mut DynamicsWorkspace::new(&robot),
                &q,
                &damping,
                1e-3,
            )
            .unwrap()
            .to_vec();
        let predicted = DVector::from_iterator(
            robot.dof(),
            (0..robot.dof()).map(|i| torque[i] / (s[i] * s[i] * k[i])),
        );
        let measured = DVector::from_iterator(robot.dof(), (0..robot.dof()).map(|i| q[i] - q0[i]));
        let relative = (&measured - &predicted).norm() / predicted.norm();
        eprintln!("{file}: joint deflection {:.4e} rad, relative difference from K^-1 J^T F {relative:.2e}", measured.norm());
        assert!(
            relative < 0.02,
            "{file}: measured {measured} predicted {predicted}"
        );
    }
}

/// Holding a pose against a tip wrench, the stiffness is quadrupled at 1.5 s. Applied at once
/// the effort would step by tens of N m; with the ramp and a 1000 N m/s rate limit no step
/// exceeds 1 N m, and the new stiffness is in effect by the end.
fn stiffness_change_is_smooth(controller: Box<dyn Controller>) {
    let robot = robot("panda.urdf");
    let (q0, _) = poses(&robot);
    let rate_limit = 1000.0;
    let name = controller.name();
    let mut guarded = Guarded::new(controller, &robot, Some(rate_limit)).unwrap();
    let before = guarded.parameters().values("stiffness").to_vec();
    let stiffer: Vec<f64> = before.iter().map(|k| 4.0 * k).collect();
    // Taking over from a brake that held the arm: the rate limit starts from the holding torque.
    let mut hold = vec![0.0; robot.dof()];
    gravity_torques(&robot, &mut DynamicsWorkspace::new(&robot), &q0, &mut hold).unwrap();
    guarded.safety_mut().reset(&hold);
    let push = Wrench {
        force: Vector3::new(10.0, 10.0, -10.0),
        torque: Vector3::zeros(),
    };
    let mut sim = Simulator::new(
        &robot,
        &q0,
        SimConfig {
            external_wrench: Some(push),
            ..SimConfig::default()
        },
    )
    .unwrap();
    let switch = 1500;
    let log = run_closed_loop(
        &mut sim,
        &mut guarded,
        &SetPoint::new(q0.clone()),
        3000,
        |k, _, c| {
            if k == switch {
                c.set_parameter("stiffness", ParameterValue::DoubleArray(stiffer.clone()))
                    .unwrap();
            }
        },
    )
    .unwrap();
    // What the change would do at once: the same law with the new stiffness at the same state.
    let mut instant = armctl_control::controller_by_name(name, &robot).unwrap();
    instant
        .set_parameter("stiffness", ParameterValue::DoubleArray(stiffer.clone()))
        .unwrap();
    instant.parameters_mut().settle();
    let q: Vec<f64> = (0..robot.dof()).map(|i| log.q[i][switch]).collect();
    instant.reset(&armctl_control::JointState {
        q: &q0,
        qd: &vec![0.0; robot.dof()],
    });
    let mut stiff_effort = vec![0.0; robot.dof()];
    let qd = vec![0.0; robot.dof()];
    instant
        .update(
            &armctl_control::JointState { q: &q, qd: &qd },
            &armctl_control::JointReference::hold(&q0),
            1e-3,
            &mut stiff_effort,
        )
        .unwrap();
    let jump_if_immediate = (0..robot.dof())
        .map(|i| (stiff_effort[i] - log.commanded[i][switch - 1]).abs())
        .fold(0.0, f64::max);
    let largest_step = (0..robot.dof())
        .flat_map(|i| {
            log.commanded[i]
                .windows(2)
                .map(|w| (w[1] - w[0]).abs())
                .collect::<Vec<_>>()
        })
        .fold(0.0, f64::max);
    eprintln!("{name}: stiffness x4: effort step if applied at once {jump_if_immediate:.2} N m, largest step {largest_step:.3} N m");
    assert!(
        jump_if_immediate > 5.0 * rate_limit * 1e-3,
        "{name}: the test should change the effort noticeably"
    );
    assert!(
        largest_step <= rate_limit * 1e-3 + 1e-9,
        "{name}: largest effort step {largest_step}"
    );
    assert!((guarded.parameters().values("stiffness")[0] - stiffer[0]).abs() < 1e-6 * stiffer[0]);
}

#[test]
fn a_stiffness_change_while_running_makes_no_effort_jump() {
    let robot = robot("panda.urdf");
    stiffness_change_is_smooth(Box::new(JointImpedance::new(&robot).unwrap()));
    stiffness_change_is_smooth(Box::new(
        armctl_control::CartesianImpedance::new(&robot).unwrap(),
    ));
}

#[test]
fn bad_parameters_are_rejected_and_the_old_values_kept() {
    let robot = robot("panda.urdf");
    let mut controllers: Vec<Box<dyn Controller>> = [
        "independent_pd",
        "pd_gravity",
        "pd_fixed_gravity",
        "computed_torque",
        "joint_impedance",
    ]
    .iter()
    .map(|name| armctl_control::controller_by_name(name, &robot).unwrap())
    .collect();
    for c in &mut controllers {
        let name = c.parameters().declarations()[0].name.clone();
        let name = name.as_str();
        let before = c.parameters().values(name).to_vec();
        for bad in [
            ParameterValue::DoubleArray(vec![-1.0; 7]),
            ParameterValue::DoubleArray(vec![1.0; 3]),
            ParameterValue::DoubleArray(vec![f64::NAN; 7]),
            ParameterValue::Double(1.0),
        ] {
            let e = c.set_parameter(name, bad.clone()).unwrap_err();
            assert!(e.to_string().contains(name), "{}: {e}", c.name());
            assert_eq!(
                c.parameters().values(name),
                before.as_slice(),
                "{}: value changed",
                c.name()
            );
        }
        assert!(c
            .set_parameter("no_such_gain", ParameterValue::Double(1.0))
            .is_err());
    }
}
