//! The sampled-data limit of velocity feedback, checked at the configuration the arm is in
//! (docs/theory.md section 6).
//!
//! A damper `tau = -D qd` on the arm's inertia, applied with a zero-order hold every `dt`,
//! gives `qd_{k+1} = (I - dt M(q)^-1 D) qd_k`: stable only while `dt lambda_max(M^-1 D) < 2`
//! (about 1 with one period of delay). Defaults are sized at sampled configurations, but
//! `M^-1` peaks where the samples need not be: where wrist axes align, a light distal link's
//! effective inertia can be ten times smaller than anywhere else. So every step that applies
//! a damping checks it here, at the measured `q`, and scales it down joint by joint when it
//! would pass [`RUNTIME_MARGIN`]: stable at every configuration by construction, not by
//! sampling.
//!
//! `lambda_max(M^-1 D)` is that of the symmetric `W = D^1/2 M^-1 D^1/2`, bounded from above by
//! the smaller of W's largest absolute row sum (Gershgorin) and its Frobenius norm. `M^-1`
//! comes from `L^-T L^-1` (`M = L L^T`), with `L^-1` and the product written as triangular
//! loops: one mass matrix, one Cholesky factor and about `n^3 / 3` products; nothing is
//! allocated.
//!
//! Scaling a diagonal damping joint by joint, `D S` with `S = diag(s_j)`: `M^-1 D S` is similar
//! to `W S` (through `D^1/2`). For any positive weights `y`, every eigenvalue of `W S` is at
//! most `max_j s_j r_j` with `r_j = sum_i |W_ij| y_i / y_j` (the Collatz-Wielandt bound of the
//! non-negative `|W| S`, i.e. Gershgorin's discs of the columns of `Y W S Y^-1`). So
//! `s_j = min(1, margin / (dt r_j))` keeps every eigenvalue within the margin and leaves the
//! joints whose `r_j` is within it untouched: a stretched arm's light base rotation or an
//! aligned wrist is slowed, the rest of the arm keeps its gains. Two weightings are tried and
//! the one that cuts less is kept (the cuts `-ln s_j` summed, each over `W_jj`: a cut where
//! the joint's own load is small weighs more): `y = 1` (plain column sums) and
//! `y_j = W_jj^-1/2`, which measures each joint against its own diagonal
//! (`r_j = W_jj sum_i |W_ij| / (W_ii W_jj)^1/2`), so that a heavy joint strongly coupled to a
//! light mode is not cut for that mode's sake: a stiffness cut there would let the arm sag.

use armctl_dynamics::{cholesky_in_place, mass_matrix};
use armctl_dynamics::{DynamicsError, DynamicsWorkspace};
use armctl_model::Robot;
use nalgebra::DMatrix;

use crate::numerics::configuration_samples::{samples, DESIGN_RATE};
use crate::ControlError;

/// Largest `dt lambda_max(M^-1 D)` (its upper bound) a step may apply: half the limit of a
/// loop with one period of delay, a quarter of the undelayed one. The defaults are sized for
/// half of this at their sample configurations, so it only acts where M^-1 is larger.
pub const RUNTIME_MARGIN: f64 = 0.5;

/// Buffers for the bound at one configuration.
#[derive(Debug, Clone)]
pub struct DampingBound {
    /// `M`, then its Cholesky factor `L` (lower triangle).
    factor: DMatrix<f64>,
    /// `L^-1`, lower triangular, column-major.
    inverse: Vec<f64>,
    /// `W`, full, column-major.
    gram: Vec<f64>,
    /// `|d_i|^1/2`.
    root: Vec<f64>,
    /// The factors of [`DampingBound::diagonal_scales`].
    scales: Vec<f64>,
    /// The factors of the second weighting, before the better is kept.
    candidate: Vec<f64>,
    /// The weights `y` of the second weighting.
    weights: Vec<f64>,
}

impl DampingBound {
    /// Buffers for `dof` joints.
    pub fn new(dof: usize) -> Self {
        Self {
            factor: DMatrix::zeros(dof, dof),
            inverse: vec![0.0; dof * dof],
            gram: vec![0.0; dof * dof],
            root: vec![0.0; dof],
            scales: vec![1.0; dof],
            candidate: vec![1.0; dof],
            weights: vec![1.0; dof],
        }
    }

