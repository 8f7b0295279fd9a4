//! `Y p`, `Y^T x` and `sum_i w_i Y_ic^2` computed without forming Y equal those of the formed
//! regressor, on random chains (revolute and prismatic joints, skew axes), with and without
//! gravity, moving and at rest.

use armctl_dynamics::{
    regressor, regressor_times, regressor_transpose_products, DynamicsWorkspace, Gravity,
    TransposeProducts,
};
use armctl_model::test_support::random_chain::RandomChain;
use armctl_model::{ChainOptions, Robot};
use nalgebra::{DMatrix, DVector};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

mod support;
use support::{assert_close, vec_in};

/// `Y(q, qd, v, a)`, without G when `gravity` is excluded.
fn formed(
    robot: &Robot,
    (q, qd, v, a): (&[f64], &[f64], &[f64], &[f64]),
    gravity: Gravity,
) -> DMatrix<f64> {
    let n = robot.dof();
    let mut ws = DynamicsWorkspace::new(robot);
    let mut y = DMatrix::zeros(n, 10 * n);
    regressor(robot, &mut ws, q, qd, v, a, &mut y).unwrap();
    if gravity == Gravity::Excluded {
        let zero = vec![0.0; n];
        let mut g = DMatrix::zeros(n, 10 * n);
        regressor(robot, &mut ws, q, &zero, &zero, &zero, &mut g).unwrap();
        y -= g;
    }
    y
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 200,
        rng_seed: RngSeed::Fixed(0x5245_4752_4553_534f),
        ..ProptestConfig::default()
    })]

    #[test]
    fn products_equal_those_of_the_formed_regressor(seed in any::<u64>(), dof in 1usize..8,
            q in vec_in(7, 1.0), qd in vec_in(7, 2.0), v in vec_in(7, 2.0), a in vec_in(7, 3.0),
            p in vec_in(70, 1.0), x in vec_in(7, 2.0), w in prop::collection::vec(0.0..4.0, 7),
            with_gravity in any::<bool>()) {
        let robot = Robot::from_urdf_str(&RandomChain::generate(seed, dof).urdf, &ChainOptions::default()).unwrap();
        let n = robot.dof();
        let point = (&q[..n], &qd[..n], &v[..n], &a[..n]);
        let gravity = if with_gravity { Gravity::Included } else { Gravity::Excluded };
        let y = formed(&robot, point, gravity);
        let mut ws = DynamicsWorkspace::new(&robot);
        let (p, x, w) = (&p[..10 * n], &x[..n], &w[..n]);
        let mut times = vec![0.0; n];
        regressor_times(&robot, &mut ws, point, gravity, p, &mut times).unwrap();
        assert_close("Y p", &times, (&y * DVector::from_column_slice(p)).as_slice());
        let (mut product, mut squares) = (vec![0.0; 10 * n], vec![0.0; 10 * n]);
        let out = TransposeProducts { transpose_times: &mut product, weighted_squares: &mut squares };
        regressor_transpose_products(&robot, &mut ws, point, gravity, (x, w), out).unwrap();
        assert_close("Y^T x", &product, (y.transpose() * DVector::from_column_slice(x)).as_slice());
        let want: Vec<f64> = y.column_iter().map(|c| c.iter().zip(w).map(|(y, w)| w * y * y).sum()).collect();
        assert_close("sum w Y^2", &squares, &want);
        // At rest (qd = v = 0) the products take a cheaper pass.
        let still = vec![0.0; n];
        let point = (&q[..n], &still[..], &still[..], &a[..n]);
        let y = formed(&robot, point, gravity);
        regressor_times(&robot, &mut ws, point, gravity, p, &mut times).unwrap();
        assert_close("Y p at rest", &times, (&y * DVector::from_column_slice(p)).as_slice());
        let out = TransposeProducts { transpose_times: &mut product, weighted_squares: &mut squares };
        regressor_transpose_products(&robot, &mut ws, point, gravity, (x, w), out).unwrap();
        assert_close("Y^T x at rest", &product, (y.transpose() * DVector::from_column_slice(x)).as_slice());
    }
}
