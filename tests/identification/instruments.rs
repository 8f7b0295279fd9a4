//! Instrumental variables (IDIM-IV) on closed-loop data: a noisy encoder feeds its noise
//! through the controller into the efforts and through differentiation into the regressor,
//! which biases least squares; the regressor of the same closed loop simulated on the
//! previous estimate (noise-free) as instruments removes the bias.

use armctl_control::controller_by_name;
use armctl_dynamics::numeric_base_parameters;
use armctl_ident::{identify, identify_with_instruments, Identification, IdentifyOptions};
use armctl_model::Robot;
use armctl_sim::{SensorNoise, SimConfig};

use super::{exciting, other_bodies, panda, record};

/// The run under PD with gravity compensation on the URDF's model (`robot`), on `plant`,
/// with its accelerations when `exact`.
fn closed_loop(
    robot: &Robot,
    plant: &Robot,
    noise: Option<SensorNoise>,
    exact: bool,
) -> armctl_ident::JointLog {
    let trajectory = exciting(robot);
    let mut controller = controller_by_name("pd_gravity", robot).unwrap();
    // The plant's own friction, if it has any.
    let config = SimConfig {
        noise,
        friction: true,
        ..SimConfig::ideal()
    };
    record(
        plant,
        config,
        controller.as_mut(),
        &trajectory,
        40.0,
        exact,
        0.0,
    )
}

/// The RMS relative error of the parameters `reference` determines well (std under 5 % of the
/// value), against `truth`.
fn error(found: &Identification, reference: &Identification, truth: &[f64]) -> f64 {
    let well: Vec<usize> = (0..truth.len())
        .filter(|&k| reference.base_std[k] < 0.05 * reference.base_values[k].abs())
        .collect();
    let squares: f64 = well
        .iter()
        .map(|&k| ((found.base_values[k] - truth[k]) / truth[k]).powi(2))
        .sum();
    (squares / well.len() as f64).sqrt()
}

#[test]
fn instrumental_variables_remove_the_bias_of_noise_fed_back_through_the_loop() {
    let robot = panda();
    // Friction too, as commissioning identifies it: the instruments' sign columns and the
    // standstill rows masked as the measured ones.
    let viscous = [0.2, 0.2, 0.2, 0.2, 0.1, 0.1, 0.1];
    let coulomb = [0.5, 0.5, 0.4, 0.4, 0.2, 0.2, 0.2];
    let plant = other_bodies(&robot)
        .with_friction(&viscous, &coulomb)
        .unwrap();
    let noise = SensorNoise {
        position: 5e-4,
        velocity: 2e-2,
        seed: 3,
    };
    let log = closed_loop(&robot, &plant, Some(noise), false);
    let options = IdentifyOptions {
        friction: true,
        ..IdentifyOptions::default()
    };
    let least_squares = identify(&robot, &log, &options).unwrap();
    assert!(!least_squares.instrumental_variables);
    let truth: Vec<f64> = numeric_base_parameters(&robot)
        .unwrap()
        .values(&plant.parameter_vector())
        .unwrap()
        .iter()
        .copied()
        .collect();
    let mut found = least_squares.clone();
    let mut errors = vec![error(&found, &least_squares, &truth)];
    for _ in 0..2 {
        let estimate = found.model().apply(&robot).unwrap();
        let instruments = closed_loop(&robot, &estimate, None, false);
        found = identify_with_instruments(&robot, &log, &instruments, &options).unwrap();
        assert!(found.instrumental_variables);
        errors.push(error(&found, &least_squares, &truth));
    }
    let coulomb_error = |found: &Identification| {
        let errors = found
            .coulomb
            .iter()
            .zip(&coulomb)
            .map(|(f, c)| (f - c).abs());
        errors.fold(0.0_f64, f64::max)
    };
    eprintln!(
        "IDIM-IV: RMS relative error of the well-excited base parameters, least squares then each iteration: {errors:?}; largest Coulomb error {:.4} then {:.4} N m",
        coulomb_error(&least_squares),
        coulomb_error(&found)
    );
    assert!(coulomb_error(&found) < 0.05, "{:?}", found.coulomb);
    assert!(
        errors[2] < 0.5 * errors[0],
        "instrumental variables {errors:?}"
    );
}

/// On exact data (accelerations included) the instruments change nothing: the same
/// parameters as least squares, whatever the instruments' own signals.
#[test]
fn on_exact_data_instrumental_variables_agree_with_least_squares() {
    let robot = panda();
    let plant = other_bodies(&robot);
    let log = closed_loop(&robot, &plant, None, true);
    let options = IdentifyOptions::default();
    let least_squares = identify(&robot, &log, &options).unwrap();
    let estimate = least_squares.model().apply(&robot).unwrap();
    let instruments = closed_loop(&robot, &estimate, None, false);
    let found = identify_with_instruments(&robot, &log, &instruments, &options).unwrap();
    let scale = least_squares
        .base_values
        .iter()
        .fold(0.0_f64, |m, v| m.max(v.abs()));
    for (k, name) in found.base_names.iter().enumerate() {
        let (iv, ls) = (found.base_values[k], least_squares.base_values[k]);
        assert!(
            (iv - ls).abs() <= 1e-6 * ls.abs().max(1e-3 * scale),
            "{name}: {iv} vs {ls}"
        );
    }
}
