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

/// How fast the rate may fall and rise, per s: slowing down at once, speeding up gently.
const RATE_FALL: f64 = 2.0;
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

/// The loop's buffers and what it has seen so far.
struct Run<'a> {
    arm: &'a mut dyn Arm,
    runtime: &'a mut GroupLoop,
    arm_names: Vec<String>,
    order: Vec<usize>,
    state: ArmState,
    effort: Vec<f64>,
    measured: Vec<f64>,
    recorder: Recorder,
    events: Vec<String>,
    slowest: Option<(f64, f64)>,
}

impl Run<'_> {
    /// One control period: measure, control, apply, record.
    fn step(&mut self) -> Result<()> {
        self.arm.measure(&mut self.state)?;
        let t = self.state.time;
        let (q, qd) = (&self.state.position, &self.state.velocity);
        self.runtime.record_state(0, &self.arm_names, q, qd, t);
        self.runtime.step(t, self.arm.period());
        self.effort.fill(0.0);
        for (j, &a) in self.order.iter().enumerate() {
            self.effort[a] = self.runtime.output().arms[0].efforts[j];
        }
        self.arm.apply(&self.effort, &mut self.measured)?;
        let (order, state, measured) = (&self.order, &self.state, &self.measured);
        let pick = |j: usize| {
            let a = order[j];
            [state.position[a], state.velocity[a], measured[a]]
        };
        self.recorder
            .push(t, pick, &self.runtime.core().reference().q);
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

    /// Brakes to rest: the reference held where the arm is (or the protections' own brake).
    fn brake(&mut self) -> Result<(bool, f64)> {
        self.runtime.cancel_trajectory();
        let dt = self.arm.period();
        let (mut still, mut elapsed) = (0.0, 0.0);
        while elapsed < BRAKE_SECONDS {
            self.step()?;
            elapsed += dt;
            still = if self.largest_speed() < REST_SPEED {
                still + dt
            } else {
                0.0
            };
            if still >= REST_SECONDS {
                return Ok((true, self.largest_speed()));
            }
        }
        Ok((false, self.largest_speed()))
    }

    /// Follows for `steps` periods or until a stop: the reason of a stop.
    fn follow(
        &mut self,
        steps: usize,
        guard: Guard,
        speed: Option<&SpeedControl>,
        joints: &[String],
        what: &str,
    ) -> Result<Option<String>> {
        let progress = progress_bar(steps, what);
        let start = Instant::now();
        for k in 0..steps {
            self.step()?;
            if let Some(reason) = self.stop_reason(guard, joints) {
                progress.finish_and_clear();
                return Ok(Some(reason));
            }
            if let Some(speed) = speed {
                self.pace(speed, guard);
            }
            if k % 1000 == 999 {
                if progress.is_hidden() && start.elapsed().as_secs_f64() > 1.0 {
                    progress.set_draw_target(ProgressDrawTarget::stderr());
                }
                progress.set_position(k as u64 + 1);
            }
        }
        progress.finish_and_clear();
        Ok(None)
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
    let order = arm_order(&joints, arm)?;
    let arm_joints = arm.joint_names().len();
    let dt = arm.period();
    let steps = (seconds / dt).round() as usize;
    let capacity = steps + (BRAKE_SECONDS / dt).ceil() as usize + 1;
    let mut run = Run {
        arm_names: arm.joint_names().to_vec(),
        arm,
        runtime,
        order,
        state: ArmState::default(),
        effort: vec![0.0; arm_joints],
        measured: vec![0.0; arm_joints],
        recorder: Recorder::new(joints.len(), capacity),
        events: vec![],
        slowest: None,
    };
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
    let stop = match run.follow(steps, guard, speed.as_ref(), &joints, what) {
        Ok(stop) => stop,
        Err(e) => {
            // The arm is braked whatever failed; a second failure there is the first's.
            let _ = run.brake();
            return Err(e);
        }
    };
    let tracked = run.recorder.len();
    let braked = run.brake()?;
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
