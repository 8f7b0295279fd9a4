//! Identification from simulated data: the Panda on the embedded simulator follows an exciting
//! trajectory; its base parameters are identified from the log, exactly when the data are
//! exact, within a stated tolerance with realistic noise, and a computed-torque controller
//! built on a badly wrong URDF tracks several times better once identified. rosbag2 MCAP logs
//! are checked against the MCAP project's own ROS 2 writer and reader (interop venv).

#[path = "../support/arms.rs"]
mod arms;
#[path = "../support/recording.rs"]
mod recording;

mod bags;
mod consistency;
mod friction_offset;
mod instruments;

use armctl_control::controller_by_name;
use armctl_control::reference::{MultiPoint, Trajectory, TrajectoryPoint};
use armctl_dynamics::numeric_base_parameters;
use armctl_ident::{excitation, identify, ExcitationLimits, IdentifyOptions, JointLog};
use armctl_model::Robot;
use armctl_sim::{run_closed_loop, SensorNoise, SimConfig, Simulator};
use recording::record;

fn panda() -> Robot {
    armctl_model::test_support::bundled_robot("panda.urdf")
}

/// Each link's mass, first moment and inertia scaled by 1.3 or 0.7 in turn: the same bodies
/// (same centres of mass), 30% too heavy or too light.
fn perturbed(robot: &Robot) -> Robot {
    let mut p = robot.parameter_vector();
    for (i, link) in p.chunks_mut(10).enumerate() {
        let factor = if i % 2 == 0 { 1.3 } else { 0.7 };
        link.iter_mut().for_each(|v| *v *= factor);
    }
    robot.with_parameter_vector(&p).unwrap()
}

/// One minute of the plant with friction (and `noise`) following `trajectory` under computed
/// torque, accelerations left to differentiation, efforts with `effort_noise`.
fn record_with_friction(
    plant: &Robot,
    noise: Option<SensorNoise>,
    trajectory: &dyn Trajectory,
    effort_noise: f64,
) -> JointLog {
    let config = SimConfig {
        noise,
        friction: true,
        ..SimConfig::ideal()
    };
    let mut controller = controller_by_name("computed_torque", plant).unwrap();
    record(
        plant,
        config,
        controller.as_mut(),
        trajectory,
        60.0,
        false,
        effort_noise,
    )
}

fn exciting(robot: &Robot) -> impl Trajectory {
    excitation(robot, 0.1, 5, ExcitationLimits::default(), 3)
        .unwrap()
        .trajectory
}

/// The Panda whose links are 30 % heavier or lighter than its URDF says (`perturbed`), and
/// whose centres of mass and inertias are shifted: bodies still, other ones.
fn other_bodies(robot: &Robot) -> Robot {
    let mut parts = perturbed(robot).to_parts();
    for (i, link) in parts.links.iter_mut().enumerate() {
        let shift = if i % 2 == 0 { 0.01 } else { -0.01 };
        link.com += nalgebra::Vector3::new(shift, -shift, 0.5 * shift);
        link.inertia_com *= 1.0 + 2.0 * shift;
    }
    Robot::new(parts).unwrap()
}

#[test]
fn exact_data_give_the_base_parameters_to_1e_6() {
    let robot = panda();
    let plant = other_bodies(&robot);
    let trajectory = exciting(&robot);
    let mut controller = controller_by_name("computed_torque", &plant).unwrap();
    let log = record(
        &plant,
        SimConfig::ideal(),
        controller.as_mut(),
        &trajectory,
        12.0,
        true,
        0.0,
    );
    let found = identify(&robot, &log, &IdentifyOptions::default()).unwrap();
    let truth = numeric_base_parameters(&robot)
        .unwrap()
        .values(&plant.parameter_vector())
        .unwrap();
    let scale = truth.amax();
    let mut worst: f64 = 0.0;
    for (k, (name, value)) in found.base_names.iter().zip(&found.base_values).enumerate() {
        // Relative to the value; to the largest one for values that are zero.
        let error = (value - truth[k]).abs() / truth[k].abs().max(1e-6 * scale);
        worst = worst.max(error);
        assert!(
            error < 1e-6,
            "{name}: {value} vs {} (relative error {error:.1e})",
            truth[k]
        );
    }
    // The consistent fit agrees with least squares where the data allow, and is bodies.
    for (k, name) in found.base_names.iter().enumerate() {
        let (value, least_squares) = (found.base_values[k], found.least_squares_values[k]);
        let difference = (value - least_squares).abs() / least_squares.abs().max(1e-6 * scale);
        assert!(
            difference < 1e-6,
            "{name}: consistent {value} vs least squares {least_squares}"
        );
    }
    consistency::assert_bodies(&robot, &found.consistent_links);
    eprintln!(
        "exact data: {} base parameters, largest relative error {worst:.1e}, condition number {:.1}, consistent fit {:?}, held-out relative effort error {:?}",
        found.base_values.len(),
        found.condition_number,
        found.consistency_gap,
        found.holdout_relative
    );
}

