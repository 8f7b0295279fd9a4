//! Base (minimal) inertial parameters, numerically (docs/theory.md section 5).
//!
//! The regressor `Y` (n x 10n) stacked over random states `W` has rank b < 10n: some columns
//! are zero, others combinations of the rest. Columns are taken greedily, in an order that
//! mirrors the MDH regrouping rules (per link, base to tip: `XX XY XZ YZ ZZ MX MY` before
//! `YY MZ M`), keeping each one that is independent of those kept (Gram-Schmidt residual above
//! `1e-7` of its norm). With `S` the kept columns and `D` the others, `W_D = W_S K` by least
//! squares, and `p_b = p_S + K p_D`: `Y p = Y_S p_b` for every state. The same order makes the
//! values equal to the regrouped ones of `regrouping` wherever those rules apply.

use armctl_model::{check_length, Robot, PARAMS_PER_LINK};
use nalgebra::{DMatrix, DVector};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use crate::{regressor, DynamicsError, DynamicsWorkspace};

/// Names of the ten parameters of a link, in the order of the parameter vector.
pub const PARAMETER_NAMES: [&str; PARAMS_PER_LINK] =
    ["XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M"];

/// The order columns are considered in, per link: the ones the regrouping rules keep first.
const PREFERENCE: [usize; PARAMS_PER_LINK] = [0, 1, 2, 4, 5, 6, 7, 3, 8, 9];

/// A set of base parameters: `p_b = map p`, and `Y p = Y[:, columns] p_b`.
#[derive(Debug, Clone, PartialEq)]
pub struct BaseParameters {
    columns: Vec<usize>,
    map: DMatrix<f64>,
}

impl BaseParameters {
    /// From the kept regressor columns and the map (b x 10n).
    pub fn new(columns: Vec<usize>, map: DMatrix<f64>) -> Self {
        Self { columns, map }
    }

    /// The number of base parameters, b.
    pub fn count(&self) -> usize {
        self.columns.len()
    }

    /// The regressor columns that make the base regressor, `Y_b = Y[:, columns]`.
    pub fn columns(&self) -> &[usize] {
        &self.columns
    }

    /// `p_b = map p`, b x 10n.
    pub fn map(&self) -> &DMatrix<f64> {
        &self.map
    }

    /// The base parameter values of a full parameter vector (10n values).
    pub fn values(&self, p: &[f64]) -> Result<DVector<f64>, DynamicsError> {
        check_length("parameter vector", self.map.ncols(), p.len())?;
        Ok(&self.map * DVector::from_column_slice(p))
    }

    /// Each base parameter as a combination of link parameters, e.g. `XX2 - YY2` or
    /// `ZZ1 + YY2 + 0.2435 MZ2` (links numbered from 1; coefficients below 1e-9 dropped).
    pub fn names(&self) -> Vec<String> {
        (0..self.count())
            .map(|r| combination(self.map.row(r).iter().copied()))
            .collect()
    }

    /// `Y_b`: the base columns of a full regressor `y` (n x 10n) into `out` (n x b).
    /// Allocates nothing.
    pub fn select(&self, y: &DMatrix<f64>, out: &mut DMatrix<f64>) -> Result<(), DynamicsError> {
        check_length("Y columns", self.map.ncols(), y.ncols())?;
        check_length("Y_b rows", y.nrows(), out.nrows())?;
        check_length("Y_b columns", self.count(), out.ncols())?;
        for (k, &c) in self.columns.iter().enumerate() {
            out.set_column(k, &y.column(c));
        }
        Ok(())
    }

    /// A full parameter vector with base values `p_b`, as close as possible to `prior`
    /// (least-norm change): `p = prior + map^+ (p_b - map prior)`. Every torque computed with
    /// it equals `Y_b p_b`.
    pub fn full_parameters(&self, p_b: &[f64], prior: &[f64]) -> Result<Vec<f64>, DynamicsError> {
        check_length("base parameter values", self.count(), p_b.len())?;
        check_length("prior parameter vector", self.map.ncols(), prior.len())?;
        let prior = DVector::from_column_slice(prior);
        let gap = DVector::from_column_slice(p_b) - &self.map * &prior;
        let svd = self.map.clone().svd(true, true);
        let change = svd
            .solve(&gap, 1e-12)
            .map_err(|reason| DynamicsError::Numerical {
                reason: reason.to_string(),
            })?;
        Ok((prior + change).iter().copied().collect())
    }
}

