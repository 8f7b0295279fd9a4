//! What no arm has, kept out of an identified model: friction that pushes a joint along its
//! motion (a negative viscous or Coulomb coefficient) and a mass matrix that is not positive
//! definite at a pose the arm was in. A computed-torque law fed either would push the wrong
//! way.

use armctl_dynamics::{mass_matrix, DynamicsWorkspace};
use armctl_model::Robot;
use nalgebra::{DMatrix, DVector};

use crate::consistent_fit::ConsistentFit;
use crate::log_cholesky::consistency_margin;
use crate::{IdentError, IdentifiedModel};

/// How far the physically consistent estimate is from the unconstrained one.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConsistencyGap {
    /// The base parameter that moved most, in its standard deviations.
    pub largest_parameter: String,
    /// That move, in standard deviations.
    pub largest_sigmas: f64,
    /// The weighted residual's growth, relative to least squares' (0 when least squares
    /// already gave bodies that exist).
    pub residual_increase: f64,
    /// Whether least squares' values are those of bodies that exist (the two fits agree).
    pub least_squares_is_bodies: bool,
    /// The solver's function evaluations.
    pub evaluations: usize,
}

/// Least squares' values count as bodies when the consistent fit is within this of each of
/// them (relative; the solver reaches 1e-8 where they are, `tests/identification/`).
const SAME_VALUES: f64 = 1e-6;

/// The gap between the consistent estimate and least squares on the weighted problem
/// `|ww x - wy|` (`std`: least squares' standard deviations, base parameters first).
pub(crate) fn consistency_gap(
    base_names: &[String],
    (ww, wy): (&DMatrix<f64>, &DVector<f64>),
    consistent: &ConsistentFit,
    least_squares: &DVector<f64>,
    std: &[f64],
) -> ConsistencyGap {
    let cost = |x: &DVector<f64>| (ww * x - wy).norm_squared();
    let scale = least_squares.rows(0, base_names.len()).amax();
    let mut gap = ConsistencyGap {
        residual_increase: (cost(&consistent.estimate)
            / cost(least_squares).max(f64::MIN_POSITIVE)
            - 1.0)
            .max(0.0),
        least_squares_is_bodies: true,
        evaluations: consistent.evaluations,
        ..ConsistencyGap::default()
    };
    for (k, name) in base_names.iter().enumerate() {
        let change = (consistent.estimate[k] - least_squares[k]).abs();
        if change > SAME_VALUES * least_squares[k].abs().max(SAME_VALUES * scale) {
            gap.least_squares_is_bodies = false;
        }
        let sigmas = change / std[k].max(f64::MIN_POSITIVE);
        if sigmas > gap.largest_sigmas || gap.largest_parameter.is_empty() {
            gap.largest_sigmas = sigmas;
            gap.largest_parameter = name.clone();
        }
    }
    if gap.least_squares_is_bodies {
        gap.residual_increase = 0.0;
    }
    gap
}

/// The consistent fit with each viscous or Coulomb coefficient it gives below zero fixed at
/// zero (its column left out, refitted until none is), each named. Least squares' signs are
/// checked before, with their refusals; here the bodies' constraint can pull a coefficient
/// least squares found small below zero.
pub(crate) fn consistent_without_negative_friction(
    ww: &DMatrix<f64>,
    friction: Option<&FrictionColumns>,
    std: &[f64],
    mut fit: impl FnMut(&DMatrix<f64>) -> Result<ConsistentFit, IdentError>,
) -> Result<(ConsistentFit, Vec<FrictionAtZero>), IdentError> {
    let mut w = ww.clone();
    let mut at_zero = Vec::new();
    loop {
        let mut found = fit(&w)?;
        let Some(columns) = friction else {
            return Ok((found, at_zero));
        };
        let range = columns.first..columns.first + 2 * columns.names.len();
        // A left-out column keeps its starting value: it is zero.
        for c in range.clone().filter(|&c| w.column(c).amax() == 0.0) {
            found.estimate[c] = 0.0;
        }
        let negative: Vec<usize> = range.filter(|&c| found.estimate[c] < 0.0).collect();
        if negative.is_empty() {
            return Ok((found, at_zero));
        }
        for c in negative {
            let (kind, j) = columns.kind_and_joint(c);
            at_zero.push(FrictionAtZero {
                joint: columns.names[j].clone(),
                kind,
                fitted: found.estimate[c],
                std: std[c],
            });
            w.column_mut(c).fill(0.0);
        }
    }
}

