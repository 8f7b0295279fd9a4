//! The tip pose plot of a task-space run (`tip_pose.png`, `.svg`): the tip position along
//! each base axis against its target, and the orientation error the law sees.

use std::path::{Path, PathBuf};

use anyhow::Result;
use armctl_control::orientation_error;
use armctl_control::reference::PoseInterpolation;
use armctl_model::{forward_kinematics, KinematicsWorkspace, Robot};
use armctl_sim::RunLog;
use nalgebra::{IsometryMatrix3, Vector3};

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
