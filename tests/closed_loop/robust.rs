//! Robust control (Spong) under a 30% model error.

use super::*;

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
