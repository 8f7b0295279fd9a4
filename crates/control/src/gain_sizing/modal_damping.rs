//! Critical damping of a task-space spring by double diagonalisation (Albu-Schaeffer et al.,
//! 2003; docs/theory.md section 6): with `Lambda = Q Q^T` and `K = Q diag(k0) Q^T`,
//! `D = Q diag(2 zeta sqrt(k0)) Q^T`, so every mode, light or heavy, gets the damping ratio
//! zeta. From the lower Cholesky factor U of the task mobility `Lambda^-1 = U U^T`:
//! `F = U^-T` has `F F^T = Lambda`, `F^-1 K F^-T = U^T K U = V diag(k0) V^T`, `Q = U^-T V`.
//!
//! Only `D v` is needed, for one velocity error v, so D is never formed:
//! `D v = 2 zeta U^-T V diag(sqrt(k0)) V^T U^-1 v`. The eigenvectors V are kept from one step to
//! the next: a controller's `U^T K U` changes little in 1 ms, so in the last step's basis it is
//! nearly diagonal and [`WarmEigen`] finishes it in two or three sweeps (from the identity:
//! three to five along `armctl sim` runs of the Panda, UR5e and Puma 560, up to eleven on
//! badly scaled random designs).

use nalgebra::{Matrix6, Vector6};

use crate::numerics::task_inertia::TaskInertia;
use crate::numerics::warm_eigen::WarmEigen;
use crate::ControlError;

/// The kept eigenvectors of `U^T K U` ([`WarmEigen`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct ModalDamping {
    eigen: WarmEigen,
}

impl ModalDamping {
    /// `D v` for the stiffness `diag(k)` (6 values), the damping ratio `zeta` and the task
    /// inertia's mobility factor at its last [`TaskInertia::inertia`], each mode's damping
    /// rate at most `rate_cap` ([`ModalDamping::force`] with no position error).
    #[cfg(test)]
    fn times(
        &mut self,
        task: &TaskInertia,
        k: &[f64],
        zeta: f64,
        rate_cap: f64,
        v: &Vector6<f64>,
    ) -> Result<Vector6<f64>, ControlError> {
        self.force(task, (k, zeta), rate_cap, &Vector6::zeros(), v)
    }

    /// The impedance's force `K' e + D v` for the stiffness `diag(k)` (6 values) and the damping
    /// ratio `zeta`, at the task inertia's mobility factor of its last
    /// [`TaskInertia::inertia`]. A mode whose damping rate `2 zeta sqrt(k0)` (the eigenvalue of
    /// `Lambda^-1 D`, and of `M^-1 J^T D J`) passes `rate_cap`, 1/s, is scaled like a joint
    /// past the sampled-data margin ([`crate::gain_sizing::damping_bound`]): its damping by
    /// `c = rate_cap / rate`, its stiffness by `c^2`, so it keeps its damping ratio and stays
    /// within the limit. `K' = K` when no mode passes.
    pub(crate) fn force(
        &mut self,
        task: &TaskInertia,
        (k, zeta): (&[f64], f64),
        rate_cap: f64,
        e: &Vector6<f64>,
        v: &Vector6<f64>,
    ) -> Result<Vector6<f64>, ControlError> {
        let k: &[f64; 6] = k.try_into().map_err(|_| ControlError::Dimension {
            what: "task-space stiffness".into(),
            expected: 6,
            got: k.len(),
        })?;
        let modal = self.diagonalise(&task.mobility_factor, k)?;
        let inverse_factor = &task.inverse_mobility_factor;
        let vectors = self.eigen.vectors();
        let velocity = vectors.tr_mul(&(inverse_factor * v));
        let error = vectors.tr_mul(&(inverse_factor * e));
        // In modal coordinates: the damping, minus the stiffness a capped mode gives up.
        let in_modes = Vector6::from_fn(|i, _| {
            let k0 = modal[i].max(0.0);
            let rate = 2.0 * zeta * k0.sqrt();
            let cut = if rate > rate_cap {
                rate_cap / rate
            } else {
                1.0
            };
            cut * rate * velocity[i] - (1.0 - cut * cut) * k0 * error[i]
        });
        let spring = Vector6::from_fn(|i, _| k[i] * e[i]);
        Ok(spring + inverse_factor.tr_mul(&(vectors * in_modes)))
    }

