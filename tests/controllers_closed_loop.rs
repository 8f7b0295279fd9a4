//! Controllers in closed loop on the embedded simulator (Panda and PUMA): the claims of
//! docs/theory.md section 6, with the numbers asserted.

use armctl_control::damping_bound::DampingBound;
use armctl_control::reference::{Quintic, SetPoint, Trajectory};
use armctl_control::{
    gravity_gradient_bound, ComputedTorque, Controller, Guarded, IndependentPd, JointImpedance,
    ParameterValue, PdFixedGravity, PdGravity,
};
use armctl_dynamics::{gravity_torques, DynamicsWorkspace, Wrench};
use armctl_e2e::{scaled, urdf_dir};
use armctl_model::{jacobian, ChainOptions, FrameId, KinematicsWorkspace, Robot};
use armctl_sim::{run_closed_loop, ModelMismatch, RunLog, SimConfig, Simulator};
use nalgebra::{DVector, Matrix6xX, Vector3, Vector6};

fn robot(file: &str) -> Robot {
    Robot::from_urdf_file(urdf_dir().join(file), &ChainOptions::default()).unwrap()
}

/// Start and goal configurations well inside the limits.
fn poses(robot: &Robot) -> (Vec<f64>, Vec<f64>) {
    match robot.dof() {
        7 => (
            vec![0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8],
            vec![0.3, -0.5, 0.2, -2.2, 0.4, 1.5, 0.6],
        ),
        _ => (
            vec![0.0, 0.5, -1.2, 0.0, 0.4, 0.0],
            vec![0.3, 0.7, -1.5, 0.3, 0.6, 0.4],
        ),
    }
}

fn run(
    robot: &Robot,
    controller: &mut dyn Controller,
    trajectory: &dyn Trajectory,
    q0: &[f64],
    seconds: f64,
    config: SimConfig,
) -> RunLog {
    let steps = (seconds / config.dt).round() as usize;
    let mut sim = Simulator::new(robot, q0, config).unwrap();
    run_closed_loop(&mut sim, controller, trajectory, steps, |_, _, _| {}).unwrap()
}

/// `M_ii` at `q`.
fn joint_inertias(robot: &Robot, q: &[f64]) -> Vec<f64> {
    let mut m = nalgebra::DMatrix::zeros(robot.dof(), robot.dof());
    armctl_dynamics::mass_matrix(robot, &mut DynamicsWorkspace::new(robot), q, &mut m).unwrap();
    (0..robot.dof()).map(|i| m[(i, i)]).collect()
}

/// The gains the law tests below were designed with (the course's values), not the defaults,
/// which are sized conservatively for arms nobody tuned: `Lambda = 20/s`, `Kd = 100/s` times
/// the effective joint inertia `1/(M^-1)_ii` at mid-range.
fn textbook_slotine_li_gains(robot: &Robot, controller: &mut dyn Controller) {
    let n = robot.dof();
    let mut m = nalgebra::DMatrix::zeros(n, n);
    let q = robot.middle_configuration();
    armctl_dynamics::mass_matrix(robot, &mut DynamicsWorkspace::new(robot), &q, &mut m).unwrap();
    let inverse = m.try_inverse().unwrap();
    set(controller, "lambda", vec![20.0; n]);
    set(
        controller,
        "kd",
        (0..n).map(|i| 100.0 / inverse[(i, i)]).collect(),
    );
    if !controller.estimates().is_empty() {
        for rate in ["gamma_inertia", "gamma_first_moment", "gamma_mass"] {
            controller
                .set_parameter(rate, ParameterValue::Double(TEST_RATE))
                .unwrap();
        }
    }
}

/// Adaptation rate of the learning tests, 1/s: the stiff textbook gains above leave errors
/// small, which the normalised update answers slowly at the default rate.
const TEST_RATE: f64 = 10.0;

fn final_q(log: &RunLog) -> Vec<f64> {
    log.q.iter().map(|c| *c.last().unwrap()).collect()
}

/// The largest `|q - goal|` over joints at the end of `log`.
fn worst_final_error(log: &RunLog, goal: &[f64]) -> f64 {
    final_q(log)
        .iter()
        .zip(goal)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
}

fn set(controller: &mut dyn Controller, name: &str, values: Vec<f64>) {
    controller
        .set_parameter(name, ParameterValue::DoubleArray(values))
        .unwrap();
    controller.parameters_mut().settle();
}

#[test]
fn independent_pd_leaves_the_predicted_gravity_error() {
    for file in ["panda.urdf", "puma560.urdf"] {
        let robot = robot(file);
        let (q0, goal) = poses(&robot);
        let mut pd = IndependentPd::new(&robot).unwrap();
        let kp = pd.parameters().values("kp").to_vec();
        let log = run(
            &robot,
            &mut pd,
            &SetPoint::new(goal.clone()),
            &q0,
            10.0,
            SimConfig::default(),
        );
        let q = final_q(&log);
        let mut g = vec![0.0; robot.dof()];
        gravity_torques(&robot, &mut DynamicsWorkspace::new(&robot), &q, &mut g).unwrap();
        for i in 0..robot.dof() {
            let (error, predicted) = (goal[i] - q[i], g[i] / kp[i]);
            // (1e-5 rad: what the slowest, overdamped mode of the conservative defaults has
            // left after 10 s.)
            assert!(
                (error - predicted).abs() <= 0.05 * predicted.abs() + 1e-5,
                "{file} joint {i}: error {error}, Kp^-1 G(q) = {predicted}"
            );
        }
        let worst = (0..robot.dof())
            .map(|i| (goal[i] - q[i]).abs())
            .fold(0.0, f64::max);
        assert!(
            worst > 1e-3,
            "{file}: gravity should leave a visible error, got {worst}"
        );
    }
}

