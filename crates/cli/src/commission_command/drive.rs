//! One commissioning run on the arm: the controller (a [`GroupLoop`], as controller_node runs
//! it, protections on) in the loop with the arm, every state recorded. A run stops early on a
//! hold the protections order (collision, over-speed, an implausible state) or on a tracking
//! error beyond the guard; it then brakes the arm to rest (the reference held where the arm
//! is) and keeps what was recorded.

use std::time::Instant;

use anyhow::{bail, Result};
use armctl_control::reference::{SpeedControl, TimeScaled, Trajectory};
use armctl_ident::JointLog;
use armctl_runtime::group_loop::GroupLoop;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::arm::{Arm, ArmState};

/// Below this speed (rad/s, m/s) on every joint the arm is at rest.
pub(crate) const REST_SPEED: f64 = 0.01;

/// How long the arm must stay below [`REST_SPEED`] to count as braked, s.
const REST_SECONDS: f64 = 0.2;

/// The longest a brake may take before the run says the arm did not come to rest, s.
const BRAKE_SECONDS: f64 = 5.0;

/// What a run records.
#[derive(Debug, Clone)]
pub(crate) struct Recording {
    /// Measured positions, velocities and efforts, the URDF's joint order.
    pub(crate) log: JointLog,
    /// The reference positions at each sample.
    pub(crate) reference: Vec<Vec<f64>>,
    /// Why the run stopped early, if it did.
    pub(crate) stop: Option<String>,
    /// After a stop: whether the arm came to rest, and its largest speed at the end.
    pub(crate) braked: Option<(bool, f64)>,
    /// What the protections reported, with times.
    pub(crate) events: Vec<String>,
    /// The slowest rate the trajectory was run at, and when (none: never slowed).
    pub(crate) slowest: Option<(f64, f64)>,
}

impl Recording {
    /// The largest tracking error before any stop: the joint and the error.
    pub(crate) fn largest_error(&self) -> (usize, f64) {
        let mut worst = (0, 0.0);
        for (r, q) in self.reference.iter().zip(&self.log.position) {
            for (j, (r, q)) in r.iter().zip(q).enumerate() {
                if (r - q).abs() > worst.1 {
                    worst = (j, (r - q).abs());
                }
            }
        }
        worst
    }

    /// RMS tracking error per joint over the samples before any stop.
    pub(crate) fn tracking_rms(&self) -> Vec<f64> {
        let n = self.log.joint_names.len();
        let samples = self.reference.len().max(1) as f64;
        (0..n)
            .map(|j| {
                let sum: f64 = self
                    .reference
                    .iter()
                    .zip(&self.log.position)
                    .map(|(r, q)| (r[j] - q[j]).powi(2))
                    .sum();
                (sum / samples).sqrt()
            })
            .collect()
    }
}

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
fn arm_order(joints: &[String], arm: &dyn Arm) -> Result<Vec<usize>> {
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
    order: Vec<usize>,
    state: ArmState,
    effort: Vec<f64>,
    measured: Vec<f64>,
    recording: Recording,
}