    /// The eigenvalues k0 of `U^T K U`, its eigenvectors in the kept basis: in a basis V the
    /// matrix is `P^T K P` with `P = U V`.
    fn diagonalise(
        &mut self,
        factor: &Matrix6<f64>,
        k: &[f64; 6],
    ) -> Result<Vector6<f64>, ControlError> {
        let in_basis = |v: &Matrix6<f64>| {
            let p = factor * v;
            p.tr_mul(&Matrix6::from_fn(|r, c| k[r] * p[(r, c)]))
        };
        self.eigen
            .eigenvalues(in_basis)
            .ok_or(ControlError::NonFinite {
                what: "task-space damping design",
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reproducible numbers in [0, 1).
    fn uniform(seed: u64) -> impl FnMut() -> f64 {
        let mut x = seed | 1;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// The task inertia of the mobility `Lambda^-1 = U U^T`.
    fn task_of_mobility(mobility: &Matrix6<f64>) -> TaskInertia {
        TaskInertia::with_mobility_factor(mobility.cholesky().unwrap().unpack())
    }

    fn task_of(lambda: &Matrix6<f64>) -> TaskInertia {
        task_of_mobility(&lambda.try_inverse().unwrap())
    }

    /// D, column by column.
    fn matrix(
        damping: &mut ModalDamping,
        task: &TaskInertia,
        k: &[f64],
        zeta: f64,
    ) -> Matrix6<f64> {
        let mut d = Matrix6::zeros();
        for c in 0..6 {
            let column = damping.times(task, k, zeta, f64::INFINITY, &Vector6::ith(c, 1.0));
            d.set_column(c, &column.unwrap());
        }
        d
    }

    /// D from nalgebra's symmetric eigensolver on `U^T K U` (the design before the Jacobi).
    fn reference(task: &TaskInertia, k: &[f64], zeta: f64) -> Matrix6<f64> {
        let u = &task.mobility_factor;
        let c = u.transpose() * Matrix6::from_diagonal(&Vector6::from_column_slice(k)) * u;
        let eigen = nalgebra::SymmetricEigen::new((c + c.transpose()) * 0.5);
        let q = task.inverse_mobility_factor.transpose() * eigen.eigenvectors;
        let gains = eigen.eigenvalues.map(|v| 2.0 * zeta * v.max(0.0).sqrt());
        q * Matrix6::from_diagonal(&gains) * q.transpose()
    }

    /// A mobility `R diag(m) R^T + 1e-9 I` with m log-uniform in [1e-9, 1e3] (1/kg): task
    /// inertias from 1e-3 kg to the 1e9 of a regularised singular direction.
    fn graded_mobility(unit: &mut impl FnMut() -> f64) -> Matrix6<f64> {
        let r = Matrix6::from_fn(|_, _| unit() - 0.5).qr().q();
        let m = Vector6::from_fn(|_, _| 10f64.powf(12.0 * unit() - 9.0));
        r * Matrix6::from_diagonal(&m) * r.transpose() + Matrix6::identity() * 1e-9
    }

    fn relative(d: &Matrix6<f64>, want: &Matrix6<f64>) -> f64 {
        (d - want).norm() / want.norm()
    }

    /// D (zeta 1) within 1e-6 of the reference, relative (Frobenius); returns D.
    fn assert_matches_reference(
        damping: &mut ModalDamping,
        task: &TaskInertia,
        k: &[f64],
        what: std::fmt::Arguments<'_>,
    ) -> Matrix6<f64> {
        let (d, want) = (matrix(damping, task, k, 1.0), reference(task, k, 1.0));
        let error = relative(&d, &want);
        assert!(error < 1e-6, "{what}: {error:e}");
        d
    }

    #[test]
    fn damping_is_critical_in_every_mode() {
        let mut damping = ModalDamping::default();
        // A scalar inertia gives the familiar 2 zeta sqrt(k m) per axis.
        let k = [9.0, 16.0, 25.0, 1.0, 1.0, 1.0];
        let d = matrix(
            &mut damping,
            &task_of(&(Matrix6::identity() * 4.0)),
            &k,
            1.0,
        );
        assert!((d[(0, 0)] - 2.0 * 6.0).abs() < 1e-12 && (d[(2, 2)] - 2.0 * 10.0).abs() < 1e-12);
        // A general inertia and stiffness: D is the geometric mean 2 zeta (Lambda # K), the
        // symmetric positive definite solution of `D Lambda^-1 D = 4 zeta^2 K`.
        let mut unit = uniform(11);
        for _ in 0..20 {
            let a = Matrix6::from_fn(|r, c| unit() - 0.5 + if r == c { 1.0 } else { 0.0 });
            let lambda = a * a.transpose();
            let k: Vec<f64> = (0..6).map(|_| 10.0 + 2000.0 * unit()).collect();
            let d = matrix(&mut damping, &task_of(&lambda), &k, 0.7);
            let lhs = d * lambda.try_inverse().unwrap() * d;
            let rhs = Matrix6::from_diagonal(&Vector6::from_column_slice(&k)) * 4.0 * 0.49;
            assert!((lhs - rhs).amax() < 1e-9 * rhs.amax(), "{lhs}");
            assert!((d - d.transpose()).amax() < 1e-9 * d.amax());
            assert!(d.symmetric_eigenvalues().min() > 0.0);
        }
    }

    #[test]
    fn badly_scaled_designs_match_the_reference_cold_and_after_a_jump() {
        // Task inertias over twelve decades, stiffnesses 1..1e6: the light modes keep their
        // damping (a floor relative to the heaviest mode, or a test relative to the whole
        // matrix, used to lose them). Each design follows an unrelated one, so the kept
        // basis is useless and the warm start must give way to a cold one.
        let mut unit = uniform(5);
        let mut damping = ModalDamping::default();
        for case in 0..600 {
            let task = task_of_mobility(&graded_mobility(&mut unit));
            let k: Vec<f64> = (0..6).map(|_| 10f64.powf(6.0 * unit())).collect();
            assert_matches_reference(&mut damping, &task, &k, format_args!("case {case}"));
        }
    }

    #[test]
    fn a_path_near_a_singularity_keeps_its_accuracy_warm() {
        // The heavy direction's inertia grows from 1 kg to the regularised 1e9 and back while
        // the basis turns; the warm design stays with the reference at every step.
        let mut unit = uniform(9);
        let r0 = Matrix6::from_fn(|_, _| unit() - 0.5).qr().q();
        let k = [2000.0, 1500.0, 800.0, 60.0, 40.0, 25.0];
        let mut damping = ModalDamping::default();
        for step in 0..2000 {
            let t = step as f64 * 1e-3;
            let turn = nalgebra::Rotation3::from_euler_angles(0.3 * t, -0.2 * t, 0.5 * t);
            let mut r = r0;
            r.fixed_view_mut::<3, 3>(0, 0)
                .copy_from(&(turn.matrix() * r0.fixed_view::<3, 3>(0, 0)));
            let heavy = 10f64.powf(-9.0 * (std::f64::consts::PI * t / 2.0).sin().powi(2));
            let m = Vector6::new(heavy, 0.5, 2.0, 10.0, 30.0, 100.0);
            let mobility =
                r * Matrix6::from_diagonal(&m) * r.transpose() + Matrix6::identity() * 1e-9;
            let task = task_of_mobility(&mobility);
            assert_matches_reference(&mut damping, &task, &k, format_args!("step {step}"));
        }
    }

    #[test]
    fn a_zero_stiffness_gets_no_damping_of_its_own() {
        // A zero entry of K leaves a mode without stiffness: D has the zero eigenvalue too.
        let mut unit = uniform(3);
        let mut damping = ModalDamping::default();
        for _ in 0..50 {
            let a = Matrix6::from_fn(|r, c| unit() - 0.5 + if r == c { 1.0 } else { 0.0 });
            let lambda = a * a.transpose();
            let k = [500.0, 0.0, 800.0, 20.0, 30.0, 10.0];
            let task = task_of(&lambda);
            let d = assert_matches_reference(&mut damping, &task, &k, format_args!("coupled"));
            let eigenvalues = d.symmetric_eigenvalues();
            assert!(
                eigenvalues.amin() < 1e-6 * eigenvalues.amax(),
                "{eigenvalues}"
            );
            // Left out of the task as the law does it (its row of J zeroed, so its mobility
            // is only the regularisation): exactly no damping along it.
            let mut mobility = lambda.try_inverse().unwrap();
            mobility.row_mut(1).fill(0.0);
            mobility.column_mut(1).fill(0.0);
            mobility[(1, 1)] = 1e-9;
            let d = matrix(&mut damping, &task_of_mobility(&mobility), &k, 1.0);
            assert!(
                d.row(1).iter().chain(d.column(1).iter()).all(|&x| x == 0.0),
                "{d}"
            );
        }
    }

    #[test]
    fn badly_scaled_designs_converge_and_stay_finite() {
        // Mobility factors over twenty decades and stiffnesses from zero to 1e6: the design
        // converges (no fault for a finite input) and D is finite and symmetric to rounding (a
        // zero stiffness coupled to the rest leaves a square root of rounding; the law
        // decouples its zero-stiffness axes, which then give an exact zero).
        let mut unit = uniform(0x9E37_79B9_7F4A_7C15);
        let mut damping = ModalDamping::default();
        for case in 0..2000 {
            let mut u = Matrix6::from_fn(|r, c| if r >= c { unit() - 0.5 } else { 0.0 });
            for i in 0..6 {
                u[(i, i)] = 10f64.powf(10.0 * unit() - 5.0);
            }
            let k: Vec<f64> = (0..6)
                .map(|_| {
                    if unit() < 0.2 {
                        0.0
                    } else {
                        10f64.powf(6.0 * unit())
                    }
                })
                .collect();
            if case % 3 == 0 {
                damping = ModalDamping::default();
            }
            let task = TaskInertia::with_mobility_factor(u);
            let d = matrix(&mut damping, &task, &k, 1.0);
            assert!(d.iter().all(|v| v.is_finite()), "case {case}");
            // Rounding scales with the factors' sizes: `D = U^-T sqrt(U^T K U) U^-1`.
            let kmax = k.iter().fold(0.0_f64, |a, &b| a.max(b));
            let g = &task.inverse_mobility_factor;
            let scale = g.norm_squared() * u.norm() * kmax.sqrt();
            let asymmetry = (d - d.transpose()).amax();
            assert!(
                asymmetry <= 1e-7 * scale,
                "case {case}: {asymmetry:e}, {scale:e}"
            );
        }
    }

    #[test]
    fn a_non_finite_design_is_refused_and_forgotten() {
        let mut damping = ModalDamping::default();
        let task = task_of(&Matrix6::identity());
        let v = Vector6::repeat(1.0);
        let _ = damping
            .times(&task, &[1.0; 6], 1.0, f64::INFINITY, &v)
            .unwrap();
        let nan = [f64::NAN, 1.0, 1.0, 1.0, 1.0, 1.0];
        assert!(damping.times(&task, &nan, 1.0, f64::INFINITY, &v).is_err());
        // The next finite design starts afresh rather than from a poisoned basis.
        let d = damping
            .times(&task, &[4.0; 6], 1.0, f64::INFINITY, &v)
            .unwrap();
        assert!((d - Vector6::repeat(4.0)).amax() < 1e-12, "{d}");
        // A stiffness of the wrong length is refused, naming it.
        let error = damping
            .times(&task, &[1.0; 5], 1.0, f64::INFINITY, &v)
            .unwrap_err();
        assert!(error.to_string().contains("stiffness"), "{error}");
    }

    /// A mode the stiffness would damp faster than the cap is damped at the cap and its
    /// stiffness cut by the square of the same factor; the others keep theirs.
    #[test]
    fn each_mode_s_damping_rate_is_capped() {
        let mut damping = ModalDamping::default();
        let task = task_of(&Matrix6::identity());
        let k = [1e6, 1e6, 1e6, 4.0, 4.0, 4.0];
        let d = matrix_capped(&mut damping, &task, &k, 500.0);
        let expected = Matrix6::from_diagonal(&Vector6::new(500.0, 500.0, 500.0, 4.0, 4.0, 4.0));
        assert!((d - expected).amax() < 1e-9, "{d}");
        // The spring of a capped mode: (500 / 2000)^2 1e6 = 62500.
        let e = Vector6::repeat(1.0);
        let f = damping
            .force(&task, (&k, 1.0), 500.0, &e, &Vector6::zeros())
            .unwrap();
        let expected = Vector6::new(62500.0, 62500.0, 62500.0, 4.0, 4.0, 4.0);
        assert!((f - expected).amax() < 1e-6, "{f}");
        // Uncapped, the spring is K e exactly.
        let f = damping
            .force(&task, (&k, 1.0), f64::INFINITY, &e, &Vector6::zeros())
            .unwrap();
        assert_eq!(f, Vector6::from_column_slice(&k));
    }

    /// On a general task inertia, a capped mode's spring and damper are those of the modal
    /// design with `c^2 k0` and `c 2 zeta sqrt(k0)`: `Q diag(.) Q^T`, `Q = U^-T V`, checked
    /// against nalgebra's eigensolver.
    #[test]
    fn capped_modes_match_the_modal_design_on_a_general_inertia() {
        let mut unit = uniform(23);
        let mut damping = ModalDamping::default();
        for _ in 0..20 {
            let a = Matrix6::from_fn(|r, c| unit() - 0.5 + if r == c { 1.0 } else { 0.0 });
            let task = task_of(&(a * a.transpose()));
            let k: Vec<f64> = (0..6).map(|_| 10f64.powf(1.0 + 4.0 * unit())).collect();
            let zeta = 0.8;
            let u = &task.mobility_factor;
            let kk = Matrix6::from_diagonal(&Vector6::from_column_slice(&k));
            let c = u.transpose() * kk * u;
            let eigen = nalgebra::SymmetricEigen::new((c + c.transpose()) * 0.5);
            // The cap between the modes' rates: some capped, some not.
            let mut uncapped: Vec<f64> = eigen.eigenvalues.iter().map(|k0| k0.sqrt()).collect();
            uncapped.sort_by(f64::total_cmp);
            let cap = 2.0 * zeta * uncapped[3];
            let q = task.inverse_mobility_factor.transpose() * eigen.eigenvectors;
            let cut = eigen.eigenvalues.map(|k0| {
                let rate = 2.0 * zeta * k0.max(0.0).sqrt();
                (cap / rate).min(1.0)
            });
            let springs = eigen.eigenvalues.zip_map(&cut, |k0, c| c * c * k0);
            let rates = eigen
                .eigenvalues
                .zip_map(&cut, |k0, c| c * 2.0 * zeta * k0.sqrt());
            let spring = q * Matrix6::from_diagonal(&springs) * q.transpose();
            let damper = q * Matrix6::from_diagonal(&rates) * q.transpose();
            let zero = Vector6::zeros();
            for col in 0..6 {
                let unit_vector = Vector6::ith(col, 1.0);
                let f = damping
                    .force(&task, (&k, zeta), cap, &unit_vector, &zero)
                    .unwrap();
                let d = damping
                    .force(&task, (&k, zeta), cap, &zero, &unit_vector)
                    .unwrap();
                let scale = spring.amax().max(damper.amax());
                assert!((f - spring.column(col)).amax() < 1e-8 * scale, "{f}");
                assert!((d - damper.column(col)).amax() < 1e-8 * scale, "{d}");
            }
            assert!(cut.min() < 1.0 && cut.max() == 1.0, "{cut}");
        }
    }

    fn matrix_capped(
        damping: &mut ModalDamping,
        task: &TaskInertia,
        k: &[f64],
        cap: f64,
    ) -> Matrix6<f64> {
        Matrix6::from_fn(|r, c| {
            damping
                .times(task, k, 1.0, cap, &Vector6::ith(c, 1.0))
                .unwrap()[r]
        })
    }
}
