//! Step 8, deploy: the verified parameter file becomes `commissioned.yaml` (what
//! controller_node `--params-file`, the plugin and `armctl sim --params` load), and
//! `report.md` says what each step found, with plots: the held-out effort prediction per joint,
//! the tracking before and after, the excitation's coverage of each joint's range.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use armctl_model::Robot;

use super::model_steps::{friction_notes, Outcome, Steps, EXCITATION_LAW, LAW};
use super::recording::rms_over_joints;
use crate::identify_command::held_out_plots::write_prediction_plots;
use crate::plots::{panel_chart, Panel, Series};

/// Writes the report and its plots, then the parameter file (last: nothing deployable is left
/// when something before it fails); prints where they are.
pub(crate) fn deploy(steps: &Steps<'_>, outcome: &Outcome) -> Result<()> {
    let plots = write_plots(steps, outcome)?;
    let report = steps.out.join("report.md");
    std::fs::write(&report, render(steps, outcome, &plots))
        .with_context(|| format!("writing {}", report.display()))?;
    let file = steps.out.join("commissioned.yaml");
    std::fs::rename(&outcome.candidate, &file)
        .with_context(|| format!("writing {}", file.display()))?;
    println!(
        "8. deploy: {} (model, friction, {LAW} and its gains), report {}\n   {}",
        file.display(),
        report.display(),
        comparison(outcome)
    );
    Ok(())
}

/// The held-out tracking before and after, as the runs allow it to be compared.
fn comparison(outcome: &Outcome) -> String {
    let before = rms_over_joints(&outcome.nominal.tracking_rms());
    let after = rms_over_joints(&outcome.verified.tracking_rms());
    let law = EXCITATION_LAW;
    if outcome.nominal.was_slowed() {
        return format!("tracking RMS on the held-out trajectory: commissioned {after:.2e}; the URDF's model ({law}) {before:.2e} while slowed down, not comparable");
    }
    let ratio = before / after;
    let verdict = if ratio >= 1.0 {
        format!("{ratio:.1}x better")
    } else {
        format!("{:.1}x worse", 1.0 / ratio)
    };
    format!("tracking RMS on the held-out trajectory: the URDF's model ({law}) {before:.2e}, commissioned {after:.2e} ({verdict})")
}

/// The report's plots (PNG and SVG each).
fn write_plots(steps: &Steps<'_>, outcome: &Outcome) -> Result<Vec<PathBuf>> {
    let names = &outcome.excitation.log.joint_names;
    let mut files = write_prediction_plots(
        &steps.out.join("validation.yaml"),
        names,
        &outcome.validation.series,
        "the validation trajectory",
        Some(armctl_ident::IdentifyOptions::default().min_speed),
    )?;
    files.extend(tracking_plot(steps.out, names, outcome)?);
    files.extend(coverage_plot(steps.out, steps.robot, outcome)?);
    Ok(files)
}

/// Tracking error per joint on the held-out trajectory: the URDF's model, then the
/// commissioned parameters.
fn tracking_plot(dir: &Path, names: &[String], outcome: &Outcome) -> Result<[PathBuf; 2]> {
    let error = |r: &super::drive::Recording, j: usize| -> Vec<f64> {
        r.reference
            .iter()
            .zip(&r.log.position)
            .map(|(r, q)| r[j] - q[j])
            .collect()
    };
    let (before, after): (Vec<Vec<f64>>, Vec<Vec<f64>>) = (0..names.len())
        .map(|j| (error(&outcome.nominal, j), error(&outcome.verified, j)))
        .unzip();
    let tracked = |r: &super::drive::Recording| r.tracked;
    let samples = tracked(&outcome.nominal).min(tracked(&outcome.verified));
    let nominal_label = match outcome.nominal.slowest {
        Some((rate, _)) => format!(
            "URDF model ({EXCITATION_LAW}; slowed to {:.0} %: other points of the path)",
            100.0 * rate
        ),
        None => format!("URDF model ({EXCITATION_LAW})"),
    };
    let time: Vec<f64> = (0..samples)
        .map(|k| outcome.nominal.log.time[k] - outcome.nominal.log.time[0])
        .collect();
    let panels: Vec<Panel<'_>> = names
        .iter()
        .enumerate()
        .map(|(j, name)| Panel {
            title: name.clone(),
            y_label: "error".into(),
            series: vec![
                Series {
                    label: nominal_label.clone(),
                    values: &before[j][..samples],
                    color: 3,
                    dashed: true,
                },
                Series {
                    label: "commissioned".into(),
                    values: &after[j][..samples],
                    color: 2,
                    dashed: false,
                },
            ],
        })
        .collect();
    panel_chart(
        &dir.join("tracking"),
        "Tracking error on the held-out trajectory (reference - measured)",
        &time,
        &panels,
    )
}

