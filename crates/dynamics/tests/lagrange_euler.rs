//! The Lagrange-Euler route against the Newton-Euler one and the third-party numbers: M, C
//! (from the coupling coefficients) and G equal CRBA, the Christoffel C and the gravity
//! torques, and `tau` equals RNEA, on the bundled arms, the reference robots (Pinocchio's
//! samples too) and 100 random chains with prismatic joints; the direct traces and the
//! inner-product method agree.

use armctl_dynamics::{
    coriolis_matrix, gravity_torques, lagrange_coriolis_matrix, lagrange_coupling,
    lagrange_gravity, lagrange_inverse_dynamics, lagrange_mass_matrix, mass_matrix, rnea,
    DynamicsWorkspace, LagrangeWorkspace, TraceMethod,
};
use armctl_model::test_support::random_chain::RandomChain;
use armctl_model::test_support::reference::{dmatrix, urdf_dir, Reference, REFERENCE_URDFS};
use armctl_model::{ChainOptions, Robot};
use nalgebra::DMatrix;

/// `got` within `tol` of `want`, relative to the largest entry of `want` (at least 1).
fn assert_close(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let scale = want.iter().fold(1.0_f64, |m, w| m.max(w.abs()));
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * scale,
            "{what}[{k}]: {g} vs {w} (scale {scale})"
        );
    }
}

/// The Lagrange-Euler terms by `method`: M, C, G and tau.
fn lagrange(
    robot: &Robot,
    (q, qd, qdd): (&[f64], &[f64], &[f64]),
    method: TraceMethod,
) -> (DMatrix<f64>, DMatrix<f64>, Vec<f64>, Vec<f64>) {
    let n = robot.dof();
    let mut ws = LagrangeWorkspace::new(robot);
    let (mut m, mut c) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
    let (mut g, mut tau) = (vec![0.0; n], vec![0.0; n]);
    lagrange_mass_matrix(robot, &mut ws, q, method, &mut m).unwrap();
    lagrange_coriolis_matrix(robot, &mut ws, q, qd, method, &mut c).unwrap();
    lagrange_gravity(robot, &mut ws, q, method, &mut g).unwrap();
    lagrange_inverse_dynamics(robot, &mut ws, (q, qd, qdd), method, &mut tau).unwrap();
    (m, c, g, tau)
}

/// Both evaluations equal Newton-Euler's terms to `1e-10` and each other to `1e-12`.
fn check(what: &str, robot: &Robot, state: (&[f64], &[f64], &[f64])) {
    let (q, qd, qdd) = state;
    let n = robot.dof();
    let mut ws = DynamicsWorkspace::new(robot);
    let (mut m, mut c) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
    let (mut g, mut tau) = (vec![0.0; n], vec![0.0; n]);
    mass_matrix(robot, &mut ws, q, &mut m).unwrap();
    coriolis_matrix(robot, &mut ws, q, qd, &mut c).unwrap();
    gravity_torques(robot, &mut ws, q, &mut g).unwrap();
    rnea(robot, &mut ws, q, qd, qdd, &mut tau).unwrap();
    let direct = lagrange(robot, state, TraceMethod::Direct);
    let inner = lagrange(robot, state, TraceMethod::InnerProduct);
    for (method, terms) in [("direct", &direct), ("inner product", &inner)] {
        let at = |term: &str| format!("{what} {method} {term}");
        assert_close(&at("M"), terms.0.as_slice(), m.as_slice(), 1e-10);
        assert_close(&at("C"), terms.1.as_slice(), c.as_slice(), 1e-10);
        assert_close(&at("G"), &terms.2, &g, 1e-10);
        assert_close(&at("tau"), &terms.3, &tau, 1e-10);
    }
    let at = |term: &str| format!("{what} direct vs inner product {term}");
    assert_close(&at("M"), inner.0.as_slice(), direct.0.as_slice(), 1e-12);
    assert_close(&at("C"), inner.1.as_slice(), direct.1.as_slice(), 1e-12);
    assert_close(&at("G"), &inner.2, &direct.2, 1e-12);
    assert_close(&at("tau"), &inner.3, &direct.3, 1e-12);
}

/// A state of `n` joints from `seed` (positions within 1.5 rad or 0.3 m of zero).
fn state(n: usize, seed: u64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut rng = armctl_model::test_support::random_chain::Rng::new(seed);
    let mut draw = |scale: f64| (0..n).map(|_| rng.range(-scale, scale)).collect::<Vec<_>>();
    (draw(1.5), draw(2.0), draw(3.0))
}

#[test]
fn the_bundled_arms_agree_with_newton_euler() {
    for file in [
        "panda.urdf",
        "ur5e.urdf",
        "puma560.urdf",
        "planar_2link.urdf",
    ] {
        let robot = Robot::from_urdf_file(urdf_dir().join(file), &ChainOptions::default()).unwrap();
        for seed in 0..3 {
            let (q, qd, qdd) = state(robot.dof(), seed);
            check(&format!("{file} state {seed}"), &robot, (&q, &qd, &qdd));
        }
    }
}