#[test]
fn pd_with_online_gravity_reaches_the_set_point() {
    for file in ["panda.urdf", "puma560.urdf"] {
        let robot = robot(file);
        let (q0, goal) = poses(&robot);
        let log = run(
            &robot,
            &mut PdGravity::new(&robot).unwrap(),
            &SetPoint::new(goal.clone()),
            &q0,
            10.0,
            SimConfig::default(),
        );
        let worst = worst_final_error(&log, &goal);
        assert!(worst < 1e-4, "{file}: final error {worst:e}");
    }
}

/// Per-joint kp from the largest Gershgorin row sum of dG/dq over the samples (so Kp + dG/dq is
/// diagonally dominant, hence positive definite): the wrist's kp is far below sup ||dG/dq||,
/// which the stricter norm condition calls unstable; the textbook's condition holds, and the
/// set point is reached.
fn gains_shaped_to_the_gravity_load_are_stable(
    robot: &Robot,
    q0: &[f64],
    goal: &[f64],
    bound: f64,
) {
    let n = robot.dof();
    let gradients = armctl_control::gravity_gradients(robot).unwrap();
    let kp: Vec<f64> = (0..n)
        .map(|i| {
            let row = |g: &nalgebra::DMatrix<f64>| (0..n).map(|j| g[(i, j)].abs()).sum::<f64>();
            1.2 * gradients.iter().map(row).fold(0.0, f64::max) + 0.2 * bound
        })
        .collect();
    let weakest = kp.iter().copied().fold(f64::INFINITY, f64::min);
    eprintln!("load-shaped kp {kp:.1?}, sup ||dG/dq|| {bound:.1}");
    assert!(
        weakest < bound,
        "the norm condition would warn: {weakest} < {bound}"
    );
    let mut controller = PdFixedGravity::new(robot).unwrap();
    set(&mut controller, "kp", kp.clone());
    set(
        &mut controller,
        "kd",
        joint_inertias(robot, goal)
            .iter()
            .zip(&kp)
            .map(|(m, k)| 2.0 * (k * m).sqrt())
            .collect(),
    );
    assert!(
        controller.gain_condition_holds(),
        "{:?}",
        controller.warnings()
    );
    let dt = if n == 7 { 1e-3 } else { 1e-4 };
    let config = SimConfig {
        dt,
        ..SimConfig::default()
    };
    let log = run(
        robot,
        &mut controller,
        &SetPoint::new(goal.to_vec()),
        q0,
        8.0,
        config,
    );
    let worst = worst_final_error(&log, goal);
    assert!(worst < 1e-3, "load-shaped gains: final error {worst:e}");
}

#[test]
fn pd_with_fixed_gravity_reaches_the_set_point_where_the_gain_condition_holds() {
    for file in ["panda.urdf", "puma560.urdf"] {
        let robot = robot(file);
        let (q0, goal) = poses(&robot);
        let mut controller = PdFixedGravity::new(&robot).unwrap();
        let bound = controller.gravity_gradient_bound();
        assert!((bound - gravity_gradient_bound(&robot).unwrap()).abs() < 1e-9);
        eprintln!("{file}: estimated sup ||dG/dq|| = {bound:.2} N m/rad");
        // Soft gains: the condition fails and the controller says so.
        set(&mut controller, "kp", vec![0.5 * bound; robot.dof()]);
        assert!(!controller.gain_condition_holds());
        assert!(
            controller.warnings()[0].contains("gain condition"),
            "{:?}",
            controller.warnings()
        );
        // Every kp above the bound: it holds, and the set point is reached. Critical damping
        // per joint; the PUMA's last link has 4e-5 kg m^2 about its axis, too light for such a
        // kp at 1 kHz, so it runs at 10 kHz.
        let n = robot.dof();
        let kp = 1.5 * bound;
        set(&mut controller, "kp", vec![kp; n]);
        set(
            &mut controller,
            "kd",
            joint_inertias(&robot, &goal)
                .iter()
                .map(|m| 2.0 * (kp * m).sqrt())
                .collect(),
        );
        assert!(
            controller.gain_condition_holds(),
            "{:?}",
            controller.warnings()
        );
        let dt = if n == 7 { 1e-3 } else { 1e-4 };
        let log = run(
            &robot,
            &mut controller,
            &SetPoint::new(goal.clone()),
            &q0,
            8.0,
            SimConfig {
                dt,
                ..SimConfig::default()
            },
        );
        let worst = worst_final_error(&log, &goal);
        assert!(worst < 1e-4, "{file}: final error {worst:e}");
        gains_shaped_to_the_gravity_load_are_stable(&robot, &q0, &goal, bound);
    }
}

