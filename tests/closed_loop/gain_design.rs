//! Gain design (poles, LQR) in joint and task space: the designed step responses.

use super::*;

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