    /// An upper bound of `dt lambda_max(M(q)^-1 diag(damping))`; negative entries count as
    /// their magnitude (a law's own checks refuse them).
    pub fn diagonal_load(
        &mut self,
        robot: &Robot,
        ws: &mut DynamicsWorkspace,
        q: &[f64],
        damping: &[f64],
        dt: f64,
    ) -> Result<f64, ControlError> {
        self.set_damping(damping)?;
        mass_matrix(robot, ws, q, &mut self.factor)?;
        cholesky_in_place(&mut self.factor)?;
        self.load_from_factor(dt)
    }

    /// [`DampingBound::diagonal_scales`] from the lower Cholesky factor `L` of `M(q)`
    /// (`M = L L^T`; only the lower triangle is read) that the caller already has.
    pub(crate) fn diagonal_scales_from_factor(
        &mut self,
        factor: &DMatrix<f64>,
        damping: &[f64],
        dt: f64,
    ) -> Result<&[f64], ControlError> {
        self.set_damping(damping)?;
        self.factor.copy_from(factor);
        let load = self.load_from_factor(dt)?;
        self.scale(load, dt, RUNTIME_MARGIN);
        Ok(&self.scales)
    }

    /// `|d_i|^1/2` of `damping`.
    fn set_damping(&mut self, damping: &[f64]) -> Result<(), ControlError> {
        armctl_model::check_length("damping", self.root.len(), damping.len())?;
        for (r, d) in self.root.iter_mut().zip(damping) {
            *r = d.abs().sqrt();
        }
        Ok(())
    }

    /// The bound from the factor in place and the damping set. A period that is not a
    /// positive number is refused: the limit depends on it, and a NaN would disable every cut.
    fn load_from_factor(&mut self, dt: f64) -> Result<f64, ControlError> {
        if !(dt.is_finite() && dt > 0.0) {
            return Err(ControlError::NonFinite {
                what: "control period dt (the sampled-data bound needs a positive one)",
            });
        }
        self.invert_factor();
        self.fill_gram();
        let bound = symmetric_norm_bound(&self.gram, self.root.len());
        if !bound.is_finite() {
            return Err(DynamicsError::SingularMassMatrix.into());
        }
        Ok(dt * bound)
    }

    /// The factors for a `load` from the last gram, within `margin`.
    fn scale(&mut self, load: f64, dt: f64, margin: f64) {
        self.scales.fill(1.0);
        if load > margin {
            let buffers = (&mut self.weights[..], &mut self.candidate[..]);
            gram_scales(&self.gram, (dt, margin), buffers, &mut self.scales);
        }
    }

    /// Per joint the factor `s_j` in (0, 1] by which `diag(damping)` (and a stiffness with
    /// it, squared) must be scaled at `q` so that `dt lambda_max(M^-1 D S)` stays within
    /// [`RUNTIME_MARGIN`] for a step of `dt`; all 1 when it is within already.
    pub fn diagonal_scales(
        &mut self,
        robot: &Robot,
        ws: &mut DynamicsWorkspace,
        q: &[f64],
        damping: &[f64],
        dt: f64,
    ) -> Result<&[f64], ControlError> {
        self.diagonal_scales_within(robot, ws, q, damping, dt, RUNTIME_MARGIN)
    }

    /// [`DampingBound::diagonal_scales`] for another margin than [`RUNTIME_MARGIN`] (the
    /// defaults are sized for a smaller one).
    pub fn diagonal_scales_within(
        &mut self,
        robot: &Robot,
        ws: &mut DynamicsWorkspace,
        q: &[f64],
        damping: &[f64],
        dt: f64,
        margin: f64,
    ) -> Result<&[f64], ControlError> {
        let load = self.diagonal_load(robot, ws, q, damping, dt)?;
        self.scale(load, dt, margin);
        Ok(&self.scales)
    }

    /// The factors the last [`DampingBound::diagonal_scales`] gave.
    pub fn scales(&self) -> &[f64] {
        &self.scales
    }

