//! `armctl sim` with a `pair:` scene: two copies of the arm, each under its own controller
//! (the same law and parameters, through the runtime controller_node uses), holding one box
//! between their tools (`armctl_sim::CooperativeSimulator`). Writes `run.csv` (each arm's q and
//! effort under its name, the box's position and the internal force), plots of the box and
//! the internal force, and a summary.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use armctl_control::ParameterValue;
use armctl_model::Robot;
use armctl_runtime::group_loop::GroupLoop;

use armctl_runtime::controller_core::{CoreEvent, StepReport};

use armctl_sim::scene_file::PairSetup;
use armctl_sim::SimConfig;
use nalgebra::{IsometryMatrix3, Vector3};
use serde::Serialize;

use crate::plots::{line_chart, Series};
use crate::run_summary::ArmHeld;

/// Who controls the pair, in the loop every runner drives (paced by the simulator).
pub(crate) enum PairControl<'a> {
    /// Each arm under its own runtime (the same law and parameters).
    Separate([&'a mut GroupLoop; 2]),
    /// Both arms under the cooperative law, the object moved by `movement` (world, m) in
    /// [`MOVE_SECONDS`] from the start.
    Cooperative {
        pair: &'a mut GroupLoop,
        movement: Option<Vector3<f64>>,
        /// The commanded goal's position, once the move is under way.
        goal: Option<Vector3<f64>>,
    },
}

/// The time an `--object-move` takes, s.
const MOVE_SECONDS: f64 = 1.0;

/// The squeeze builds up from a relaxed grasp: its error counts from this time on, s.
const SQUEEZE_SETTLE_SECONDS: f64 = 0.5;

impl<'a> PairControl<'a> {
    /// Each arm under its own runtime.
    pub(crate) fn separate(runtimes: &'a mut [GroupLoop; 2]) -> Self {
        let [first, second] = runtimes;
        Self::Separate([first, second])
    }

    /// The cooperative law moving the object by `movement`.
    pub(crate) fn cooperative(runtime: &'a mut GroupLoop, movement: Option<Vector3<f64>>) -> Self {
        Self::Cooperative {
            pair: runtime,
            movement,
            goal: None,
        }
    }

    fn name(&self) -> String {
        match self {
            Self::Separate(loops) => loops[0].law_name().to_string(),
            Self::Cooperative { pair, .. } => pair.law_name().to_string(),
        }
    }

    /// Arm `a`'s joint state at `t`.
    fn record_state(&mut self, a: usize, names: &[String], q: &[f64], qd: &[f64], t: f64) {
        match self {
            Self::Separate(loops) => loops[a].record_state(0, names, q, qd, t),
            Self::Cooperative { pair, .. } => pair.record_state(a, names, q, qd, t),
        }
    }

    /// One step of both arms.
    fn step(&mut self, t: f64, dt: f64) -> Result<()> {
        match self {
            Self::Separate(loops) => loops.iter_mut().for_each(|l| l.step(t, dt)),
            Self::Cooperative {
                pair,
                movement,
                goal,
            } => {
                pair.step(t, dt);
                // The law grasps at its first controlled step; the move starts from there.
                if let (Some(by), false) = (*movement, pair.output().holding()) {
                    let runtime = &mut **pair;
                    let desired = runtime.pair_law().map(|law| law.desired().pose);
                    let mut target = desired.context("--object-move: not a pair")?;
                    target.translation.vector += by;
                    runtime
                        .take_object_target(target, MOVE_SECONDS)
                        .map_err(anyhow::Error::msg)
                        .context("--object-move")?;
                    *movement = None;
                    *goal = Some(target.translation.vector);
                }
            }
        }
        Ok(())
    }

    /// Arm `a`'s efforts of the last step, chain order.
    fn efforts(&self, a: usize) -> &[f64] {
        match self {
            Self::Separate(loops) => &loops[a].output().arms[0].efforts,
            Self::Cooperative { pair, .. } => &pair.output().arms[a].efforts,
        }
    }

    /// Arm `a`'s report of the last step.
    fn report(&self, a: usize) -> &StepReport {
        match self {
            Self::Separate(loops) => &loops[a].output().arms[0].report,
            Self::Cooperative { pair, .. } => &pair.output().arms[a].report,
        }
    }

    /// Arm `a`'s event of the last step.
    fn take_event(&mut self, a: usize) -> Option<CoreEvent> {
        match self {
            Self::Separate(loops) => loops[a].output_mut().take_event(0),
            Self::Cooperative { pair, .. } => pair.output_mut().take_event(a),
        }
    }

    /// What the runtime noticed at configuration (the law carries another object than the
    /// scene's), for the summary.
    fn warnings(&self) -> Vec<String> {
        match self {
            Self::Separate(_) => vec![],
            Self::Cooperative { pair, .. } => pair
                .model_warnings()
                .iter()
                .map(|w| format!("warning: {w}"))
                .collect(),
        }
    }

    /// What the step changed in the object's move (cancelled by a hold), once.
    fn notice(&mut self) -> Option<String> {
        match self {
            Self::Separate(_) => None,
            Self::Cooperative { pair, .. } => pair.output_mut().notice.take(),
        }
    }

    /// The commanded goal's position, when a move was commanded.
    fn goal(&self) -> Option<Vector3<f64>> {
        match self {
            Self::Separate(_) => None,
            Self::Cooperative { goal, .. } => *goal,
        }
    }

    /// The object's reference and the squeeze's set point, for the cooperative law.
    fn object_reference(&self) -> Option<(IsometryMatrix3<f64>, f64)> {
        let Self::Cooperative { pair, .. } = self else {
            return None;
        };
        let law = pair.pair_law()?;
        let squeeze = match law.parameters().get("internal_force") {
            Some(ParameterValue::Double(f)) => *f,
            _ => 0.0,
        };
        Some((law.desired().pose, squeeze))
    }
}

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
    /// Efforts the safety layer clipped at their limits, per arm.
    saturated: [usize; 2],
    /// What the arms' cores reported (holding, resumed), with the time.
    events: Vec<String>,
    /// With the cooperative law: the object's position and orientation error against its
    /// reference (m, rad) and the squeeze's error against its set point (N).
    position_error: Vec<f64>,
    rotation_error: Vec<f64>,
    squeeze_error: Vec<f64>,
}

