//! The physically consistent fit: the weighted least-squares problem of the identification
//! solved over bodies that exist. Each link's parameters are written in log-Cholesky
//! coordinates (`log_cholesky`), so every iterate has a positive definite pseudo-inertia, and
//! the problem is solved by Levenberg-Marquardt (the `levenberg-marquardt` crate, MINPACK's
//! algorithm).
//!
//! The data enter once, compressed: with the weighted regressor `W = Q R`, `|W x - y|^2 =
//! |R x - Q^T y|^2 + const`, so each iteration costs a k x k product (k unknowns of the linear
//! problem), whatever the log's length. `x = [K pi(theta); f]`: the base map K of the links'
//! parameters, and the friction coefficients, which enter linearly. A prior pull towards the
//! URDF's bodies, 1e-15 as strong as the data, settles what the data cannot see (the
//! parameters outside the base combinations) without moving what they can.

use armctl_dynamics::BaseParameters;
use armctl_model::{Robot, PARAMS_PER_LINK};
use levenberg_marquardt::{LeastSquaresProblem, LevenbergMarquardt, TerminationReason};
use nalgebra::{DMatrix, DVector};
use nalgebra_for_lm::{storage::Owned, Dyn};

use crate::log_cholesky::{parameter_jacobian, parameters, theta_of, ParameterJacobian, Theta};
use crate::IdentError;

/// How strong the pull towards the URDF's bodies is, relative to the data's mean column.
const PRIOR_WEIGHT: f64 = 1e-15;

/// What a residual that overflowed reads as: far above any real one, still finite squared.
const OVERFLOW: f64 = 1e100;

/// Function evaluations, per unknown, before the solver stops. (A fit pressed to the boundary
/// approaches it without end, e^theta -> 0: the cost changes less than `TOLERANCE` long
/// before this.)
const PATIENCE: usize = 50;

/// The solver's relative tolerance on the cost and on the step.
const TOLERANCE: f64 = 1e-15;

/// What the consistent fit found.
#[derive(Debug, Clone)]
pub(crate) struct ConsistentFit {
    /// Every link's ten parameters, each a body that exists.
    pub(crate) links: Vec<[f64; PARAMS_PER_LINK]>,
    /// The linear problem's unknowns: base parameters `K pi`, then the friction.
    pub(crate) estimate: DVector<f64>,
    /// `|W x - y|^2` at the consistent estimate less the same at the unconstrained one, on
    /// the problem it was given.
    pub(crate) cost_increase: f64,
    /// Function evaluations the solver used.
    pub(crate) evaluations: usize,
}

/// The weighted problem, compressed: `|R x - z|`.
struct Compressed {
    r: DMatrix<f64>,
    z: DVector<f64>,
    /// `R[:, ..b] K`: the data's sensitivity to the links' parameters.
    r_base: DMatrix<f64>,
}

fn compress(ww: &DMatrix<f64>, wy: &DVector<f64>, base: &BaseParameters) -> Compressed {
    let k = ww.ncols();
    let qr = ww.clone().qr();
    let mut qty = wy.clone();
    qr.q_tr_mul(&mut qty);
    let r = qr.r();
    let z = qty.rows(0, k).into_owned();
    let r_base = r.columns(0, base.count()) * base.map();
    Compressed { r, z, r_base }
}

/// The fit's unknowns: each link's log-Cholesky coordinates, then the friction.
struct Problem<'a> {
    data: &'a Compressed,
    links: usize,
    prior: Vec<Theta>,
    /// Per coordinate, the weight of its pull towards the prior.
    prior_weight: Vec<f64>,
    /// A link whose ten parameters are unknowns as they are (any values, bodies or not): to
    /// find which link's constraint costs the fit.
    free: Option<usize>,
    x: DVector<f64>,
}

