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
//! `lambda_max(M^-1 D)` for `D = R R^T` (diagonal: `R = D^1/2`; Cartesian: `R = J^T D_x^1/2`)
//! is that of the symmetric `W = B^T B` with `B = L^-1 R` (`M = L L^T`), bounded from above
//! by the smaller of W's largest absolute row sum (Gershgorin) and its Frobenius norm. One mass
//! matrix, one Cholesky factor and one forward substitution; nothing is allocated.
//!
//! Scaling a diagonal damping joint by joint, `D S` with `S = diag(s_j)`: `M^-1 D S` is similar
//! to `W S` (through `D^1/2`), whose column j sums to `s_j r_j` in magnitude, `r_j` the
//! absolute row (and column) sum of the symmetric W. So `s_j = min(1, margin / (dt r_j))` keeps
//! every eigenvalue within the margin (Gershgorin's discs of the columns) and leaves the joints
//! whose columns are within it untouched: a stretched arm's light base rotation or an aligned
//! wrist is slowed, the rest of the arm keeps its gains.

use armctl_dynamics::{cholesky_forward_in_place, cholesky_in_place, mass_matrix};
use armctl_dynamics::{DynamicsError, DynamicsWorkspace};
use armctl_model::Robot;
use nalgebra::DMatrix;

use crate::ControlError;

/// Largest `dt lambda_max(M^-1 D)` (its upper bound) a step may apply: half the limit of a
/// loop with one period of delay, a quarter of the undelayed one. The defaults are sized for
/// half of this at their sample configurations, so it only acts where M^-1 is larger.
pub const RUNTIME_MARGIN: f64 = 0.5;

/// Buffers for the bound at one configuration.
#[derive(Debug, Clone)]
pub struct DampingBound {
    /// `M`, then its Cholesky factor.
    factor: DMatrix<f64>,
    /// `R`, then `L^-1 R`.
    root: DMatrix<f64>,
    /// `B^T B`.
    gram: DMatrix<f64>,
    /// The factors of [`DampingBound::diagonal_scales`].
    scales: Vec<f64>,
}

impl DampingBound {
    /// Buffers for `dof` joints and a damping of rank up to `dof`.
    pub fn new(dof: usize) -> Self {
        Self::with_rank(dof, dof)
    }

    /// Buffers for `dof` joints and a damping `R R^T` with `R` of `rank` columns (6 for a
    /// Cartesian damping through `J^T`).
    pub fn with_rank(dof: usize, rank: usize) -> Self {
        Self {
            factor: DMatrix::zeros(dof, dof),
            root: DMatrix::zeros(dof, rank),
            gram: DMatrix::zeros(rank, rank),
            scales: vec![1.0; rank],
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
        armctl_model::check_length("damping", self.root.nrows(), damping.len())?;
        self.root.fill(0.0);
        for (i, d) in damping.iter().enumerate() {
            self.root[(i, i)] = d.abs().sqrt();
        }
        self.load(robot, ws, q, dt)
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
        let load = self.diagonal_load(robot, ws, q, damping, dt)?;
        self.scales.fill(1.0);
        if load > RUNTIME_MARGIN {
            for (scale, column) in self.scales.iter_mut().zip(self.gram.column_iter()) {
                let sum = dt.abs() * column.iter().map(|v| v.abs()).sum::<f64>();
                if sum > RUNTIME_MARGIN {
                    *scale = RUNTIME_MARGIN / sum;
                }
            }
        }
        Ok(&self.scales)
    }

    /// The factors the last [`DampingBound::diagonal_scales`] gave.
    pub fn scales(&self) -> &[f64] {
        &self.scales
    }

    /// The root `R` (n x rank) of a damping `D = R R^T`, to fill before [`DampingBound::load`].
    pub fn root_mut(&mut self) -> &mut DMatrix<f64> {
        &mut self.root
    }

    /// An upper bound of `dt lambda_max(M(q)^-1 R R^T)` with the root set by
    /// [`DampingBound::root_mut`] (overwritten).
    pub fn load(
        &mut self,
        robot: &Robot,
        ws: &mut DynamicsWorkspace,
        q: &[f64],
        dt: f64,
    ) -> Result<f64, ControlError> {
        mass_matrix(robot, ws, q, &mut self.factor)?;
        cholesky_in_place(&mut self.factor)?;
        cholesky_forward_in_place(&self.factor, &mut self.root)?;
        self.root.tr_mul_to(&self.root, &mut self.gram);
        let bound = symmetric_norm_bound(&self.gram);
        if !bound.is_finite() {
            return Err(DynamicsError::SingularMassMatrix.into());
        }
        Ok(dt.abs() * bound)
    }
}

/// `min(max_i sum_j |W_ij|, ||W||_F)`: both bound the largest eigenvalue of a symmetric W
/// from above (Gershgorin's discs; the Frobenius norm is the root of the summed squared
/// eigenvalues). The first is tight for a diagonally dominant W, the second for one
/// dominated by a single direction.
fn symmetric_norm_bound(w: &DMatrix<f64>) -> f64 {
    let gershgorin = w
        .row_iter()
        .map(|row| row.iter().map(|v| v.abs()).sum::<f64>())
        .fold(0.0, f64::max);
    gershgorin.min(w.norm())
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

    #[test]
    fn a_cartesian_root_gives_the_load_of_its_joint_damping() {
        let robot = bundled_robot("panda.urdf");
        let q = configuration(&robot, 5);
        let mut ws = DynamicsWorkspace::new(&robot);
        let r = DMatrix::from_fn(7, 6, |i, j| ((i * 6 + j) % 5) as f64 - 1.5);
        let mut bound = DampingBound::with_rank(7, 6);
        bound.root_mut().copy_from(&r);
        let load = bound.load(&robot, &mut ws, &q, 1e-3).unwrap();
        let mut m = DMatrix::zeros(7, 7);
        mass_matrix(&robot, &mut ws, &q, &mut m).unwrap();
        // R^T M^-1 R has the nonzero eigenvalues of M^-1 R R^T.
        let gram = r.transpose() * m.cholesky().unwrap().inverse() * &r;
        let truth = 1e-3 * SymmetricEigen::new(gram).eigenvalues.max();
        assert!(
            load >= truth * (1.0 - 1e-9) && load <= truth * 6f64.sqrt(),
            "{load} {truth}"
        );
    }
}