/// How the object followed the cooperative law's reference, and the squeeze its set point.
#[derive(Debug, Serialize)]
pub(crate) struct ObjectTracking {
    /// Position error (the simulated object against the reference): rms, largest, at the
    /// end, m.
    position_error_rms: f64,
    position_error_max: f64,
    position_error_final: f64,
    /// Largest orientation error, rad.
    rotation_error_max: f64,
    /// With `--object-move`: how far the object ends from the commanded goal, m (the
    /// reference errors above are against a reference a hold may have cancelled).
    #[serde(skip_serializing_if = "Option::is_none")]
    goal_error_final: Option<f64>,
    /// The squeeze's set point, N.
    internal_force_set_point: f64,
    /// Largest |internal force - set point| from 0.5 s on (the squeeze builds up from a
    /// relaxed grasp), N.
    internal_force_error_max: f64,
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
    /// Efforts clipped at their limits, per arm (joint-steps).
    saturated: [usize; 2],
    /// When an arm started holding and why, and when it resumed.
    events: Vec<String>,
    /// With the cooperative law: how the object followed its reference.
    #[serde(skip_serializing_if = "Option::is_none")]
    object_tracking: Option<ObjectTracking>,
    real_time_factor: f64,
    files: Vec<PathBuf>,
}

impl PairSummary {
    /// The error for a pair in which an arm held in its safe mode (exit 3, as one arm's run).
    pub(crate) fn check_held(&self) -> Result<(), ArmHeld> {
        if self.held_steps.iter().all(|&h| h == 0) {
            return Ok(());
        }
        let first = self.events.first().map(String::as_str).unwrap_or("");
        Err(ArmHeld(format!(
            "an arm held in its safe mode ({} of {} steps ({}), {} ({})): {first}; its reference was cancelled there",
            self.held_steps[0], self.steps, self.arms[0], self.held_steps[1], self.arms[1]
        )))
    }
}