impl Problem<'_> {
    fn theta(&self, link: usize) -> Theta {
        let mut theta = [0.0; PARAMS_PER_LINK];
        theta.copy_from_slice(
            self.x
                .rows(PARAMS_PER_LINK * link, PARAMS_PER_LINK)
                .as_slice(),
        );
        theta
    }

    fn link_parameters(&self) -> Vec<[f64; PARAMS_PER_LINK]> {
        (0..self.links)
            .map(|l| match self.free {
                Some(free) if free == l => self.theta(l),
                _ => parameters(&self.theta(l)),
            })
            .collect()
    }

    fn link_jacobian(&self, link: usize) -> ParameterJacobian {
        match self.free {
            Some(free) if free == link => ParameterJacobian::identity(),
            _ => parameter_jacobian(&self.theta(link)),
        }
    }

    /// The linear problem's unknowns at the current coordinates.
    fn estimate(&self, base: &BaseParameters) -> DVector<f64> {
        let pi: Vec<f64> = self.link_parameters().concat();
        let base_values = base.map() * DVector::from_vec(pi);
        let friction = self
            .x
            .rows(PARAMS_PER_LINK * self.links, self.friction_count());
        DVector::from_iterator(
            self.data.r.ncols(),
            base_values.iter().chain(friction.iter()).copied(),
        )
    }

    fn friction_count(&self) -> usize {
        self.x.len() - PARAMS_PER_LINK * self.links
    }

    fn data_residual(&self) -> DVector<f64> {
        let pi = DVector::from_vec(self.link_parameters().concat());
        let friction = self
            .x
            .rows(PARAMS_PER_LINK * self.links, self.friction_count());
        let base_columns = self.data.r.ncols() - self.friction_count();
        &self.data.r_base * pi + self.data.r.columns(base_columns, self.friction_count()) * friction
            - &self.data.z
    }

    fn residual(&self) -> DVector<f64> {
        let data = self.data_residual();
        let theta_count = PARAMS_PER_LINK * self.links;
        let prior = (0..theta_count).map(|i| {
            let (link, k) = (i / PARAMS_PER_LINK, i % PARAMS_PER_LINK);
            self.prior_weight[i] * (self.x[i] - self.prior[link][k])
        });
        DVector::from_iterator(data.len() + theta_count, data.iter().copied().chain(prior))
    }

    fn jacobian(&self) -> DMatrix<f64> {
        let k = self.data.r.ncols();
        let theta_count = PARAMS_PER_LINK * self.links;
        let f = self.friction_count();
        let mut j = DMatrix::zeros(k + theta_count, self.x.len());
        for link in 0..self.links {
            let d_pi = self.link_jacobian(link);
            let block = self
                .data
                .r_base
                .columns(PARAMS_PER_LINK * link, PARAMS_PER_LINK)
                * d_pi;
            j.view_mut((0, PARAMS_PER_LINK * link), (k, PARAMS_PER_LINK))
                .copy_from(&block);
        }
        j.view_mut((0, theta_count), (k, f))
            .copy_from(&self.data.r.columns(k - f, f));
        for i in 0..theta_count {
            j[(k + i, i)] = self.prior_weight[i];
        }
        j
    }
}

/// The solver's nalgebra (0.34) types, beside the workspace's 0.35.
type LmVector = nalgebra_for_lm::DVector<f64>;
type LmMatrix = nalgebra_for_lm::DMatrix<f64>;

impl LeastSquaresProblem<f64, Dyn, Dyn> for Problem<'_> {
    type ResidualStorage = Owned<f64, Dyn>;
    type JacobianStorage = Owned<f64, Dyn, Dyn>;
    type ParameterStorage = Owned<f64, Dyn>;

    fn set_params(&mut self, x: &LmVector) {
        self.x.copy_from_slice(x.as_slice());
    }

    fn params(&self) -> LmVector {
        LmVector::from_column_slice(self.x.as_slice())
    }

    fn residuals(&self) -> Option<LmVector> {
        // A trial step into overflow (e^theta) is a step to reject, not the end of the fit:
        // its residual reads as huge, and the solver shortens the step.
        let r = self
            .residual()
            .map(|v| if v.is_finite() { v } else { OVERFLOW });
        Some(LmVector::from_column_slice(r.as_slice()))
    }

    fn jacobian(&self) -> Option<LmMatrix> {
        let j = Problem::jacobian(self);
        j.iter()
            .all(|v| v.is_finite())
            .then(|| LmMatrix::from_column_slice(j.nrows(), j.ncols(), j.as_slice()))
    }
}

