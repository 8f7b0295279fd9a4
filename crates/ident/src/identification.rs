//! Weighted least squares of the base parameters (and optionally viscous and Coulomb friction
//! per joint, and the Coulomb level's harmonics over the position) from a log:
//! `tau_j = Y_b(q, qd, qdd)_j p_b + f_v,j qd_j + sgn(qd_j) (f_c,j + sum_k c_jk cos(k q_j) + s_jk sin(k q_j))`.
//!
//! Missing velocities and accelerations are differentiated from the low-passed (zero-phase)
//! signals; the efforts are averaged over neighbouring samples, as a central difference sees a
//! zero-order-held effort, but not low-passed. The first pass is ordinary least
//! squares; each joint's residual then gives its noise `sigma_j`, and the second pass weights
//! joint j's equations by `1 / sigma_j` (Gautier). Standard deviations come from
//! `sigma^2 (W^T W)^-1` of the weighted problem. The last `holdout` part of the log is kept out
//! of the fit and predicted, as a check of the model on data it has not seen.

use armctl_dynamics::{numeric_base_parameters, regressor, BaseParameters, DynamicsWorkspace};
use armctl_model::{Robot, PARAMS_PER_LINK};
use nalgebra::{DMatrix, DVector};

use crate::consistent_fit::{blame, fit_consistent};
use crate::physical_consistency::{
    check_bodies, check_mass_matrix, consistency_gap, consistent_without_negative_friction,
    explained, fit_without_negative_friction, link_names, not_a_body, not_explained,
    ConsistencyGap, FrictionAtZero, FrictionColumns as FrictionSigns,
};
use crate::{IdentError, IdentifiedModel, JointLog};

mod conditioning;
mod friction_columns;
mod held_out;
mod instruments;
pub(crate) mod signals;
mod statistics;
use conditioning::{condition_number, poorly_excited, MAX_CONDITION};
use friction_columns::FrictionColumns;
use held_out::holdout;
use instruments::{not_instrumented, on_log_times, project};
use signals::{mean_step, signals, Signals};
use statistics::{joint_noise, standard_deviations};

/// The poses of a log (evenly spread) at which the identified mass matrix must be positive
/// definite.
const MASS_MATRIX_POSES: usize = 500;

/// How to identify.
#[derive(Debug, Clone, PartialEq)]
pub struct IdentifyOptions {
    /// Identify viscous and Coulomb friction per joint too.
    pub friction: bool,
    /// Fraction of the log, at its end, kept for validation.
    pub holdout: f64,
    /// Low-pass cutoff for differentiated signals, Hz.
    pub cutoff: f64,
    /// At most this many samples go into the fit (evenly spaced).
    pub max_samples: usize,
    /// With friction, a joint's equations at speeds below this (rad/s, m/s) are left out.
    pub min_speed: f64,
    /// With friction, this many harmonics of the Coulomb level over each joint's position
    /// (at most `armctl_model::MAX_FRICTION_HARMONICS`).
    pub friction_harmonics: usize,
    /// With friction, each joint's Coulomb asymmetry too (`armctl_model::Friction::offset`).
    pub friction_offset: bool,
    /// Which estimate is the result: the physically consistent one (the default) or the
    /// unconstrained least squares, which is then refused when no set of bodies gives it.
    pub method: Method,
}

/// The estimate identification returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    /// Weighted least squares over bodies that exist: every link's mass positive and its
    /// pseudo-inertia positive semidefinite (log-Cholesky coordinates, Levenberg-Marquardt).
    #[default]
    Consistent,
    /// Weighted least squares over any parameter values, kept for comparison: refused when
    /// its values are not those of bodies that exist.
    LeastSquares,
}

impl Method {
    /// As the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Method::Consistent => "consistent",
            Method::LeastSquares => "least-squares",
        }
    }
}

impl Default for IdentifyOptions {
    fn default() -> Self {
        Self {
            friction: false,
            holdout: 0.2,
            cutoff: 10.0,
            max_samples: 10000,
            min_speed: 0.1,
            friction_harmonics: 0,
            friction_offset: false,
            method: Method::Consistent,
        }
    }
}