/// Refuses links that are not bodies (a mass not positive, a pseudo-inertia not positive
/// semidefinite), naming the first: what the consistent fit returns always is, by its
/// coordinates, and is checked again before anything is written.
pub(crate) fn check_bodies(
    robot: &Robot,
    links: &[[f64; armctl_model::PARAMS_PER_LINK]],
) -> Result<(), IdentError> {
    match links.iter().position(|p| !(p[9] > 0.0 && consistency_margin(p) >= -1e-12)) {
        None => Ok(()),
        Some(l) => Err(IdentError::Identification {
            reason: format!(
                "{} came out as no body has (mass {:.3e}, pseudo-inertia margin {:.3e}); nothing written",
                link_names(robot, &[l]),
                links[l][9],
                consistency_margin(&links[l])
            ),
        }),
    }
}

/// Links named by the joint that moves each.
pub(crate) fn link_names(robot: &Robot, links: &[usize]) -> String {
    let names: Vec<String> = links
        .iter()
        .map(|&l| format!("the link moved by joint '{}'", robot.joints()[l].name))
        .collect();
    names.join(", ")
}

/// The refusal of a least-squares estimate no set of bodies has.
pub(crate) fn not_a_body(gap: &ConsistencyGap, links: &str) -> IdentError {
    IdentError::Identification {
        reason: format!(
            "least squares gives parameters no set of bodies has: {} would need a negative mass or an inertia no body has (the closest bodies that exist leave {:.2e} more of the weighted squared residual, and move {} by {:.1} standard deviations). Identify with --method consistent (the default); nothing written",
            links,
            gap.residual_increase,
            gap.largest_parameter,
            gap.largest_sigmas
        ),
    }
}

/// The bodies that exist may explain the log less well than least squares, but not by this
/// much (RMS of the weighted residual): beyond it, no arm of this geometry made the log.
const MAX_RESIDUAL_GROWTH: f64 = 1.25;

/// Whether the bodies that exist explain the log nearly as well as least squares does.
pub(crate) fn explained(gap: &ConsistencyGap) -> bool {
    (1.0 + gap.residual_increase).sqrt() <= MAX_RESIDUAL_GROWTH
}

/// The refusal of a log that no set of bodies explains nearly as well as least squares.
pub(crate) fn not_explained(gap: &ConsistencyGap, links: &str) -> IdentError {
    let growth = (1.0 + gap.residual_increase).sqrt();
    IdentError::Identification {
        reason: format!(
            "no set of bodies explains the log: the closest bodies that exist leave {:.0} % more effort unexplained (RMS, weighted) than least squares, whose values would need {} to have a negative mass or an inertia no body has. The log's efforts are probably not the torques the joints applied (a sign, an offset, a transmission the URDF leaves out: a geared joint's rotor inertia, which no link carries, among them), or the URDF's geometry is not the arm's; nothing written",
            100.0 * (growth - 1.0),
            links
        ),
    }
}

/// A negative friction coefficient is noise about a frictionless joint (fixed at zero) while it
/// is within this many standard deviations of zero, or while the torque it stands for is
/// below the joint's effort noise.
const NOISE_SIGMAS: f64 = 3.0;

/// A friction coefficient that came out negative, fixed at zero.
#[derive(Debug, Clone, PartialEq)]
pub struct FrictionAtZero {
    /// The joint.
    pub joint: String,
    /// "viscous" or "Coulomb".
    pub kind: &'static str,
    /// What the unconstrained fit gave.
    pub fitted: f64,
    /// Its standard deviation.
    pub std: f64,
}

impl std::fmt::Display for FrictionAtZero {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}'s {} friction fitted {:.3e} (std {:.1e}), written as 0: friction never pushes a joint along its motion",
            self.joint, self.kind, self.fitted, self.std
        )
    }
}