#[test]
fn noisy_data_give_the_well_excited_parameters_and_predict_held_out_efforts() {
    let viscous = vec![0.5, 0.5, 0.4, 0.4, 0.2, 0.2, 0.1];
    let coulomb = vec![0.8, 0.8, 0.6, 0.6, 0.3, 0.3, 0.2];
    let plant = panda().with_friction(&viscous, &coulomb).unwrap();
    let trajectory = exciting(&plant);
    // Encoder-grade positions (1e-5 rad), velocities with 1e-3 rad/s of noise, efforts with
    // 0.02 N m; friction on; one minute of data, accelerations differentiated.
    let noise = SensorNoise {
        position: 1e-5,
        velocity: 1e-3,
        seed: 5,
    };
    let log = record_with_friction(&plant, Some(noise), &trajectory, 0.02);
    let options = IdentifyOptions {
        friction: true,
        ..IdentifyOptions::default()
    };
    let found = identify(&plant, &log, &options).unwrap();
    let truth = numeric_base_parameters(&plant)
        .unwrap()
        .values(&plant.parameter_vector())
        .unwrap();
    let mut checked = 0;
    for (k, name) in found.base_names.iter().enumerate() {
        let (value, std) = (found.base_values[k], found.base_std[k]);
        // Well excited: a standard deviation under 5% of the value.
        if std < 0.05 * value.abs() {
            checked += 1;
            let error = (value - truth[k]).abs() / truth[k].abs();
            assert!(
                error < 0.05,
                "{name}: {value} vs {} ({:.1}%)",
                truth[k],
                100.0 * error
            );
        }
    }
    for j in 0..7 {
        assert!(
            (found.viscous[j] - viscous[j]).abs() < 0.05,
            "viscous {j}: {}",
            found.viscous[j]
        );
        assert!(
            (found.coulomb[j] - coulomb[j]).abs() < 0.05,
            "coulomb {j}: {}",
            found.coulomb[j]
        );
    }
    eprintln!(
        "noisy data: {checked} of {} base parameters well excited (std < 5%), all within 5%; condition number {:.1}; held-out effort error {:.1}% overall, per joint {:?}",
        found.base_values.len(),
        found.condition_number,
        100.0 * found.holdout_overall,
        found.holdout_relative.iter().map(|r| format!("{:.1}%", 100.0 * r)).collect::<Vec<_>>()
    );
    assert!(checked >= 20, "only {checked} well-excited parameters");
    assert!(
        found.holdout_overall < 0.05,
        "held-out error {:.3}",
        found.holdout_overall
    );
}

