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
//! to `W S` (through `D^1/2`), whose column j sums to `s_j r_j` in magnitude, `r_j` the
//! absolute row (and column) sum of the symmetric W. So `s_j = min(1, margin / (dt r_j))` keeps
//! every eigenvalue within the margin (Gershgorin's discs of the columns) and leaves the joints
//! whose columns are within it untouched: a stretched arm's light base rotation or an aligned
//! wrist is slowed, the rest of the arm keeps its gains.

use armctl_dynamics::{cholesky_in_place, mass_matrix};
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
        armctl_model::check_length("damping", self.root.len(), damping.len())?;
        for (r, d) in self.root.iter_mut().zip(damping) {
            *r = d.abs().sqrt();
        }
        mass_matrix(robot, ws, q, &mut self.factor)?;
        cholesky_in_place(&mut self.factor)?;
        self.invert_factor();
        self.fill_gram();
        let bound = symmetric_norm_bound(&self.gram, self.root.len());
        if !bound.is_finite() {
            return Err(DynamicsError::SingularMassMatrix.into());
        }
        Ok(dt.abs() * bound)
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
            let n = self.scales.len();
            for (scale, column) in self.scales.iter_mut().zip(self.gram.chunks_exact(n)) {
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
