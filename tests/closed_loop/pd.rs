//! PD laws: independent PD's predicted gravity error, PD with online gravity, PD with fixed
//! gravity where its gain condition holds.

use super::*;

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