    /// `L^-1` by forward substitution on the identity, column by column from the diagonal
    /// down (the zeros above it are never touched). The factor's diagonal is positive.
    fn invert_factor(&mut self) {
        let n = self.root.len();
        let l = self.factor.as_slice();
        let inverse = &mut self.inverse;
        for j in 0..n {
            inverse[j + j * n] = 1.0 / l[j + j * n];
            for i in j + 1..n {
                let sum: f64 = (j..i).map(|k| l[i + k * n] * inverse[k + j * n]).sum();
                inverse[i + j * n] = -sum / l[i + i * n];
            }
        }
    }

    /// `W_ij = r_i r_j (L^-T L^-1)_ij = r_i r_j sum_{k >= max(i, j)} L^-1_ki L^-1_kj`.
    fn fill_gram(&mut self) {
        let n = self.root.len();
        let inverse = &self.inverse;
        for j in 0..n {
            for i in j..n {
                let column_i = &inverse[i * n..(i + 1) * n];
                let column_j = &inverse[j * n..(j + 1) * n];
                let dot: f64 = (i..n).map(|k| column_i[k] * column_j[k]).sum();
                let w = self.root[i] * self.root[j] * dot;
                self.gram[i + j * n] = w;
                self.gram[j + i * n] = w;
            }
        }
    }
}

/// The bound of one damping value applied at every joint (a task-space law's posture
/// damping), from the factor of M the law already has.
#[derive(Debug, Clone)]
pub(crate) struct PostureDampingBound {
    damping: Vec<f64>,
    bound: DampingBound,
}

impl PostureDampingBound {
    /// Buffers for `dof` joints.
    pub(crate) fn new(dof: usize) -> Self {
        Self {
            damping: vec![0.0; dof],
            bound: DampingBound::new(dof),
        }
    }

    /// The per-joint factors for `damping` on every joint at the configuration whose mass
    /// matrix has the lower Cholesky factor `factor`.
    pub(crate) fn update(
        &mut self,
        factor: &DMatrix<f64>,
        damping: f64,
        dt: f64,
    ) -> Result<(), ControlError> {
        self.damping.fill(damping);
        self.bound
            .diagonal_scales_from_factor(factor, &self.damping, dt)?;
        Ok(())
    }

    /// The factors of the last [`PostureDampingBound::update`].
    pub(crate) fn scales(&self) -> &[f64] {
        self.bound.scales()
    }
}

/// Checks a law's damping parameter against the sampled-data margin at the configurations the
/// defaults are sized on ([`crate::gain_sizing::default_gains`]), at [`DESIGN_RATE`]: a warning for gains
/// the run-time bound will cut, naming the joint, the configuration and the bound.
#[derive(Debug, Clone)]
pub struct DampingCheck {
    robot: Robot,
    configurations: Vec<Vec<f64>>,
    bound: DampingBound,
    ws: DynamicsWorkspace,
}

impl DampingCheck {
    /// The check for `robot`.
    pub fn new(robot: &Robot) -> Self {
        Self {
            configurations: samples(robot),
            bound: DampingBound::new(robot.dof()),
            ws: DynamicsWorkspace::new(robot),
            robot: robot.clone(),
        }
    }

    /// Why `damping` (the values of `parameter`) would make the loop unstable at some sampled
    /// configuration without the run-time bound: `dt lambda_max(M^-1 D)` beyond 1, the limit
    /// of a loop with one period of delay (2 without), at the worst one; `None` when it stays
    /// within.
    pub fn warning(&mut self, parameter: &str, damping: &[f64]) -> Option<String> {
        let dt = 1.0 / DESIGN_RATE;
        let configurations = std::mem::take(&mut self.configurations);
        let worst = configurations
            .iter()
            .filter_map(|q| Some((self.exact_load(q, damping, dt)?, q.clone())))
            .max_by(|a, b| a.0.total_cmp(&b.0));
        self.configurations = configurations;
        let (load, q) = worst?;
        if load <= UNSTABLE_WITH_DELAY {
            return None;
        }
        let scales = self
            .bound
            .diagonal_scales(&self.robot, &mut self.ws, &q, damping, dt)
            .ok()?;
        let (joint, scale) = scales
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1))?;
        let name = &self.robot.joints()[joint].name;
        Some(format!(
            "{parameter}: at {DESIGN_RATE} Hz this damping is beyond the sampled-data limit at \
             q = {q:.3?}: dt lambda_max(M^-1 D) = {load:.3} (a loop with one period of delay is \
             unstable beyond 1, one without beyond 2); the run-time bound limits it to \
             {RUNTIME_MARGIN} there, most on joint '{name}' (damping x{scale:.3}, stiffness by \
             the square), so the arm answers more softly than these gains say"
        ))
    }

    /// `dt lambda_max(M^-1 D)` at `q`, by an eigensolver on the bound's `W` (outside the
    /// control loop: it allocates).
    fn exact_load(&mut self, q: &[f64], damping: &[f64], dt: f64) -> Option<f64> {
        let robot = &self.robot;
        self.bound
            .diagonal_load(robot, &mut self.ws, q, damping, dt)
            .ok()?;
        let n = robot.dof();
        let w = DMatrix::from_column_slice(n, n, &self.bound.gram);
        Some(dt.abs() * w.symmetric_eigenvalues().max())
    }
}