#[test]
fn computed_torque_tracks_a_quintic_and_stays_bounded_with_a_mass_error() {
    for file in ["panda.urdf", "puma560.urdf"] {
        let robot = robot(file);
        let (q0, goal) = poses(&robot);
        let quintic = Quintic::new(q0.clone(), goal, 2.0).unwrap();
        // The claim is the law's, for given gains: 30 rad/s, critically damped, on every joint
        // (the defaults are softer where a reference step would saturate a joint).
        let with_gains = |robot: &Robot| {
            let mut ct = ComputedTorque::new(robot).unwrap();
            set(&mut ct, "kp", vec![900.0; robot.dof()]);
            set(&mut ct, "kd", vec![60.0; robot.dof()]);
            ct
        };
        let log = run(
            &robot,
            &mut with_gains(&robot),
            &quintic,
            &q0,
            2.0,
            SimConfig::default(),
        );
        let rms = log.rms_error_all(0.0, 2.0);
        eprintln!("{file}: computed torque RMS {rms:e} rad (exact model)");
        assert!(rms < 1e-4, "{file}: RMS {rms:e}");
        // The plant is 20% heavier than the model: the error grows but stays bounded.
        let heavier = SimConfig {
            mismatch: ModelMismatch {
                mass_scale: Some(1.2),
                payload: None,
            },
            ..SimConfig::default()
        };
        let log = run(&robot, &mut with_gains(&robot), &quintic, &q0, 3.0, heavier);
        let worst = (0..robot.dof())
            .flat_map(|i| log.error(i))
            .fold(0.0, |m: f64, e| m.max(e.abs()));
        eprintln!(
            "{file}: computed torque, 20% mass error: largest error {worst:e} rad, RMS {:e}",
            log.rms_error_all(0.0, 3.0)
        );
        assert!(
            worst < 0.02 && log.rms_error_all(0.0, 3.0) > rms,
            "{file}: largest error {worst}"
        );
    }
}

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

/// A repeating, exciting reference that starts at rest at `start`:
/// `q = start + A (1 - cos(2 pi f t))` with f multiples of 0.2 Hz (period 5 s).
fn exciting(robot: &Robot, start: &[f64]) -> armctl_control::reference::Sinusoid {
    let n = robot.dof();
    let amplitude: Vec<f64> = (0..n).map(|i| if i < 4 { 0.25 } else { 0.3 }).collect();
    let center: Vec<f64> = start.iter().zip(&amplitude).map(|(q, a)| q + a).collect();
    let frequency: Vec<f64> = (0..n).map(|i| 0.2 * (1 + i % 3) as f64).collect();
    armctl_control::reference::Sinusoid::new(
        center,
        amplitude,
        frequency,
        vec![-std::f64::consts::FRAC_PI_2; n],
    )
    .unwrap()
}

#[test]
fn slotine_li_known_model_tracks() {
    for file in ["panda.urdf", "puma560.urdf"] {
        let robot = robot(file);
        let (q0, _) = poses(&robot);
        let reference = exciting(&robot, &q0);
        let log = run(
            &robot,
            &mut armctl_control::SlotineLi::new(&robot).unwrap(),
            &reference,
            &q0,
            5.0,
            SimConfig::default(),
        );
        let rms = log.rms_error_all(1.0, 5.0);
        eprintln!("{file}: Slotine-Li, known model: RMS {rms:e} rad");
        assert!(rms < 1e-3, "{file}: RMS {rms:e}");
    }
}

#[test]
fn slotine_li_adaptive_learns_a_model_fifty_percent_off() {
    for file in ["panda.urdf", "puma560.urdf"] {
        let truth = robot(file);
        let model = scaled(&truth, 0.5);
        let (q0, _) = poses(&truth);
        let reference = exciting(&truth, &q0);
        let period = 5.0;
        let seconds = 60.0;
        let mut adaptive = armctl_control::SlotineLiAdaptive::new(&model).unwrap();
        textbook_slotine_li_gains(&model, &mut adaptive);
        let log = run(
            &truth,
            &mut adaptive,
            &reference,
            &q0,
            seconds,
            SimConfig::default(),
        );
        let first = log.rms_error_all(0.0, period);
        let last = log.rms_error_all(seconds - period, seconds);
        let at_20 = log.rms_error_all(20.0 - period, 20.0);
        let mut fixed = armctl_control::SlotineLiAdaptive::new(&model).unwrap();
        textbook_slotine_li_gains(&model, &mut fixed);
        for rate in ["gamma_inertia", "gamma_first_moment", "gamma_mass"] {
            fixed
                .set_parameter(rate, ParameterValue::Double(0.0))
                .unwrap();
        }
        let without = run(
            &truth,
            &mut fixed,
            &reference,
            &q0,
            seconds,
            SimConfig::default(),
        )
        .rms_error_all(seconds - period, seconds);
        let masses: Vec<f64> = adaptive.estimate().chunks(10).map(|p| p[9]).collect();
        let true_masses: Vec<f64> = truth.links().iter().map(|l| l.mass).collect();
        eprintln!(
            "{file}: adaptive RMS first period {first:.3e}, period ending at 20 s {at_20:.3e}, last {last:.3e}; without adaptation {without:.3e}\n  masses {masses:.3?}\n  true   {true_masses:.3?}"
        );
        // The normalised update (crate::adaptation) learns more slowly than the bare gradient
        // did (10x lower by the last period, below 1e-3 by 20 s), in exchange for never running
        // away; on the PUMA 560's full set the error falls 2.7x in 60 s.
        assert!(first >= 2.5 * last, "{file}: first {first:e} last {last:e}");
        assert!(at_20 < 5e-3, "{file}: RMS by 20 s {at_20:e}");
        assert!(
            without > 2.0 * last,
            "{file}: adaptation should help: {without:e} vs {last:e}"
        );
        let bounded = log
            .estimates
            .iter()
            .all(|c| c.iter().all(|v| v.is_finite() && v.abs() < 100.0));
        assert!(
            bounded && masses.iter().all(|&m| m >= 1e-3),
            "{file}: estimates {masses:?}"
        );
    }
}

