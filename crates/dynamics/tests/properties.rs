//! Properties of the dynamics on random chains (skew, parallel, intersecting, collinear axes,
//! prismatic joints, fixed joints): M symmetric positive definite, `Mdot - 2C` skew,
//! the algorithms agree with each other (RNEA, `M qdd + C qd + G`, nonlinear effects, the
//! two-velocity form, the regressor), forward dynamics inverts inverse dynamics, and a static
//! tip wrench costs `G - J^T w`.
//!
//! The cases come from a fixed seed, so every run checks the same chains and states.

use armctl_dynamics::{
    coriolis_matrix, forward_dynamics, gravity_torques, mass_matrix, nonlinear_effects, regressor,
    rnea, rnea_two_velocity, rnea_with_wrench, DynamicsWorkspace, Wrench,
};
use armctl_model::test_support::random_chain::RandomChain;
use armctl_model::{jacobian, ChainOptions, FrameId, KinematicsWorkspace, Robot};
use nalgebra::{DMatrix, DVector, Matrix6xX, Vector3, Vector6};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

mod support;
use support::vec_in;

fn close(
    what: &str,
    got: &DVector<f64>,
    want: &DVector<f64>,
    tol: f64,
) -> Result<(), TestCaseError> {
    let scale = want.amax().max(1.0);
    let err = (got - want).amax();
    prop_assert!(
        err <= tol * scale,
        "{}: error {:e} (scale {})\n got {}\nwant {}",
        what,
        err,
        scale,
        got,
        want
    );
    Ok(())
}

struct Setup {
    robot: Robot,
    ws: DynamicsWorkspace,
    n: usize,
}

fn setup(seed: u64, dof: usize) -> Setup {
    let chain = RandomChain::generate(seed, dof);
    let robot = Robot::from_urdf_str(&chain.urdf, &ChainOptions::default()).unwrap();
    let ws = DynamicsWorkspace::new(&robot);
    Setup {
        n: robot.dof(),
        robot,
        ws,
    }
}