impl Run<'_> {
    /// One control period: measure, control, apply, record.
    fn step(&mut self) -> Result<()> {
        self.arm.measure(&mut self.state)?;
        let t = self.state.time;
        let names = self.arm.joint_names().to_vec();
        self.runtime
            .record_state(0, &names, &self.state.position, &self.state.velocity, t);
        self.runtime.step(t, self.arm.period());
        self.effort.fill(0.0);
        for (j, &a) in self.order.iter().enumerate() {
            self.effort[a] = self.runtime.output().arms[0].efforts[j];
        }
        self.arm.apply(&self.effort, &mut self.measured)?;
        let pick = |v: &[f64]| self.order.iter().map(|&a| v[a]).collect::<Vec<_>>();
        let log = &mut self.recording.log;
        log.time.push(t);
        log.position.push(pick(&self.state.position));
        if let Some(v) = log.velocity.as_mut() {
            v.push(pick(&self.state.velocity));
        }
        log.effort.push(pick(&self.measured));
        let reference = self.runtime.core().reference().q.clone();
        self.recording.reference.push(reference);
        if let Some(event) = self.runtime.output_mut().take_event(0) {
            self.recording.events.push(format!("t = {t:.3} s: {event}"));
        }
        Ok(())
    }

    /// The largest tracking error now.
    fn error_now(&self) -> (usize, f64) {
        let (Some(q), Some(r)) = (
            self.recording.log.position.last(),
            self.recording.reference.last(),
        ) else {
            return (0, 0.0);
        };
        q.iter()
            .zip(r)
            .map(|(q, r)| (q - r).abs())
            .enumerate()
            .fold((0, 0.0), |w, (j, e)| if e > w.1 { (j, e) } else { w })
    }

    /// Moves the trajectory's rate towards what the tracking error asks for.
    fn pace(&mut self, speed: &SpeedControl, guard: Guard) {
        let dt = self.arm.period();
        let wanted = wanted_rate(self.error_now().1 / guard.tracking);
        let rate = speed.rate();
        let next = wanted.clamp(rate - RATE_FALL * dt, rate + RATE_RISE * dt);
        speed.set_rate(next);
        if next < 1.0
            && self
                .recording
                .slowest
                .is_none_or(|(slowest, _)| next < slowest)
        {
            self.recording.slowest = Some((next, self.state.time));
        }
    }

    /// Why the run must stop now, if it must.
    fn stop_reason(&self, guard: Guard) -> Option<String> {
        let t = self.state.time;
        if self.runtime.output().holding() {
            let why = self.runtime.core().fault().map(ToString::to_string);
            return Some(format!(
                "t = {t:.3} s: the protections hold the arm: {}",
                why.unwrap_or_else(|| "a fault".into())
            ));
        }
        let (j, error) = self.error_now();
        (error > guard.tracking).then(|| {
            format!(
                "t = {t:.3} s: joint '{}' is {error:.3} from its reference, beyond the tracking limit {}",
                self.recording.log.joint_names[j], guard.tracking
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
}

/// `seconds` of the arm under `runtime` (following `follow` from where the arm is), recorded; stopped and
/// braked early as the guard and the protections order. Ends holding the arm where it is.
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
    let mut run = Run {
        arm,
        runtime,
        order,
        state: ArmState::default(),
        effort: vec![0.0; arm_joints],
        measured: vec![0.0; arm_joints],
        recording: Recording {
            log: JointLog {
                joint_names: joints,
                velocity: Some(Vec::with_capacity(steps)),
                ..JointLog::default()
            },
            reference: Vec::with_capacity(steps),
            stop: None,
            braked: None,
            events: vec![],
            slowest: None,
        },
    };
    run.arm.measure(&mut run.state)?;
    let names = run.arm.joint_names().to_vec();
    let (q, qd, t) = (&run.state.position, &run.state.velocity, run.state.time);
    run.runtime.record_state(0, &names, q, qd, t);
    let mut speed = None;
    if let Some(trajectory) = follow {
        let (scaled, control) = TimeScaled::new(trajectory);
        run.runtime.core_mut().follow(Box::new(scaled), t)?;
        control.start();
        speed = guard.slow_down.then_some(control);
    }
    let progress = progress_bar(steps, what);
    let start = Instant::now();
    for k in 0..steps {
        run.step()?;
        if let Some(reason) = run.stop_reason(guard) {
            run.recording.stop = Some(reason);
            run.recording.braked = Some(run.brake()?);
            break;
        }
        if let Some(speed) = &speed {
            run.pace(speed, guard);
        }
        if k % 1000 == 999 {
            if progress.is_hidden() && start.elapsed().as_secs_f64() > 1.0 {
                progress.set_draw_target(ProgressDrawTarget::stderr());
            }
            progress.set_position(k as u64 + 1);
        }
    }
    progress.finish_and_clear();
    if run.recording.stop.is_none() {
        run.runtime.cancel_trajectory();
    }
    Ok(run.recording)
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