/// Runs `steps` steps of the pair, each arm under its runtime.
pub(crate) fn run(
    robot: &Robot,
    setup: &PairSetup,
    config: SimConfig,
    mut control: PairControl<'_>,
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
    let arm_names = [setup.arms[0].0.clone(), setup.arms[1].0.clone()];
    log.events = control.warnings();
    let wall = Instant::now();
    for k in 0..steps {
        let t = k as f64 * dt;
        for a in 0..2 {
            let sim = &pair.arm(a).sim;
            control.record_state(a, &names, sim.q(), sim.qd(), t);
        }
        control.step(t, dt)?;
        if let Some(notice) = control.notice() {
            log.events.push(format!("t = {t:.3} s: {notice}"));
        }
        for (a, arm) in arm_names.iter().enumerate() {
            let report = control.report(a);
            log.held[a] += usize::from(report.fault.is_some());
            log.saturated[a] += report.safety.saturated;
            if let Some(event) = control.take_event(a) {
                log.events.push(format!("t = {t:.3} s, {arm}: {event}"));
            }
        }
        if let Some((reference, squeeze)) = control.object_reference() {
            let object = pair.object_pose();
            log.position_error
                .push((reference.translation.vector - object.translation.vector).norm());
            log.rotation_error.push(
                nalgebra::UnitQuaternion::from_rotation_matrix(
                    &(reference.rotation.inverse() * object.rotation),
                )
                .angle(),
            );
            log.squeeze_error.push(if t >= SQUEEZE_SETTLE_SECONDS {
                (pair.internal_force() - squeeze).abs()
            } else {
                0.0
            });
        }
        pair.step([control.efforts(0), control.efforts(1)])?;
        log.time.push(t);
        for a in 0..2 {
            let (q, effort) = (pair.arm(a).sim.q(), control.efforts(a));
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
    let goal_error = control
        .goal()
        .map(|goal| (goal - pair.object_pose().translation.vector).norm());
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let mut files = vec![write_csv(&out.join("run.csv"), &arm_names, &names, &log)?];
    files.extend(write_plots(out, &log)?);
    let drift = (0..log.time.len())
        .map(|k| (0..3).map(|c| log.object[c][k].powi(2)).sum::<f64>().sqrt())
        .fold(0.0, f64::max);
    Ok(PairSummary {
        arms: arm_names.to_vec(),
        controller: control.name(),
        object_tracking: control
            .object_reference()
            .map(|(_, squeeze)| tracking(&log, squeeze, goal_error)),
        duration: steps as f64 * dt,
        steps,
        max_object_drift: drift,
        final_internal_force: log.internal_force.last().copied().unwrap_or(0.0),
        held_steps: log.held,
        saturated: log.saturated,
        events: std::mem::take(&mut log.events),
        real_time_factor: steps as f64 * dt / seconds.max(1e-9),
        files,
    })
}

fn tracking(log: &PairLog, squeeze: f64, goal_error: Option<f64>) -> ObjectTracking {
    let largest = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    let e = &log.position_error;
    ObjectTracking {
        position_error_rms: (e.iter().map(|v| v * v).sum::<f64>() / e.len().max(1) as f64).sqrt(),
        position_error_max: largest(e),
        position_error_final: e.last().copied().unwrap_or(0.0),
        rotation_error_max: largest(&log.rotation_error),
        goal_error_final: goal_error,
        internal_force_set_point: squeeze,
        internal_force_error_max: largest(&log.squeeze_error),
    }
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
    // With a commanded move the box is meant to travel: its error is in the object lines.
    if s.object_tracking.is_none() {
        let _ = writeln!(out, "box drift (largest): {:.3e} m", s.max_object_drift);
    }
    let _ = writeln!(
        out,
        "internal force at the end: {:.3} N\nsteps held in the safe mode: {} of {} ({}), {} of {} ({})\nclipped efforts: {} ({}), {} ({})\nreal-time factor: {:.0}x",
        s.final_internal_force,
        s.held_steps[0], s.steps, s.arms[0],
        s.held_steps[1], s.steps, s.arms[1],
        s.saturated[0], s.arms[0],
        s.saturated[1], s.arms[1],
        s.real_time_factor
    );
    for event in &s.events {
        let _ = writeln!(out, "{event}");
    }
    if let Some(o) = &s.object_tracking {
        let _ = writeln!(
            out,
            "object position error: rms {:.3e} m, max {:.3e} m, final {:.3e} m\nobject orientation error (largest): {:.3e} rad\ninternal force: set point {:.3} N, largest error from {SQUEEZE_SETTLE_SECONDS} s on {:.3} N",
            o.position_error_rms, o.position_error_max, o.position_error_final, o.rotation_error_max, o.internal_force_set_point, o.internal_force_error_max
        );
        if let Some(e) = o.goal_error_final {
            let _ = writeln!(out, "object from its commanded goal at the end: {e:.3e} m");
        }
    }
    let files: Vec<String> = s.files.iter().map(|f| f.display().to_string()).collect();
    let _ = writeln!(out, "wrote: {}", files.join(", "));
    out
}
