//! One commissioning run on the arm: the controller (a [`GroupLoop`], as controller_node runs
//! it, protections on) in the loop with the arm, every state recorded. A run stops early on a
//! hold the protections order (collision, over-speed, an implausible state) or on a tracking
//! error beyond the guard, and is slowed down as its tracking worsens. Every run, stopped,
//! completed or failed, ends with a brake to rest (the reference held where the arm is, or
//! the protections' own brake), and keeps what it recorded.

use std::time::Instant;

use anyhow::{bail, Result};
use armctl_control::reference::{SpeedControl, TimeScaled, Trajectory};
use armctl_runtime::group_loop::GroupLoop;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::arm::{Arm, ArmState};
use super::recording::Recorder;
pub(crate) use super::recording::Recording;

/// Below this speed (rad/s, m/s) on every joint the arm is at rest.
pub(crate) const REST_SPEED: f64 = 0.01;

/// How long the arm must stay below [`REST_SPEED`] to count as braked, s.
const REST_SECONDS: f64 = 0.2;

/// The longest a brake may take before the run says the arm did not come to rest, s.
const BRAKE_SECONDS: f64 = 5.0;

/// How a run is guarded beyond the controller's own protections.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Guard {
    /// Largest tracking error on any joint, rad or m.
    pub(crate) tracking: f64,
    /// Slow the trajectory down as the tracking error grows towards the limit.
    pub(crate) slow_down: bool,
}

/// Share of the tracking limit at which slowing down begins.
const SLOW_FROM: f64 = 0.25;

/// Share of the tracking limit at which the trajectory runs at [`SLOWEST`].
const SLOWEST_AT: f64 = 0.75;

/// The slowest the trajectory is run when tracking is poor.
const SLOWEST: f64 = 0.2;

/// How fast the rate may fall and rise, per s: slowing down soon, speeding up gently. A rate
/// changing at `r'` adds `r' qd` to the reference acceleration (path speed `qd` at most half
/// the velocity limit): 0.5 per s keeps that a quarter of the velocity limit per s.
const RATE_FALL: f64 = 0.5;
const RATE_RISE: f64 = 0.2;

/// The rate a tracking error `share` of the limit asks for.
fn wanted_rate(share: f64) -> f64 {
    let fraction = ((share - SLOW_FROM) / (SLOWEST_AT - SLOW_FROM)).clamp(0.0, 1.0);
    1.0 - fraction * (1.0 - SLOWEST)
}

/// For each of the URDF's joints, its index in the arm's states.
pub(crate) fn arm_order(joints: &[String], arm: &dyn Arm) -> Result<Vec<usize>> {
    joints
        .iter()
        .map(
            |name| match arm.joint_names().iter().position(|a| a == name) {
                Some(i) => Ok(i),
                None => bail!("joint '{name}' is not in {}'s joint states", arm.describe()),
            },
        )
        .collect()
}

/// For each joint of the arm's command, its index among the URDF's joints.
fn command_order(joints: &[String], arm: &dyn Arm) -> Result<Vec<usize>> {
    arm.command_joints()
        .iter()
        .map(|name| match joints.iter().position(|j| j == name) {
            Some(i) => Ok(i),
            None => bail!(
                "joint '{name}' of {}'s command is not in the URDF's chain",
                arm.describe()
            ),
        })
        .collect()
}

/// The most control periods a run of `seconds` may take before the arm's time is said to
/// stand still (a state sent twice costs a period, not time).
fn step_budget(seconds: f64, dt: f64) -> usize {
    (3.0 * seconds / dt).ceil() as usize + 1000
}

/// The loop's buffers and what it has seen so far.
struct Run<'a> {
    arm: &'a mut dyn Arm,
    runtime: &'a mut GroupLoop,
    arm_names: Vec<String>,
    order: Vec<usize>,
    commands: Vec<usize>,
    state: ArmState,
    effort: Vec<f64>,
    recorder: Recorder,
    events: Vec<String>,
    slowest: Option<(f64, f64)>,
    /// The time of the last state the controller stepped on.
    last_time: Option<f64>,
}

impl<'a> Run<'a> {
    /// The loop of `runtime` (controlling `joints`) with `arm`, buffers for `capacity` samples.
    fn new(
        arm: &'a mut dyn Arm,
        runtime: &'a mut GroupLoop,
        joints: &[String],
        capacity: usize,
    ) -> Result<Self> {
        let commands = command_order(joints, arm)?;
        Ok(Self {
            arm_names: arm.joint_names().to_vec(),
            order: arm_order(joints, arm)?,
            effort: vec![0.0; commands.len()],
            commands,
            arm,
            runtime,
            state: ArmState::default(),
            recorder: Recorder::new(joints.len(), capacity),
            events: vec![],
            slowest: None,
            last_time: None,
        })
    }