/// RMS tracking error of computed torque with `model` on the true plant, through waypoints.
fn tracking_error(plant: &Robot, model: &Robot) -> f64 {
    let q0 = plant.middle_configuration();
    let point = |time: f64, offset: f64| TrajectoryPoint {
        time,
        positions: q0
            .iter()
            .enumerate()
            .map(|(i, q)| q + offset * if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect(),
        velocities: None,
        accelerations: None,
    };
    let path = MultiPoint::new(
        7,
        &[
            point(0.0, 0.0),
            point(1.0, 0.4),
            point(2.0, -0.3),
            point(3.0, 0.2),
            point(4.0, 0.0),
        ],
    )
    .unwrap();
    let mut controller = controller_by_name("computed_torque", model).unwrap();
    let mut sim = Simulator::new(plant, &q0, SimConfig::default()).unwrap();
    let log = run_closed_loop(&mut sim, controller.as_mut(), &path, 4500, |_, _, _| {}).unwrap();
    log.rms_error_all(0.0, 4.5)
}

#[test]
fn identified_parameters_beat_a_30_percent_wrong_urdf_by_5x() {
    let plant = panda();
    let wrong = perturbed(&plant);
    // Excite the real arm while controlling it with the wrong model, as a user would.
    let trajectory = exciting(&wrong);
    let mut controller = controller_by_name("computed_torque", &wrong).unwrap();
    let config = SimConfig {
        noise: Some(SensorNoise {
            position: 1e-5,
            velocity: 2e-3,
            seed: 9,
        }),
        ..SimConfig::default()
    };
    let log = record(
        &plant,
        config,
        controller.as_mut(),
        &trajectory,
        30.0,
        false,
        0.05,
    );
    let found = identify(&wrong, &log, &IdentifyOptions::default()).unwrap();
    let identified = found.model().apply(&wrong).unwrap();
    let (before, after) = (
        tracking_error(&plant, &wrong),
        tracking_error(&plant, &identified),
    );
    eprintln!("computed torque RMS error: wrong URDF {before:.2e} rad, identified {after:.2e} rad ({:.0}x better)", before / after);
    assert!(before > 5.0 * after, "{before:.2e} vs {after:.2e}");
}

/// The Panda with viscous and Coulomb friction whose Coulomb level ripples over the position
/// (gear eccentricity) on joints 2, 3 and 4, two harmonics per joint. (The excitation sweeps
/// these joints over 1.6 to 2.8 rad; joint 1 only over 0.84 rad, over which two harmonics
/// and the mean trade off against each other: the friction over the visited range is still
/// identified, its coefficients are not.)
fn rippling_plant() -> (Robot, Vec<Vec<f64>>) {
    let viscous = vec![0.5, 0.5, 0.4, 0.4, 0.2, 0.2, 0.1];
    let coulomb = vec![0.8, 0.8, 0.6, 0.6, 0.3, 0.3, 0.2];
    let ripple = vec![
        vec![0.0; 4],
        vec![0.0, 0.0, 0.2, -0.15],
        vec![0.3, 0.2, 0.0, 0.0],
        vec![0.1, -0.25, 0.1, 0.05],
        vec![0.0; 4],
        vec![0.0; 4],
        vec![0.0; 4],
    ];
    let plant = panda()
        .with_friction(&viscous, &coulomb)
        .unwrap()
        .with_friction_ripple(&ripple)
        .unwrap();
    (plant, ripple)
}

/// RMS tracking error of computed torque with `model` (its friction compensated) on the plant
/// with friction, through waypoints.
fn tracking_error_with_friction(plant: &Robot, model: &Robot) -> f64 {
    let q0 = plant.middle_configuration();
    let point = |time: f64, offset: f64| TrajectoryPoint {
        time,
        positions: q0.iter().map(|q| q + offset).collect(),
        velocities: None,
        accelerations: None,
    };
    let points: Vec<TrajectoryPoint> = (0..=8)
        .map(|k| point(k as f64 * 0.5, if k % 2 == 0 { 0.0 } else { 0.3 }))
        .collect();
    let path = MultiPoint::new(7, &points).unwrap();
    let mut controller = controller_by_name("computed_torque", model).unwrap();
    let config = SimConfig {
        friction: true,
        ..SimConfig::default()
    };
    let mut sim = Simulator::new(plant, &q0, config).unwrap();
    let log = run_closed_loop(&mut sim, controller.as_mut(), &path, 4000, |_, _, _| {}).unwrap();
    log.rms_error_all(0.0, 4.0)
}

/// Friction whose Coulomb level ripples over the position: `armctl identify` with two
/// harmonics recovers every harmonic within 5% of the ripple on noise-free data, predicts the
/// held-out efforts better than a model without harmonics, and computed torque on the
/// identified model tracks better with the harmonics than without.
#[test]
fn position_dependent_friction_is_identified_and_compensated() {
    let (plant, ripple) = rippling_plant();
    let trajectory = exciting(&plant);
    let log = record_with_friction(&plant, None, &trajectory, 0.0);
    let with = |harmonics: usize| IdentifyOptions {
        friction: true,
        friction_harmonics: harmonics,
        ..IdentifyOptions::default()
    };
    let found = identify(&plant, &log, &with(2)).unwrap();
    let without = identify(&plant, &log, &with(0)).unwrap();
    for (j, (truth, got)) in ripple.iter().zip(&found.friction_ripple).enumerate() {
        let size = truth.iter().map(|v| v * v).sum::<f64>().sqrt();
        let error = truth
            .iter()
            .zip(got)
            .map(|(t, g)| (t - g).powi(2))
            .sum::<f64>()
            .sqrt();
        eprintln!("joint {}: ripple {truth:?}, identified {got:.4?}", j + 1);
        assert!(
            error <= 0.05 * size.max(0.2),
            "joint {}: {got:?} vs {truth:?}",
            j + 1
        );
    }
    // Joints 1 and 7 sweep too little of their range for two harmonics: left out, and said.
    assert_eq!(found.ripple_left_out, ["panda_joint1", "panda_joint7"]);
    eprintln!(
        "held-out effort error: {:.2}% with two harmonics, {:.2}% without",
        100.0 * found.holdout_overall,
        100.0 * without.holdout_overall
    );
    assert!(found.holdout_overall < 0.7 * without.holdout_overall);
    // Computed torque on the identified models, as controller_node would load them.
    let model = |found: &armctl_ident::Identification| found.model().apply(&plant).unwrap();
    let (rippled, flat) = (
        tracking_error_with_friction(&plant, &model(&found)),
        tracking_error_with_friction(&plant, &model(&without)),
    );
    eprintln!("computed torque RMS error with the identified model: {rippled:.3e} rad with its harmonics, {flat:.3e} rad without");
    assert!(rippled < flat, "{rippled:e} vs {flat:e}");
}

/// The Panda with Coulomb friction and no viscous friction (as the bundled URDF): a noisy fit
/// puts some viscous coefficients a little below zero.
fn coulomb_only_log() -> (Robot, JointLog) {
    let coulomb = vec![0.27, 0.44, 0.32, 0.64, 0.42, 0.15, 0.28];
    let plant = panda().with_friction(&[0.0; 7], &coulomb).unwrap();
    let noise = SensorNoise {
        position: 1e-5,
        velocity: 1e-3,
        seed: 11,
    };
    let log = record_with_friction(&plant, Some(noise), &exciting(&plant), 0.05);
    (plant, log)
}

#[test]
fn friction_comes_out_never_negative_and_what_was_fixed_at_zero_is_named() {
    let (plant, log) = coulomb_only_log();
    let options = IdentifyOptions {
        friction: true,
        ..IdentifyOptions::default()
    };
    let found = identify(&plant, &log, &options).unwrap();
    for (j, (v, c)) in found.viscous.iter().zip(&found.coulomb).enumerate() {
        assert!(
            *v >= 0.0 && *c >= 0.0,
            "joint {j}: viscous {v}, Coulomb {c}"
        );
        assert!(*v < 0.05, "joint {j}: viscous {v} where the plant has none");
    }
    for fixed in &found.friction_at_zero {
        let j = plant.joint_names().position(|n| n == fixed.joint).unwrap();
        let written = if fixed.kind == "viscous" {
            found.viscous[j]
        } else {
            found.coulomb[j]
        };
        assert_eq!(written, 0.0, "{fixed}");
        assert!(fixed.fitted < 0.0, "{fixed}");
    }
    eprintln!(
        "Coulomb-only plant: viscous {:?}, fixed at zero: {:?}",
        found.viscous,
        found
            .friction_at_zero
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    );
}

#[test]
fn efforts_that_push_along_the_motion_are_refused_naming_the_joint() {
    let (plant, mut log) = coulomb_only_log();
    // panda_joint4's efforts with its friction subtracted twice: the log says the joint is
    // pushed along its motion.
    for (effort, velocity) in log.effort.iter_mut().zip(log.velocity.as_ref().unwrap()) {
        effort[3] -= 2.0 * 0.64 * velocity[3].signum();
    }
    let options = IdentifyOptions {
        friction: true,
        ..IdentifyOptions::default()
    };
    let error = identify(&plant, &log, &options).unwrap_err().to_string();
    assert!(
        error.contains("panda_joint4's Coulomb friction came out -0.6"),
        "{error}"
    );
}

#[test]
fn efforts_no_set_of_bodies_explains_are_refused_naming_links() {
    let (plant, mut log) = coulomb_only_log();
    // Efforts of the wrong sign: least squares' inertias are negative.
    log.effort.iter_mut().flatten().for_each(|e| *e = -*e);
    let error = identify(&plant, &log, &IdentifyOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("no set of bodies explains the log: the closest bodies that exist leave")
            && error.contains("the link moved by joint 'panda_joint"),
        "{error}"
    );
    let least_squares = IdentifyOptions {
        method: armctl_ident::Method::LeastSquares,
        ..IdentifyOptions::default()
    };
    let error = identify(&plant, &log, &least_squares)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("least squares gives parameters no set of bodies has: the link moved by joint 'panda_joint"),
        "{error}"
    );
}
