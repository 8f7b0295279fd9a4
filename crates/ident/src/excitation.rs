//! Exciting trajectories: a finite Fourier series per joint (see
//! `armctl_control::reference::Fourier`) about the middle of each joint's range, starting and
//! ending each period at rest, scaled to stay within position, velocity and acceleration
//! limits, with coefficients chosen to make the stacked base regressor well conditioned
//! (random candidates, then random local search on the condition number of the regressor with
//! unit-norm columns, sampled over one period).

use armctl_control::reference::{Fourier, Trajectory};
use armctl_control::JointReference;
use armctl_dynamics::{numeric_base_parameters, regressor, BaseParameters, DynamicsWorkspace};
use armctl_model::{Robot, PARAMS_PER_LINK};
use nalgebra::DMatrix;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use crate::IdentError;

/// Limits of an excitation, as fractions of the URDF's and absolute accelerations.
#[derive(Debug, Clone, PartialEq)]
pub struct ExcitationLimits {
    /// Fraction of each joint's position range used (about its middle).
    pub range: f64,
    /// Fraction of each joint's velocity limit.
    pub velocity: f64,
    /// Largest acceleration, rad/s^2 (m/s^2).
    pub acceleration: f64,
}

impl Default for ExcitationLimits {
    fn default() -> Self {
        Self {
            range: 0.8,
            velocity: 0.8,
            acceleration: 6.0,
        }
    }
}

/// An excitation trajectory and how well it conditions the regressor.
#[derive(Debug, Clone)]
pub struct Excitation {
    /// The trajectory (one period is `1 / base_frequency`).
    pub trajectory: Fourier,
    /// Condition number of the base regressor (unit-norm columns) over one period.
    pub condition_number: f64,
}

/// Coefficient sets, sample times and limits of one search.
struct Search<'a> {
    robot: &'a Robot,
    base: BaseParameters,
    frequency: f64,
    harmonics: usize,
    limits: ExcitationLimits,
    times: Vec<f64>,
}

impl Search<'_> {
    fn trajectory(&self, a: &[Vec<f64>], b: &[Vec<f64>]) -> Option<Fourier> {
        Fourier::new(
            self.frequency,
            self.robot.middle_configuration(),
            a.to_vec(),
            b.to_vec(),
        )
        .ok()
    }

    /// Rest at t = 0 (and every period): the last harmonic cancels the others' velocity and
    /// acceleration; the offset puts q(0) at the middle of the range.
    fn at_rest(&self, a: &mut [Vec<f64>], b: &mut [Vec<f64>]) {
        let last = self.harmonics - 1;
        for (ai, bi) in a.iter_mut().zip(b.iter_mut()) {
            ai[last] = -ai[..last].iter().sum::<f64>();
            let weighted: f64 = bi[..last]
                .iter()
                .enumerate()
                .map(|(l, v)| v * (l + 1) as f64)
                .sum();
            bi[last] = -weighted / self.harmonics as f64;
        }
    }

    /// The largest ratio of motion to limit over one period (position about the start).
    fn limit_ratio(&self, trajectory: &Fourier) -> f64 {
        let n = self.robot.dof();
        let mut r = JointReference::hold(&vec![0.0; n]);
        let mut start = JointReference::hold(&vec![0.0; n]);
        trajectory.sample(0.0, &mut start);
        let mut worst: f64 = 0.0;
        for &t in &self.times {
            trajectory.sample(t, &mut r);
            for (i, joint) in self.robot.joints().iter().enumerate() {
                let l = &joint.limits;
                let half = if l.is_bounded() {
                    0.5 * (l.upper - l.lower) * self.limits.range
                } else {
                    std::f64::consts::PI
                };
                let velocity = if l.velocity > 0.0 {
                    l.velocity * self.limits.velocity
                } else {
                    2.0
                };
                worst = worst
                    .max((r.q[i] - start.q[i]).abs() / half)
                    .max(r.qd[i].abs() / velocity)
                    .max(r.qdd[i].abs() / self.limits.acceleration);
            }
        }
        worst
    }

    /// Scales the coefficients to the limits (everything is linear in them but the offset),
    /// and returns the trajectory with q(0) at the middle of the ranges.
    fn feasible(&self, a: &mut [Vec<f64>], b: &mut [Vec<f64>]) -> Option<Fourier> {
        self.at_rest(a, b);
        let ratio = self.limit_ratio(&self.trajectory(a, b)?);
        if !(ratio > 0.0 && ratio.is_finite()) {
            return None;
        }
        for v in a.iter_mut().chain(b.iter_mut()).flatten() {
            *v /= ratio;
        }
        // Shift so that q(0) is the middle of each range.
        let mut q0 = JointReference::hold(&vec![0.0; self.robot.dof()]);
        let unshifted = self.trajectory(a, b)?;
        unshifted.sample(0.0, &mut q0);
        let offset: Vec<f64> = self
            .robot
            .middle_configuration()
            .iter()
            .zip(&q0.q)
            .zip(unshifted.offset())
            .map(|((m, q), o)| o + m - q)
            .collect();
        Fourier::new(self.frequency, offset, a.to_vec(), b.to_vec()).ok()
    }

    fn condition(&self, trajectory: &Fourier) -> Result<f64, IdentError> {
        condition_with(self.robot, &self.base, trajectory, &self.times)
    }
}

