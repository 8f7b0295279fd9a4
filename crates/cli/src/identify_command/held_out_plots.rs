//! The plots `armctl identify` writes beside its parameter file, on the held-out part of the
//! log (the samples the fit did not see): each joint's measured effort against the one the
//! identified model predicts (`<file>_efforts`), and their difference (`<file>_residuals`).

use std::path::{Path, PathBuf};

use anyhow::Result;
use armctl_dynamics::{friction_torques, rnea, CoulombSign, DynamicsWorkspace};
use armctl_ident::{differentiate, low_pass, IdentifyOptions, JointLog};
use armctl_model::Robot;

use crate::plots::{panel_chart, Panel, Series};

/// The held-out samples' times, and per joint (columns) the measured and predicted efforts.
struct HeldOut {
    time: Vec<f64>,
    measured: Vec<Vec<f64>>,
    predicted: Vec<Vec<f64>>,
}

/// Per-sample rows as per-joint columns (and back).
fn transposed(rows: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let width = rows.first().map_or(0, Vec::len);
    (0..width)
        .map(|j| rows.iter().map(|r| r[j]).collect())
        .collect()
}

/// Positions, velocities, accelerations (rows) and efforts (columns) as the fit saw them
/// (`armctl_ident::identify`): what the log lacks differentiated from the low-passed
/// positions, and then the efforts averaged over each sample and the one before, as a
/// central difference sees a zero-order-held effort.
fn fitted_signals(log: &JointLog, cutoff: f64) -> [Vec<Vec<f64>>; 4] {
    if let (Some(qd), Some(qdd)) = (&log.velocity, &log.acceleration) {
        let effort = transposed(&log.effort);
        return [log.position.clone(), qd.clone(), qdd.clone(), effort];
    }
    let dt = (log.time[log.len() - 1] - log.time[0]) / (log.len() - 1) as f64;
    let smooth = |rows: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let columns = transposed(rows);
        columns.iter().map(|c| low_pass(c, dt, cutoff)).collect()
    };
    let derivative = |columns: &[Vec<f64>]| -> Vec<Vec<f64>> {
        columns
            .iter()
            .map(|c| differentiate(c, &log.time))
            .collect()
    };
    let q = smooth(&log.position);
    let qd = log
        .velocity
        .as_deref()
        .map_or_else(|| derivative(&q), smooth);
    let qdd = log
        .acceleration
        .as_deref()
        .map_or_else(|| derivative(&qd), transposed);
    let held = |c: &Vec<f64>| {
        (0..c.len())
            .map(|k| 0.5 * (c[k.saturating_sub(1)] + c[k]))
            .collect()
    };
    let effort = transposed(&log.effort).iter().map(held).collect();
    [transposed(&q), transposed(&qd), transposed(&qdd), effort]
}

/// The samples `identify` held out: from the end of the fitted part to the end of the log,
/// less the 1 % margin where differentiated signals are poor.
fn held_out_range(log: &JointLog, holdout: f64) -> std::ops::Range<usize> {
    let split = ((1.0 - holdout.clamp(0.0, 0.95)) * log.len() as f64) as usize;
    let margin = if log.acceleration.is_some() {
        0
    } else {
        log.len() / 100
    };
    split..log.len().saturating_sub(margin).max(split)
}

/// The model's efforts: rigid-body dynamics, plus friction where it was identified (the fit
/// had none otherwise). With friction, a joint slower than `options.min_speed` gets none
/// (NaN, a gap): Coulomb friction is undefined there, and the fit and its check leave such
/// samples out.
fn predict(
    model: &Robot,
    options: &IdentifyOptions,
    [q, qd, qdd]: [&[f64]; 3],
    ws: &mut DynamicsWorkspace,
) -> Result<Vec<f64>> {
    let mut tau = vec![0.0; model.dof()];
    rnea(model, ws, q, qd, qdd, &mut tau)?;
    if options.friction {
        let mut friction = vec![0.0; model.dof()];
        friction_torques(model, q, qd, CoulombSign::Exact, &mut friction)?;
        for ((t, f), v) in tau.iter_mut().zip(&friction).zip(qd) {
            *t = if v.abs() < options.min_speed {
                f64::NAN
            } else {
                *t + f
            };
        }
    }
    Ok(tau)
}

