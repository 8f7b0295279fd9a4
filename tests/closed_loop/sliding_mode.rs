//! Sliding mode: the boundary layer, Slotine's form reaching its layer, the model-free form.

use super::*;

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

fn gravity_of(robot: &Robot, q: &[f64]) -> Vec<f64> {
    let mut g = vec![0.0; robot.dof()];
    gravity_torques(robot, &mut DynamicsWorkspace::new(robot), q, &mut g).unwrap();
    g
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
