//! What the simulator refuses or stops on, naming the item.

use super::*;

#[test]
fn bad_commands_and_settings_are_errors() {
    let arm = robot("planar_2link.urdf");
    let mut sim = Simulator::new(&arm, &[0.0, 0.0], SimConfig::default()).unwrap();
    assert!(matches!(
        sim.step(&[f64::NAN, 0.0]),
        Err(SimError::NonFinite { .. })
    ));
    assert!(matches!(sim.step(&[0.0]), Err(SimError::Dimension { .. })));
    let bad = SimConfig {
        dt: 0.0,
        ..SimConfig::default()
    };
    let e = Simulator::new(&arm, &[0.0, 0.0], bad).unwrap_err();
    assert!(e.to_string().contains("dt"), "{e}");
    let bad = SimConfig {
        mismatch: ModelMismatch {
            payload: None,
            mass_scale: Some(-1.0),
        },
        ..SimConfig::default()
    };
    assert!(Simulator::new(&arm, &[0.0, 0.0], bad)
        .unwrap_err()
        .to_string()
        .contains("mass_scale"));
}

/// A constant 5 N m on every Panda joint (within the limits) spins the light wrist until the
/// simulation leaves physics behind: it stops with an error naming the joint, at a speed a
/// real joint never reaches, instead of integrating positions up to 1e63 rad.
#[test]
fn a_runaway_stops_the_simulation_naming_the_joint() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/panda.urdf");
    let robot =
        armctl_model::Robot::from_urdf_file(path, &armctl_model::ChainOptions::default()).unwrap();
    let config = armctl_sim::SimConfig {
        limits: None,
        ..armctl_sim::SimConfig::default()
    };
    let mut sim =
        armctl_sim::Simulator::new(&robot, &robot.middle_configuration(), config).unwrap();
    let command = [5.0; 7];
    let mut stopped = None;
    for _ in 0..200_000 {
        if let Err(e) = sim.step(&command) {
            stopped = Some(e);
            break;
        }
    }
    let error = stopped.expect("the runaway is detected");
    match &error {
        armctl_sim::SimError::Diverged {
            joint, velocity, ..
        } => {
            assert!(joint.starts_with("panda_joint"), "{error}");
            assert!(velocity.abs() > armctl_sim::RUNAWAY_SPEED, "{error}");
        }
        other => panic!("not a divergence: {other}"),
    }
    assert!(
        sim.q().iter().all(|q| q.is_finite() && q.abs() < 1e6),
        "{:?}",
        sim.q()
    );
}

#[test]
fn a_joint_that_moves_no_mass_is_refused_at_start_naming_it() {
    let path = format!(
        "{}/../../urdf/planar_2link.urdf",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).unwrap();
    let start = text.find("<link name=\"link2\">").unwrap();
    let end = start + text[start..].find("</link>").unwrap();
    let massless = format!("{}<link name=\"link2\">{}", &text[..start], &text[end..]);
    let robot = Robot::from_urdf_str(&massless, &ChainOptions::default()).unwrap();
    let error = Simulator::new(&robot, &[0.0, 0.0], SimConfig::default()).unwrap_err();
    assert!(
        matches!(&error, SimError::Massless { joint } if joint == "joint2"),
        "{error}"
    );
}
