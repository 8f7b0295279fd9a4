//! Physical consistency of the identified model: every link a body that exists (mass positive,
//! pseudo-inertia positive semidefinite, checked here with its own eigenvalues), least squares
//! refused where it is not, and a held-out part that checks nothing refused.

use armctl_control::controller_by_name;
use armctl_ident::{excitation, identify, ExcitationLimits, IdentifyOptions, JointLog, Method};
use armctl_model::Robot;
use armctl_sim::{SensorNoise, SimConfig};
use nalgebra::{Matrix3, Matrix4, SymmetricEigen};

use super::{panda, record, record_with_friction};

/// The pseudo-inertia `[[tr(I)/2 - I, h], [h^T, m]]` of `[XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M]`
/// (I about the frame origin), and its eigenvalues' smallest over largest.
pub(crate) fn body_margin(p: &[f64; 10]) -> f64 {
    let i = Matrix3::new(p[0], p[1], p[2], p[1], p[3], p[4], p[2], p[4], p[5]);
    let s = Matrix3::identity() * (0.5 * i.trace()) - i;
    #[rustfmt::skip]
    let j = Matrix4::new(
        s[(0, 0)], s[(0, 1)], s[(0, 2)], p[6],
        s[(1, 0)], s[(1, 1)], s[(1, 2)], p[7],
        s[(2, 0)], s[(2, 1)], s[(2, 2)], p[8],
        p[6], p[7], p[8], p[9],
    );
    let eigen = SymmetricEigen::new(j).eigenvalues;
    eigen.min() / eigen.amax()
}

/// Every link of the consistent fit is a body, its mass positive.
pub(crate) fn assert_bodies(robot: &Robot, links: &[[f64; 10]]) {
    assert_eq!(links.len(), robot.dof());
    for (link, joint) in links.iter().zip(robot.joint_names()) {
        assert!(link[9] > 0.0, "link of {joint}: mass {}", link[9]);
        let margin = body_margin(link);
        assert!(
            margin >= -1e-12,
            "link of {joint}: pseudo-inertia margin {margin:e}"
        );
    }
}

/// The Panda with a light hand on joint 7 (its inertia about the axis a tenth of the URDF's)
/// barely moved (1 % of its range) with noisy efforts: the log hardly sees ZZ7.
fn light_wrist_barely_moved() -> (Robot, JointLog) {
    let urdf = panda();
    let mut p = urdf.parameter_vector();
    p[60 + 5] *= 0.1; // ZZ7
    let plant = urdf.with_parameter_vector(&p).unwrap();
    let mut parts = plant.to_parts();
    let limits = &mut parts.joints[6].limits;
    let middle = limits.middle();
    (limits.lower, limits.upper) = (middle - 0.03, middle + 0.03);
    let narrow = Robot::new(parts).unwrap();
    let trajectory = excitation(&narrow, 0.1, 5, ExcitationLimits::default(), 3)
        .unwrap()
        .trajectory;
    let noise = SensorNoise {
        position: 1e-5,
        velocity: 1e-3,
        seed: 5,
    };
    let config = SimConfig {
        noise: Some(noise),
        ..SimConfig::ideal()
    };
    let mut controller = controller_by_name("computed_torque", &plant).unwrap();
    let log = record(
        &plant,
        config,
        controller.as_mut(),
        &trajectory,
        30.0,
        false,
        0.05,
    );
    (plant, log)
}

#[test]
fn a_barely_moved_light_wrist_stays_a_body_where_least_squares_makes_it_none() {
    let (plant, log) = light_wrist_barely_moved();
    let found = identify(&plant, &log, &IdentifyOptions::default()).unwrap();
    assert_bodies(&plant, &found.consistent_links);
    let zz7 = found.base_names.iter().position(|n| n == "ZZ7").unwrap();
    eprintln!(
        "ZZ7: least squares {:.3e} (std {:.1e}), consistent {:.3e}; {:?}",
        found.least_squares_values[zz7],
        found.base_std[zz7],
        found.base_values[zz7],
        found.consistency_gap
    );
    assert!(
        found.least_squares_values[zz7] < 0.0,
        "least squares' ZZ7 {}",
        found.least_squares_values[zz7]
    );
    assert!(found.base_values[zz7] > 0.0);
    // The parameter file's model is those bodies.
    let applied = found.model().apply(&plant).unwrap();
    let links: Vec<[f64; 10]> = applied
        .parameter_vector()
        .chunks_exact(10)
        .map(|c| c.try_into().unwrap())
        .collect();
    assert_bodies(&plant, &links);
    let least_squares = IdentifyOptions {
        method: Method::LeastSquares,
        ..IdentifyOptions::default()
    };
    let error = identify(&plant, &log, &least_squares)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("least squares gives parameters no set of bodies has: the link moved by joint 'panda_joint7'"),
        "{error}"
    );
}

