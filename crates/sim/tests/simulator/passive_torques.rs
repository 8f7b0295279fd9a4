//! Passive joint torques: limit springs, Coulomb friction, stiction, the friction ripple.

use super::*;

#[test]
fn a_joint_past_its_limit_is_pushed_back() {
    let arm = robot("planar_2link.urdf");
    let config = SimConfig {
        limits: Some(LimitSpring::default()),
        friction: false,
        ..SimConfig::default()
    };
    // Joint 2 starts 0.1 rad past its 3.1 rad limit: within 20 ms the spring has it moving back.
    let mut sim = Simulator::new(&arm, &[0.0, 3.2], config).unwrap();
    for _ in 0..20 {
        sim.step(&[0.0, 0.0]).unwrap();
    }
    assert!(
        sim.qd()[1] < -1.0 && sim.q()[1] < 3.2,
        "q {} qd {}",
        sim.q()[1],
        sim.qd()[1]
    );
    // Without limits it stays out there (gravity barely acts on the folded arm).
    let mut free = Simulator::new(
        &arm,
        &[0.0, 3.2],
        SimConfig {
            limits: None,
            ..SimConfig::ideal()
        },
    )
    .unwrap();
    for _ in 0..20 {
        free.step(&[0.0, 0.0]).unwrap();
    }
    assert!(
        free.qd()[1].abs() < sim.qd()[1].abs() / 10.0,
        "free qd {}",
        free.qd()[1]
    );
}

#[test]
fn a_light_wrist_pushed_into_a_stiff_limit_settles_on_it() {
    let arm = stiff_arm([2.0, 5.0, 14.0], [0.5, 0.5, 0.2]);
    // The stiffest spring the settings allow: w dt = 1, critically damped.
    let spring = LimitSpring {
        frequency: 1000.0,
        damping_ratio: 1.0,
    };
    for integrator in [Integrator::Rk4, Integrator::SemiImplicitEuler] {
        let config = SimConfig {
            integrator,
            limits: Some(spring),
            ..SimConfig::default()
        };
        let q0 = [0.0, 0.0, 2.8];
        let mut sim = Simulator::new(&arm, &q0, config).unwrap();
        sim.set_state(&q0, &[0.0, 0.0, 3.0]).unwrap();
        // The wrist pushed at its effort limit into its 2.9 rad limit; the arm held level.
        let command = [0.0, -armctl_dynamics_gravity(&arm, &q0)[1], 20.0];
        let (largest, qd) = run(&mut sim, &command, 2000);
        // At rest the spring holds the push less what Coulomb friction takes (at most 0.2 N m;
        // near rest the smoothed sign's slope 0.2 / 1e-3 N m s/rad creeps on slowly).
        let stiffness = spring.frequency.powi(2) * 1.4e-4;
        let band = (2.9 + 19.8 / stiffness, 2.9 + 20.0 / stiffness);
        let got = sim.q()[2];
        eprintln!("{integrator:?}: wrist on its limit at {got} (band {band:?}), |q| <= {largest}, qd {qd:?}");
        assert!(
            got > band.0 - 1e-6 && got < band.1 + 1e-6,
            "{integrator:?}: {got} not in {band:?}"
        );
        assert!(qd[2].abs() < 1e-3, "{integrator:?}: qd {qd:?}");
        assert!(
            largest < band.1 + 0.05,
            "{integrator:?}: overshoot to {largest}"
        );
    }
}

