//! The one pass for all terms (`DynamicsWorkspace::update`) gives every term as its own
//! algorithm does, whatever order they are asked in, on random chains (revolute and prismatic
//! joints, skew axes, base and tool transforms).

use armctl_dynamics::{
    gravity_torques, mass_matrix, nonlinear_effects, regressor_times, regressor_transpose_products,
    rnea, DynamicsWorkspace, Gravity, TransposeProducts,
};
use armctl_model::test_support::random_chain::RandomChain;
use armctl_model::{
    forward_kinematics, jacobian, jacobian_dot_qd, ChainOptions, FrameId, KinematicsWorkspace,
    Robot,
};
use nalgebra::{DMatrix, Matrix6xX};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

mod support;
use support::{assert_close, vec_in};

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 200,
        rng_seed: RngSeed::Fixed(0x414c_4c5f_5445_524d),
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_term_equals_its_own_algorithm(seed in any::<u64>(), dof in 1usize..8,
            q in vec_in(7, 1.0), qd in vec_in(7, 2.0), qdd in vec_in(7, 3.0),
            p in vec_in(70, 1.0), w in prop::collection::vec(0.0..4.0, 7), jacobian_first in any::<bool>()) {
        let robot = Robot::from_urdf_str(&RandomChain::generate(seed, dof).urdf, &ChainOptions::default()).unwrap();
        let n = robot.dof();
        let (q, qd, qdd, p, w) = (&q[..n], &qd[..n], &qdd[..n], &p[..10 * n], &w[..n]);
        let mut ws = DynamicsWorkspace::new(&robot);
        let mut own = DynamicsWorkspace::new(&robot);
        let mut kin = KinematicsWorkspace::new(&robot);
        let mut terms = ws.update(&robot, q, qd).unwrap();
        // The tip first or last: the lazily made frames serve both orders.
        let (mut jac, mut want_jac) = (Matrix6xX::zeros(n), Matrix6xX::zeros(n));
        if jacobian_first {
            terms.tip_jacobian(&mut jac).unwrap();
        }
        let (mut m, mut want_m) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
        terms.mass_matrix(&mut m).unwrap();
        mass_matrix(&robot, &mut own, q, &mut want_m).unwrap();
        assert_close("M", m.as_slice(), want_m.as_slice());
        let (mut out, mut want) = (vec![0.0; n], vec![0.0; n]);
        terms.nonlinear_effects(&mut out).unwrap();
        nonlinear_effects(&robot, &mut own, q, qd, &mut want).unwrap();
        assert_close("C qd + G", &out, &want);
        terms.gravity(&mut out).unwrap();
        gravity_torques(&robot, &mut own, q, &mut want).unwrap();
        assert_close("G", &out, &want);
        terms.inverse_dynamics(qdd, &mut out).unwrap();
        rnea(&robot, &mut own, q, qd, qdd, &mut want).unwrap();
        assert_close("RNEA", &out, &want);
        let zero = vec![0.0; n];
        terms.regressor_times((&zero, &zero, qdd), Gravity::Excluded, p, &mut out).unwrap();
        regressor_times(&robot, &mut own, (q, &zero, &zero, qdd), Gravity::Excluded, p, &mut want).unwrap();
        assert_close("M_p a", &out, &want);
        // A sum of two products (at rest and moving) in one inward pass.
        let mut moving = vec![0.0; n];
        regressor_times(&robot, &mut own, (q, qd, qd, qdd), Gravity::Included, p, &mut moving).unwrap();
        let terms_sum = [((&zero[..], &zero[..], qdd), Gravity::Excluded, p), ((qd, qd, qdd), Gravity::Included, p)];
        terms.regressor_times_sum(terms_sum, &mut out).unwrap();
        let sum: Vec<f64> = want.iter().zip(&moving).map(|(a, b)| a + b).collect();
        assert_close("sum of products", &out, &sum);
        let (mut product, mut squares) = (vec![0.0; 10 * n], vec![0.0; 10 * n]);
        let (mut want_product, mut want_squares) = (vec![0.0; 10 * n], vec![0.0; 10 * n]);
        let point = (qd, qd, qdd);
        let products = TransposeProducts { transpose_times: &mut product, weighted_squares: &mut squares };
        terms.regressor_transpose_products(point, Gravity::Included, (qdd, w), products).unwrap();
        let products = TransposeProducts { transpose_times: &mut want_product, weighted_squares: &mut want_squares };
        regressor_transpose_products(&robot, &mut own, (q, qd, qd, qdd), Gravity::Included, (qdd, w), products).unwrap();
        assert_close("Y^T x", &product, &want_product);
        assert_close("sum w Y^2", &squares, &want_squares);
        // One outward pass for both products (a law's `Y p`, then `Y^T x`).
        let mut pass = terms.regressor_pass(point, Gravity::Included).unwrap();
        pass.times(p, &mut out).unwrap();
        regressor_times(&robot, &mut own, (q, qd, qd, qdd), Gravity::Included, p, &mut want).unwrap();
        assert_close("Y p of the pass", &out, &want);
        let products = TransposeProducts { transpose_times: &mut product, weighted_squares: &mut squares };
        pass.transpose_products((qdd, w), products).unwrap();
        assert_close("Y^T x of the pass", &product, &want_product);
        assert_close("sum w Y^2 of the pass", &squares, &want_squares);
        if !jacobian_first {
            terms.tip_jacobian(&mut jac).unwrap();
        }
        jacobian(&robot, &mut kin, q, FrameId::Tip, &mut want_jac).unwrap();
        assert_close("J", jac.as_slice(), want_jac.as_slice());
        let pose = terms.tip_pose();
        let want_pose = forward_kinematics(&robot, &mut kin, q).unwrap().tip();
        assert_close("tip", pose.to_homogeneous().as_slice(), want_pose.to_homogeneous().as_slice());
        let jdot = terms.tip_jacobian_dot_qd();
        let want_jdot = jacobian_dot_qd(&robot, &mut kin, q, qd, FrameId::Tip).unwrap();
        assert_close("Jdot qd", jdot.as_slice(), want_jdot.as_slice());
    }
}

#[test]
fn lengths_are_checked_at_update_and_per_term() {
    let robot =
        Robot::from_urdf_str(&RandomChain::generate(3, 3).urdf, &ChainOptions::default()).unwrap();
    let mut ws = DynamicsWorkspace::new(&robot);
    assert!(ws.update(&robot, &[0.0; 2], &[0.0; 3]).is_err());
    assert!(ws.update(&robot, &[0.0; 3], &[0.0; 4]).is_err());
    let mut terms = ws.update(&robot, &[0.0; 3], &[0.0; 3]).unwrap();
    assert!(terms.mass_matrix(&mut DMatrix::zeros(3, 2)).is_err());
    assert!(terms.nonlinear_effects(&mut [0.0; 2]).is_err());
    assert!(terms.inverse_dynamics(&[0.0; 2], &mut [0.0; 3]).is_err());
    assert!(terms.tip_jacobian(&mut Matrix6xX::zeros(4)).is_err());
}