/// Each joint's position during the excitation, as a share of its range (0 the lower limit,
/// 1 the upper).
fn coverage_plot(dir: &Path, robot: &Robot, outcome: &Outcome) -> Result<[PathBuf; 2]> {
    let log = &outcome.excitation.log;
    let shares: Vec<Vec<f64>> = robot
        .joints()
        .iter()
        .enumerate()
        .map(|(j, joint)| {
            // A continuous joint's share is of one turn about the middle of what it swept.
            let (low, high) = match (joint.limits.lower, joint.limits.upper) {
                (l, h) if l.is_finite() && h.is_finite() => (l, h),
                _ => (-std::f64::consts::PI, std::f64::consts::PI),
            };
            log.position
                .iter()
                .map(|q| (q[j] - low) / (high - low))
                .collect()
        })
        .collect();
    let time: Vec<f64> = log.time.iter().map(|t| t - log.time[0]).collect();
    let series: Vec<Series<'_>> = robot
        .joint_names()
        .zip(&shares)
        .enumerate()
        .map(|(j, (name, values))| Series {
            label: name.to_string(),
            values,
            color: j,
            dashed: false,
        })
        .collect();
    crate::plots::line_chart(
        &dir.join("coverage"),
        "Excitation: each joint's position as a share of its range",
        "share of range",
        &time,
        &series,
    )
}

/// The report: the outcome of each step, the tables, the plots.
fn render(steps: &Steps<'_>, outcome: &Outcome, plots: &[PathBuf]) -> String {
    let found = &outcome.identification;
    let names = &outcome.excitation.log.joint_names;
    let mut text = format!(
        "# Commissioning of {} ({})\n\n`commissioned.yaml` holds the identified model (physically consistent: every link a body that exists), its friction, and {LAW} with gains sized for it.\n\n",
        steps.robot.name(),
        steps.urdf.display()
    );
    let _ = writeln!(text, "| step | outcome |\n|---|---|");
    let _ = writeln!(
        text,
        "| excite and record | {} samples, condition number of the fit {:.1} |",
        outcome.excitation.log.len(),
        found.condition_number
    );
    let bodies = if found.consistency_gap.least_squares_is_bodies {
        "least squares' own values are bodies (within 1e-6)"
    } else {
        "least squares' values are no bodies: the nearest bodies are written"
    };
    let _ = writeln!(text, "| identify | every link a body that exists; {bodies}; largest distance from least squares {:.2} sigma ({}) |", found.consistency_gap.largest_sigmas, found.consistency_gap.largest_parameter);
    let _ = writeln!(text, "| estimator | {} |", outcome.estimator.describe());
    for note in friction_notes(found) {
        let _ = writeln!(text, "| friction | {note} |");
    }
    let (worst, share) = outcome.validation.worst();
    let _ = writeln!(
        text,
        "| validate | worst joint {} at {:.2} % of its effort range |",
        names[worst],
        100.0 * share
    );
    let _ = writeln!(
        text,
        "| verify | {} |\n",
        super::deploy::comparison(outcome)
    );
    let slowed = match outcome.nominal.slowest {
        Some((rate, _)) => format!(", slowed to {:.0} %", 100.0 * rate),
        None => String::new(),
    };
    let _ = writeln!(text, "## Per joint\n\n| joint | viscous | Coulomb | offset | held-out RMS | % of effort range | tracking, URDF model ({EXCITATION_LAW}{slowed}) | predicted | on the arm | kp | kd |\n|---|---|---|---|---|---|---|---|---|---|---|");
    let (before, predicted, after) = (
        outcome.nominal.tracking_rms(),
        outcome.predicted.tracking_rms(),
        outcome.verified.tracking_rms(),
    );
    for (j, name) in names.iter().enumerate() {
        let _ = writeln!(
            text,
            "| {name} | {:.4} | {:.4} | {:+.4} | {:.3} | {:.2} | {:.2e} | {:.2e} | {:.2e} | {:.4} | {:.4} |",
            found.viscous[j],
            found.coulomb[j],
            found.friction_offset.get(j).copied().unwrap_or(0.0),
            outcome.validation.rms[j],
            100.0 * outcome.validation.share_of_range[j],
            before[j],
            predicted[j],
            after[j],
            outcome.kp[j],
            outcome.kd[j]
        );
    }
    let _ = writeln!(
        text,
        "\n## Base parameters\n\n| parameter | value | std | least squares |\n|---|---|---|---|"
    );
    for k in 0..found.base_names.len() {
        let _ = writeln!(
            text,
            "| {} | {:.6e} | {:.2e} | {:.6e} |",
            found.base_names[k],
            found.base_values[k],
            found.base_std[k],
            found.least_squares_values[k]
        );
    }
    let _ = writeln!(text, "\n## Plots\n");
    for png in plots
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
    {
        let name = png
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let _ = writeln!(text, "![{name}]({name})\n");
    }
    let _ = writeln!(
        text,
        "Recordings (CSV for `armctl identify --log`, MCAP rosbag2 of /joint_states): {}",
        outcome
            .files
            .iter()
            .filter_map(|f| f.file_name())
            .map(|n| n.to_string_lossy().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    text
}