/// Condition number of the base regressor (unit-norm columns) of `robot` stacked over `trajectory`
/// sampled at `times`.
pub fn regressor_condition(
    robot: &Robot,
    trajectory: &Fourier,
    times: &[f64],
) -> Result<f64, IdentError> {
    let base = numeric_base_parameters(robot)?;
    condition_with(robot, &base, trajectory, times)
}

fn condition_with(
    robot: &Robot,
    base: &BaseParameters,
    trajectory: &Fourier,
    times: &[f64],
) -> Result<f64, IdentError> {
    let n = robot.dof();
    let mut ws = DynamicsWorkspace::new(robot);
    let mut r = JointReference::hold(&vec![0.0; n]);
    let (mut y, mut y_b) = (
        DMatrix::zeros(n, PARAMS_PER_LINK * n),
        DMatrix::zeros(n, base.count()),
    );
    let mut w = DMatrix::zeros(times.len() * n, base.count());
    for (k, &t) in times.iter().enumerate() {
        trajectory.sample(t, &mut r);
        regressor(robot, &mut ws, &r.q, &r.qd, &r.qd, &r.qdd, &mut y)?;
        base.select(&y, &mut y_b)?;
        w.view_mut((k * n, 0), (n, base.count())).copy_from(&y_b);
    }
    for mut c in w.column_iter_mut() {
        let norm = c.norm();
        if norm > 0.0 {
            c /= norm;
        }
    }
    let s = w.svd(false, false).singular_values;
    Ok(s.max() / s.min())
}

type Coefficients = (Vec<Vec<f64>>, Vec<Vec<f64>>);

/// An exciting trajectory for `robot`: `harmonics` harmonics of `base_frequency` Hz, within
/// `limits`; `seed` makes the search repeatable.
pub fn excitation(
    robot: &Robot,
    base_frequency: f64,
    harmonics: usize,
    limits: ExcitationLimits,
    seed: u64,
) -> Result<Excitation, IdentError> {
    if harmonics < 2 || base_frequency.is_nan() || base_frequency <= 0.0 {
        return Err(IdentError::Identification {
            reason: "an excitation needs at least 2 harmonics and a positive base frequency".into(),
        });
    }
    let period = 1.0 / base_frequency;
    let search = Search {
        robot,
        base: numeric_base_parameters(robot)?,
        frequency: base_frequency,
        harmonics,
        limits,
        times: sample_times(period),
    };
    let n = robot.dof();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut random = |scale: f64| -> Coefficients {
        let mut draw = || {
            (0..n)
                .map(|_| {
                    (0..harmonics)
                        .map(|_| rng.random_range(-scale..=scale))
                        .collect()
                })
                .collect()
        };
        (draw(), draw())
    };
    let mut best: Option<(f64, Coefficients, Fourier)> = None;
    let consider = |(mut a, mut b): Coefficients,
                    best: &mut Option<(f64, Coefficients, Fourier)>|
     -> Result<(), IdentError> {
        if let Some(trajectory) = search.feasible(&mut a, &mut b) {
            let c = search.condition(&trajectory)?;
            if c.is_finite() && best.as_ref().is_none_or(|(bc, _, _)| c < *bc) {
                *best = Some((c, (a, b), trajectory));
            }
        }
        Ok(())
    };
    for _ in 0..40 {
        consider(random(1.0), &mut best)?;
    }
    for step in 0..160 {
        let Some((_, (a, b), _)) = best.clone() else {
            break;
        };
        let size = 0.3 * (1.0 - step as f64 / 200.0);
        let (da, db) = random(size);
        let nudge = |x: &[Vec<f64>], d: &[Vec<f64>]| -> Vec<Vec<f64>> {
            x.iter()
                .zip(d)
                .map(|(xi, di)| {
                    xi.iter()
                        .zip(di)
                        .map(|(v, e)| v * (1.0 + e) + 0.1 * e)
                        .collect()
                })
                .collect()
        };
        consider((nudge(&a, &da), nudge(&b, &db)), &mut best)?;
    }
    let (condition_number, _, trajectory) = best.ok_or_else(|| IdentError::Identification {
        reason: "no feasible excitation found".into(),
    })?;
    Ok(Excitation {
        trajectory,
        condition_number,
    })
}