#[test]
fn the_reference_robots_agree_with_newton_euler_and_pinocchio() {
    for (urdf, stem, tip) in REFERENCE_URDFS {
        let options = ChainOptions {
            tip_link: Some(tip.into()),
            ..ChainOptions::default()
        };
        let robot = Robot::from_urdf_file(Reference::urdf_path(urdf), &options).unwrap();
        let n = robot.dof();
        for (k, s) in Reference::load(stem).samples.iter().enumerate() {
            let what = format!("{urdf} sample {k}");
            check(&what, &robot, (&s.q, &s.qd, &s.qdd));
            let (m, c, g, tau) = lagrange(&robot, (&s.q, &s.qd, &s.qdd), TraceMethod::InnerProduct);
            let rows = |x: &DMatrix<f64>| x.transpose().as_slice().to_vec();
            assert_close(
                &format!("{what} M (reference)"),
                &rows(&m),
                &rows(&dmatrix(&s.M)),
                1e-9,
            );
            assert_close(
                &format!("{what} C (reference)"),
                &rows(&c),
                &rows(&dmatrix(&s.C)),
                1e-9,
            );
            assert_close(&format!("{what} G (reference)"), &g, &s.G, 1e-9);
            assert_close(&format!("{what} tau (reference)"), &tau, &s.tau, 1e-9);
            assert_eq!(m.nrows(), n);
        }
    }
}

#[test]
fn a_hundred_random_chains_agree_with_newton_euler() {
    let mut prismatic = 0;
    for seed in 0..100_u64 {
        let chain = RandomChain::generate(seed, 1 + (seed as usize % 7));
        let robot = Robot::from_urdf_str(&chain.urdf, &ChainOptions::default()).unwrap();
        prismatic += robot
            .joints()
            .iter()
            .filter(|j| j.kind == armctl_model::JointKind::Prismatic)
            .count();
        let (q, qd, qdd) = state(robot.dof(), seed + 1000);
        check(&format!("random chain {seed}"), &robot, (&q, &qd, &qdd));
    }
    assert!(
        prismatic >= 20,
        "only {prismatic} prismatic joints in the chains"
    );
}

/// The coupling coefficients are the Christoffel symbols of M (by central differences of CRBA),
/// symmetric in their last two indices, and `sum_k D_ijk qd_k` is the C that
/// `lagrange_coriolis_matrix` returns.
#[test]
fn the_coupling_coefficients_are_the_christoffel_symbols() {
    let robot =
        Robot::from_urdf_file(urdf_dir().join("panda.urdf"), &ChainOptions::default()).unwrap();
    let n = robot.dof();
    let (q, qd, _) = state(n, 7);
    let mut ws = LagrangeWorkspace::new(&robot);
    let mut d = vec![0.0; n * n * n];
    lagrange_coupling(&robot, &mut ws, &q, TraceMethod::InnerProduct, &mut d).unwrap();
    let at = |i: usize, j: usize, k: usize| d[(i * n + j) * n + k];
    // c_ijk = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i), by central differences.
    let mut dws = DynamicsWorkspace::new(&robot);
    let h = 1e-6;
    let dm: Vec<DMatrix<f64>> = (0..n)
        .map(|k| {
            let mut moved = |s: f64| {
                let mut qk = q.clone();
                qk[k] += s * h;
                let mut m = DMatrix::zeros(n, n);
                mass_matrix(&robot, &mut dws, &qk, &mut m).unwrap();
                m
            };
            (moved(1.0) - moved(-1.0)) / (2.0 * h)
        })
        .collect();
    for i in 0..n {
        for j in 0..n {
            for k in 0..n {
                let christoffel = 0.5 * (dm[k][(i, j)] + dm[j][(i, k)] - dm[i][(j, k)]);
                assert!(
                    (at(i, j, k) - christoffel).abs() < 1e-7,
                    "D_{i}{j}{k} = {} vs {christoffel}",
                    at(i, j, k)
                );
                assert_eq!(at(i, j, k), at(i, k, j));
            }
        }
    }
    let mut c = DMatrix::zeros(n, n);
    lagrange_coriolis_matrix(&robot, &mut ws, &q, &qd, TraceMethod::InnerProduct, &mut c).unwrap();
    for i in 0..n {
        for j in 0..n {
            let sum: f64 = (0..n).map(|k| at(i, j, k) * qd[k]).sum();
            assert!((c[(i, j)] - sum).abs() < 1e-12);
        }
    }
}

#[test]
fn wrong_sizes_are_named() {
    let robot = Robot::from_urdf_file(
        urdf_dir().join("planar_2link.urdf"),
        &ChainOptions::default(),
    )
    .unwrap();
    let mut ws = LagrangeWorkspace::new(&robot);
    let mut m = DMatrix::zeros(3, 3);
    let e = lagrange_mass_matrix(&robot, &mut ws, &[0.0, 0.0], TraceMethod::Direct, &mut m);
    assert!(e.unwrap_err().to_string().contains("M"));
    let e = lagrange_gravity(&robot, &mut ws, &[0.0], TraceMethod::Direct, &mut [0.0; 2]);
    assert!(e.unwrap_err().to_string().contains("q"));
    let mut d = vec![0.0; 7];
    let e = lagrange_coupling(&robot, &mut ws, &[0.0; 2], TraceMethod::Direct, &mut d);
    assert!(e.unwrap_err().to_string().contains("D_ijk"));
}