/// The base parameters' error seen through the torques: RMS of `Y_b (p_b_hat - p_b)` over
/// random states, relative to the RMS of `Y_b p_b`.
fn torque_error_of_base_estimate(truth: &Robot, estimate: &[f64]) -> f64 {
    let base = armctl_dynamics::numeric_base_parameters(truth).unwrap();
    let p_b = base.values(&truth.parameter_vector()).unwrap();
    let y = armctl_dynamics::stacked_regressor(truth, 200, 5).unwrap();
    let mut y_b = nalgebra::DMatrix::zeros(y.nrows(), base.count());
    base.select(&y, &mut y_b).unwrap();
    let error = &y_b * (DVector::from_column_slice(estimate) - &p_b);
    error.norm() / (&y_b * &p_b).norm()
}

#[test]
fn slotine_li_adaptive_base_learns_the_base_parameters_of_a_model_fifty_percent_off() {
    for file in ["panda.urdf", "puma560.urdf"] {
        let truth = robot(file);
        let model = scaled(&truth, 0.5);
        let (q0, _) = poses(&truth);
        let reference = exciting(&truth, &q0);
        let (period, seconds) = (5.0, 60.0);
        let mut adaptive = armctl_control::SlotineLiAdaptive::on_base_parameters(&model).unwrap();
        textbook_slotine_li_gains(&model, &mut adaptive);
        let before = torque_error_of_base_estimate(&truth, adaptive.estimates());
        let log = run(
            &truth,
            &mut adaptive,
            &reference,
            &q0,
            seconds,
            SimConfig::default(),
        );
        let after = torque_error_of_base_estimate(&truth, adaptive.estimates());
        let first = log.rms_error_all(0.0, period);
        let last = log.rms_error_all(seconds - period, seconds);
        eprintln!(
            "{file}: base-parameter Slotine-Li, {} parameters: RMS first period {first:.3e}, last {last:.3e}; torque error of the estimate {before:.3} -> {after:.3}",
            adaptive.estimates().len()
        );
        assert!(first >= 4.0 * last, "{file}: first {first:e} last {last:e}");
        assert!(
            after < 0.5 * before,
            "{file}: estimate error {before} -> {after}"
        );
        assert!(adaptive.estimates().iter().all(|v| v.is_finite()));
    }
}

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

/// RMS over all joints and steps of the effort's second difference, N m: high-frequency content.
fn effort_roughness(log: &RunLog) -> f64 {
    let values: Vec<f64> = log
        .commanded
        .iter()
        .flat_map(|c| {
            c.windows(3)
                .map(|w| w[2] - 2.0 * w[1] + w[0])
                .collect::<Vec<_>>()
        })
        .collect();
    (values.iter().map(|v| v * v).sum::<f64>() / values.len() as f64).sqrt()
}

fn largest_error(log: &RunLog) -> f64 {
    (0..log.q.len())
        .flat_map(|i| log.error(i))
        .fold(0.0, |m: f64, e| m.max(e.abs()))
}

#[test]
fn sliding_mode_boundary_layer_removes_chattering_and_keeps_the_error_bounded() {
    for file in ["panda.urdf", "puma560.urdf"] {
        let robot = robot(file);
        let (q0, goal) = poses(&robot);
        let quintic = Quintic::new(q0.clone(), goal, 2.0).unwrap();
        let heavier = SimConfig {
            mismatch: ModelMismatch {
                mass_scale: Some(1.2),
                payload: None,
            },
            ..SimConfig::default()
        };
        let mut results = Vec::new();
        for phi in [0.0, 0.1] {
            let mut controller = armctl_control::SlidingMode::new(&robot).unwrap();
            // The course's gains and law (no linear term), not the conservative defaults.
            set(&mut controller, "lambda", vec![20.0; robot.dof()]);
            set(&mut controller, "k", vec![20.0; robot.dof()]);
            set(&mut controller, "kd", vec![0.0; robot.dof()]);
            controller
                .set_parameter("phi", ParameterValue::Double(phi))
                .unwrap();
            let log = run(&robot, &mut controller, &quintic, &q0, 3.0, heavier.clone());
            results.push((effort_roughness(&log), largest_error(&log)));
        }
        let ((chatter, switching_error), (smooth, layer_error)) = (results[0], results[1]);
        eprintln!("{file}: sliding mode, effort second-difference RMS: switching {chatter:.3e} N m, boundary layer {smooth:.3e} N m; largest error {switching_error:.2e} / {layer_error:.2e} rad");
        assert!(smooth < 0.01, "{file}: boundary layer roughness {smooth}");
        assert!(
            chatter > 10.0 * smooth,
            "{file}: switching should chatter: {chatter} vs {smooth}"
        );
        assert!(
            layer_error < 0.01 && switching_error < 0.01,
            "{file}: errors {switching_error} {layer_error}"
        );
    }
}