/// What identification found.
#[derive(Debug, Clone, PartialEq)]
pub struct Identification {
    /// The estimate these values are.
    pub method: Method,
    /// Whether the fit was by instrumental variables (IDIM-IV) rather than on the measured
    /// regressor itself.
    pub instrumental_variables: bool,
    /// The base parameters, as combinations of link parameters.
    pub base_names: Vec<String>,
    /// Their identified values.
    pub base_values: Vec<f64>,
    /// Their standard deviations (of the unconstrained least squares, linearised).
    pub base_std: Vec<f64>,
    /// The unconstrained least-squares values, for comparison.
    pub least_squares_values: Vec<f64>,
    /// Bodies that exist with the consistent estimate's base values: per link (base to tip)
    /// `[XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M]` about its MDH frame.
    pub consistent_links: Vec<[f64; PARAMS_PER_LINK]>,
    /// How far the two estimates are apart.
    pub consistency_gap: ConsistencyGap,
    /// Viscous friction per joint (empty without friction).
    pub viscous: Vec<f64>,
    /// Coulomb friction per joint (empty without friction).
    pub coulomb: Vec<f64>,
    /// Per joint, the Coulomb level's harmonics `[c_1, s_1, c_2, s_2, ..]` (empty without).
    pub friction_ripple: Vec<Vec<f64>>,
    /// Per joint, the Coulomb level's asymmetry (empty unless asked for).
    pub friction_offset: Vec<f64>,
    /// The joints whose offset was cut to its Coulomb level less the ripple, so that the
    /// friction pushes neither way (a model would refuse it otherwise).
    pub offset_limited: Vec<String>,
    /// The joints whose harmonics were left out (zero): the log does not sweep enough of
    /// their range to tell the harmonics from the mean Coulomb level.
    pub ripple_left_out: Vec<String>,
    /// The joints whose harmonics were scaled down to their Coulomb level (clamped at zero),
    /// so that the friction pushes nowhere (a model would refuse them otherwise).
    pub ripple_limited: Vec<String>,
    /// The friction coefficients that came out negative within the noise, written as zero.
    pub friction_at_zero: Vec<FrictionAtZero>,
    /// Standard deviations of viscous then Coulomb friction, then the harmonics, then the
    /// offsets.
    pub friction_std: Vec<f64>,
    /// Noise of each joint's effort equation (residual standard deviation), N m or N.
    pub joint_noise: Vec<f64>,
    /// Condition number of the weighted regressor with unit-norm columns.
    pub condition_number: f64,
    /// Samples in the fit.
    pub samples: usize,
    /// RMS effort prediction error per joint on the held-out part.
    pub holdout_rms: Vec<f64>,
    /// That error relative to the RMS of the held-out efforts, per joint.
    pub holdout_relative: Vec<f64>,
    /// The held-out error over all joints relative to the held-out efforts over all joints.
    pub holdout_overall: f64,
    /// The held-out samples as the check saw them, for plots.
    pub holdout_series: HeldOutSeries,
}

impl Identification {
    /// The model as controllers load it (`armctl identify --out`): the base values, with the
    /// consistent fit's bodies that give them (left out for least squares' values, which the
    /// URDF's inertials changed least then give), and the friction.
    pub fn model(&self) -> IdentifiedModel {
        let link_parameters = match self.method {
            Method::Consistent => self.consistent_links.concat(),
            Method::LeastSquares => vec![],
        };
        IdentifiedModel {
            base_names: self.base_names.clone(),
            base_values: self.base_values.clone(),
            link_parameters,
            viscous: self.viscous.clone(),
            coulomb: self.coulomb.clone(),
            friction_ripple: self.friction_ripple.clone(),
            friction_offset: self.friction_offset.clone(),
        }
    }
}

/// The held-out part of a log as the model's check saw it: the samples' times and, per joint,
/// the measured efforts and the identified model's prediction (both NaN where the check
/// leaves the sample out: Coulomb friction near standstill).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HeldOutSeries {
    /// Time of each held-out sample, s.
    pub time: Vec<f64>,
    /// Per joint, the measured effort at each sample (averaged as the fit sees it).
    pub measured: Vec<Vec<f64>>,
    /// Per joint, the identified model's effort at each sample.
    pub predicted: Vec<Vec<f64>>,
}

