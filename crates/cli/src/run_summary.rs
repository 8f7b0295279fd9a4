//! The summary of a simulated run (per-joint errors and efforts, contact forces, the tip's
//! error), as a table or JSON, for `armctl sim` and `armctl demo`.

use std::fmt::Write as _;
use std::path::PathBuf;

use armctl_model::Robot;
use armctl_sim::RunLog;

use crate::run_files::TargetError;
use serde::Serialize;

/// Per-joint results.
#[derive(Debug, Serialize)]
pub(crate) struct JointSummary {
    joint: String,
    rms_error: f64,
    max_error: f64,
    final_error: f64,
    /// Largest effort applied (after saturation).
    max_effort: f64,
    /// How far the reference went from where it started (zero: the arm was only held).
    reference_travel: f64,
}

/// One contact point's forces.
#[derive(Debug, Serialize)]
pub(crate) struct ContactSummary {
    point: String,
    /// Force at the end, N, base link axes.
    final_force: [f64; 3],
    /// Largest magnitude, N.
    peak_force: f64,
}

/// The tip's position error against the joint reference through forward kinematics (what a
/// task-space law following `--trajectory` tracks), m.
#[derive(Debug, Default, Serialize)]
pub(crate) struct TipError {
    rms: f64,
    max: f64,
    #[serde(rename = "final")]
    last: f64,
}

/// The run's results.
#[derive(Debug, Serialize)]
pub(crate) struct Summary {
    robot: String,
    controller: String,
    trajectory: String,
    duration: f64,
    dt: f64,
    steps: usize,
    joints: Vec<JointSummary>,
    saturated_commands: usize,
    /// Efforts the joint-limit protection bounded.
    #[serde(skip_serializing_if = "Option::is_none")]
    joint_limited_commands: Option<usize>,
    real_time_factor: f64,
    /// Steps the controller held in its safe mode instead of following the reference.
    held_steps: usize,
    /// When it first held, s (the reference is cancelled there).
    #[serde(skip_serializing_if = "Option::is_none")]
    held_from: Option<f64>,
    /// The tip's distance from where the joint reference puts it, m.
    tip_error: TipError,
    /// With `--target-pose`: the tip's distance from its pose target (the joint reference is
    /// then only where the arm started).
    #[serde(skip_serializing_if = "Option::is_none")]
    tip_to_target: Option<TargetError>,
    /// Per contact point of the scene.
    contacts: Vec<ContactSummary>,
    /// Conditions the controller's claims need that do not hold.
    warnings: Vec<String>,
    files: Vec<PathBuf>,
}

/// What a run was, for its summary.
#[derive(Debug, Clone)]
pub(crate) struct RunInfo {
    /// Controller name.
    pub(crate) controller: String,
    /// The controller's warnings.
    pub(crate) warnings: Vec<String>,
    /// Trajectory spec.
    pub(crate) trajectory: String,
    /// Duration, s.
    pub(crate) duration: f64,
    /// Step, s.
    pub(crate) dt: f64,
    /// Efforts the joint-limit protection bounded (`None`: not known to this runner).
    pub(crate) joint_limited: Option<usize>,
    /// Steps held in the safe mode, and the time of the first.
    pub(crate) held: (usize, Option<f64>),
    /// The tip against a `--target-pose` target.
    pub(crate) tip_to_target: Option<TargetError>,
}

/// A run that went to its end but held the arm in its safe mode on the way: the reference
/// was cancelled where it first held, so its figures are not the reference's tracking.
/// `armctl` exits with [`ArmHeld::EXIT_CODE`] after printing the summary.
#[derive(Debug)]
pub(crate) struct ArmHeld(pub(crate) String);

impl ArmHeld {
    /// The exit code of a run that held (1 is a refusal: nothing ran).
    pub(crate) const EXIT_CODE: u8 = 3;

    /// The error for `summary`'s run, when it held; `reason` names why, as the node said.
    pub(crate) fn check(summary: &Summary, reason: Option<&str>) -> Result<(), ArmHeld> {
        let Some(from) = summary.held_from.filter(|_| summary.held_steps > 0) else {
            return Ok(());
        };
        let why = reason.map(|r| format!(" ({r})")).unwrap_or_default();
        Err(ArmHeld(format!(
            "the arm held in its safe mode for {} of {} steps, from t = {from:.3} s{why}: the reference was cancelled there, so the errors above are against where the arm held, not the reference",
            summary.held_steps, summary.steps
        )))
    }
}

impl std::fmt::Display for ArmHeld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ArmHeld {}