/// `dt lambda_max(M^-1 D)` beyond which a damper sampled with one period of delay diverges.
const UNSTABLE_WITH_DELAY: f64 = 1.0;

/// The per-axis factors for the symmetric positive semi-definite `W = D^1/2 A D^1/2` (n x n,
/// column-major) of a damping `D` on a mobility `A` (`M^-1`, or a task's `J M^-1 J^T`): the
/// better of the two weightings of the module documentation, so that `dt lambda_max(W S)`
/// stays within `margin`; `weights` and `candidate` are buffers of n. Allocates nothing.
pub(crate) fn gram_scales(
    w: &[f64],
    (dt, margin): (f64, f64),
    (weights, candidate): (&mut [f64], &mut [f64]),
    scales: &mut [f64],
) {
    let n = scales.len();
    weights.fill(1.0);
    weighted_scales(w, weights, dt, margin, scales);
    for (j, weight) in weights.iter_mut().enumerate() {
        let diagonal = w[j + j * n];
        *weight = if diagonal > 0.0 {
            diagonal.sqrt().recip()
        } else {
            1.0
        };
    }
    weighted_scales(w, weights, dt, margin, candidate);
    if cut(w, candidate) < cut(w, scales) {
        scales.copy_from_slice(candidate);
    }
}

/// Per joint `min(1, margin / (dt r_j))` with `r_j = sum_i |W_ij| y_i / y_j` (module docs): the
/// scales that bound `dt lambda_max(W S)` by `margin` for the positive weights `y`.
fn weighted_scales(w: &[f64], weights: &[f64], dt: f64, margin: f64, scales: &mut [f64]) {
    let n = weights.len();
    for ((scale, column), own) in scales.iter_mut().zip(w.chunks_exact(n)).zip(weights) {
        let weighted: f64 = column.iter().zip(weights).map(|(v, y)| v.abs() * y).sum();
        let sum = dt.abs() * weighted / own;
        *scale = if sum > margin { margin / sum } else { 1.0 };
    }
}

/// How much `scales` cut, weighing each joint's cut `-ln s_j` by `1 / W_jj`: the heavier the
/// joint against its damping, the more its stiffness holds the arm, the worse a cut there.
fn cut(w: &[f64], scales: &[f64]) -> f64 {
    let n = scales.len();
    scales
        .iter()
        .enumerate()
        .filter(|(j, _)| w[j + j * n] > 0.0)
        .map(|(j, s)| -s.ln() / w[j + j * n])
        .sum()
}

/// `min(max_i sum_j |W_ij|, ||W||_F)` of the symmetric n x n `w` (column-major): both bound its
/// largest eigenvalue from above (Gershgorin's discs; the Frobenius norm is the root of the
/// summed squared eigenvalues). The first is tight for a diagonally dominant W, the second for
/// one dominated by a single direction.
fn symmetric_norm_bound(w: &[f64], n: usize) -> f64 {
    let gershgorin = w
        .chunks_exact(n)
        .map(|column| column.iter().map(|v| v.abs()).sum::<f64>())
        .fold(0.0, f64::max);
    let frobenius = w.iter().map(|v| v * v).sum::<f64>().sqrt();
    gershgorin.min(frobenius)
}