#[test]
fn robust_control_keeps_the_error_bounded_under_a_thirty_percent_model_error() {
    for file in ["panda.urdf", "puma560.urdf"] {
        let robot = robot(file);
        let (q0, goal) = poses(&robot);
        let quintic = Quintic::new(q0.clone(), goal, 2.0).unwrap();
        let heavier = SimConfig {
            mismatch: ModelMismatch {
                mass_scale: Some(1.3),
                payload: None,
            },
            ..SimConfig::default()
        };
        // Spong's term at the course's size, not the conservative defaults.
        let mut law = armctl_control::Robust::new(&robot).unwrap();
        for (name, value) in [("rho", 50.0), ("eps", 1e-5)] {
            law.set_parameter(name, ParameterValue::Double(value))
                .unwrap();
        }
        let robust = run(&robot, &mut law, &quintic, &q0, 4.0, heavier.clone());
        let nominal = run(
            &robot,
            &mut ComputedTorque::new(&robot).unwrap(),
            &quintic,
            &q0,
            4.0,
            heavier,
        );
        let (r, c) = (largest_error(&robust), largest_error(&nominal));
        let (r_end, c_end) = (
            robust.rms_error_all(3.0, 4.0),
            nominal.rms_error_all(3.0, 4.0),
        );
        eprintln!("{file}: 30% model error: robust largest {r:.2e} rad (last second RMS {r_end:.2e}), computed torque {c:.2e} ({c_end:.2e})");
        assert!(r < 5e-3, "{file}: robust largest error {r}");
        assert!(r < c && r_end <= c_end, "{file}: robust {r} vs nominal {c}");
    }
}

/// Tracks a pose interpolation (1.5 s, 7.5 cm and 0.27 rad): tip position error along the path,
/// from forward kinematics of the logged joint positions.
#[test]
fn resolved_acceleration_tracks_a_pose_interpolation() {
    for file in ["panda.urdf", "puma560.urdf"] {
        let robot = robot(file);
        let (q0, _) = poses(&robot);
        let mut kin = KinematicsWorkspace::new(&robot);
        let start = armctl_model::forward_kinematics(&robot, &mut kin, &q0)
            .unwrap()
            .tip();
        let goal = nalgebra::IsometryMatrix3::from_parts(
            (start.translation.vector + Vector3::new(0.06, -0.05, 0.04)).into(),
            nalgebra::Rotation3::from_euler_angles(0.15, -0.1, 0.2) * start.rotation,
        );
        let path = armctl_control::reference::PoseInterpolation::new(start, goal, 1.5).unwrap();
        let mut controller = armctl_control::ResolvedAcceleration::new(&robot).unwrap();
        let mut sim = Simulator::new(&robot, &q0, SimConfig::default()).unwrap();
        let log = run_closed_loop(
            &mut sim,
            &mut controller,
            &SetPoint::new(q0.clone()),
            2500,
            |k, _, c| {
                if k == 0 {
                    c.task_space().unwrap().set_target_pose(goal, 1.5).unwrap();
                }
            },
        )
        .unwrap();
        let mut sum = 0.0;
        let mut count = 0.0;
        for k in (0..log.time.len()).step_by(10) {
            let q: Vec<f64> = log.q.iter().map(|c| c[k]).collect();
            let tip = armctl_model::forward_kinematics(&robot, &mut kin, &q)
                .unwrap()
                .tip();
            // The controller's clock starts with the first update, one step before t.
            let want = path.sample(log.time[k]);
            sum += (tip.translation.vector - want.pose.translation.vector).norm_squared();
            count += 1.0;
        }
        let rms = (sum / count).sqrt();
        let end = (controller.tip_pose().translation.vector - goal.translation.vector).norm();
        eprintln!("{file}: resolved acceleration, tip RMS error along the path {rms:.2e} m, final {end:.2e} m");
        assert!(rms < 1e-4 && end < 1e-6, "{file}: RMS {rms}, final {end}");
    }
}