fn matrices(s: &mut Setup, q: &[f64], qd: &[f64]) -> (DMatrix<f64>, DMatrix<f64>, DVector<f64>) {
    let n = s.n;
    let (mut m, mut c, mut g) = (
        DMatrix::zeros(n, n),
        DMatrix::zeros(n, n),
        DVector::zeros(n),
    );
    mass_matrix(&s.robot, &mut s.ws, q, &mut m).unwrap();
    coriolis_matrix(&s.robot, &mut s.ws, q, qd, &mut c).unwrap();
    gravity_torques(&s.robot, &mut s.ws, q, g.as_mut_slice()).unwrap();
    (m, c, g)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 200,
        rng_seed: RngSeed::Fixed(0x4459_4e5f_5052_4f50),
        ..ProptestConfig::default()
    })]

    #[test]
    fn algorithms_agree(seed in any::<u64>(), dof in 1usize..8, q in vec_in(7, 0.5), qd in vec_in(7, 2.0),
                        qdd in vec_in(7, 3.0), v in vec_in(7, 2.0)) {
        let mut s = setup(seed, dof);
        let n = s.n;
        let (q, qd, qdd, v) = (&q[..n], &qd[..n], &qdd[..n], &v[..n]);
        let (m, c, g) = matrices(&mut s, q, qd);
        // M symmetric positive definite.
        prop_assert_eq!(&m, &m.transpose());
        prop_assert!(m.clone().cholesky().is_some(), "M not positive definite: {}", m);
        let col = |x: &[f64]| DVector::from_column_slice(x);
        let mut tau = DVector::zeros(n);
        rnea(&s.robot, &mut s.ws, q, qd, qdd, tau.as_mut_slice()).unwrap();
        close("rnea = M qdd + C qd + G", &tau, &(&m * col(qdd) + &c * col(qd) + &g), 1e-9)?;
        nonlinear_effects(&s.robot, &mut s.ws, q, qd, tau.as_mut_slice()).unwrap();
        close("nonlinear effects = C qd + G", &tau, &(&c * col(qd) + &g), 1e-9)?;
        rnea(&s.robot, &mut s.ws, q, &vec![0.0; n], &vec![0.0; n], tau.as_mut_slice()).unwrap();
        close("G = rnea(q, 0, 0)", &g, &tau, 1e-9)?;
        let want = &m * col(qdd) + &c * col(v) + &g;
        rnea_two_velocity(&s.robot, &mut s.ws, q, qd, v, qdd, tau.as_mut_slice()).unwrap();
        close("two-velocity = M a + C v + G", &tau, &want, 1e-9)?;
        let mut y = DMatrix::zeros(n, 10 * n);
        regressor(&s.robot, &mut s.ws, q, qd, v, qdd, &mut y).unwrap();
        close("Y p = M a + C v + G", &(&y * DVector::from_vec(s.robot.parameter_vector())), &want, 1e-9)?;
        // Forward dynamics inverts inverse dynamics.
        rnea(&s.robot, &mut s.ws, q, qd, qdd, tau.as_mut_slice()).unwrap();
        let mut back = DVector::zeros(n);
        forward_dynamics(&s.robot, &mut s.ws, q, qd, tau.as_slice(), back.as_mut_slice()).unwrap();
        close("FD(ID(qdd)) = qdd", &back, &col(qdd), 1e-8)?;
    }

    #[test]
    fn mdot_minus_two_c_is_skew(seed in any::<u64>(), dof in 1usize..8, q in vec_in(7, 0.5), qd in vec_in(7, 2.0)) {
        let mut s = setup(seed, dof);
        let n = s.n;
        let (q, qd) = (&q[..n], &qd[..n]);
        let h = 1e-6;
        let shifted = |sign: f64| -> Vec<f64> { q.iter().zip(qd).map(|(a, b)| a + sign * h * b).collect() };
        let mut m_plus = DMatrix::zeros(n, n);
        let mut m_minus = DMatrix::zeros(n, n);
        mass_matrix(&s.robot, &mut s.ws, &shifted(1.0), &mut m_plus).unwrap();
        mass_matrix(&s.robot, &mut s.ws, &shifted(-1.0), &mut m_minus).unwrap();
        let mdot = (m_plus - m_minus) / (2.0 * h);
        let (_, c, _) = matrices(&mut s, q, qd);
        let n_mat = &mdot - &c * 2.0;
        let asym = (&n_mat + n_mat.transpose()).amax();
        prop_assert!(asym < 1e-6 * mdot.amax().max(1.0), "Mdot - 2C not skew: {:e}", asym);
    }

    #[test]
    fn static_wrench_costs_jacobian_transpose(seed in any::<u64>(), dof in 1usize..8, q in vec_in(7, 0.5),
                                              w in vec_in(6, 10.0)) {
        let mut s = setup(seed, dof);
        let n = s.n;
        let q = &q[..n];
        let wrench = Wrench { force: Vector3::new(w[0], w[1], w[2]), torque: Vector3::new(w[3], w[4], w[5]) };
        let mut tau = DVector::zeros(n);
        let zeros = vec![0.0; n];
        rnea_with_wrench(&s.robot, &mut s.ws, q, &zeros, &zeros, &wrench, tau.as_mut_slice()).unwrap();
        let mut g = DVector::zeros(n);
        gravity_torques(&s.robot, &mut s.ws, q, g.as_mut_slice()).unwrap();
        let mut j = Matrix6xX::zeros(n);
        jacobian(&s.robot, &mut KinematicsWorkspace::new(&s.robot), q, FrameId::Tip, &mut j).unwrap();
        let want = g - j.transpose() * Vector6::new(w[0], w[1], w[2], w[3], w[4], w[5]);
        close("rnea with wrench = G - J^T w", &tau, &want, 1e-9)?;
    }
}