#[test]
fn coulomb_friction_stops_a_spinning_joint_and_holds_it_without_chatter() {
    // 0.5 N m on the 1.4e-4 kg m^2 wrist: 3.6 rad/s of velocity per 1 ms step, more than the
    // joint has near the end, so an explicit step would overshoot the sign.
    for inertia in [1.4e-4, 1e-2] {
        let arm = one_joint(inertia, 0.0, 0.5);
        for integrator in [Integrator::Rk4, Integrator::SemiImplicitEuler] {
            let config = SimConfig {
                integrator,
                ..SimConfig::default()
            };
            let mut sim = Simulator::new(&arm, &[0.0], config).unwrap();
            sim.set_state(&[0.0], &[5.0]).unwrap();
            let stop_time = inertia * 5.0 / 0.5;
            let mut stopped_at = None;
            for k in 1..=1000 {
                sim.step(&[0.0]).unwrap();
                let qd = sim.qd()[0];
                assert!(
                    qd >= 0.0,
                    "{integrator:?}, I {inertia}: sign flipped at step {k}: {qd}"
                );
                if stopped_at.is_none() && qd < 1e-6 {
                    stopped_at = Some(sim.time());
                }
            }
            let stopped_at = stopped_at.expect("the joint stops");
            let stop_q = 0.5 * 5.0 * stop_time;
            eprintln!(
                "{integrator:?}, I {inertia}: stopped at {stopped_at} s (analytic {stop_time} s), q {} (analytic {stop_q})",
                sim.q()[0]
            );
            // Semi-implicit Euler stops within a step of the analytic time. RK4 applies the
            // implicit friction in each stage, and a stage can only damp the remainder by
            // 0.375 per step (its polynomial has no real root): some 15 more steps to 1e-6.
            let late = match integrator {
                Integrator::SemiImplicitEuler => 1.5e-3,
                Integrator::Rk4 => 20e-3,
            };
            assert!(
                stopped_at > stop_time - 1e-3 && stopped_at < stop_time + late,
                "{integrator:?}: stopped at {stopped_at}, expected {stop_time}"
            );
            assert!(
                (sim.q()[0] - stop_q).abs() < 0.01 + 0.01 * stop_q,
                "{}",
                sim.q()[0]
            );
            // Held: zero command keeps it still; a push below the Coulomb level only creeps at
            // the smoothed sign's width * atanh(tau / coulomb) (the model has no true stiction).
            let q = sim.q()[0];
            assert!(sim.qd()[0] < 1e-12);
            sim.step(&[0.3]).unwrap();
            for _ in 0..1000 {
                sim.step(&[0.3]).unwrap();
            }
            let creep = 1e-3 * (0.3f64 / 0.5).atanh();
            assert!(
                (sim.qd()[0] - creep).abs() < 1e-3 * creep,
                "{integrator:?}: creeps at {}, expected {creep}",
                sim.qd()[0]
            );
            assert!(sim.q()[0] - q < 1.01 * creep, "{}", sim.q()[0] - q);
        }
    }
}

#[test]
fn stiction_holds_a_joint_below_breakaway_releases_above_and_sticks_again_when_it_stops() {
    let (inertia, kinetic, breakaway) = (0.01, 1.0, 2.0);
    let arm = one_joint(inertia, 0.0, kinetic);
    for integrator in [Integrator::Rk4, Integrator::SemiImplicitEuler] {
        let config = SimConfig {
            integrator,
            ..with_stiction(breakaway)
        };
        let mut sim = Simulator::new(&arm, &[0.0], config).unwrap();
        // Held: 1.5 N m (above the kinetic 1, below the breakaway 2) for a second.
        for _ in 0..1000 {
            sim.step(&[1.5]).unwrap();
        }
        let (q, qd) = (sim.q()[0], sim.qd()[0]);
        eprintln!("{integrator:?}: held at {q:e} rad, {qd:e} rad/s");
        assert!(
            q.abs() < 1e-4 && qd.abs() < 1e-6,
            "{integrator:?}: {q} {qd}"
        );
        assert!(sim.stuck().all(|s| s));
        // Released: 2.5 N m breaks it loose; it slides against the kinetic friction.
        for _ in 0..100 {
            sim.step(&[2.5]).unwrap();
        }
        let v0 = sim.qd()[0];
        for _ in 0..100 {
            sim.step(&[2.5]).unwrap();
        }
        let acceleration = (sim.qd()[0] - v0) / 0.1;
        let expected = (2.5 - kinetic) / inertia;
        assert!(
            (acceleration - expected).abs() < 1e-3 * expected,
            "{integrator:?}: slides at {acceleration}, expected {expected}"
        );
        assert!(sim.stuck().all(|s| !s));
        // Let go: friction stops it, and it sticks again where it stopped.
        for _ in 0..1000 {
            sim.step(&[0.0]).unwrap();
        }
        assert!(sim.stuck().all(|s| s), "{integrator:?}: sticks again");
        let stopped = sim.q()[0];
        for _ in 0..1000 {
            sim.step(&[1.5]).unwrap();
        }
        assert!(
            (sim.q()[0] - stopped).abs() < 1e-4,
            "{integrator:?}: held again ({} from {stopped})",
            sim.q()[0]
        );
    }
}

#[test]
fn static_friction_below_the_coulomb_friction_or_without_friction_is_refused() {
    let arm = one_joint(0.01, 0.0, 1.0);
    let e = Simulator::new(&arm, &[0.0], with_stiction(0.5)).unwrap_err();
    assert!(e.to_string().contains("joint 'spin'"), "{e}");
    let config = SimConfig {
        friction: false,
        ..with_stiction(2.0)
    };
    let e = Simulator::new(&arm, &[0.0], config).unwrap_err();
    assert!(e.to_string().contains("needs friction"), "{e}");
}