/// The friction columns of the fit (viscous per joint, then Coulomb per joint, from `first`)
/// and what is known of each joint's equations.
pub(crate) struct FrictionColumns<'a> {
    pub(crate) first: usize,
    pub(crate) names: &'a [String],
    /// Each joint's effort noise, N m (N).
    pub(crate) noise: &'a [f64],
    /// The unweighted regressor: a column's RMS over its rows is the typical speed (viscous)
    /// or 1 (Coulomb).
    pub(crate) unweighted: &'a DMatrix<f64>,
}

impl FrictionColumns<'_> {
    fn kind_and_joint(&self, column: usize) -> (&'static str, usize) {
        let n = self.names.len();
        let k = column - self.first;
        (if k < n { "viscous" } else { "Coulomb" }, k % n)
    }

    /// The typical torque a coefficient stands for: its value times its column's RMS over
    /// the rows that use it.
    fn torque(&self, column: usize, value: f64) -> f64 {
        let used: Vec<f64> = self
            .unweighted
            .column(column)
            .iter()
            .copied()
            .filter(|v| *v != 0.0)
            .collect();
        let rms = (used.iter().map(|v| v * v).sum::<f64>() / used.len().max(1) as f64).sqrt();
        value.abs() * rms
    }

    /// The columns whose coefficient came out negative within the noise (to fix at zero), or
    /// the refusal of one that is negative beyond it.
    fn negative(
        &self,
        estimate: &DVector<f64>,
        std: &[f64],
    ) -> Result<Vec<(usize, FrictionAtZero)>, IdentError> {
        let mut found = Vec::new();
        for column in self.first..self.first + 2 * self.names.len() {
            let value = estimate[column];
            if value >= 0.0 {
                continue;
            }
            let (kind, j) = self.kind_and_joint(column);
            let torque = self.torque(column, value);
            if value < -NOISE_SIGMAS * std[column] && torque > self.noise[j] {
                return Err(IdentError::Identification {
                    reason: format!(
                        "{}'s {kind} friction came out {value:.4} (std {:.1e}), {torque:.3} of torque at its typical speed, above its effort noise {:.3}: friction never pushes a joint along its motion. The log's efforts are probably not the torques the joints applied (a sign, an offset, a transmission the URDF leaves out); nothing written",
                        self.names[j], std[column], self.noise[j]
                    ),
                });
            }
            let joint = self.names[j].clone();
            let at_zero = FrictionAtZero {
                joint,
                kind,
                fitted: value,
                std: std[column],
            };
            found.push((column, at_zero));
        }
        Ok(found)
    }
}

/// An estimate and its standard deviations.
pub(crate) type Fit = (DVector<f64>, Vec<f64>);

/// Solves the weighted problem with every friction coefficient that comes out negative within
/// the noise fixed at zero (its column left out, refitted until none is), refusing one that is
/// negative beyond it. `solve` returns the estimate and its standard deviations.
pub(crate) fn fit_without_negative_friction(
    ww: &DMatrix<f64>,
    friction: Option<&FrictionColumns>,
    mut solve: impl FnMut(&DMatrix<f64>) -> Result<Fit, IdentError>,
) -> Result<(Fit, Vec<FrictionAtZero>), IdentError> {
    let mut w = ww.clone();
    let mut at_zero = Vec::new();
    let mut fixed = Vec::new();
    loop {
        let (mut estimate, std) = solve(&w)?;
        // A left-out column solves to round-off, not to zero.
        fixed.iter().for_each(|&c| estimate[c] = 0.0);
        let Some(columns) = friction else {
            return Ok(((estimate, std), at_zero));
        };
        let negative = columns.negative(&estimate, &std)?;
        if negative.is_empty() {
            return Ok(((estimate, std), at_zero));
        }
        for (column, found) in negative {
            w.column_mut(column).fill(0.0);
            fixed.push(column);
            at_zero.push(found);
        }
    }
}