pub(crate) fn summarize(
    info: RunInfo,
    robot: &Robot,
    log: &RunLog,
    files: Vec<PathBuf>,
) -> Summary {
    let joints = robot
        .joint_names()
        .enumerate()
        .map(|(i, name)| {
            let errors: Vec<f64> = log.reference[i]
                .iter()
                .zip(&log.q[i])
                .map(|(r, q)| r - q)
                .collect();
            let rms =
                (errors.iter().map(|e| e * e).sum::<f64>() / errors.len().max(1) as f64).sqrt();
            JointSummary {
                joint: name.to_string(),
                rms_error: rms,
                max_error: errors.iter().fold(0.0, |m, e| m.max(e.abs())),
                final_error: errors.last().copied().unwrap_or(0.0).abs(),
                max_effort: log.effort[i].iter().fold(0.0, |m, e| m.max(e.abs())),
                reference_travel: travel(&log.reference[i]),
            }
        })
        .collect();
    Summary {
        robot: robot.name().to_string(),
        controller: info.controller,
        warnings: info.warnings,
        trajectory: info.trajectory,
        duration: info.duration,
        dt: info.dt,
        steps: log.time.len(),
        joints,
        saturated_commands: log.saturated,
        joint_limited_commands: info.joint_limited,
        real_time_factor: info.duration / log.wall_seconds.max(1e-9),
        held_steps: info.held.0,
        held_from: info.held.1,
        tip_error: tip_error(robot, log),
        tip_to_target: info.tip_to_target,
        contacts: contact_summaries(log),
        files,
    }
}

/// The largest distance of `column` from its first value.
fn travel(column: &[f64]) -> f64 {
    let first = column.first().copied().unwrap_or(0.0);
    column.iter().fold(0.0, |m, v| m.max((v - first).abs()))
}

fn tip_error(robot: &Robot, log: &RunLog) -> TipError {
    let mut ws = armctl_model::KinematicsWorkspace::new(robot);
    let mut tip = |row: usize, columns: &[Vec<f64>]| {
        let q: Vec<f64> = columns.iter().map(|c| c[row]).collect();
        armctl_model::forward_kinematics(robot, &mut ws, &q)
            .map(|poses| poses.tip().translation.vector)
            .ok()
    };
    let errors: Vec<f64> = (0..log.time.len())
        .filter_map(|row| Some((tip(row, &log.reference)? - tip(row, &log.q)?).norm()))
        .collect();
    let rms = (errors.iter().map(|e| e * e).sum::<f64>() / errors.len().max(1) as f64).sqrt();
    TipError {
        rms,
        max: errors.iter().copied().fold(0.0, f64::max),
        last: errors.last().copied().unwrap_or(0.0),
    }
}

fn contact_summaries(log: &RunLog) -> Vec<ContactSummary> {
    log.contact_names
        .iter()
        .zip(log.contact.chunks(3))
        .map(|(name, xyz)| {
            let at = |row: usize| [xyz[0][row], xyz[1][row], xyz[2][row]];
            let rows = log.time.len();
            ContactSummary {
                point: name.clone(),
                final_force: if rows > 0 { at(rows - 1) } else { [0.0; 3] },
                peak_force: (0..rows)
                    .map(|row| at(row).iter().map(|v| v * v).sum::<f64>().sqrt())
                    .fold(0.0, f64::max),
            }
        })
        .collect()
}

pub(crate) fn render(s: &Summary) -> String {
    let mut out = format!(
        "{} with {} following '{}' for {} s (dt {} s, {} steps)\n\n{:<24} {:>12} {:>12} {:>12} {:>12}\n",
        s.robot, s.controller, s.trajectory, s.duration, s.dt, s.steps, "joint", "rms error", "max error", "final error", "max effort"
    );
    for j in &s.joints {
        let _ = writeln!(
            out,
            "{:<24} {:>12.3e} {:>12.3e} {:>12.3e} {:>12.3}",
            j.joint, j.rms_error, j.max_error, j.final_error, j.max_effort
        );
    }
    match &s.tip_to_target {
        Some(target) => {
            let [rms, max, last] = target.distances();
            let _ = writeln!(
                out,
                "{:<24} {rms:>12.3e} {max:>12.3e} {last:>12.3e}   (m, from the pose target; orientation {:.3e} rad at the end)",
                "tip to target",
                target.final_orientation()
            );
        }
        None => {
            let _ = writeln!(
                out,
                "{:<24} {:>12.3e} {:>12.3e} {:>12.3e}   (m, from the reference through FK)",
                "tip position", s.tip_error.rms, s.tip_error.max, s.tip_error.last
            );
        }
    }
    for c in &s.contacts {
        let [x, y, z] = c.final_force;
        let _ = write!(
            out,
            "{}contact at {}: final force [{x:.3}, {y:.3}, {z:.3}] N, peak {:.3} N",
            if out.ends_with("\n\n") { "" } else { "\n" },
            c.point,
            c.peak_force
        );
    }
    let _ = writeln!(out, "\nsaturated commands: {}", s.saturated_commands);
    if let Some(bounded) = s.joint_limited_commands {
        let _ = writeln!(out, "commands bounded at a soft joint limit: {bounded}");
    }
    if let Some(from) = s.held_from.filter(|_| s.held_steps > 0) {
        let _ = writeln!(
            out,
            "held in the safe mode: {} of {} steps, from t = {from:.3} s (the reference cancelled there)",
            s.held_steps, s.steps
        );
    }
    let _ = writeln!(out, "real-time factor: {:.0}x", s.real_time_factor);
    let _ = writeln!(
        out,
        "wrote: {}",
        s.files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    for warning in &s.warnings {
        let _ = writeln!(out, "warning: {warning}");
    }
    out
}