fn held_out(model: &Robot, log: &JointLog, options: &IdentifyOptions) -> Result<HeldOut> {
    let names: Vec<String> = model.joint_names().map(str::to_string).collect();
    let log = log.for_joints(&names)?;
    let range = held_out_range(&log, options.holdout);
    let [q, qd, qdd, effort] = fitted_signals(&log, options.cutoff);
    let mut ws = DynamicsWorkspace::new(model);
    let mut predicted = Vec::with_capacity(range.len());
    for k in range.clone() {
        let motion = [q[k].as_slice(), &qd[k], &qdd[k]];
        predicted.push(predict(model, options, motion, &mut ws)?);
    }
    Ok(HeldOut {
        time: log.time[range.clone()].to_vec(),
        measured: effort.iter().map(|c| c[range.clone()].to_vec()).collect(),
        predicted: transposed(&predicted),
    })
}

/// `<directory>/<file stem>_<suffix>` of the parameter file.
fn beside(parameter_file: &Path, suffix: &str) -> PathBuf {
    let stem = parameter_file
        .file_stem()
        .map_or_else(|| "identified".into(), |s| s.to_string_lossy());
    parameter_file.with_file_name(format!("{stem}_{suffix}"))
}

fn joint_panels<'a>(names: &[String], series: impl Fn(usize) -> Vec<Series<'a>>) -> Vec<Panel<'a>> {
    names
        .iter()
        .enumerate()
        .map(|(j, name)| Panel {
            title: name.clone(),
            y_label: "effort [N m, N]".into(),
            series: series(j),
        })
        .collect()
}

fn comparison_panels<'a>(names: &[String], data: &'a HeldOut) -> Vec<Panel<'a>> {
    joint_panels(names, |j| {
        vec![
            Series {
                label: "measured".into(),
                values: &data.measured[j],
                color: 0,
                dashed: false,
            },
            Series {
                label: "predicted".into(),
                values: &data.predicted[j],
                color: 1,
                dashed: true,
            },
        ]
    })
}

fn residual_panels<'a>(names: &[String], residuals: &'a [Vec<f64>]) -> Vec<Panel<'a>> {
    joint_panels(names, |j| {
        vec![Series {
            label: "measured - predicted".into(),
            values: &residuals[j],
            color: 3,
            dashed: false,
        }]
    })
}

/// Writes `<file>_efforts` and `<file>_residuals` (.png, .svg) beside `parameter_file`;
/// nothing without held-out samples.
pub(crate) fn write_held_out_plots(
    parameter_file: &Path,
    model: &Robot,
    log: &JointLog,
    options: &IdentifyOptions,
) -> Result<Vec<PathBuf>> {
    let data = held_out(model, log, options)?;
    if data.time.len() < 2 {
        return Ok(vec![]);
    }
    let names: Vec<String> = model.joint_names().map(str::to_string).collect();
    let residuals: Vec<Vec<f64>> = data
        .measured
        .iter()
        .zip(&data.predicted)
        .map(|(m, p)| m.iter().zip(p).map(|(m, p)| m - p).collect())
        .collect();
    let part = format!("last {:.0} % of the log", 100.0 * options.holdout);
    let gaps = if options.friction {
        format!(" (gaps: joint below {} rad/s)", options.min_speed)
    } else {
        String::new()
    };
    let mut files = panel_chart(
        &beside(parameter_file, "efforts"),
        &format!("Held-out efforts ({part}): measured vs identified model{gaps}"),
        &data.time,
        &comparison_panels(&names, &data),
    )?
    .to_vec();
    files.extend(panel_chart(
        &beside(parameter_file, "residuals"),
        &format!("Held-out residual ({part}): measured - predicted{gaps}"),
        &data.time,
        &residual_panels(&names, &residuals),
    )?);
    Ok(files)
}
