//! The fit's check on the part of the log it did not see: the RMS effort prediction error per
//! joint, relative to the efforts, and the measured and predicted series.

use armctl_dynamics::BaseParameters;
use armctl_model::Robot;
use nalgebra::DVector;

use super::{stack, FrictionColumns, HeldOutSeries, Signals};
use crate::IdentError;

/// The per-joint effort accuracy on the held-out part, and its series.
pub(super) struct HeldOutCheck {
    pub(super) rms: Vec<f64>,
    pub(super) relative: Vec<f64>,
    pub(super) overall: f64,
    pub(super) series: HeldOutSeries,
}

/// A joint is checked on at least this share of the held-out samples.
const MIN_CHECKED_SHARE: f64 = 0.05;

/// The refusal of a held-out part that checks joint `j` on `checked` of its `samples`.
fn unusable(
    robot: &Robot,
    j: usize,
    (checked, samples): (usize, usize),
    from: f64,
    to: f64,
) -> IdentError {
    IdentError::Identification {
        reason: format!(
            "the held-out part of the log (t = {from:.3} to {to:.3} s) checks joint '{}' on {checked} of its {samples} samples, fewer than 5 % (with friction, only samples where the joint moves faster than the friction threshold check it): the model cannot be validated there, and its error would be a guess (0 % on no sample). Record the arm moving until the end of the log (an excitation that stopped early leaves it at rest), or keep a larger part (--holdout); nothing written",
            robot.joints()[j].name
        ),
    }
}

/// RMS effort prediction error on the samples `held_out`, per joint, and relative to the
/// efforts; the measured and predicted efforts of those samples. None held out (`--holdout
/// 0`) is no check, said as such; a held-out part that checks no sample of a joint is refused.
pub(super) fn holdout(
    robot: &Robot,
    base: &BaseParameters,
    s: &Signals,
    held_out: std::ops::Range<usize>,
    friction: &FrictionColumns,
    estimate: &DVector<f64>,
    time: &[f64],
) -> Result<HeldOutCheck, IdentError> {
    let n = robot.dof();
    let samples: Vec<usize> = held_out.collect();
    if samples.is_empty() {
        return Ok(HeldOutCheck {
            rms: vec![],
            relative: vec![],
            overall: 0.0,
            series: HeldOutSeries::default(),
        });
    }
    // The rows the fit leaves out (Coulomb friction near standstill) are left out here too.
    let (w, tau) = stack(robot, base, (s, s), &samples, friction)?;
    let predicted = &w * estimate;
    let error = &tau - &predicted;
    let used = |r: usize| w.row(r).amax() > 0.0;
    let rows = |j: usize| -> Vec<usize> {
        (0..samples.len())
            .map(|k| k * n + j)
            .filter(|&r| used(r))
            .collect()
    };
    // A few samples (the ends of a low-passed stop) check nothing.
    let enough = (MIN_CHECKED_SHARE * samples.len() as f64).ceil().max(1.0) as usize;
    if let Some(j) = (0..n).find(|&j| rows(j).len() < enough) {
        return Err(unusable(
            robot,
            j,
            (rows(j).len(), samples.len()),
            time[samples[0]],
            time[samples[samples.len() - 1]],
        ));
    }
    let rms = |v: &DVector<f64>, j: usize| {
        let rows = rows(j);
        (rows.iter().map(|&r| v[r].powi(2)).sum::<f64>() / rows.len() as f64).sqrt()
    };
    let absolute: Vec<f64> = (0..n).map(|j| rms(&error, j)).collect();
    let relative = (0..n)
        .map(|j| absolute[j] / rms(&tau, j).max(1e-12))
        .collect();
    let overall = (error.norm_squared() / tau.norm_squared().max(1e-300)).sqrt();
    let column = |v: &DVector<f64>, j: usize| -> Vec<f64> {
        (0..samples.len())
            .map(|k| {
                if used(k * n + j) {
                    v[k * n + j]
                } else {
                    f64::NAN
                }
            })
            .collect()
    };
    let series = HeldOutSeries {
        time: samples.iter().map(|&k| time[k]).collect(),
        measured: (0..n).map(|j| column(&tau, j)).collect(),
        predicted: (0..n).map(|j| column(&predicted, j)).collect(),
    };
    Ok(HeldOutCheck {
        rms: absolute,
        relative,
        overall,
        series,
    })
}