/// Stacked regressor rows (n per sample: base columns, then friction: viscous per joint,
/// Coulomb per joint, the harmonics joint by joint, the offsets) and efforts, from the signals `s`; with
/// friction, the rows where `measured` is near standstill are left out.
fn stack(
    robot: &Robot,
    base: &BaseParameters,
    (s, measured): (&Signals, &Signals),
    samples: &[usize],
    friction: &FrictionColumns,
) -> Result<(DMatrix<f64>, DVector<f64>), IdentError> {
    let n = robot.dof();
    let b = base.count();
    let width = b + friction.unknowns();
    let mut ws = DynamicsWorkspace::new(robot);
    let (mut y, mut y_b) = (DMatrix::zeros(n, PARAMS_PER_LINK * n), DMatrix::zeros(n, b));
    let mut w = DMatrix::zeros(samples.len() * n, width);
    let mut tau = DVector::zeros(samples.len() * n);
    for (row, &k) in samples.iter().enumerate() {
        regressor(
            robot, &mut ws, &s.q[k], &s.qd[k], &s.qd[k], &s.qdd[k], &mut y,
        )?;
        base.select(&y, &mut y_b)?;
        w.view_mut((row * n, 0), (n, b)).copy_from(&y_b);
        for j in 0..n {
            tau[row * n + j] = s.tau[k][j];
            // Near standstill Coulomb friction is neither +f_c nor -f_c: the row is left out.
            if friction.on && measured.qd[k][j].abs() < friction.min_speed {
                w.row_mut(row * n + j).fill(0.0);
                tau[row * n + j] = 0.0;
                continue;
            }
            if friction.on {
                friction.fill(&mut w, (row * n + j, b), j, s.q[k][j], s.qd[k][j]);
            }
        }
    }
    Ok((w, tau))
}

fn solve(w: &DMatrix<f64>, y: &DVector<f64>) -> Result<DVector<f64>, IdentError> {
    w.clone()
        .svd(true, true)
        .solve(y, 1e-12)
        .map_err(|e| IdentError::Identification {
            reason: e.to_string(),
        })
}

/// `diag(weight_j)` applied to each joint's rows.
fn weighted(w: &DMatrix<f64>, y: &DVector<f64>, weights: &[f64]) -> (DMatrix<f64>, DVector<f64>) {
    let n = weights.len();
    let (mut w, mut y) = (w.clone(), y.clone());
    for r in 0..y.len() {
        let k = weights[r % n];
        w.row_mut(r).scale_mut(k);
        y[r] *= k;
    }
    (w, y)
}

/// The base parameters' names, then (with friction) `viscous J` and `Coulomb J` per joint,
/// then `Coulomb cos K J`, `Coulomb sin K J` for each harmonic K, then `offset J`.
fn unknown_names(
    base: &BaseParameters,
    joints: &[String],
    friction: &FrictionColumns,
) -> Vec<String> {
    let mut names = base.names();
    if friction.on {
        names.extend(joints.iter().map(|j| format!("viscous {j}")));
        names.extend(joints.iter().map(|j| format!("Coulomb {j}")));
        for (j, &count) in joints.iter().zip(&friction.per_joint) {
            for k in 1..=count {
                names.push(format!("Coulomb cos {k} {j}"));
                names.push(format!("Coulomb sin {k} {j}"));
            }
        }
        if friction.offset {
            names.extend(joints.iter().map(|j| format!("offset {j}")));
        }
    }
    names
}

/// Identifies the base parameters of `robot`'s structure (and friction) from `log`.
pub fn identify(
    robot: &Robot,
    log: &JointLog,
    options: &IdentifyOptions,
) -> Result<Identification, IdentError> {
    identify_with(robot, log, None, options)
}

/// As [`identify`], by instrumental variables (IDIM-IV): `instruments` is the same run
/// simulated on a previous estimate (positions and velocities, timed from its start as the
/// log is from its own), whose regressor the measured one is projected onto.
pub fn identify_with_instruments(
    robot: &Robot,
    log: &JointLog,
    instruments: &JointLog,
    options: &IdentifyOptions,
) -> Result<Identification, IdentError> {
    identify_with(robot, log, Some(instruments), options)
}

