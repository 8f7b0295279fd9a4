//! The tip pose plot of a task-space run (`tip_pose.png`, `.svg`): the tip position along
//! each base axis against its target, and the orientation error the law sees.

use std::path::{Path, PathBuf};

use anyhow::Result;
use armctl_control::orientation_error;
use armctl_control::reference::PoseInterpolation;
use armctl_model::{forward_kinematics, KinematicsWorkspace, Robot};
use armctl_sim::RunLog;
use nalgebra::{IsometryMatrix3, Vector3};
use serde::Serialize;

use crate::plots::{panel_chart, Panel, Series};

/// Where a task-space law's tip target came from.
pub(crate) enum TipTarget {
    /// `--target-pose`: from where the tip starts to `goal` in `seconds`.
    Pose {
        goal: IsometryMatrix3<f64>,
        seconds: f64,
    },
    /// The joint reference through forward kinematics.
    JointReference,
}

/// Per axis x, y, z: the tip position and its target; and the orientation error.
struct TipTrack {
    position: [Vec<f64>; 3],
    target: [Vec<f64>; 3],
    orientation_error: [Vec<f64>; 3],
}

/// The joints' values at `row` of per-joint `columns`.
fn row_of(columns: &[Vec<f64>], row: usize) -> Vec<f64> {
    columns.iter().map(|c| c[row]).collect()
}

fn tip_at(robot: &Robot, ws: &mut KinematicsWorkspace, q: &[f64]) -> Result<IsometryMatrix3<f64>> {
    Ok(forward_kinematics(robot, ws, q)?.tip())
}

fn track(robot: &Robot, log: &RunLog, target: &TipTarget) -> Result<TipTrack> {
    let mut ws = KinematicsWorkspace::new(robot);
    let rows = log.time.len();
    let start = tip_at(robot, &mut ws, &row_of(&log.q, 0))?;
    // The law takes the target after its first step, from the start pose: at step time t
    // its target is the interpolation at t.
    let interpolation = match target {
        TipTarget::Pose { goal, seconds } => Some(PoseInterpolation::new(start, *goal, *seconds)?),
        TipTarget::JointReference => None,
    };
    let empty = || [(); 3].map(|_| Vec::with_capacity(rows));
    let mut track = TipTrack {
        position: empty(),
        target: empty(),
        orientation_error: empty(),
    };
    for (row, &t) in log.time.iter().enumerate() {
        let tip = tip_at(robot, &mut ws, &row_of(&log.q, row))?;
        let desired = match &interpolation {
            Some(i) => i.sample(t).pose,
            None => tip_at(robot, &mut ws, &row_of(&log.reference, row))?,
        };
        let error = orientation_error(tip.rotation.matrix(), desired.rotation.matrix());
        push(&mut track.position, &tip.translation.vector);
        push(&mut track.target, &desired.translation.vector);
        push(&mut track.orientation_error, &error);
    }
    Ok(track)
}

/// The tip's distance from its pose target (the law's own, moving to `--target-pose` over
/// the approach), m, and the orientation error at the end, rad.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TargetError {
    rms: f64,
    max: f64,
    #[serde(rename = "final")]
    last: f64,
    final_orientation: f64,
}

impl TargetError {
    /// The row of the summary table: RMS, max and final distance, m.
    pub(crate) fn distances(&self) -> [f64; 3] {
        [self.rms, self.max, self.last]
    }

    /// The orientation error at the end, rad.
    pub(crate) fn final_orientation(&self) -> f64 {
        self.final_orientation
    }
}

/// The tip against a `--target-pose` target; `None` for a joint reference (the summary's tip
/// row measures that one).
pub(crate) fn target_error(
    robot: &Robot,
    log: &RunLog,
    target: &TipTarget,
) -> Result<Option<TargetError>> {
    if matches!(target, TipTarget::JointReference) || log.time.is_empty() {
        return Ok(None);
    }
    let track = track(robot, log, target)?;
    let distance = |row: usize| {
        (0..3)
            .map(|k| (track.position[k][row] - track.target[k][row]).powi(2))
            .sum::<f64>()
            .sqrt()
    };
    let distances: Vec<f64> = (0..log.time.len()).map(distance).collect();
    let last = log.time.len() - 1;
    Ok(Some(TargetError {
        rms: (distances.iter().map(|d| d * d).sum::<f64>() / distances.len() as f64).sqrt(),
        max: distances.iter().copied().fold(0.0, f64::max),
        last: distances[last],
        final_orientation: (0..3)
            .map(|k| track.orientation_error[k][last].powi(2))
            .sum::<f64>()
            .sqrt(),
    }))
}

fn push(columns: &mut [Vec<f64>; 3], v: &Vector3<f64>) {
    for (column, value) in columns.iter_mut().zip(v.iter()) {
        column.push(*value);
    }
}

const AXES: [&str; 3] = ["x", "y", "z"];

/// One chart per axis (each its own scale: the move is small beside the tip's distance from
/// the base), then the orientation error.
fn panels(track: &TipTrack) -> Vec<Panel<'_>> {
    let mut panels: Vec<Panel<'_>> = (0..3)
        .map(|k| Panel {
            title: format!("tip {}", AXES[k]),
            y_label: format!("{} [m]", AXES[k]),
            series: vec![
                Series {
                    label: format!("tip {}", AXES[k]),
                    values: &track.position[k],
                    color: k,
                    dashed: false,
                },
                Series {
                    label: format!("target {}", AXES[k]),
                    values: &track.target[k],
                    color: k,
                    dashed: true,
                },
            ],
        })
        .collect();
    panels.push(Panel {
        title: "orientation error (the law's: rotation to the target, base axes)".into(),
        y_label: "error [rad]".into(),
        series: (0..3)
            .map(|k| Series {
                label: format!("orientation error about {}", AXES[k]),
                values: &track.orientation_error[k],
                color: k,
                dashed: false,
            })
            .collect(),
    });
    panels
}

/// Writes `tip_pose.png` and `tip_pose.svg` in `dir`.
pub(crate) fn write_tip_pose_plot(
    dir: &Path,
    robot: &Robot,
    log: &RunLog,
    target: &TipTarget,
) -> Result<Vec<PathBuf>> {
    if log.time.is_empty() {
        return Ok(vec![]);
    }
    let track = track(robot, log, target)?;
    let files = panel_chart(
        &dir.join("tip_pose"),
        "Tip position (solid) and its target (dashed), base link frame",
        &log.time,
        &panels(&track),
    )?;
    Ok(files.to_vec())
}
