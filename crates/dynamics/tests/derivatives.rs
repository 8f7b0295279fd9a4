//! Analytical derivatives of inverse dynamics, gravity and forward dynamics against Pinocchio
//! 4.1's (`tests/data/reference/*_derivatives.json`: the Panda, the UR5 and the PUMA 560, the
//! last from both its MDH-frame and its generic URDF) and against central differences of the
//! algorithms themselves on random chains (fixed seed; prismatic and revolute joints).

use armctl_dynamics::{
    forward_dynamics, forward_dynamics_derivatives, gravity_derivatives, gravity_torques, rnea,
    rnea_derivatives, DynamicsWorkspace, ForwardDerivatives,
};
use armctl_model::test_support::random_chain::RandomChain;
use armctl_model::test_support::reference::{dmatrix, Reference};
use armctl_model::{ChainOptions, Robot};
use nalgebra::DMatrix;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use serde::Deserialize;

mod support;
use support::vec_in;

/// One sample of a derivatives file (matrices as lists of rows).
#[derive(Deserialize)]
#[allow(non_snake_case)]
struct Sample {
    q: Vec<f64>,
    qd: Vec<f64>,
    qdd: Vec<f64>,
    tau_rand: Vec<f64>,
    dtau_dq: Vec<Vec<f64>>,
    dtau_dqd: Vec<Vec<f64>>,
    dG_dq: Vec<Vec<f64>>,
    dqdd_dq: Vec<Vec<f64>>,
    dqdd_dqd: Vec<Vec<f64>>,
    dqdd_dtau: Vec<Vec<f64>>,
}

#[derive(Deserialize)]
struct Derivatives {
    samples: Vec<Sample>,
}

/// Within `tol` of the largest entry of `want` (at least 1).
fn assert_close(what: &str, got: &DMatrix<f64>, want: &DMatrix<f64>, tol: f64) {
    let scale = want.amax().max(1.0);
    let err = (got - want).amax();
    assert!(
        err <= tol * scale,
        "{what}: error {err:e} (scale {scale:e})\n got {got}\nwant {want}"
    );
}

fn load(urdf: &str) -> Robot {
    let options = ChainOptions {
        tip_link: Some(
            if urdf.starts_with("panda") {
                "panda_link8"
            } else {
                "tool0"
            }
            .into(),
        ),
        ..ChainOptions::default()
    };
    Robot::from_urdf_file(Reference::urdf_path(urdf), &options).unwrap()
}

#[test]
fn every_derivative_matches_pinocchio_to_1e_8() {
    let cases = [
        ("panda_arm.urdf", "panda_arm"),
        ("ur5.urdf", "ur5"),
        ("puma560_mdh.urdf", "puma560_mdh"),
        ("puma560_mdh_generic.urdf", "puma560_mdh"),
    ];
    for (urdf, stem) in cases {
        let robot = load(urdf);
        let path = Reference::urdf_path(&format!("{stem}_derivatives.json"));
        let file: Derivatives =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let n = robot.dof();
        let mut ws = DynamicsWorkspace::new(&robot);
        let m = || DMatrix::zeros(n, n);
        let (mut dq, mut dqd, mut dg) = (m(), m(), m());
        let (mut fq, mut fqd, mut ftau) = (m(), m(), m());
        let mut qdd = vec![0.0; n];
        for (k, s) in file.samples.iter().enumerate() {
            let at = |what: &str| format!("{urdf} sample {k} {what}");
            rnea_derivatives(&robot, &mut ws, (&s.q, &s.qd, &s.qdd), &mut dq, &mut dqd).unwrap();
            assert_close(&at("dtau_dq"), &dq, &dmatrix(&s.dtau_dq), 1e-8);
            assert_close(&at("dtau_dqd"), &dqd, &dmatrix(&s.dtau_dqd), 1e-8);
            gravity_derivatives(&robot, &mut ws, &s.q, &mut dg).unwrap();
            assert_close(&at("dG_dq"), &dg, &dmatrix(&s.dG_dq), 1e-8);
            let out = ForwardDerivatives {
                qdd: &mut qdd,
                dqdd_dq: &mut fq,
                dqdd_dqd: &mut fqd,
                dqdd_dtau: &mut ftau,
            };
            forward_dynamics_derivatives(&robot, &mut ws, (&s.q, &s.qd, &s.tau_rand), out).unwrap();
            assert_close(&at("dqdd_dq"), &fq, &dmatrix(&s.dqdd_dq), 1e-8);
            assert_close(&at("dqdd_dqd"), &fqd, &dmatrix(&s.dqdd_dqd), 1e-8);
            assert_close(&at("dqdd_dtau"), &ftau, &dmatrix(&s.dqdd_dtau), 1e-8);
        }
    }
}