    /// One control period: measure, control, apply, record.
    fn step(&mut self) -> Result<()> {
        self.arm.measure(&mut self.state)?;
        self.control()
    }

    /// Controls on the state measured: the controller steps by the time since the last
    /// state (a state no later than it gets the last command again, unstepped), a fresh state
    /// is recorded; the command is sent either way.
    fn control(&mut self) -> Result<()> {
        let t = self.state.time;
        if self.last_time.is_some_and(|last| t <= last) {
            return self.arm.apply(&self.effort);
        }
        let dt = self.last_time.map_or(self.arm.period(), |last| t - last);
        self.last_time = Some(t);
        if self.state.fresh {
            let (q, qd) = (&self.state.position, &self.state.velocity);
            self.runtime.record_state(0, &self.arm_names, q, qd, t);
        }
        self.runtime.step(t, dt);
        let efforts = &self.runtime.output().arms[0].efforts;
        for (e, &j) in self.effort.iter_mut().zip(&self.commands) {
            *e = efforts[j];
        }
        self.arm.apply(&self.effort)?;
        if self.state.fresh {
            let (order, state) = (&self.order, &self.state);
            let pick = |j: usize| {
                let a = order[j];
                [state.position[a], state.velocity[a], state.effort[a]]
            };
            self.recorder
                .push(t, pick, &self.runtime.core().reference().q);
        }
        if let Some(event) = self.runtime.output_mut().take_event(0) {
            self.events.push(format!("t = {t:.3} s: {event}"));
        }
        Ok(())
    }

    /// Moves the trajectory's rate towards what the tracking error asks for.
    fn pace(&mut self, speed: &SpeedControl, guard: Guard) {
        let dt = self.arm.period();
        let wanted = wanted_rate(self.recorder.error_now().1 / guard.tracking);
        let rate = speed.rate();
        let next = wanted.clamp(rate - RATE_FALL * dt, rate + RATE_RISE * dt);
        speed.set_rate(next);
        if next < 1.0 && self.slowest.is_none_or(|(slowest, _)| next < slowest) {
            self.slowest = Some((next, self.state.time));
        }
    }

    /// Why the run must stop now, if it must.
    fn stop_reason(&self, guard: Guard, joints: &[String]) -> Option<String> {
        let t = self.state.time;
        if let Some(why) = self.arm.interrupted() {
            return Some(format!("t = {t:.3} s: {why}"));
        }
        if self.runtime.output().holding() {
            let why = self.runtime.core().fault().map(ToString::to_string);
            return Some(format!(
                "t = {t:.3} s: the protections hold the arm: {}",
                why.unwrap_or_else(|| "a fault".into())
            ));
        }
        let (j, error) = self.recorder.error_now();
        (error > guard.tracking).then(|| {
            format!(
                "t = {t:.3} s: joint '{}' is {error:.3} from its reference, beyond the tracking limit {}",
                joints[j], guard.tracking
            )
        })
    }

    fn largest_speed(&self) -> f64 {
        self.state
            .velocity
            .iter()
            .fold(0.0_f64, |m, v| m.max(v.abs()))
    }

    /// Brakes to rest: the reference held where the arm is (or the protections' own brake),
    /// for at most [`BRAKE_SECONDS`] of the arm's time.
    fn brake(&mut self) -> Result<(bool, f64)> {
        self.runtime.cancel_trajectory();
        let start = self.state.time;
        let mut still_since = None;
        for _ in 0..step_budget(BRAKE_SECONDS, self.arm.period()) {
            self.step()?;
            let t = self.state.time;
            if self.largest_speed() >= REST_SPEED {
                still_since = None;
            } else if t - *still_since.get_or_insert(t) >= REST_SECONDS {
                return Ok((true, self.largest_speed()));
            }
            if t - start >= BRAKE_SECONDS {
                break;
            }
        }
        Ok((false, self.largest_speed()))
    }