#[test]
fn a_held_out_part_where_the_arm_rests_is_refused_naming_a_joint() {
    let plant = panda().with_friction(&[0.0; 7], &[0.3; 7]).unwrap();
    let trajectory = excitation(&plant, 0.1, 5, ExcitationLimits::default(), 3)
        .unwrap()
        .trajectory;
    let mut log = record_with_friction(&plant, None, &trajectory, 0.0);
    // The arm braked where the held-out part begins (the last 20 %) and rests there: the
    // excitation stopped early.
    let stop = log.len() * 80 / 100;
    let (q, effort) = (log.position[stop].clone(), log.effort[stop].clone());
    for k in stop..log.len() {
        log.position[k] = q.clone();
        log.effort[k] = effort.clone();
        log.velocity.as_mut().unwrap()[k] = vec![0.0; 7];
    }
    let options = IdentifyOptions {
        friction: true,
        ..IdentifyOptions::default()
    };
    let error = identify(&plant, &log, &options).unwrap_err().to_string();
    assert!(
        error.contains("the held-out part of the log (t = 48.000 to 59.")
            && error.contains("fewer than 5 %")
            && error.contains("checks joint 'panda_joint"),
        "{error}"
    );
}

/// Each link of `robot` made a body if its URDF's is not one (a mass of at least 0.5 kg, the
/// inertia raised equally about every axis until it meets the triangle inequality), then 30 %
/// heavier or lighter in turn with its centre of mass moved 1 cm: bodies other than the URDF's.
fn other_bodies(robot: &Robot) -> Robot {
    let mut parts = robot.to_parts();
    for (i, link) in parts.links.iter_mut().enumerate() {
        link.mass = link.mass.max(0.5);
        let moments = SymmetricEigen::new(link.inertia_com).eigenvalues;
        let excess = (0..3)
            .map(|k| moments[k] - moments[(k + 1) % 3] - moments[(k + 2) % 3])
            .fold(0.0_f64, f64::max);
        link.inertia_com += Matrix3::identity() * (excess.max(0.0) + 1e-4);
        let (scale, shift) = if i % 2 == 0 {
            (1.3, 0.01)
        } else {
            (0.7, -0.01)
        };
        link.mass *= scale;
        link.inertia_com *= scale;
        link.com += nalgebra::Vector3::new(shift, -shift, 0.5 * shift);
    }
    Robot::new(parts).unwrap()
}

/// `samples` random states of `robot` within its limits with the efforts `plant` needs there
/// (positions, velocities and accelerations logged: nothing differentiated).
fn random_state_log(robot: &Robot, plant: &Robot, samples: usize, seed: u64) -> JointLog {
    use armctl_dynamics::{rnea, DynamicsWorkspace};
    use rand::rngs::StdRng;
    use rand::{RngExt, SeedableRng};
    let n = robot.dof();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut ws = DynamicsWorkspace::new(plant);
    let mut log = JointLog {
        joint_names: robot.joint_names().map(str::to_string).collect(),
        velocity: Some(vec![]),
        acceleration: Some(vec![]),
        ..JointLog::default()
    };
    for k in 0..samples {
        let (mut q, mut qd, mut qdd, mut tau) =
            (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        for (j, joint) in robot.joints().iter().enumerate() {
            let l = &joint.limits;
            let (low, high) = if l.is_bounded() {
                (l.lower, l.upper)
            } else {
                (-3.0, 3.0)
            };
            q[j] = rng.random_range(low..high);
            let speed = if l.velocity > 0.0 {
                l.velocity.min(3.0)
            } else {
                2.0
            };
            qd[j] = rng.random_range(-speed..speed);
            qdd[j] = rng.random_range(-5.0..5.0);
        }
        rnea(plant, &mut ws, &q, &qd, &qdd, &mut tau).unwrap();
        log.time.push(k as f64 * 1e-3);
        log.position.push(q);
        log.velocity.as_mut().unwrap().push(qd);
        log.acceleration.as_mut().unwrap().push(qdd);
        log.effort.push(tau);
    }
    log
}

/// On every arm of the population (bundled, the classes users bring, 20 generated ones), bodies
/// other than the URDF's identified from exact data: the consistent values are those bodies'
/// base values within 1e-6 and agree with least squares, every link is a body, and the
/// parameter file's model applies.
#[test]
fn exact_data_of_other_bodies_are_identified_as_bodies_on_every_arm() {
    for (name, robot) in super::arms::population() {
        let plant = other_bodies(&robot);
        let log = random_state_log(&robot, &plant, 60 * robot.dof(), 17);
        let found = identify(&robot, &log, &IdentifyOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let truth = armctl_dynamics::numeric_base_parameters(&robot)
            .unwrap()
            .values(&plant.parameter_vector())
            .unwrap();
        let scale = truth.amax();
        let mut worst: f64 = 0.0;
        for (k, parameter) in found.base_names.iter().enumerate() {
            let floor = truth[k].abs().max(1e-6 * scale);
            let error = (found.base_values[k] - truth[k]).abs() / floor;
            let from_least_squares =
                (found.base_values[k] - found.least_squares_values[k]).abs() / floor;
            worst = worst.max(error);
            assert!(
                error < 1e-6 && from_least_squares < 1e-6,
                "{name}: {parameter} = {} (least squares {}), truth {}",
                found.base_values[k],
                found.least_squares_values[k],
                truth[k]
            );
        }
        assert_bodies(&robot, &found.consistent_links);
        found
            .model()
            .apply(&robot)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        eprintln!(
            "{name}: {} base parameters within {worst:.1e} of the bodies' ({} evaluations)",
            found.base_values.len(),
            found.consistency_gap.evaluations
        );
    }
}
