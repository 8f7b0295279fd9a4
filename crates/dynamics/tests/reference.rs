//! Dynamics against third-party numbers (Pinocchio 4.1, Robotics Toolbox 1.5): inverse
//! dynamics, M, C, G and forward dynamics on every sample, from both the MDH-frame and the
//! generic URDFs; the two-velocity form and the regressor against the reference matrices.

use armctl_dynamics::{
    coriolis_matrix, forward_dynamics, gravity_torques, mass_matrix, regressor, rnea,
    rnea_two_velocity, DynamicsWorkspace,
};
use armctl_model::test_support::reference::{dmatrix, Reference, REFERENCE_URDFS};
use armctl_model::{ChainOptions, Robot};
use nalgebra::{DMatrix, DVector};

/// 1e-9 relative to the largest entry, 1e-9 absolute near zero.
fn assert_close(what: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-9 * w.abs().max(1.0),
            "{what}[{k}]: {g} vs {w}"
        );
    }
}

fn load(urdf: &str, tip: &str) -> Robot {
    let options = ChainOptions {
        tip_link: Some(tip.into()),
        ..ChainOptions::default()
    };
    Robot::from_urdf_file(Reference::urdf_path(urdf), &options).unwrap()
}

#[test]
fn inverse_dynamics_mass_coriolis_gravity_forward_dynamics_match() {
    for (urdf, stem, tip) in REFERENCE_URDFS {
        let robot = load(urdf, tip);
        let reference = Reference::load(stem);
        let n = robot.dof();
        let mut ws = DynamicsWorkspace::new(&robot);
        let (mut tau, mut g, mut qdd) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        let (mut m, mut c) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
        for (k, s) in reference.samples.iter().enumerate() {
            let at = |what: &str| format!("{urdf} sample {k} {what}");
            rnea(&robot, &mut ws, &s.q, &s.qd, &s.qdd, &mut tau).unwrap();
            assert_close(&at("tau"), &tau, &s.tau);
            mass_matrix(&robot, &mut ws, &s.q, &mut m).unwrap();
            assert_close(
                &at("M"),
                m.transpose().as_slice(),
                dmatrix(&s.M).transpose().as_slice(),
            );
            coriolis_matrix(&robot, &mut ws, &s.q, &s.qd, &mut c).unwrap();
            assert_close(
                &at("C"),
                c.transpose().as_slice(),
                dmatrix(&s.C).transpose().as_slice(),
            );
            gravity_torques(&robot, &mut ws, &s.q, &mut g).unwrap();
            assert_close(&at("G"), &g, &s.G);
            forward_dynamics(&robot, &mut ws, &s.q, &s.qd, &s.tau_rand, &mut qdd).unwrap();
            assert_close(&at("qdd_fd"), &qdd, &s.qdd_fd);
        }
    }
}

#[test]
fn two_velocity_form_and_regressor_match_reference_matrices() {
    for (urdf, stem, tip) in REFERENCE_URDFS {
        let robot = load(urdf, tip);
        let reference = Reference::load(stem);
        let n = robot.dof();
        let mut ws = DynamicsWorkspace::new(&robot);
        let p = DVector::from_vec(robot.parameter_vector());
        let mut tau = vec![0.0; n];
        let mut y = DMatrix::zeros(n, 10 * n);
        for (k, s) in reference.samples.iter().enumerate() {
            // v and a: the sample's qdd and tau_rand scaled, so they differ from qd.
            let v: Vec<f64> = s.qdd.iter().map(|x| 0.5 * x).collect();
            let a: Vec<f64> = s
                .tau_rand
                .iter()
                .zip(&s.qd)
                .map(|(t, d)| 0.01 * t - d)
                .collect();
            let want = dmatrix(&s.M) * DVector::from_column_slice(&a)
                + dmatrix(&s.C) * DVector::from_column_slice(&v)
                + DVector::from_column_slice(&s.G);
            rnea_two_velocity(&robot, &mut ws, &s.q, &s.qd, &v, &a, &mut tau).unwrap();
            assert_close(
                &format!("{urdf} sample {k} M a + C v + G"),
                &tau,
                want.as_slice(),
            );
            regressor(&robot, &mut ws, &s.q, &s.qd, &v, &a, &mut y).unwrap();
            assert_close(
                &format!("{urdf} sample {k} Y p"),
                (&y * &p).as_slice(),
                want.as_slice(),
            );
        }
    }
}
