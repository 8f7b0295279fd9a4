//! Integration: energy, free fall against the closed form, both integrators, stiff damping
//! at 1 kHz.

use super::*;

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