/// Adaptive computed torque (prediction-error update) improves on its fixed model on the Panda
/// at 1/s; on the PUMA 560 (no rotor inertia, 4e-5 kg m^2 about joint 6) it stays bounded and
/// no worse at a tiny rate. (Its default, 0.03/s, is chosen for stability after a step with a
/// wrong model, where it learns little: its documented limitation.)
#[test]
fn adaptive_computed_torque_learns_on_the_panda_and_stays_bounded_on_the_puma() {
    for (file, rate) in [("panda.urdf", Some(1.0)), ("puma560.urdf", Some(1e-4))] {
        let truth = robot(file);
        let model = scaled(&truth, 0.5);
        let (q0, _) = poses(&truth);
        let reference = exciting(&truth, &q0);
        let with_rate = |r: Option<f64>| {
            let mut c = armctl_control::AdaptiveComputedTorque::new(&model).unwrap();
            if let Some(r) = r {
                for name in ["gamma_inertia", "gamma_first_moment", "gamma_mass"] {
                    c.set_parameter(name, ParameterValue::Double(r)).unwrap();
                }
            }
            c
        };
        let mut adaptive = with_rate(rate);
        let log = run(
            &truth,
            &mut adaptive,
            &reference,
            &q0,
            30.0,
            SimConfig::default(),
        );
        let (first, last) = (log.rms_error_all(0.0, 5.0), log.rms_error_all(25.0, 30.0));
        let without = run(
            &truth,
            &mut with_rate(Some(0.0)),
            &reference,
            &q0,
            30.0,
            SimConfig::default(),
        )
        .rms_error_all(25.0, 30.0);
        eprintln!("{file}: adaptive computed torque RMS first period {first:.3e}, last {last:.3e}; without adaptation {without:.3e}");
        assert!(adaptive
            .estimate()
            .iter()
            .all(|v| v.is_finite() && v.abs() < 100.0));
        if file == "panda.urdf" {
            assert!(
                last < without && last < first,
                "{file}: first {first} last {last} without {without}"
            );
        } else {
            assert!(
                last <= without * 1.01,
                "{file}: bounded and no worse: {last} vs {without}"
            );
        }
    }
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

/// A gain design to try: its name, the law, the design's values, the designed poles and the
/// gain that shows them.
type Design<'a> = (
    &'a str,
    Box<dyn Controller>,
    Vec<(&'a str, ParameterValue)>,
    (f64, f64),
    &'a str,
);

/// The step response of one joint's error `e(t)` for the closed loop `edd + kd ed + kp e = 0`
/// from `e(0) = e0`, `ed(0) = 0`, with real poles `p1 != p2`.
fn two_pole_response(e0: f64, p1: f64, p2: f64, t: f64) -> f64 {
    e0 * (p2 * (p1 * t).exp() - p1 * (p2 * t).exp()) / (p2 - p1)
}

/// Asserts that `errors` (sampled every `dt`) fall to 1/e and to 5% of their start within 5%
/// of the times of the designed response from `e0` with poles `p1`, `p2`.
fn assert_falls_as_designed(errors: &[f64], (e0, p1, p2): (f64, f64, f64), dt: f64, what: &str) {
    let designed: Vec<f64> = (0..errors.len())
        .map(|k| two_pole_response(e0, p1, p2, k as f64 * dt))
        .collect();
    for fraction in [(-1.0f64).exp(), 0.05] {
        let (measured, expected) = (
            time_to_fall(errors, fraction, dt),
            time_to_fall(&designed, fraction, dt),
        );
        eprintln!("{what}: to {fraction:.3} in {measured:.3} s, designed {expected:.3} s");
        assert!(
            (measured - expected).abs() < 0.05 * expected,
            "{what}: {measured} s against {expected} s"
        );
    }
}

/// The time a decaying `errors` series (sampled every `dt`) first falls below `fraction` of its
/// start.
fn time_to_fall(errors: &[f64], fraction: f64, dt: f64) -> f64 {
    let start = errors[0].abs();
    errors
        .iter()
        .position(|e| e.abs() < fraction * start)
        .map_or(f64::INFINITY, |k| k as f64 * dt)
}

/// Pole placement and LQR on computed torque and on sliding mode (inside its layer): the
/// Panda's measured step responses (exact model, no friction) have the designed time constants: the times to fall to 1/e and to 5%
/// of a 0.05 rad step within 5% of the designed closed loop's.
#[test]
fn designed_gains_give_the_designed_step_response() {
    let robot = robot("panda.urdf");
    let (q0, _) = poses(&robot);
    let goal: Vec<f64> = q0.iter().map(|q| q + 0.05).collect();
    let lqr = armctl_control::lqr_double_integrator(1e4, 400.0, 1.0).unwrap();
    let lqr_poles = {
        let (kp, kd) = lqr;
        let root = (kd * kd - 4.0 * kp).sqrt();
        ((-kd + root) / 2.0, (-kd - root) / 2.0)
    };
    let poles = |p: [f64; 2]| ("poles", ParameterValue::DoubleArray(p.repeat(7)));
    let lqr_weights = vec![
        (
            "q_weights",
            ParameterValue::DoubleArray([1e4, 400.0].repeat(7)),
        ),
        ("r_weights", ParameterValue::DoubleArray(vec![1.0; 7])),
    ];
    let computed_torque =
        || -> Box<dyn Controller> { Box::new(ComputedTorque::new(&robot).unwrap()) };
    // Sliding mode inside a layer wide enough for the step (|s| = lambda e0 < phi), without
    // its torque term on s (kd), which the design leaves out.
    let sliding_mode = || -> Box<dyn Controller> {
        let mut c = armctl_control::SlidingMode::new(&robot).unwrap();
        c.set_parameter("phi", ParameterValue::Double(2.0)).unwrap();
        c.set_parameter("kd", ParameterValue::DoubleArray(vec![0.0; 7]))
            .unwrap();
        Box::new(c)
    };
    // (design, law, its design values, the designed poles, the gain that shows them)
    let designs: Vec<Design<'_>> = vec![
        (
            "poles",
            computed_torque(),
            vec![poles([-8.0, -14.0])],
            (-8.0, -14.0),
            "kp",
        ),
        (
            "lqr",
            computed_torque(),
            lqr_weights.clone(),
            lqr_poles,
            "kp",
        ),
        (
            "poles",
            sliding_mode(),
            vec![poles([-8.0, -14.0])],
            (-8.0, -14.0),
            "lambda",
        ),
        ("lqr", sliding_mode(), lqr_weights, lqr_poles, "lambda"),
    ];
    for (design, mut controller, values, (p1, p2), gain) in designs {
        let law = controller.name();
        for (name, value) in values {
            controller.set_parameter(name, value).unwrap();
        }
        controller
            .set_parameter("gain_design", ParameterValue::String(design.into()))
            .unwrap();
        let Some(ParameterValue::DoubleArray(first)) = controller.parameters().get(gain).cloned()
        else {
            panic!("{gain}")
        };
        let expected = if gain == "kp" { p1 * p2 } else { -p1 };
        assert!(
            (first[0] - expected).abs() < 1e-9,
            "{law} {design}: {gain} {first:?}"
        );
        let refused = controller.set_parameter(gain, ParameterValue::DoubleArray(vec![1.0; 7]));
        assert!(
            refused.is_err(),
            "{law} {design}: {gain} set by hand while designed"
        );
        let dt = 1e-3;
        let config = SimConfig {
            friction: false,
            ..SimConfig::default()
        };
        let log = run(
            &robot,
            controller.as_mut(),
            &SetPoint::new(goal.clone()),
            &q0,
            1.5,
            config,
        );
        for (joint, (q, goal)) in log.q.iter().zip(&goal).enumerate() {
            let errors: Vec<f64> = q.iter().map(|q| goal - q).collect();
            let what = format!("{law} {design} joint {joint}");
            assert_falls_as_designed(&errors, (0.05, p1, p2), dt, &what);
        }
    }
}