/// Central differences of `f` by each input coordinate (step `h`).
fn central(n: usize, x: &[f64], h: f64, mut f: impl FnMut(&[f64], &mut [f64])) -> DMatrix<f64> {
    let mut out = DMatrix::zeros(n, x.len());
    let (mut plus, mut minus) = (vec![0.0; n], vec![0.0; n]);
    for j in 0..x.len() {
        let mut xp = x.to_vec();
        xp[j] += h;
        f(&xp, &mut plus);
        xp[j] -= 2.0 * h;
        f(&xp, &mut minus);
        for i in 0..n {
            out[(i, j)] = (plus[i] - minus[i]) / (2.0 * h);
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 200,
        rng_seed: RngSeed::Fixed(0x4445_5249_5641_5449),
        ..ProptestConfig::default()
    })]

    /// On random chains (revolute and prismatic joints, skew axes): each analytical
    /// derivative equals central differences of the algorithm it differentiates, to 1e-6 of
    /// the largest entry (the differences' own error at h = 1e-6).
    #[test]
    fn derivatives_equal_central_differences(seed in any::<u64>(), dof in 1usize..8,
            q in vec_in(7, 0.5), qd in vec_in(7, 2.0), qdd in vec_in(7, 3.0), tau in vec_in(7, 5.0)) {
        let robot = Robot::from_urdf_str(&RandomChain::generate(seed, dof).urdf, &ChainOptions::default()).unwrap();
        let n = robot.dof();
        let (q, qd, qdd, tau) = (&q[..n], &qd[..n], &qdd[..n], &tau[..n]);
        let mut ws = DynamicsWorkspace::new(&robot);
        let m = || DMatrix::zeros(n, n);
        let (mut dq, mut dqd, mut dg) = (m(), m(), m());
        rnea_derivatives(&robot, &mut ws, (q, qd, qdd), &mut dq, &mut dqd).unwrap();
        let h = 1e-6;
        let mut w = DynamicsWorkspace::new(&robot);
        let by_q = central(n, q, h, |x, out| rnea(&robot, &mut w, x, qd, qdd, out).unwrap());
        let by_qd = central(n, qd, h, |x, out| rnea(&robot, &mut w, q, x, qdd, out).unwrap());
        assert_close("dtau_dq", &dq, &by_q, 1e-6);
        assert_close("dtau_dqd", &dqd, &by_qd, 1e-6);
        gravity_derivatives(&robot, &mut ws, q, &mut dg).unwrap();
        assert_close("dG_dq", &dg, &central(n, q, h, |x, out| gravity_torques(&robot, &mut w, x, out).unwrap()), 1e-6);
        let (mut fq, mut fqd, mut ftau) = (m(), m(), m());
        let mut acc = vec![0.0; n];
        let out = ForwardDerivatives { qdd: &mut acc, dqdd_dq: &mut fq, dqdd_dqd: &mut fqd, dqdd_dtau: &mut ftau };
        forward_dynamics_derivatives(&robot, &mut ws, (q, qd, tau), out).unwrap();
        let fd = |x: &[f64], y: &[f64], t: &[f64], out: &mut [f64], w: &mut DynamicsWorkspace| forward_dynamics(&robot, w, x, y, t, out).unwrap();
        // Its own qdd (from the derivatives' composites) is forward dynamics'.
        let mut want = vec![0.0; n];
        fd(q, qd, tau, &mut want, &mut w);
        let scale = want.iter().fold(1.0_f64, |m, x| m.max(x.abs()));
        for (got, want) in acc.iter().zip(&want) {
            prop_assert!((got - want).abs() <= 1e-10 * scale, "qdd {acc:?} vs {want:?}");
        }
        assert_close("dqdd_dq", &fq, &central(n, q, h, |x, out| fd(x, qd, tau, out, &mut w)), 1e-5);
        assert_close("dqdd_dqd", &fqd, &central(n, qd, h, |x, out| fd(q, x, tau, out, &mut w)), 1e-5);
        assert_close("dqdd_dtau", &ftau, &central(n, tau, h, |x, out| fd(q, qd, x, out, &mut w)), 1e-5);
    }
}

/// A non-finite state gives an error (forward dynamics: its mass matrix is refused, `qdd` left
/// as it was) or non-finite derivatives, never a panic; wrong sizes are refused by name.
#[test]
fn bad_input_is_refused_or_propagates_without_panicking() {
    let robot = load("panda_arm.urdf");
    let n = robot.dof();
    let mut ws = DynamicsWorkspace::new(&robot);
    let m = || DMatrix::zeros(n, n);
    let (mut fq, mut fqd, mut ftau) = (m(), m(), m());
    let mut qdd = vec![7.0; n];
    let mut q = vec![0.1; n];
    q[2] = f64::NAN;
    let out = ForwardDerivatives {
        qdd: &mut qdd,
        dqdd_dq: &mut fq,
        dqdd_dqd: &mut fqd,
        dqdd_dtau: &mut ftau,
    };
    let zero = vec![0.0; n];
    assert!(forward_dynamics_derivatives(&robot, &mut ws, (&q, &zero, &zero), out).is_err());
    assert_eq!(qdd, vec![7.0; n]);
    let (mut dq, mut dqd) = (m(), m());
    let mut qd = vec![0.0; n];
    qd[4] = f64::INFINITY;
    rnea_derivatives(&robot, &mut ws, (&zero, &qd, &zero), &mut dq, &mut dqd).unwrap();
    assert!(dqd.iter().any(|x| !x.is_finite()));
    let err = rnea_derivatives(
        &robot,
        &mut ws,
        (&zero, &zero[1..], &zero),
        &mut dq,
        &mut dqd,
    );
    assert!(err.unwrap_err().to_string().contains("qd"));
    let mut small = DMatrix::zeros(n - 1, n);
    assert!(gravity_derivatives(&robot, &mut ws, &zero, &mut small)
        .unwrap_err()
        .to_string()
        .contains("dg_dq"));
    // The workspace still works afterwards.
    gravity_derivatives(&robot, &mut ws, &zero, &mut dq).unwrap();
    assert!(dq.iter().all(|x| x.is_finite()));
}