/// The times one period (or a shorter run) is sampled at to judge its conditioning.
fn sample_times(span: f64) -> Vec<f64> {
    (0..SAMPLES_PER_SPAN)
        .map(|k| span * k as f64 / SAMPLES_PER_SPAN as f64)
        .collect()
}

/// Samples per period the condition number is computed from.
const SAMPLES_PER_SPAN: usize = 120;

impl Excitation {
    /// The excitation run for `duration` s only: when that is less than one period, the
    /// condition number is the one over what runs (a part of a period excites less).
    pub fn cut_to(&self, robot: &Robot, duration: f64) -> Result<Excitation, IdentError> {
        let period = 1.0 / self.trajectory.base_frequency();
        if duration >= period {
            return Ok(self.clone());
        }
        let times = sample_times(duration);
        Ok(Excitation {
            trajectory: self.trajectory.clone(),
            condition_number: regressor_condition(robot, &self.trajectory, &times)?,
        })
    }
}

/// The file `armctl excite` writes and `--trajectory FILE` reads.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FourierFile {
    joint_names: Vec<String>,
    base_frequency: f64,
    duration: f64,
    condition_number: f64,
    offset: Vec<f64>,
    a: Vec<Vec<f64>>,
    b: Vec<Vec<f64>>,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FourierDocument {
    fourier: FourierFile,
}

impl Excitation {
    /// As YAML: `fourier: {joint_names, base_frequency, duration, condition_number, offset, a, b}`.
    pub fn to_yaml(&self, robot: &Robot, duration: f64) -> Result<String, IdentError> {
        let t = &self.trajectory;
        let document = FourierDocument {
            fourier: FourierFile {
                joint_names: robot.joint_names().map(str::to_string).collect(),
                base_frequency: t.base_frequency(),
                duration,
                condition_number: self.condition_number,
                offset: t.offset().to_vec(),
                a: t.a().to_vec(),
                b: t.b().to_vec(),
            },
        };
        let body = serde_yaml::to_string(&document).map_err(|e| IdentError::Identification {
            reason: e.to_string(),
        })?;
        Ok(format!(
            "# Exciting trajectory for {} (armctl excite): a Fourier series per joint, period {:.1} s,\n# run for {duration} s; condition number of the base regressor {:.1}.\n{body}",
            robot.name(),
            1.0 / t.base_frequency(),
            self.condition_number
        ))
    }
}

/// Whether YAML text is an excitation file (a top-level `fourier` key).
pub fn is_fourier_file(text: &str) -> bool {
    serde_yaml::from_str::<serde_yaml::Value>(text).is_ok_and(|v| v.get("fourier").is_some())
}

/// The trajectory of an excitation file for a robot with joints `names` (matched by name);
/// also its recommended duration.
pub fn fourier_from_yaml(text: &str, names: &[String]) -> Result<(Fourier, f64), IdentError> {
    let bad = |reason: String| IdentError::Identification { reason };
    let file = serde_yaml::from_str::<FourierDocument>(text)
        .map_err(|e| bad(armctl_model::files::short_message(&e.to_string())))?
        .fourier;
    let order = names
        .iter()
        .map(|n| {
            file.joint_names
                .iter()
                .position(|j| j == n)
                .ok_or_else(|| bad(format!("joint '{n}' is not in the excitation")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let pick = |v: &[Vec<f64>]| {
        order
            .iter()
            .map(|&i| v.get(i).cloned().unwrap_or_default())
            .collect()
    };
    let offset = order
        .iter()
        .map(|&i| file.offset.get(i).copied().unwrap_or(f64::NAN))
        .collect();
    let trajectory = Fourier::new(file.base_frequency, offset, pick(&file.a), pick(&file.b))
        .map_err(|e| bad(e.to_string()))?;
    Ok((trajectory, file.duration))
}
