//! `armctl sim` with a `pair:` scene: two copies of the arm, each under its own controller
//! (the same law and parameters, through the runtime controller_node uses), holding one box
//! between their tools (`armctl_sim::CooperativeSimulator`). Writes `run.csv` (each arm's q and
//! effort under its name, the box's position and the internal force), plots of the box and
//! the internal force, and a summary.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use armctl_control::Controller;
use armctl_model::Robot;
use armctl_runtime::controller_runtime::ControllerRuntime;
use armctl_runtime::scene_file::PairSetup;
use armctl_sim::SimConfig;
use serde::Serialize;

use crate::plots::{line_chart, Series};

/// What a pair run recorded.
#[derive(Debug, Default)]
struct PairLog {
    time: Vec<f64>,
    /// Per arm, per joint.
    q: [Vec<Vec<f64>>; 2],
    effort: [Vec<Vec<f64>>; 2],
    /// The box's displacement from its start, x y z.
    object: [Vec<f64>; 3],
    internal_force: Vec<f64>,
    held: [usize; 2],
}

/// The run's results.
#[derive(Debug, Serialize)]
pub(crate) struct PairSummary {
    arms: Vec<String>,
    controller: String,
    duration: f64,
    steps: usize,
    /// Largest distance of the box from where it started, m.
    max_object_drift: f64,
    /// The internal force at the end, N (positive: squeezed).
    final_internal_force: f64,
    /// Steps each arm's controller held instead of controlling.
    held_steps: [usize; 2],
    real_time_factor: f64,
    files: Vec<PathBuf>,
}

/// Runs `steps` steps of the pair, each arm under its runtime.
pub(crate) fn run(
    robot: &Robot,
    setup: &PairSetup,
    config: SimConfig,
    mut runtimes: [ControllerRuntime; 2],
    steps: usize,
    out: &Path,
) -> Result<PairSummary> {
    let mut pair = setup.simulator(robot, &config)?;
    let start = pair.object_pose().translation.vector;
    let names: Vec<String> = robot.joint_names().map(str::to_string).collect();
    let n = names.len();
    let dt = config.dt;
    let mut log = PairLog {
        q: std::array::from_fn(|_| vec![Vec::with_capacity(steps); n]),
        effort: std::array::from_fn(|_| vec![Vec::with_capacity(steps); n]),
        ..PairLog::default()
    };
    let mut efforts = [vec![0.0; n], vec![0.0; n]];
    let wall = Instant::now();
    for k in 0..steps {
        let t = k as f64 * dt;
        for (a, runtime) in runtimes.iter_mut().enumerate() {
            let sim = &pair.arm(a).sim;
            let core = runtime.core_mut();
            core.on_joint_state(&names, sim.q(), sim.qd(), t);
            let report = core.step(t, dt, &mut efforts[a]);
            log.held[a] += usize::from(report.fault.is_some());
        }
        pair.step([&efforts[0], &efforts[1]])?;
        log.time.push(t);
        for (a, effort) in efforts.iter().enumerate() {
            let q = pair.arm(a).sim.q();
            for (column, v) in log.q[a].iter_mut().zip(q) {
                column.push(*v);
            }
            for (column, v) in log.effort[a].iter_mut().zip(effort) {
                column.push(*v);
            }
        }
        let moved = pair.object_pose().translation.vector - start;
        for (column, v) in log.object.iter_mut().zip(moved.iter()) {
            column.push(*v);
        }
        log.internal_force.push(pair.internal_force());
    }
    let seconds = wall.elapsed().as_secs_f64();
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let arm_names = [setup.arms[0].0.clone(), setup.arms[1].0.clone()];
    let mut files = vec![write_csv(&out.join("run.csv"), &arm_names, &names, &log)?];
    files.extend(write_plots(out, &log)?);
    let drift = (0..log.time.len())
        .map(|k| (0..3).map(|c| log.object[c][k].powi(2)).sum::<f64>().sqrt())
        .fold(0.0, f64::max);
    Ok(PairSummary {
        arms: arm_names.to_vec(),
        controller: runtimes[0].core().controller().name().to_string(),
        duration: steps as f64 * dt,
        steps,
        max_object_drift: drift,
        final_internal_force: log.internal_force.last().copied().unwrap_or(0.0),
        held_steps: log.held,
        real_time_factor: steps as f64 * dt / seconds.max(1e-9),
        files,
    })
}

fn write_csv(path: &Path, arms: &[String; 2], joints: &[String], log: &PairLog) -> Result<PathBuf> {
    let mut text = String::from("t");
    for arm in arms {
        for prefix in ["q", "effort"] {
            for joint in joints {
                let _ = write!(text, ",{arm}/{prefix}_{joint}");
            }
        }
    }
    text.push_str(",object_dx,object_dy,object_dz,internal_force\n");
    let mut number = ryu::Buffer::new();
    for (row, t) in log.time.iter().enumerate() {
        text.push_str(number.format(*t));
        let columns = (0..2)
            .flat_map(|a| log.q[a].iter().chain(&log.effort[a]))
            .chain(&log.object)
            .chain(std::iter::once(&log.internal_force));
        for column in columns {
            text.push(',');
            text.push_str(number.format(column[row]));
        }
        text.push('\n');
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    Ok(path.to_path_buf())
}

fn write_plots(dir: &Path, log: &PairLog) -> Result<Vec<PathBuf>> {
    let object: Vec<Series<'_>> = ["x", "y", "z"]
        .iter()
        .zip(&log.object)
        .enumerate()
        .map(|(k, (axis, values))| Series {
            label: format!("box {axis}"),
            values,
            color: k,
            dashed: false,
        })
        .collect();
    let mut files: Vec<PathBuf> = Vec::new();
    files.extend(line_chart(
        &dir.join("object"),
        "The held box: displacement from its start",
        "displacement [m]",
        &log.time,
        &object,
    )?);
    files.extend(line_chart(
        &dir.join("internal_force"),
        "Internal force between the tools (positive: squeezed)",
        "force [N]",
        &log.time,
        &[Series {
            label: "internal force".into(),
            values: &log.internal_force,
            color: 0,
            dashed: false,
        }],
    )?);
    Ok(files)
}

/// The summary as a table.
pub(crate) fn render(s: &PairSummary) -> String {
    let mut out = format!(
        "{} and {} with {} holding a box for {} s ({} steps)\n\n",
        s.arms[0], s.arms[1], s.controller, s.duration, s.steps
    );
    let _ = writeln!(
        out,
        "box drift (largest): {:.3e} m\ninternal force at the end: {:.3} N\nheld steps: {} / {}\nreal-time factor: {:.0}x",
        s.max_object_drift, s.final_internal_force, s.held_steps[0], s.held_steps[1], s.real_time_factor
    );
    let files: Vec<String> = s.files.iter().map(|f| f.display().to_string()).collect();
    let _ = writeln!(out, "wrote: {}", files.join(", "));
    out
}