/// The time until every joint's `s = de + lambda e` is inside the layer `phi` (and stays).
fn time_to_layer(log: &RunLog, lambda: &[f64], phi: f64) -> f64 {
    let dt = log.time[1] - log.time[0];
    let outside = |r: usize| {
        (0..lambda.len()).any(|i| {
            let e = log.reference[i][r] - log.q[i][r];
            let de = if r == 0 {
                0.0
            } else {
                -(log.q[i][r] - log.q[i][r - 1]) / dt
            };
            (de + lambda[i] * e).abs() > phi
        })
    };
    let last_outside = (0..log.time.len()).rev().find(|&r| outside(r));
    last_outside.map_or(0.0, |r| log.time[r] + dt)
}

/// Slotine's form (`M qdd_r + C qd_r + G + Kd s + k(q, qd) sat(s/phi)`) next to the
/// computed-torque form (`RNEA(qdd_d + lambda de + k sat(s/phi)) + Kd s`) with the same surface,
/// layer and reaching acceleration (the defaults: `eta_i = k_i M_ii`), from a 0.5 rad error on
/// every joint of the Panda whose links are 10% heavier than the model (inside the law's 20%
/// parameter bound): both reach the layer within a second, and Slotine's then holds every
/// error within `phi / lambda`. Measured: Slotine's form 0.84 s, the computed-torque form
/// 0.70 s (its switching term acts through the whole `M_hat`, Slotine's through `eta`, sized
/// on the diagonal of M at mid-range).
#[test]
fn slotine_s_sliding_mode_reaches_the_layer_and_holds_the_error_within_phi_over_lambda() {
    let robot = robot("panda.urdf");
    let (q0, _) = poses(&robot);
    let goal: Vec<f64> = q0.iter().map(|q| q + 0.5).collect();
    let mut slotine = armctl_control::SlotineSlidingMode::new(&robot).unwrap();
    let lambda = slotine.parameters().values("lambda").to_vec();
    let phi = slotine.parameters().values("phi")[0];
    let kd = slotine.parameters().values("kd").to_vec();
    let mut ct_form = armctl_control::SlidingMode::new(&robot).unwrap();
    set(&mut ct_form, "lambda", lambda.clone());
    set(&mut ct_form, "kd", kd);
    ct_form
        .set_parameter("phi", ParameterValue::Double(phi))
        .unwrap();
    let config = || SimConfig {
        mismatch: ModelMismatch {
            mass_scale: Some(1.1),
            ..ModelMismatch::default()
        },
        ..SimConfig::default()
    };
    let trajectory = SetPoint::new(goal.clone());
    let slotine_log = run(&robot, &mut slotine, &trajectory, &q0, 3.0, config());
    let ct_log = run(&robot, &mut ct_form, &trajectory, &q0, 3.0, config());
    let (t_slotine, t_ct) = (
        time_to_layer(&slotine_log, &lambda, phi),
        time_to_layer(&ct_log, &lambda, phi),
    );
    eprintln!("into the layer |s| <= {phi} rad/s: Slotine's form {t_slotine:.3} s, computed-torque form {t_ct:.3} s; saturated {} / {}", slotine_log.saturated, ct_log.saturated);
    assert!(t_slotine < 1.0 && t_ct < 1.0, "{t_slotine} s, {t_ct} s");
    let worst = worst_final_error(&slotine_log, &goal);
    let bound = lambda.iter().map(|l| phi / l).fold(0.0, f64::max);
    assert!(
        worst <= bound,
        "final error {worst} above phi / lambda {bound}"
    );
}

/// The model-free variant (`Kd s + eta sat(s/phi)`, no model at all) holds the planar arm at a
/// set point against gravity when `eta` bounds the torque the arm needs there, with the error
/// within `phi / lambda`.
#[test]
fn model_free_sliding_mode_holds_a_set_point_when_eta_bounds_the_dynamics() {
    let robot = robot("planar_2link.urdf");
    let q0 = vec![0.3, 0.8];
    let goal = vec![0.6, 0.5];
    let mut law = armctl_control::SlotineSlidingMode::new(&robot).unwrap();
    law.set_parameter("model_free", ParameterValue::Bool(true))
        .unwrap();
    assert!(
        law.warnings().iter().any(|w| w.contains("eta must bound")),
        "{:?}",
        law.warnings()
    );
    // The arm stretched out (q = 0) needs the most: eta above it bounds gravity everywhere.
    let needed = gravity_of(&robot, &robot.middle_configuration());
    let eta: Vec<f64> = needed.iter().map(|g| 1.5 * g.abs() + 1.0).collect();
    set(&mut law, "eta", eta.clone());
    assert!(law.warnings().is_empty(), "{:?}", law.warnings());
    let lambda = law.parameters().values("lambda").to_vec();
    let phi = law.parameters().values("phi")[0];
    let log = run(
        &robot,
        &mut law,
        &SetPoint::new(goal.clone()),
        &q0,
        4.0,
        SimConfig::default(),
    );
    let worst = worst_final_error(&log, &goal);
    let bound = lambda.iter().map(|l| phi / l).fold(0.0, f64::max);
    eprintln!("model-free: eta {eta:.2?}, final error {worst:.2e} rad, phi / lambda {bound:.2e}");
    assert!(worst <= bound, "final error {worst} above {bound}");
}