/// The plant's friction ripple: refused without friction, and with it a joint sliding at
/// constant speed feels the Coulomb level of where it is.
#[test]
fn the_friction_ripple_acts_where_the_joint_is() {
    let plant = robot("planar_2link.urdf")
        .with_friction(&[0.0, 0.0], &[1.0, 1.0])
        .unwrap();
    let ripple = vec![vec![0.5, 0.0], vec![]];
    let mut config = SimConfig {
        joints: armctl_sim::JointEffects {
            friction_ripple: ripple,
            ..armctl_sim::JointEffects::default()
        },
        ..SimConfig::ideal()
    };
    let e = Simulator::new(&plant, &[0.0, 0.0], config.clone()).unwrap_err();
    assert!(e.to_string().contains("friction_ripple"), "{e}");
    config.friction = true;
    // At q1 = 0 the level is 1.5 N m, at q1 = pi/2 it is 1.0: a constant push of 1.2 N m
    // only creeps at 0 (the smoothed sign's creep, under 1 mrad in 0.5 s) and slides at pi/2.
    for (q1, moves) in [(0.0, false), (std::f64::consts::FRAC_PI_2, true)] {
        let mut sim = Simulator::new(
            &plant.with_gravity(Vector3::zeros()).unwrap(),
            &[q1, 0.0],
            config.clone(),
        )
        .unwrap();
        for _ in 0..500 {
            sim.step(&[1.2, 0.0]).unwrap();
        }
        let moved = (sim.q()[0] - q1).abs();
        assert_eq!(moved > 1e-3, moves, "q1 = {q1}: moved {moved}");
    }
}

/// The plant's own friction in place of the URDF's: a joint whose URDF has none slows as the
/// given viscous friction says; a list of the wrong length, or friction off, is refused.
#[test]
fn the_plant_friction_replaces_the_urdf_s() {
    let arm = one_joint(0.01, 0.0, 0.0);
    let with = |viscous: Vec<f64>, friction: bool| SimConfig {
        friction,
        joints: armctl_sim::JointEffects {
            viscous,
            ..armctl_sim::JointEffects::default()
        },
        ..SimConfig::default()
    };
    let mut sim = Simulator::new(&arm, &[0.0], with(vec![0.1], true)).unwrap();
    sim.set_state(&[0.0], &[1.0]).unwrap();
    for _ in 0..100 {
        sim.step(&[0.0]).unwrap();
    }
    // qd' = -(b / I) qd, the damping implicit in each RK4 stage: rk4_factor(b dt / I) per
    // step (about e^-1 after 0.1 s; the URDF's zero would leave 1).
    let expected = rk4_factor(0.1 / 0.01 * 1e-3).powi(100);
    assert!(
        (sim.qd()[0] - expected).abs() < 1e-9,
        "{} {expected}",
        sim.qd()[0]
    );
    let e = Simulator::new(&arm, &[0.0], with(vec![0.1, 0.1], true)).unwrap_err();
    assert!(
        e.to_string().contains("viscous") && e.to_string().contains("2 values for 1 joints"),
        "{e}"
    );
    let e = Simulator::new(&arm, &[0.0], with(vec![0.1], false)).unwrap_err();
    assert!(e.to_string().contains("need friction on"), "{e}");
}

/// The plant's friction offset: sliding positively the joint meets Coulomb + offset and stops
/// sooner, negatively Coulomb - offset; an offset above the Coulomb level, or friction off, is
/// refused naming it.
#[test]
fn the_friction_offset_slows_one_way_harder() {
    let (inertia, coulomb, offset) = (1e-2, 0.5, 0.2);
    let arm = one_joint(inertia, 0.0, coulomb);
    let with = |offset: f64, friction: bool| SimConfig {
        friction,
        joints: armctl_sim::JointEffects {
            friction_offset: vec![offset],
            ..armctl_sim::JointEffects::default()
        },
        ..SimConfig::default()
    };
    for (speed, level) in [(5.0, coulomb + offset), (-5.0, coulomb - offset)] {
        let mut sim = Simulator::new(&arm, &[0.0], with(offset, true)).unwrap();
        sim.set_state(&[0.0], &[speed]).unwrap();
        let mut stopped_at = None;
        for _ in 0..1000 {
            sim.step(&[0.0]).unwrap();
            if stopped_at.is_none() && sim.qd()[0].abs() < 1e-6 {
                stopped_at = Some(sim.time());
            }
        }
        let expected = inertia * 5.0 / level;
        let stopped_at = stopped_at.expect("the joint stops");
        // RK4 stops up to some 15 steps late (see the Coulomb test above).
        assert!(
            stopped_at > expected - 1e-3 && stopped_at < expected + 20e-3,
            "from {speed} rad/s: stopped at {stopped_at} s, expected {expected} s"
        );
    }
    let e = Simulator::new(&arm, &[0.0], with(0.6, true)).unwrap_err();
    assert!(e.to_string().contains("friction_offset"), "{e}");
    let e = Simulator::new(&arm, &[0.0], with(0.1, false)).unwrap_err();
    assert!(e.to_string().contains("friction_offset"), "{e}");
}