/// A link's starting coordinates: the URDF's body, or (a massless or inconsistent
/// placeholder) a small solid near it, so the solver starts inside the set of bodies.
fn prior_theta(p: &[f64; PARAMS_PER_LINK]) -> Theta {
    if let Some(theta) = theta_of(p) {
        return theta;
    }
    let mass = p[9].abs().max(1e-3);
    // A 5 cm ball of that mass at the first moment's point (or the origin).
    let com = if p[9] > 0.0 {
        [p[6] / p[9], p[7] / p[9], p[8] / p[9]]
    } else {
        [0.0; 3]
    };
    let ball = armctl_model::RigidInertia {
        mass,
        com: com.into(),
        inertia_com: nalgebra::Matrix3::identity() * (0.4 * mass * 0.05 * 0.05),
    };
    let placeholder = armctl_model::LinkParameters::from_inertia(&ball).to_vector();
    theta_of(&placeholder).unwrap_or([0.0; PARAMS_PER_LINK])
}

/// Per coordinate, its pull towards the prior: `PRIOR_WEIGHT` of the data's mean squared
/// column at the prior, so the pull is as weak next to any arm's data.
fn prior_weights(data: &Compressed, prior: &[Theta], free: Option<usize>) -> Vec<f64> {
    let mut energy = 0.0;
    for (link, theta) in prior.iter().enumerate() {
        let jacobian = match free {
            Some(free) if free == link => ParameterJacobian::identity(),
            _ => parameter_jacobian(theta),
        };
        let block = data.r_base.columns(PARAMS_PER_LINK * link, PARAMS_PER_LINK) * jacobian;
        energy += block.norm_squared();
    }
    let mean = energy / (PARAMS_PER_LINK * prior.len()) as f64;
    let weight = (PRIOR_WEIGHT * mean).sqrt().max(f64::MIN_POSITIVE);
    vec![weight; PARAMS_PER_LINK * prior.len()]
}

/// The consistent fit of the weighted problem `|ww x - wy|` (x: `base`'s parameters then
/// friction), starting from `robot`'s bodies and the unconstrained estimate's friction.
pub(crate) fn fit_consistent(
    ww: &DMatrix<f64>,
    wy: &DVector<f64>,
    base: &BaseParameters,
    robot: &Robot,
    unconstrained: &DVector<f64>,
) -> Result<ConsistentFit, IdentError> {
    if ww.nrows() < ww.ncols() {
        return Err(IdentError::Identification {
            reason: format!(
                "{} equations cannot determine {} unknowns",
                ww.nrows(),
                ww.ncols()
            ),
        });
    }
    let data = compress(ww, wy, base);
    fit_compressed(&data, base, robot, unconstrained, None)
}

/// The links whose constraint costs the fit: with each link alone left free (any values),
/// those that let the fit come within a tenth of least squares; the one that comes closest
/// when none does.
pub(crate) fn blame(
    ww: &DMatrix<f64>,
    wy: &DVector<f64>,
    base: &BaseParameters,
    robot: &Robot,
    unconstrained: &DVector<f64>,
    constrained: &ConsistentFit,
) -> Result<Vec<usize>, IdentError> {
    let data = compress(ww, wy, base);
    let cost = |x: &DVector<f64>| (&data.r * x - &data.z).norm_squared();
    let constrained_increase = cost(&constrained.estimate) - cost(unconstrained);
    let mut increase = Vec::with_capacity(robot.dof());
    for link in 0..robot.dof() {
        increase.push(fit_compressed(&data, base, robot, unconstrained, Some(link))?.cost_increase);
    }
    let culprits: Vec<usize> = (0..robot.dof())
        .filter(|&l| increase[l] <= 0.1 * constrained_increase)
        .collect();
    if !culprits.is_empty() {
        return Ok(culprits);
    }
    Ok((0..robot.dof())
        .min_by(|&a, &b| increase[a].total_cmp(&increase[b]))
        .into_iter()
        .collect())
}

