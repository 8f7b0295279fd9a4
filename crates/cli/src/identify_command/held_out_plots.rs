//! The plots `armctl identify` writes beside its parameter file, on the held-out part of the
//! log (the samples the fit did not see), as the identification's check saw them: each
//! joint's measured effort against the one the identified model predicts (`<file>_efforts`),
//! and their difference (`<file>_residuals`).

use std::path::{Path, PathBuf};

use anyhow::Result;
use armctl_ident::{HeldOutSeries, IdentifyOptions};

use crate::plots::{panel_chart, Panel, Series};

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

fn comparison_panels<'a>(names: &[String], data: &'a HeldOutSeries) -> Vec<Panel<'a>> {
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

/// Writes `<file>_efforts` and `<file>_residuals` (.png, .svg) beside `parameter_file`, from
/// the held-out samples the identification checked its model on; nothing without them.
pub(crate) fn write_held_out_plots(
    parameter_file: &Path,
    names: &[String],
    data: &HeldOutSeries,
    options: &IdentifyOptions,
) -> Result<Vec<PathBuf>> {
    let part = format!("last {:.0} % of the log", 100.0 * options.holdout);
    let min_speed = options.friction.then_some(options.min_speed);
    write_prediction_plots(parameter_file, names, data, &part, min_speed)
}

/// Writes `<file>_efforts` and `<file>_residuals` (.png, .svg) beside `file`: measured against
/// predicted efforts on `part` (how the titles name the samples), with gaps where a joint is
/// slower than `min_speed`; nothing without samples.
pub(crate) fn write_prediction_plots(
    file: &Path,
    names: &[String],
    data: &HeldOutSeries,
    part: &str,
    min_speed: Option<f64>,
) -> Result<Vec<PathBuf>> {
    if data.time.len() < 2 {
        return Ok(vec![]);
    }
    let residuals: Vec<Vec<f64>> = data
        .measured
        .iter()
        .zip(&data.predicted)
        .map(|(m, p)| m.iter().zip(p).map(|(m, p)| m - p).collect())
        .collect();
    let gaps = match min_speed {
        Some(speed) => format!(" (gaps: joint below {speed} rad/s)"),
        None => String::new(),
    };
    let mut files = panel_chart(
        &beside(file, "efforts"),
        &format!("Held-out efforts ({part}): measured vs identified model{gaps}"),
        &data.time,
        &comparison_panels(names, data),
    )?
    .to_vec();
    files.extend(panel_chart(
        &beside(file, "residuals"),
        &format!("Held-out residual ({part}): measured - predicted{gaps}"),
        &data.time,
        &residual_panels(names, &residuals),
    )?);
    Ok(files)
}
