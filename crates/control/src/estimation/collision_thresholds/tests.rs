use super::*;
use armctl_model::ChainOptions;

fn robot(name: &str) -> Robot {
    let path = format!("{}/../../urdf/{name}", env!("CARGO_MANIFEST_DIR"));
    Robot::from_urdf_file(path, &ChainOptions::default()).unwrap()
}

const SETTINGS: DetectionSettings = DetectionSettings {
    sensitivity: DEFAULT_SENSITIVITY,
    model_error: DEFAULT_MODEL_ERROR,
    observer_gain: 50.0,
};

/// Held at `q` long enough for the filters to settle on `effort`, which holds `gravity`
/// against the external torque `residual` estimates.
fn settled(
    robot: &Robot,
    q: &[f64],
    (effort, gravity): (&[f64], &[f64]),
    residual: &[f64],
) -> CollisionThresholds {
    let friction = vec![[0.0; 2]; robot.dof()];
    let mut t = CollisionThresholds::new(robot, &friction, SETTINGS);
    let qd = vec![0.0; robot.dof()];
    let mut mass = DMatrix::zeros(robot.dof(), robot.dof());
    mass_matrix(robot, &mut DynamicsWorkspace::new(robot), q, &mut mass).unwrap();
    for _ in 0..1000 {
        t.update(robot, (q, &qd), (effort, residual), (&mass, gravity), 1e-3)
            .unwrap();
    }
    t
}

#[test]
fn at_rest_each_joint_allows_the_model_error_of_its_torque_and_the_noise() {
    let robot = robot("panda.urdf");
    let q = vec![0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8];
    let effort = [0.0, -30.0, 0.0, 20.0, 0.0, 2.0, 0.0];
    let t = settled(&robot, &q, (&effort, &effort), &[0.0; 7]);
    for (i, e) in effort.iter().enumerate() {
        let expected = DEFAULT_MODEL_ERROR * e.abs() + t.noise[i];
        assert!((t.uncertainty()[i] - expected).abs() < 1e-9, "joint {i}");
        assert!(t.joints()[i] >= t.uncertainty()[i]);
    }
    assert!(t.force_threshold() >= t.force_uncertainty());
}

#[test]
fn the_models_coulomb_friction_counts_only_where_its_sign_is_lost_in_the_noise() {
    let coulomb = [0.8, 0.8, 0.6, 0.6, 0.3, 0.3, 0.2];
    let robot = robot("panda.urdf")
        .with_friction(&[0.1; 7], &coulomb)
        .unwrap();
    let q = vec![0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8];
    let mut mass = DMatrix::zeros(7, 7);
    mass_matrix(&robot, &mut DynamicsWorkspace::new(&robot), &q, &mut mass).unwrap();
    let none = vec![[0.0; 2]; 7];
    let bounds = |speed: f64| {
        let mut t = CollisionThresholds::new(&robot, &none, SETTINGS);
        let qd = vec![speed; 7];
        for _ in 0..1000 {
            t.update(
                &robot,
                (&q, &qd),
                (&[0.0; 7], &[0.0; 7]),
                (&mass, &[0.0; 7]),
                1e-3,
            )
            .unwrap();
        }
        t.uncertainty().to_vec()
    };
    let (resting, moving) = (bounds(0.0), bounds(0.05));
    for (i, c) in coulomb.iter().enumerate() {
        assert!((resting[i] - c - moving[i]).abs() < 1e-9, "joint {i}");
    }
}

#[test]
fn a_tip_force_is_recovered_and_the_named_force_crosses_its_threshold() {
    let robot = robot("ur5e.urdf");
    let q = vec![0.0, -1.2, 1.5, -1.8, -1.57, 0.3];
    let mut kin = KinematicsWorkspace::new(&robot);
    let mut j = Matrix6xX::zeros(6);
    jacobian(&robot, &mut kin, &q, FrameId::Tip, &mut j).unwrap();
    // Held steady, a push is counted as the dynamics torque the model may get wrong by
    // `model_error` (the law's torque against it): 11 N leaves room below the 30 N named.
    let force = Vector3::new(4.0, -8.0, 6.0);
    let tau: Vec<f64> = j
        .column_iter()
        .map(|c| c.fixed_rows::<3>(0).dot(&force))
        .collect();
    // In a world without gravity, the law holds the arm against the force.
    let held: Vec<f64> = tau.iter().map(|t| -t).collect();
    let t = settled(&robot, &q, (&held, &[0.0; 6]), &tau);
    assert!((t.force() - force.norm()).abs() < 1e-6 * force.norm());
    let shown = SETTINGS.shown_share() * SETTINGS.sensitivity;
    assert!(
        t.force_uncertainty() < 0.5 * shown,
        "{}",
        t.force_uncertainty()
    );
    assert!(shown - t.force_uncertainty() >= t.force_threshold() - 1e-9);
}

/// The closed form agrees with an iterative decomposition, repeated eigenvalues included
/// (to 1e-6: what the singularity test and the damping need).
#[test]
fn the_closed_form_eigenvalues_are_those_of_the_decomposition() {
    let cases = [
        Matrix3::new(2.0, 0.3, -0.1, 0.3, 1.0, 0.2, -0.1, 0.2, 0.5),
        Matrix3::new(1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0),
        Matrix3::new(1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0),
        Matrix3::new(0.3, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    ];
    for a in cases {
        let mut expected = nalgebra::SymmetricEigen::new(a).eigenvalues;
        expected.as_mut_slice().sort_by(f64::total_cmp);
        let found = symmetric_eigenvalues(&a);
        assert!((found - expected).norm() < 1e-6, "{found} vs {expected}");
    }
}

/// What the survey finds on the bundled arms with the default model error and with an
/// identified model's (2 %): a better model detects a smaller force at more
/// configurations; a stretched arm does not feel a force along itself.
#[test]
fn a_better_model_detects_smaller_forces_at_more_configurations() {
    for name in ["panda.urdf", "ur5e.urdf", "puma560.urdf"] {
        let robot = robot(name);
        let friction = vec![[0.0; 2]; robot.dof()];
        let nominal = survey(&robot, &friction, SETTINGS, 256).unwrap();
        let identified = DetectionSettings {
            model_error: 0.02,
            ..SETTINGS
        };
        let better = survey(&robot, &friction, identified, 256).unwrap();
        println!(
            "{name}: 30 N at {:.0} % of configurations, median {:.1} N (model error 0.2); {:.0} %, median {:.1} N (0.02)",
            100.0 * nominal.detected_share,
            nominal.median_force,
            100.0 * better.detected_share,
            better.median_force
        );
        assert_eq!(nominal.configurations, 256);
        assert!(better.detected_share > nominal.detected_share, "{name}");
        assert!(better.median_force < nominal.median_force, "{name}");
        assert!(better.detected_share > 0.5, "{name}: {better:?}");
    }
    // A planar arm feels no force across its plane: no force is detected everywhere.
    let planar = robot("planar_2link.urdf");
    let friction = vec![[0.0; 2]; 2];
    let found = survey(&planar, &friction, SETTINGS, 16).unwrap();
    assert_eq!(found.detected_share, 0.0, "{found:?}");
    assert!(found.worst_force.is_infinite());
}