/// The fit on compressed data, `free` a link left unconstrained.
fn fit_compressed(
    data: &Compressed,
    base: &BaseParameters,
    robot: &Robot,
    unconstrained: &DVector<f64>,
    free: Option<usize>,
) -> Result<ConsistentFit, IdentError> {
    let urdf: Vec<[f64; PARAMS_PER_LINK]> = robot
        .link_parameters()
        .iter()
        .map(|l| l.to_vector())
        .collect();
    let prior: Vec<Theta> = urdf
        .iter()
        .enumerate()
        .map(|(l, p)| match free {
            Some(free) if free == l => *p,
            _ => prior_theta(p),
        })
        .collect();
    let start = start(base, &urdf, unconstrained, free).unwrap_or_else(|| prior.clone());
    let friction = unconstrained.rows(base.count(), data.r.ncols() - base.count());
    let x = start.concat().into_iter().chain(friction.iter().copied());
    let mut prior_weight = prior_weights(data, &prior, free);
    if let Some(free) = free {
        prior_weight[PARAMS_PER_LINK * free..][..PARAMS_PER_LINK].fill(0.0);
    }
    let problem = Problem {
        prior_weight,
        data,
        links: robot.dof(),
        free,
        x: DVector::from_iterator(PARAMS_PER_LINK * robot.dof() + friction.len(), x),
        prior,
    };
    let (problem, report) = LevenbergMarquardt::new()
        .with_ftol(TOLERANCE)
        .with_xtol(TOLERANCE)
        .with_gtol(0.0)
        .with_patience(PATIENCE)
        .minimize(problem);
    check_termination(&report.termination)?;
    let estimate = problem.estimate(base);
    // |W x - y|^2 less a constant (what no x explains), which cancels in the difference.
    let compressed_cost = |x: &DVector<f64>| (&data.r * x - &data.z).norm_squared();
    Ok(ConsistentFit {
        links: problem.link_parameters(),
        cost_increase: compressed_cost(&estimate) - compressed_cost(unconstrained),
        estimate,
        evaluations: report.number_of_evaluations,
    })
}

/// Least squares' own values as bodies, when the completion nearest the URDF's links makes
/// every link one: the fit then starts at least squares' cost and can only keep it.
fn start(
    base: &BaseParameters,
    urdf: &[[f64; PARAMS_PER_LINK]],
    unconstrained: &DVector<f64>,
    free: Option<usize>,
) -> Option<Vec<Theta>> {
    let values = unconstrained.rows(0, base.count());
    let full = base
        .full_parameters(values.as_slice(), &urdf.concat())
        .ok()?;
    full.chunks_exact(PARAMS_PER_LINK)
        .enumerate()
        .map(|(l, chunk)| {
            let mut p = [0.0; PARAMS_PER_LINK];
            p.copy_from_slice(chunk);
            match free {
                Some(free) if free == l => Some(p),
                _ => theta_of(&p),
            }
        })
        .collect()
}

