//! What a simulated run leaves on disk: `run.csv` (every logged quantity, numbers that read
//! back exactly) and the plots, for `armctl sim` and `armctl demo`; for a task-space run,
//! the tip pose plot too.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use armctl_model::Robot;
use armctl_sim::RunLog;

use crate::plots::{line_chart, Series};

mod tip_pose;
pub(crate) use tip_pose::{target_error, write_tip_pose_plot, TargetError, TipTarget};

/// The shortest text that reads back as exactly `v` (`1.38e-17`, not 35 digits of zeros);
/// `NaN`, `inf` and `-inf` for the rest.
fn csv_number(buffer: &mut ryu::Buffer, v: f64) -> &str {
    if v.is_finite() {
        buffer.format_finite(v)
    } else if v.is_nan() {
        "NaN"
    } else if v > 0.0 {
        "inf"
    } else {
        "-inf"
    }
}

pub(crate) fn write_csv(path: &Path, robot: &Robot, log: &RunLog) -> Result<PathBuf> {
    let names: Vec<&str> = robot.joint_names().collect();
    let mut text = String::from("t");
    for prefix in ["q", "qd", "q_ref", "error", "effort"] {
        for name in &names {
            let _ = write!(text, ",{prefix}_{name}");
        }
    }
    for k in 0..log.estimates.len() {
        let _ = write!(text, ",estimate_{k}");
    }
    for name in &log.contact_names {
        for axis in ["x", "y", "z"] {
            let _ = write!(text, ",contact_{name}_f{axis}");
        }
    }
    // The estimate of the external torques, then the simulator's truth.
    for (prefix, columns) in [
        ("external_torque", &log.external_estimate),
        ("world_torque", &log.external_true),
    ] {
        for name in names.iter().take(columns.len()) {
            let _ = write!(text, ",{prefix}_{name}");
        }
    }
    text.push('\n');
    let mut number = ryu::Buffer::new();
    // Every cell but the first of a row starts with a comma.
    let mut cell = |text: &mut String, v: f64| {
        if !text.ends_with('\n') {
            text.push(',');
        }
        text.push_str(csv_number(&mut number, v));
    };
    for (row, t) in log.time.iter().enumerate() {
        cell(&mut text, *t);
        let n = names.len();
        let error = |i: usize| log.reference[i][row] - log.q[i][row];
        let blocks: [&dyn Fn(usize) -> f64; 5] = [
            &|i| log.q[i][row],
            &|i| log.qd.get(i).map_or(f64::NAN, |c| c[row]),
            &|i| log.reference[i][row],
            &error,
            &|i| log.effort[i][row],
        ];
        for block in blocks {
            for i in 0..n {
                cell(&mut text, block(i));
            }
        }
        let columns = log.estimates.iter().chain(&log.contact);
        let external = log.external_estimate.iter().chain(&log.external_true);
        for column in columns.chain(external) {
            cell(&mut text, column[row]);
        }
        text.push('\n');
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    Ok(path.to_path_buf())
}

pub(crate) fn write_plots(dir: &Path, robot: &Robot, log: &RunLog) -> Result<Vec<PathBuf>> {
    let names: Vec<&str> = robot.joint_names().collect();
    let errors: Vec<Vec<f64>> = (0..names.len())
        .map(|i| {
            log.reference[i]
                .iter()
                .zip(&log.q[i])
                .map(|(r, q)| r - q)
                .collect()
        })
        .collect();
    fn curves<'a>(
        names: &[&str],
        data: &'a [Vec<f64>],
        suffix: &str,
        dashed: bool,
    ) -> Vec<Series<'a>> {
        data.iter()
            .enumerate()
            .map(|(i, v)| Series {
                label: format!("{}{suffix}", names.get(i).copied().unwrap_or("")),
                values: v,
                color: i,
                dashed,
            })
            .collect()
    }
    let mut positions = curves(&names, &log.q, "", false);
    positions.extend(curves(&names, &log.reference, " ref", true));
    let mut files = Vec::new();
    files.extend(line_chart(
        &dir.join("positions"),
        "Joint positions (solid) and references (dashed)",
        "position [rad, m]",
        &log.time,
        &positions,
    )?);
    files.extend(line_chart(
        &dir.join("errors"),
        "Tracking error q_ref - q",
        "error [rad, m]",
        &log.time,
        &curves(&names, &errors, "", false),
    )?);
    files.extend(line_chart(
        &dir.join("efforts"),
        "Efforts applied (after saturation)",
        "effort [N m, N]",
        &log.time,
        &curves(&names, &log.effort, "", false),
    )?);
    if !log.contact_names.is_empty() {
        let magnitudes: Vec<Vec<f64>> = log
            .contact
            .chunks(3)
            .map(|xyz| {
                (0..log.time.len())
                    .map(|row| xyz.iter().map(|c| c[row] * c[row]).sum::<f64>().sqrt())
                    .collect()
            })
            .collect();
        let names: Vec<&str> = log.contact_names.iter().map(String::as_str).collect();
        files.extend(line_chart(
            &dir.join("contact"),
            "Contact force on the arm, magnitude per contact point",
            "force [N]",
            &log.time,
            &curves(&names, &magnitudes, "", false),
        )?);
    }
    if !log.external_estimate.is_empty() {
        let mut torques = curves(&names, &log.external_estimate, " estimate", false);
        torques.extend(curves(&names, &log.external_true, " true", true));
        files.extend(line_chart(
            &dir.join("external_torques"),
            "External joint torques: estimated from the motion (solid), applied by the world (dashed)",
            "torque [N m, N]",
            &log.time,
            &torques,
        )?);
    }
    if !log.estimates.is_empty() {
        // Ten parameters per link: plot the link masses (the last of each ten), else all.
        let per_link = log.estimates.len() == 10 * names.len();
        let estimates: Vec<Series<'_>> = log
            .estimates
            .iter()
            .enumerate()
            .filter(|(k, _)| !per_link || k % 10 == 9)
            .map(|(k, v)| Series {
                label: if per_link {
                    format!("mass of {}", names[k / 10])
                } else {
                    format!("p{k}")
                },
                values: v,
                color: if per_link { k / 10 } else { k },
                dashed: false,
            })
            .collect();
        let title = if per_link {
            "Estimated link masses"
        } else {
            "Parameter estimates"
        };
        files.extend(line_chart(
            &dir.join("estimates"),
            title,
            if per_link { "mass [kg]" } else { "value" },
            &log.time,
            &estimates,
        )?);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::csv_number;

    #[test]
    fn csv_numbers_are_the_shortest_that_read_back_exactly() {
        let mut buffer = ryu::Buffer::new();
        for v in [1.38e-17, 0.1, -2.5, 1e300, 123456.789, 0.0, 6.02214076e23] {
            let text = csv_number(&mut buffer, v).to_string();
            assert_eq!(text.parse::<f64>().unwrap(), v, "{text}");
            assert!(text.len() <= 16, "{text}");
        }
        assert_eq!(csv_number(&mut buffer, 1.38e-17), "1.38e-17");
        assert_eq!(csv_number(&mut buffer, f64::NAN), "NaN");
        assert_eq!(csv_number(&mut buffer, f64::NEG_INFINITY), "-inf");
    }
}