    /// Follows for `seconds` of the arm's time or until a stop: the reason of a stop.
    fn follow(
        &mut self,
        seconds: f64,
        guard: Guard,
        speed: Option<&SpeedControl>,
        joints: &[String],
        what: &str,
    ) -> Result<Option<String>> {
        let dt = self.arm.period();
        let progress = progress_bar((seconds / dt).round() as usize, what);
        let (start, wall) = (self.state.time, Instant::now());
        for k in 0..step_budget(seconds, dt) {
            self.step()?;
            if let Some(reason) = self.stop_reason(guard, joints) {
                progress.finish_and_clear();
                return Ok(Some(reason));
            }
            if let Some(speed) = speed {
                self.pace(speed, guard);
            }
            let elapsed = self.state.time - start;
            if elapsed >= seconds - 0.5 * dt {
                progress.finish_and_clear();
                return Ok(None);
            }
            if k % 1000 == 999 {
                if progress.is_hidden() && wall.elapsed().as_secs_f64() > 1.0 {
                    progress.set_draw_target(ProgressDrawTarget::stderr());
                }
                progress.set_position((elapsed / dt) as u64);
            }
        }
        progress.finish_and_clear();
        bail!(
            "{}'s time advanced {:.3} s in {} control periods, not the {seconds} s asked: its clock stands still or its states repeat",
            self.arm.describe(),
            self.state.time - start,
            step_budget(seconds, dt)
        )
    }
}

/// `seconds` of the arm under `runtime` (following `follow` from where the arm is), recorded;
/// stopped early as the guard and the protections order; braked to rest at the end, also
/// when the run fails (a measurement or a command the arm refuses).
pub(crate) fn drive(
    arm: &mut dyn Arm,
    runtime: &mut GroupLoop,
    follow: Option<Box<dyn Trajectory>>,
    seconds: f64,
    guard: Guard,
    what: &str,
) -> Result<Recording> {
    let joints = runtime.core().joints().to_vec();
    let capacity = ((seconds + BRAKE_SECONDS) / arm.period()).ceil() as usize + 1;
    let mut run = Run::new(arm, runtime, &joints, capacity)?;
    run.arm.measure(&mut run.state)?;
    let (q, qd, t) = (&run.state.position, &run.state.velocity, run.state.time);
    run.runtime.record_state(0, &run.arm_names, q, qd, t);
    let mut speed = None;
    if let Some(trajectory) = follow {
        let (scaled, control) = TimeScaled::new(trajectory);
        run.runtime.core_mut().follow(Box::new(scaled), t)?;
        control.start();
        speed = guard.slow_down.then_some(control);
    }
    // The first state is answered too (an arm in lockstep waits for it).
    let followed = run
        .control()
        .and_then(|()| run.follow(seconds, guard, speed.as_ref(), &joints, what));
    // A run that fails (the arm's states stop, a command it refuses) is a stop like another:
    // braked, and its recording kept.
    let stop = followed.unwrap_or_else(|e| Some(format!("{e:#}")));
    let tracked = run.recorder.len();
    let braked = run.brake().unwrap_or_else(|e| {
        run.events.push(format!("braking failed: {e:#}"));
        (false, f64::NAN)
    });
    let Run {
        recorder,
        events,
        slowest,
        ..
    } = run;
    let mut recording = recorder.finish(joints, tracked);
    recording.stop = stop;
    recording.braked = Some(braked);
    recording.events = events;
    recording.slowest = slowest;
    Ok(recording)
}

/// A progress bar that shows once a run has taken a second of wall time.
fn progress_bar(steps: usize, what: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(steps as u64), ProgressDrawTarget::hidden());
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {percent:>3}% {msg} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_message(what.to_string());
    bar
}

/// Holds the arm under `runtime` (no trajectory: where it is) until `done`, recording nothing
/// (its buffers hold one sample).
fn hold_until(arm: &mut dyn Arm, runtime: &mut GroupLoop, done: impl Fn() -> bool) -> Result<()> {
    let joints = runtime.core().joints().to_vec();
    let mut run = Run::new(arm, runtime, &joints, 1)?;
    while !done() {
        run.step()?;
        run.recorder.forget();
    }
    Ok(())
}

/// `work` (identification, sizing the gains) on a thread of its own while `holder` holds the
/// arm where it is, when the arm's time runs on meanwhile; on the embedded simulator, whose
/// time stands still, `work` runs alone.
pub(crate) fn hold_while<T: Send>(
    arm: &mut dyn Arm,
    holder: impl FnOnce() -> Result<GroupLoop>,
    work: impl FnOnce() -> T + Send,
) -> Result<T> {
    if !arm.time_runs_on() {
        return Ok(work());
    }
    let mut runtime = holder()?;
    let result = std::thread::scope(|scope| {
        let computing = scope.spawn(work);
        let held = hold_until(arm, &mut runtime, || computing.is_finished());
        if let Err(e) = &held {
            // Said at once: the computation cannot be cut short, and the arm is not held.
            eprintln!("armctl: holding the arm failed while computing: {e:#}");
        }
        let result = computing
            .join()
            .map_err(|_| anyhow::anyhow!("the computation failed (a panic)"))?;
        held.map(|()| result)
    })?;
    if let Some(why) = arm.interrupted() {
        anyhow::bail!("{why}: the arm was held while the computation ended");
    }
    Ok(result)
}