fn identify_with(
    robot: &Robot,
    log: &JointLog,
    instruments: Option<&JointLog>,
    options: &IdentifyOptions,
) -> Result<Identification, IdentError> {
    let names: Vec<String> = robot.joint_names().map(str::to_string).collect();
    let log = log.for_joints(&names)?;
    log.check()
        .map_err(|reason| IdentError::Identification { reason })?;
    check_sampling(&log, options.cutoff)?;
    let base = numeric_base_parameters(robot)?;
    let s = signals(&log, options.cutoff);
    let instrument_signals = instruments
        .map(|i| on_log_times(i, &log).map(|i| signals(&i, options.cutoff)))
        .transpose()?;
    let split = ((1.0 - options.holdout.clamp(0.0, 0.95)) * log.len() as f64) as usize;
    // Differentiated signals are poor at the ends: a margin of 1% is left out.
    let margin = if log.acceleration.is_some() {
        0
    } else {
        log.len() / 100
    };
    let mut friction = FrictionColumns::of(options, names.len());
    if friction.harmonics > armctl_model::MAX_FRICTION_HARMONICS {
        return Err(IdentError::Identification {
            reason: format!(
                "at most {} friction harmonics, not {}",
                armctl_model::MAX_FRICTION_HARMONICS,
                friction.harmonics
            ),
        });
    }
    if (options.friction_harmonics > 0 || options.friction_offset) && !options.friction {
        return Err(IdentError::Identification {
            reason: "friction harmonics and offsets need friction identified too".into(),
        });
    }
    if options.holdout > 0.0 && split >= log.len() - margin {
        return Err(IdentError::Identification {
            reason: format!(
                "the held-out part of a log of {} samples is empty: the model cannot be validated; record a longer log or keep a larger part (--holdout)",
                log.len()
            ),
        });
    }
    let fit: Vec<usize> = spread(margin, split.saturating_sub(margin), options.max_samples);
    friction.keep_identifiable(&s, &fit);
    let unknowns = base.count() + friction.unknowns();
    if !(0.0..0.95).contains(&options.holdout) {
        return Err(IdentError::Identification {
            reason: format!(
                "the held-out fraction must be within [0, 0.95), not {}",
                options.holdout
            ),
        });
    }
    if fit.len() * names.len() < 2 * unknowns {
        return Err(IdentError::Identification {
            reason: format!(
                "{} samples cannot determine {unknowns} parameters",
                fit.len()
            ),
        });
    }
    let (w, tau) = stack(robot, &base, (&s, &s), &fit, &friction)?;
    let first = solve(&w, &tau)?;
    let scale = tau.amax().max(1e-9);
    let noise: Vec<f64> = joint_noise(&w, &(&tau - &w * &first), names.len(), unknowns)
        .iter()
        .map(|s| s.max(1e-9 * scale))
        .collect();
    // With instruments too, the weights are those of the first pass's residual: the noise of
    // each joint's equations, which the instruments do not change.
    let weights: Vec<f64> = noise.iter().map(|s| 1.0 / s).collect();
    let (ww, wy) = weighted(&w, &tau, &weights);
    // With instruments the fit runs on the measured regressor projected onto theirs; the
    // residuals (standard deviations, the consistent fit's cost) stay the measured one's.
    let mut measured = None;
    let ww = match &instrument_signals {
        Some(si) => {
            let (z, _) = stack(robot, &base, (si, &s), &fit, &friction)?;
            let projected = project(&weighted(&z, &tau, &weights).0, &ww)?;
            measured = Some(ww);
            projected
        }
        None => ww,
    };
    let condition = condition_number(&ww);
    if condition.is_nan() || condition >= MAX_CONDITION {
        if instrument_signals.is_some() {
            return Err(not_instrumented(condition));
        }
        return Err(poorly_excited(
            &ww,
            &unknown_names(&base, &names, &friction),
            condition,
        ));
    }
    let b = base.count();
    let n = names.len();
    let friction_columns = FrictionSigns {
        first: b,
        names: &names,
        noise: &noise,
        unweighted: &w,
    };
    // Least squares, with its friction signs checked (and refused beyond the noise).
    let mut final_w = None;
    let ((least_squares, std), mut friction_at_zero) =
        fit_without_negative_friction(&ww, options.friction.then_some(&friction_columns), |ww| {
            let least_squares = solve(ww, &wy)?;
            let residual_of = measured.as_ref().unwrap_or(ww);
            let std = standard_deviations(ww, residual_of, &wy, &least_squares)?;
            final_w = Some(ww.clone());
            Ok((least_squares, std))
        })?;
    let ww = final_w.ok_or_else(|| IdentError::Identification {
        reason: "the fit did not run".into(),
    })?;
    // The bodies closest to the data, on the same equations.
    let (consistent, consistent_at_zero) = consistent_without_negative_friction(
        &ww,
        options.friction.then_some(&friction_columns),
        &std,
        |w| fit_consistent(w, &wy, &base, robot, &least_squares),
    )?;
    check_bodies(robot, &consistent.links)?;
    let residual_of = measured.as_ref().unwrap_or(&ww);
    let gap = consistency_gap(
        &base.names(),
        (residual_of, &wy),
        &consistent,
        &least_squares,
        &std,
    );
    let not_bodies = options.method == Method::LeastSquares && !gap.least_squares_is_bodies;
    if not_bodies || !explained(&gap) {
        let culprits = blame(&ww, &wy, &base, robot, &least_squares, &consistent)?;
        let links = link_names(robot, &culprits);
        return Err(if not_bodies {
            not_a_body(&gap, &links)
        } else {
            not_explained(&gap, &links)
        });
    }
    let estimate = match options.method {
        Method::Consistent => {
            friction_at_zero.extend(consistent_at_zero);
            consistent.estimate.clone()
        }
        Method::LeastSquares => least_squares.clone(),
    };
    // What the model carries, checked below: the friction's shape cut to its Coulomb level.
    let mut estimate = estimate;
    let (ripple_limited, offset_limited) = friction.limit(&mut estimate, b);
    let poses = spread(margin, log.len() - margin, MASS_MATRIX_POSES);
    check_mass_matrix(
        robot,
        &base.names(),
        &estimate.as_slice()[..b],
        options.friction,
        poses.iter().map(|&k| (log.time[k], s.q[k].as_slice())),
    )?;
    let check = holdout(
        robot,
        &base,
        &s,
        split..log.len() - margin,
        &friction,
        &estimate,
        &log.time,
    )?;
    let found = Identification {
        method: options.method,
        instrumental_variables: instruments.is_some(),
        least_squares_values: least_squares.rows(0, b).iter().copied().collect(),
        consistent_links: consistent.links.clone(),
        consistency_gap: gap,
        base_names: base.names(),
        base_values: estimate.rows(0, b).iter().copied().collect(),
        base_std: std[..b].to_vec(),
        viscous: if options.friction {
            estimate.rows(b, n).iter().copied().collect()
        } else {
            vec![]
        },
        coulomb: if options.friction {
            estimate.rows(b + n, n).iter().copied().collect()
        } else {
            vec![]
        },
        friction_ripple: (0..n)
            .filter(|_| friction.harmonics > 0)
            .map(|j| {
                let mut ripple = vec![0.0; 2 * friction.harmonics];
                let found = estimate.rows(friction.first_harmonic(b, j), 2 * friction.per_joint[j]);
                ripple[..found.len()].copy_from_slice(found.as_slice());
                ripple
            })
            .collect(),
        friction_offset: (0..n)
            .filter(|_| friction.offset)
            .map(|j| estimate[friction.offset_column(b, j)])
            .collect(),
        offset_limited: offset_limited.iter().map(|&j| names[j].clone()).collect(),
        ripple_limited: ripple_limited.iter().map(|&j| names[j].clone()).collect(),
        friction_at_zero,
        ripple_left_out: (0..n)
            .filter(|&j| friction.harmonics > 0 && friction.per_joint[j] == 0)
            .map(|j| names[j].clone())
            .collect(),
        friction_std: std[b..].to_vec(),
        joint_noise: noise,
        condition_number: condition,
        samples: fit.len(),
        holdout_rms: check.rms,
        holdout_relative: check.relative,
        holdout_overall: check.overall,
        holdout_series: check.series,
    };
    Ok(found)
}

/// A sampling time that looks like seconds, and (when anything is differentiated) a cutoff the
/// sampling can carry.
fn check_sampling(log: &JointLog, cutoff: f64) -> Result<(), IdentError> {
    let dt = mean_step(log);
    let fail = |reason: String| Err(IdentError::Identification { reason });
    if dt > 0.5 {
        return fail(format!(
            "samples are {dt:.3} s apart on average: is the time column in seconds?"
        ));
    }
    let differentiated = log.velocity.is_none() || log.acceleration.is_none();
    if differentiated && !(cutoff > 0.0 && cutoff * dt < 0.5) {
        return fail(format!(
            "the low-pass cutoff must be positive and below half the sampling rate ({:.1} Hz), not {cutoff} Hz",
            0.5 / dt
        ));
    }
    Ok(())
}

/// Up to `count` evenly spread indices in `[from, to)`.
fn spread(from: usize, to: usize, count: usize) -> Vec<usize> {
    let span = to.saturating_sub(from);
    let step = span.div_ceil(count.max(1)).max(1);
    (from..to).step_by(step).collect()
}
