//! Actuation and the plant's differences from the model: saturation, delay, noise, payload,
//! armature, backlash, a robot that compensates its gravity, an external wrench.

use super::*;

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
