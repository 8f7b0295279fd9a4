//! Computed torque: tracking a quintic, bounded with a mass error.

use super::*;

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
