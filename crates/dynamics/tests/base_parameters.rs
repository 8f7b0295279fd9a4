//! Base (minimal) inertial parameters: the counts the literature gives (PUMA 560: 36, Stanford
//! arm: 33, both with joint 1 along gravity), the regressor rank of every robot equal to the
//! count, `Y p = Y_b p_b` on random states, and the regrouping rules agreeing with the numerical
//! method wherever they apply.

use armctl_dynamics::{
    numeric_base_parameters, regressor, regrouped_base_parameters, stacked_regressor,
    DynamicsWorkspace,
};
use armctl_model::test_support::reference::{urdf_dir, Reference, REFERENCE_URDFS};
use armctl_model::{ChainOptions, Robot};
use nalgebra::{DMatrix, DVector};

fn every_robot() -> Vec<(String, Robot)> {
    let mut robots = Vec::new();
    for (file, _, tip) in REFERENCE_URDFS {
        let options = ChainOptions {
            tip_link: Some(tip.into()),
            ..ChainOptions::default()
        };
        robots.push((
            file.to_string(),
            Robot::from_urdf_file(Reference::urdf_path(file), &options).unwrap(),
        ));
    }
    for file in [
        "panda.urdf",
        "ur5e.urdf",
        "puma560.urdf",
        "planar_2link.urdf",
    ] {
        robots.push((
            file.to_string(),
            Robot::from_urdf_file(urdf_dir().join(file), &ChainOptions::default()).unwrap(),
        ));
    }
    robots
}

fn rank(w: &DMatrix<f64>) -> usize {
    let s = w.clone().svd(false, false).singular_values;
    let largest = s.max();
    s.iter().filter(|v| **v > 1e-9 * largest).count()
}

#[test]
fn counts_match_the_literature_and_the_regressor_rank() {
    for (name, robot) in every_robot() {
        let base = numeric_base_parameters(&robot).unwrap();
        let w = stacked_regressor(&robot, 150, 7).unwrap();
        eprintln!("{name}: {} base parameters of {}", base.count(), w.ncols());
        assert_eq!(rank(&w), base.count(), "{name}");
        if name.starts_with("puma560") {
            assert_eq!(base.count(), 36, "{name}");
        }
        if name.starts_with("stanford") {
            assert_eq!(base.count(), 33, "{name}");
        }
    }
}

#[test]
fn the_base_regressor_reproduces_the_full_one() {
    for (name, robot) in every_robot() {
        let base = numeric_base_parameters(&robot).unwrap();
        let p = robot.parameter_vector();
        let p_b = base.values(&p).unwrap();
        let n = robot.dof();
        let mut ws = DynamicsWorkspace::new(&robot);
        let (mut y, mut y_b) = (DMatrix::zeros(n, 10 * n), DMatrix::zeros(n, base.count()));
        for s in 0..20 {
            let value = |k: usize| ((s * 7 + k * 3) as f64 * 0.37).sin();
            let q: Vec<f64> = (0..n).map(|k| 0.8 * value(k)).collect();
            let qd: Vec<f64> = (0..n).map(|k| 1.5 * value(k + 11)).collect();
            let qdd: Vec<f64> = (0..n).map(|k| 2.0 * value(k + 23)).collect();
            regressor(&robot, &mut ws, &q, &qd, &qd, &qdd, &mut y).unwrap();
            base.select(&y, &mut y_b).unwrap();
            let full = &y * DVector::from_column_slice(&p);
            let reduced = &y_b * &p_b;
            let scale = full.amax().max(1.0);
            assert!((full - reduced).amax() < 1e-9 * scale, "{name} sample {s}");
        }
    }
}

#[test]
fn the_regrouping_rules_agree_with_the_numerical_method_where_they_apply() {
    let mut covered = Vec::new();
    for (name, robot) in every_robot() {
        let numeric = numeric_base_parameters(&robot).unwrap();
        match regrouped_base_parameters(&robot) {
            Ok(rules) => {
                assert_eq!(rules.count(), numeric.count(), "{name}");
                assert_eq!(
                    rules.columns(),
                    numeric.columns(),
                    "{name}: the same parameters are kept"
                );
                let p = robot.parameter_vector();
                let (a, b) = (rules.values(&p).unwrap(), numeric.values(&p).unwrap());
                let scale = a.amax().max(1.0);
                assert!((&a - &b).amax() < 1e-9 * scale, "{name}: {a} vs {b}");
                // The same combinations: the rules' coefficients are the numerical ones.
                let difference = (rules.map() - numeric.map()).amax();
                assert!(difference < 1e-8, "{name}: maps differ by {difference}");
                covered.push(name);
            }
            Err(reason) => eprintln!("{name}: {reason}"),
        }
    }
    eprintln!("regrouping rules cover: {covered:?}");
    for must in [
        "puma560_mdh.urdf",
        "puma560_mdh_generic.urdf",
        "panda_arm.urdf",
        "puma560.urdf",
    ] {
        assert!(
            covered.iter().any(|c| c == must),
            "{must} should be covered by the rules"
        );
    }
}