/// `c_1 NAME1 + c_2 NAME2 ...` for a row of a map.
fn combination(row: impl Iterator<Item = f64>) -> String {
    let mut text = String::new();
    for (k, c) in row.enumerate().filter(|(_, c)| c.abs() > 1e-9) {
        let name = format!(
            "{}{}",
            PARAMETER_NAMES[k % PARAMS_PER_LINK],
            k / PARAMS_PER_LINK + 1
        );
        let (sign, magnitude) = if c < 0.0 { ("-", -c) } else { ("+", c) };
        let coefficient = if (magnitude - 1.0).abs() < 1e-9 {
            String::new()
        } else {
            format!("{magnitude:.6} ")
        };
        if text.is_empty() {
            text = format!("{}{coefficient}{name}", if sign == "-" { "-" } else { "" });
        } else {
            text += &format!(" {sign} {coefficient}{name}");
        }
    }
    text
}

/// The regressor stacked over `samples` random states (joint positions within the limits,
/// velocities and accelerations in [-2, 2]).
pub fn stacked_regressor(
    robot: &Robot,
    samples: usize,
    seed: u64,
) -> Result<DMatrix<f64>, DynamicsError> {
    let n = robot.dof();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut ws = DynamicsWorkspace::new(robot);
    let mut y = DMatrix::zeros(n, PARAMS_PER_LINK * n);
    let mut w = DMatrix::zeros(samples * n, PARAMS_PER_LINK * n);
    for s in 0..samples {
        let q: Vec<f64> = robot
            .joints()
            .iter()
            .map(|j| {
                let (lo, hi) = if j.limits.is_bounded() {
                    (j.limits.lower, j.limits.upper)
                } else {
                    (-3.0, 3.0)
                };
                rng.random_range(lo..=hi)
            })
            .collect();
        let mut random = || -> Vec<f64> { (0..n).map(|_| rng.random_range(-2.0..=2.0)).collect() };
        let (qd, qdd) = (random(), random());
        regressor(robot, &mut ws, &q, &qd, &qd, &qdd, &mut y)?;
        w.rows_mut(s * n, n).copy_from(&y);
    }
    Ok(w)
}

/// The base parameters of `robot`, from its regressor over random states.
pub fn numeric_base_parameters(robot: &Robot) -> Result<BaseParameters, DynamicsError> {
    let n = robot.dof();
    let w = stacked_regressor(robot, (12 * PARAMS_PER_LINK).max(8 * n), 0x5eed)?;
    let order = (0..n).flat_map(|i| PREFERENCE.iter().map(move |k| PARAMS_PER_LINK * i + k));
    let (kept, dropped) = independent_columns(&w, order);
    base_from_columns(&w, kept, &dropped)
}

/// Greedy independent columns of `w` in `order`: (kept, the others).
fn independent_columns(
    w: &DMatrix<f64>,
    order: impl Iterator<Item = usize>,
) -> (Vec<usize>, Vec<usize>) {
    let largest = w.column_iter().map(|c| c.norm()).fold(0.0, f64::max);
    let (mut basis, mut kept, mut dropped): (Vec<DVector<f64>>, Vec<usize>, Vec<usize>) =
        (vec![], vec![], vec![]);
    for c in order {
        let mut v = w.column(c).clone_owned();
        let norm = v.norm();
        // Twice Gram-Schmidt: one pass loses orthogonality on nearly dependent columns.
        for _ in 0..2 {
            for b in &basis {
                let projection = b.dot(&v);
                v.axpy(-projection, b, 1.0);
            }
        }
        let residual = v.norm();
        if norm > 1e-12 * largest && residual > 1e-7 * norm {
            basis.push(v / residual);
            kept.push(c);
        } else {
            dropped.push(c);
        }
    }
    (kept, dropped)
}