/// Refuses base parameter values whose mass matrix is not positive definite at one of
/// `poses` (time, positions), naming the first such pose.
pub(crate) fn check_mass_matrix<'a>(
    robot: &Robot,
    base_names: &[String],
    base_values: &[f64],
    with_friction: bool,
    poses: impl Iterator<Item = (f64, &'a [f64])>,
) -> Result<(), IdentError> {
    let model = IdentifiedModel {
        base_names: base_names.to_vec(),
        base_values: base_values.to_vec(),
        ..IdentifiedModel::default()
    }
    .apply(robot)?;
    let n = robot.dof();
    let mut ws = DynamicsWorkspace::new(&model);
    let mut m = DMatrix::zeros(n, n);
    for (t, q) in poses {
        mass_matrix(&model, &mut ws, q, &mut m)?;
        if m.clone().cholesky().is_none() {
            let lowest = m.clone().symmetric_eigenvalues().min();
            let friction = if with_friction {
                ""
            } else {
                ", or identify its friction too (--friction: friction left out is read as inertia)"
            };
            return Err(IdentError::Identification {
                reason: format!(
                    "the identified mass matrix is not positive definite at t = {t:.3} s of the log (smallest eigenvalue {lowest:.3e}): no arm has it, and a law using it would push the wrong way. Excite the arm more (a longer log, armctl excite over more of the range){friction}; nothing written"
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns<'a>(
        names: &'a [String],
        noise: &'a [f64],
        w: &'a DMatrix<f64>,
    ) -> FrictionColumns<'a> {
        FrictionColumns {
            first: 0,
            names,
            noise,
            unweighted: w,
        }
    }

    #[test]
    fn a_negative_coefficient_within_the_noise_is_fixed_at_zero_and_named() {
        let names = vec!["j1".to_string()];
        // Viscous column: speeds of 1 rad/s; Coulomb column: +1.
        let w = DMatrix::from_row_slice(3, 2, &[1.0, 1.0, 1.0, 1.0, 1.0, 1.0]);
        let noise = [0.1];
        let fc = columns(&names, &noise, &w);
        let solve = |w: &DMatrix<f64>| {
            let fixed = w.column(0).amax() == 0.0;
            Ok((
                DVector::from_vec(vec![if fixed { 0.0 } else { -0.01 }, 0.5]),
                vec![0.02, 0.01],
            ))
        };
        let ((estimate, _), at_zero) = fit_without_negative_friction(&w, Some(&fc), solve).unwrap();
        assert_eq!(estimate[0], 0.0);
        assert_eq!(at_zero.len(), 1);
        assert!(at_zero[0]
            .to_string()
            .starts_with("j1's viscous friction fitted -1.000e-2"));
    }

    #[test]
    fn a_mass_matrix_no_arm_has_is_refused_with_the_pose() {
        let robot = armctl_model::test_support::bundled_robot("panda.urdf");
        let base = armctl_dynamics::numeric_base_parameters(&robot).unwrap();
        let negated: Vec<f64> = base
            .values(&robot.parameter_vector())
            .unwrap()
            .iter()
            .map(|v| -v)
            .collect();
        let q = vec![0.1; 7];
        let poses = [(0.25, q.as_slice())];
        let error = check_mass_matrix(&robot, &base.names(), &negated, true, poses.into_iter())
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("the identified mass matrix is not positive definite at t = 0.250 s"),
            "{error}"
        );
        let own = base.values(&robot.parameter_vector()).unwrap();
        let poses = [(0.25, q.as_slice())];
        check_mass_matrix(
            &robot,
            &base.names(),
            own.as_slice(),
            true,
            poses.into_iter(),
        )
        .unwrap();
    }

    #[test]
    fn a_coefficient_negative_beyond_the_noise_is_refused_naming_the_joint() {
        let names = vec!["elbow".to_string()];
        let w = DMatrix::from_row_slice(2, 2, &[2.0, 1.0, -2.0, -1.0]);
        let noise = [0.01];
        let fc = columns(&names, &noise, &w);
        let solve = |_: &DMatrix<f64>| Ok((DVector::from_vec(vec![0.3, -0.5]), vec![0.01, 0.01]));
        let error = fit_without_negative_friction(&w, Some(&fc), solve).unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("elbow's Coulomb friction came out -0.5000"),
            "{text}"
        );
        assert!(text.contains("nothing written"), "{text}");
    }
}