fn gravity_of(robot: &Robot, q: &[f64]) -> Vec<f64> {
    let mut g = vec![0.0; robot.dof()];
    gravity_torques(robot, &mut DynamicsWorkspace::new(robot), q, &mut g).unwrap();
    g
}

/// Per-parameter rates (`gamma`, the textbook's diagonal Gamma by name) on the Panda learning
/// a model with half the truth's parameters: every class rate at 0 but `M4: 2.0` adapts link 4's
/// mass alone, towards the truth; `M4: 0` with the class rates on leaves it at the model's
/// value while the others move. Bad entries are refused naming them.
#[test]
fn per_parameter_adaptation_rates_by_name() {
    let truth = robot("panda.urdf");
    let model = scaled(&truth, 0.5);
    let (q0, _) = poses(&truth);
    let reference = exciting(&truth, &q0);
    let m4 = 3 * 10 + 9;
    let run_with = |classes: f64, gamma: &[&str]| {
        let mut law = armctl_control::SlotineLiAdaptive::new(&model).unwrap();
        textbook_slotine_li_gains(&model, &mut law);
        for rate in ["gamma_inertia", "gamma_first_moment", "gamma_mass"] {
            law.set_parameter(rate, ParameterValue::Double(classes))
                .unwrap();
        }
        let entries = gamma.iter().map(|s| s.to_string()).collect();
        law.set_parameter("gamma", ParameterValue::StringArray(entries))
            .unwrap();
        run(
            &truth,
            &mut law,
            &reference,
            &q0,
            10.0,
            SimConfig::default(),
        );
        law.estimate().to_vec()
    };
    let initial = model.parameter_vector();
    let alone = run_with(0.0, &["M4: 2.0"]);
    let moved: Vec<usize> = (0..alone.len())
        .filter(|&k| (alone[k] - initial[k]).abs() > 1e-12)
        .collect();
    eprintln!(
        "M4 alone: {:.3} -> {:.3} (truth {:.3})",
        initial[m4],
        alone[m4],
        truth.parameter_vector()[m4]
    );
    assert_eq!(moved, vec![m4], "only M4 adapts");
    let true_m4 = truth.parameter_vector()[m4];
    assert!((alone[m4] - true_m4).abs() < (initial[m4] - true_m4).abs());
    let frozen = run_with(1.0, &["M4: 0"]);
    assert_eq!(frozen[m4], initial[m4]);
    assert!(
        (0..frozen.len())
            .filter(|&k| frozen[k] != initial[k])
            .count()
            > 30
    );
    let mut law = armctl_control::SlotineLiAdaptive::new(&model).unwrap();
    for (entry, says) in [
        ("M9: 1.0", "no adapted parameter 'M9'"),
        ("M4 1.0", "NAME: RATE"),
        ("M4: -1", "[0, 1000]"),
    ] {
        let e = law
            .set_parameter("gamma", ParameterValue::StringArray(vec![entry.into()]))
            .unwrap_err()
            .to_string();
        assert!(e.contains(says), "{entry}: {e}");
    }
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

/// Pole placement on resolved acceleration, per task axis: a 2 cm step of the Panda's tip
/// target along x falls to 1/e and to 5% within 5% of the designed times.
#[test]
fn designed_task_space_gains_give_the_designed_tip_step_response() {
    let robot = robot("panda.urdf");
    let (q0, _) = poses(&robot);
    let mut law = armctl_control::ResolvedAcceleration::new(&robot).unwrap();
    let poles = ParameterValue::DoubleArray([-8.0, -14.0].repeat(6));
    law.set_parameter("poles", poles).unwrap();
    law.set_parameter("gain_design", ParameterValue::String("poles".into()))
        .unwrap();
    let mut kin = KinematicsWorkspace::new(&robot);
    let start = armctl_model::forward_kinematics(&robot, &mut kin, &q0)
        .unwrap()
        .tip();
    let step = 0.02;
    let mut goal = start;
    goal.translation.vector.x += step;
    let config = SimConfig {
        friction: false,
        ..SimConfig::default()
    };
    let mut sim = Simulator::new(&robot, &q0, config).unwrap();
    let hold = SetPoint::new(q0.clone());
    // The target jumps at the first step (reached in one millisecond).
    let log = run_closed_loop(&mut sim, &mut law, &hold, 1500, |k, _, law| {
        if k == 0 {
            let task = law.task_space().unwrap();
            task.set_target_pose(goal, 1e-3).unwrap();
        }
    })
    .unwrap();
    let errors: Vec<f64> = (0..log.time.len())
        .map(|r| {
            let q: Vec<f64> = log.q.iter().map(|c| c[r]).collect();
            let tip = armctl_model::forward_kinematics(&robot, &mut kin, &q)
                .unwrap()
                .tip();
            goal.translation.vector.x - tip.translation.vector.x
        })
        .collect();
    let dt = 1e-3;
    assert_falls_as_designed(
        &errors,
        (step, -8.0, -14.0),
        dt,
        "resolved acceleration: tip x",
    );
}