#[cfg(test)]
mod tests {
    use super::*;
    use armctl_model::test_support::bundled_robot;
    use armctl_model::test_support::random_arm::RandomArm;
    use armctl_model::ChainOptions;
    use nalgebra::SymmetricEigen;

    /// `dt lambda_max(M^-1 D)` by nalgebra's eigensolver on `D^1/2 M^-1 D^1/2`.
    fn exact(robot: &Robot, q: &[f64], damping: &[f64], dt: f64) -> f64 {
        let n = robot.dof();
        let mut m = DMatrix::zeros(n, n);
        mass_matrix(robot, &mut DynamicsWorkspace::new(robot), q, &mut m).unwrap();
        let inverse = m.cholesky().unwrap().inverse();
        let root: Vec<f64> = damping.iter().map(|d| d.sqrt()).collect();
        let w = DMatrix::from_fn(n, n, |r, c| root[r] * inverse[(r, c)] * root[c]);
        dt * SymmetricEigen::new(w).eigenvalues.max()
    }

    fn configuration(robot: &Robot, k: usize) -> Vec<f64> {
        robot
            .joints()
            .iter()
            .enumerate()
            .map(|(i, j)| j.limits.position_at(((k * 7 + i * 3) % 11) as f64 / 10.0))
            .collect()
    }

    #[test]
    fn the_load_bounds_the_largest_eigenvalue_from_above_and_within_the_dimension() {
        let mut robots = vec![bundled_robot("panda.urdf"), bundled_robot("puma560.urdf")];
        for seed in 0..12 {
            let urdf = RandomArm::generate(seed).urdf;
            robots.push(Robot::from_urdf_str(&urdf, &ChainOptions::default()).unwrap());
        }
        for robot in &robots {
            let n = robot.dof();
            let mut bound = DampingBound::new(n);
            let mut ws = DynamicsWorkspace::new(robot);
            for k in 0..11 {
                let q = configuration(robot, k);
                let damping: Vec<f64> = (0..n).map(|i| 0.1 + ((i + k) % 4) as f64).collect();
                let load = bound
                    .diagonal_load(robot, &mut ws, &q, &damping, 1e-3)
                    .unwrap();
                let truth = exact(robot, &q, &damping, 1e-3);
                assert!(load >= truth * (1.0 - 1e-12), "{load} < {truth}");
                // Neither bound exceeds sqrt(n) times the largest eigenvalue.
                assert!(load <= truth * (n as f64).sqrt() * (1.0 + 1e-12));
            }
        }
    }

    #[test]
    fn per_joint_scales_bring_the_damping_within_the_margin_and_spare_the_joints_within_it() {
        let robot = bundled_robot("panda.urdf");
        let q = configuration(&robot, 3);
        let mut bound = DampingBound::new(7);
        let mut ws = DynamicsWorkspace::new(&robot);
        // Heavy damping on the wrist only: the shoulder's stays.
        let damping = [1.0, 1.0, 1.0, 1.0, 50.0, 50.0, 50.0];
        let load = bound
            .diagonal_load(&robot, &mut ws, &q, &damping, 1e-3)
            .unwrap();
        assert!(load > RUNTIME_MARGIN, "{load}");
        let scales = bound
            .diagonal_scales(&robot, &mut ws, &q, &damping, 1e-3)
            .unwrap()
            .to_vec();
        let scaled: Vec<f64> = damping.iter().zip(&scales).map(|(d, s)| d * s).collect();
        assert!(exact(&robot, &q, &scaled, 1e-3) <= RUNTIME_MARGIN * (1.0 + 1e-12));
        assert_eq!(scales[0], 1.0, "{scales:?}");
        assert!(scales[6] < 1.0, "{scales:?}");
        let light = bound
            .diagonal_scales(&robot, &mut ws, &q, &[1.0; 7], 1e-3)
            .unwrap();
        assert!(light.iter().all(|s| *s == 1.0));
    }