/// A solve that stopped short of a fit is refused. Running out of evaluations is not: a fit
/// pressed to the boundary of the set of bodies approaches it without end, and every iterate
/// is bodies.
fn check_termination(termination: &TerminationReason) -> Result<(), IdentError> {
    match termination {
        TerminationReason::ResidualsZero
        | TerminationReason::Orthogonal
        | TerminationReason::Converged { .. }
        | TerminationReason::NoImprovementPossible(_)
        | TerminationReason::LostPatience => Ok(()),
        other => Err(IdentError::Identification {
            reason: format!("the consistent fit failed ({other:?}); nothing written"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use armctl_dynamics::{numeric_base_parameters, regressor, DynamicsWorkspace};
    use rand::rngs::StdRng;
    use rand::{RngExt, SeedableRng};

    /// The base regressor stacked over random states, and the torques of `truth`.
    fn exact_problem(
        robot: &Robot,
        truth: &Robot,
        seed: u64,
    ) -> (BaseParameters, DMatrix<f64>, DVector<f64>) {
        let base = numeric_base_parameters(robot).unwrap();
        let n = robot.dof();
        let samples = 200;
        let mut rng = StdRng::seed_from_u64(seed);
        let mut ws = DynamicsWorkspace::new(robot);
        let mut y = DMatrix::zeros(n, PARAMS_PER_LINK * n);
        let mut y_b = DMatrix::zeros(n, base.count());
        let mut w = DMatrix::zeros(samples * n, base.count());
        for k in 0..samples {
            let mut state =
                || -> Vec<f64> { (0..n).map(|_| rng.random_range(-2.0..2.0)).collect() };
            let (q, qd, qdd) = (state(), state(), state());
            regressor(robot, &mut ws, &q, &qd, &qd, &qdd, &mut y).unwrap();
            base.select(&y, &mut y_b).unwrap();
            w.view_mut((k * n, 0), (n, base.count())).copy_from(&y_b);
        }
        let p_b = base.values(&truth.parameter_vector()).unwrap();
        let tau = &w * &p_b;
        (base, w, tau)
    }

    /// Links 30 % heavier or lighter in turn, centres of mass moved by 1 cm: other bodies.
    fn heavier(robot: &Robot) -> Robot {
        let mut parts = robot.to_parts();
        for (i, link) in parts.links.iter_mut().enumerate() {
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

    #[test]
    fn noisy_data_with_friction_columns() {
        let robot = armctl_model::test_support::bundled_robot("panda.urdf");
        let truth = heavier(&robot);
        let (base, w, tau) = exact_problem(&robot, &truth, 2);
        let n = robot.dof();
        let b = base.count();
        let mut rng = StdRng::seed_from_u64(9);
        let mut wf = DMatrix::zeros(w.nrows(), b + 2 * n);
        wf.columns_mut(0, b).copy_from(&w);
        let mut tau = tau.clone();
        for r in 0..w.nrows() {
            let j = r % n;
            let speed: f64 = rng.random_range(-2.0..2.0);
            wf[(r, b + j)] = speed;
            wf[(r, b + n + j)] = speed.signum();
            tau[r] += 0.3 * speed + 0.5 * speed.signum() + rng.random_range(-0.05..0.05);
        }
        let weights = 1.0 / 0.03;
        let (ww, wy) = (wf * weights, tau * weights);
        let ls = ww.clone().svd(true, true).solve(&wy, 1e-12).unwrap();
        let fit = fit_consistent(&ww, &wy, &base, &robot, &ls).unwrap();
        let least_squares_cost = (&ww * &ls - &wy).norm_squared();
        eprintln!(
            "evaluations {}, cost increase {:.3e} of {least_squares_cost:.3e}",
            fit.evaluations, fit.cost_increase
        );
        assert!(fit.cost_increase < 0.1 * least_squares_cost);
    }

    #[test]
    fn values_no_body_has_are_moved_to_the_closest_bodies() {
        let robot = armctl_model::test_support::bundled_robot("panda.urdf");
        let mut p = heavier(&robot).parameter_vector();
        p[65] = -0.002; // ZZ7 below zero: no body has it
        let truth = robot.with_parameter_vector(&p).unwrap();
        let (base, w, tau) = exact_problem(&robot, &truth, 3);
        let ls = w.clone().svd(true, true).solve(&tau, 1e-12).unwrap();
        let start = std::time::Instant::now();
        let fit = fit_consistent(&w, &tau, &base, &robot, &ls).unwrap();
        eprintln!(
            "boundary: {} evaluations in {:?}, cost increase {:.3e}",
            fit.evaluations,
            start.elapsed(),
            fit.cost_increase
        );
        let zz7 = base.names().iter().position(|n| n == "ZZ7").unwrap();
        assert!(
            ls[zz7] < 0.0 && fit.estimate[zz7] >= 0.0,
            "{} {}",
            ls[zz7],
            fit.estimate[zz7]
        );
        assert!(fit.cost_increase > 0.0);
        assert!(fit
            .links
            .iter()
            .all(|l| crate::log_cholesky::consistency_margin(l) >= -1e-12));
    }

    #[test]
    fn exact_data_of_bodies_that_exist_give_least_squares_values() {
        let robot = armctl_model::test_support::bundled_robot("panda.urdf");
        let truth = heavier(&robot);
        let (base, w, tau) = exact_problem(&robot, &truth, 1);
        let ls = w.clone().svd(true, true).solve(&tau, 1e-12).unwrap();
        let fit = fit_consistent(&w, &tau, &base, &robot, &ls).unwrap();
        let worst = fit
            .estimate
            .iter()
            .zip(ls.iter())
            .map(|(a, b)| (a - b).abs() / b.abs().max(1e-6 * ls.amax()))
            .fold(0.0, f64::max);
        eprintln!(
            "evaluations {}, cost increase {:.3e}, worst relative {worst:.3e}",
            fit.evaluations, fit.cost_increase
        );
        assert!(worst < 1e-6, "worst relative difference {worst:e}");
    }
}