/// The map for kept columns `kept` of `w`: `p_b = p_kept + K p_dropped`, `W_dropped = W_kept K`.
pub fn base_from_columns(
    w: &DMatrix<f64>,
    kept: Vec<usize>,
    dropped: &[usize],
) -> Result<BaseParameters, DynamicsError> {
    let w_kept = w.select_columns(&kept);
    let w_dropped = w.select_columns(dropped);
    let k = w_kept
        .svd(true, true)
        .solve(&w_dropped, 1e-12)
        .map_err(|reason| DynamicsError::Numerical {
            reason: reason.to_string(),
        })?;
    let mut map = DMatrix::zeros(kept.len(), w.ncols());
    for (r, &c) in kept.iter().enumerate() {
        map[(r, c)] = 1.0;
        for (j, &d) in dropped.iter().enumerate() {
            // Exact relations have coefficients well above this; the rest is rounding.
            let coefficient = k[(r, j)];
            map[(r, d)] = if coefficient.abs() < 1e-10 {
                0.0
            } else {
                coefficient
            };
        }
    }
    Ok(BaseParameters::new(kept, map))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_as_combinations() {
        let row = [
            1.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5,
        ];
        assert_eq!(combination(row.into_iter()), "XX1 - YY1 + 0.500000 ZZ2");
    }

    /// Two links (20 parameters), three base parameters.
    fn three_of_twenty() -> BaseParameters {
        let mut map = DMatrix::zeros(3, 20);
        map[(0, 0)] = 1.0;
        map[(0, 3)] = -1.0;
        map[(1, 5)] = 1.0;
        map[(2, 19)] = 1.0;
        BaseParameters::new(vec![0, 5, 19], map)
    }

    fn dimension(what: &'static str, expected: usize, got: usize) -> DynamicsError {
        DynamicsError::Dimension {
            what,
            expected,
            got,
        }
    }

    #[test]
    fn values_of_a_wrong_length_vector_are_a_dimension_error() {
        let base = three_of_twenty();
        let p: Vec<f64> = (0..20).map(f64::from).collect();
        assert_eq!(base.values(&p).unwrap().as_slice(), &[-3.0, 5.0, 19.0]);
        assert_eq!(
            base.values(&p[..19]),
            Err(dimension("parameter vector", 20, 19))
        );
    }

    #[test]
    fn select_with_wrong_sizes_is_a_dimension_error() {
        let base = three_of_twenty();
        let y = DMatrix::from_fn(2, 20, |r, c| (10 * r + c) as f64);
        let mut out = DMatrix::zeros(2, 3);
        base.select(&y, &mut out).unwrap();
        assert_eq!(
            out,
            DMatrix::from_row_slice(2, 3, &[0.0, 5.0, 19.0, 10.0, 15.0, 29.0])
        );
        assert_eq!(
            base.select(&DMatrix::zeros(2, 10), &mut out),
            Err(dimension("Y columns", 20, 10))
        );
        assert_eq!(
            base.select(&y, &mut DMatrix::zeros(3, 3)),
            Err(dimension("Y_b rows", 2, 3))
        );
        assert_eq!(
            base.select(&y, &mut DMatrix::zeros(2, 4)),
            Err(dimension("Y_b columns", 3, 4))
        );
    }

    #[test]
    fn full_parameters_with_wrong_lengths_are_a_dimension_error() {
        let base = three_of_twenty();
        let prior = vec![0.5; 20];
        let p = base.full_parameters(&[1.0, 2.0, 3.0], &prior).unwrap();
        assert!((base.values(&p).unwrap() - DVector::from_vec(vec![1.0, 2.0, 3.0])).amax() < 1e-12);
        assert_eq!(
            base.full_parameters(&[1.0, 2.0], &prior),
            Err(dimension("base parameter values", 3, 2))
        );
        assert_eq!(
            base.full_parameters(&[1.0, 2.0, 3.0], &prior[..12]),
            Err(dimension("prior parameter vector", 20, 12))
        );
    }
}