    /// A period that is not a positive number is refused (a NaN would disable every cut).
    #[test]
    fn a_period_that_is_not_positive_is_refused() {
        let robot = bundled_robot("panda.urdf");
        let q = configuration(&robot, 1);
        let mut ws = DynamicsWorkspace::new(&robot);
        let mut bound = DampingBound::new(7);
        for dt in [f64::NAN, 0.0, -1e-3, f64::INFINITY] {
            let result = bound.diagonal_scales(&robot, &mut ws, &q, &[1.0; 7], dt);
            let error = result.unwrap_err().to_string();
            assert!(error.contains("control period"), "{dt}: {error}");
        }
    }

    /// From a factor the caller has, the same factors as from the configuration.
    #[test]
    fn scales_from_a_given_factor_match_those_from_q() {
        let robot = bundled_robot("panda.urdf");
        let q = configuration(&robot, 5);
        let damping = [30.0, 50.0, 20.0, 20.0, 60.0, 60.0, 60.0];
        let mut ws = DynamicsWorkspace::new(&robot);
        let mut bound = DampingBound::new(7);
        let from_q = bound
            .diagonal_scales(&robot, &mut ws, &q, &damping, 1e-3)
            .unwrap()
            .to_vec();
        assert!(from_q.iter().any(|s| *s < 1.0), "{from_q:?}");
        let mut factor = DMatrix::zeros(7, 7);
        mass_matrix(&robot, &mut ws, &q, &mut factor).unwrap();
        cholesky_in_place(&mut factor).unwrap();
        let given = bound
            .diagonal_scales_from_factor(&factor, &damping, 1e-3)
            .unwrap();
        assert_eq!(given, from_q.as_slice());
    }

    /// A heavy joint strongly coupled to a light one keeps its gains: the light joint is cut.
    #[test]
    fn a_heavy_joint_coupled_to_a_light_one_is_spared() {
        let coupling = 0.95 * (0.1_f64 * 5.0).sqrt();
        let w = [0.1, coupling, coupling, 5.0];
        let mut plain = [1.0; 2];
        weighted_scales(&w, &[1.0, 1.0], 1.0, RUNTIME_MARGIN, &mut plain);
        assert!(plain[0] < 1.0, "{plain:?}");
        let mut own = [1.0; 2];
        let weights = [0.1_f64.sqrt().recip(), 5.0_f64.sqrt().recip()];
        weighted_scales(&w, &weights, 1.0, RUNTIME_MARGIN, &mut own);
        assert_eq!(own[0], 1.0, "{own:?}");
        assert!(cut(&w, &own) < cut(&w, &plain));
        for scales in [plain, own] {
            let root = [scales[0].sqrt(), scales[1].sqrt()];
            let scaled = nalgebra::Matrix2::from_fn(|r, c| root[r] * w[r + 2 * c] * root[c]);
            let largest = SymmetricEigen::new(scaled).eigenvalues.max();
            assert!(
                largest <= RUNTIME_MARGIN * (1.0 + 1e-12),
                "{scales:?}: {largest}"
            );
        }
    }

    /// Stretched, aligned and random configurations of random arms: scaled dampings of a
    /// thousand times the safe size are within the margin everywhere.
    #[test]
    fn scaled_dampings_are_within_the_margin_on_random_arms() {
        for seed in 0..8 {
            let urdf = RandomArm::generate(seed).urdf;
            let robot = Robot::from_urdf_str(&urdf, &ChainOptions::default()).unwrap();
            let n = robot.dof();
            let mut bound = DampingBound::new(n);
            let mut ws = DynamicsWorkspace::new(&robot);
            for k in 0..11 {
                let mut q = configuration(&robot, k);
                if k % 2 == 0 {
                    q.iter_mut().skip(1).for_each(|v| *v = 0.0);
                }
                let damping: Vec<f64> = (0..n).map(|i| 10f64.powi(i as i32 % 4)).collect();
                let scales = bound
                    .diagonal_scales(&robot, &mut ws, &q, &damping, 1e-3)
                    .unwrap()
                    .to_vec();
                let scaled: Vec<f64> = damping.iter().zip(&scales).map(|(d, s)| d * s).collect();
                let load = exact(&robot, &q, &scaled, 1e-3);
                assert!(
                    load <= RUNTIME_MARGIN * (1.0 + 1e-12),
                    "seed {seed} k {k}: {load}"
                );
            }
        }
    }
}
