//! A controller against the simulator, one step at a time, with everything recorded.
//!
//! Per step: measure (with the configured noise), let `hook` act (change a parameter, report
//! progress), command (a [`ControlLoop`]: a bare controller, or the runtime's controller core
//! with its safety rules), step the simulator. The log holds the true position at t and the
//! effort the arm received.

use std::time::Instant;

use armctl_control::reference::Trajectory;
use armctl_control::{ControlError, Controller, JointReference, JointState};

use crate::{SimError, Simulator};

/// One step's values, as recorded.
struct Row<'a> {
    t: f64,
    q: &'a [f64],
    qd: &'a [f64],
    reference: &'a [f64],
    commanded: &'a [f64],
    applied: &'a [f64],
    estimates: &'a [f64],
    contact: &'a [f64],
    external_estimate: &'a [f64],
    external_true: &'a [f64],
}

/// What a run recorded (per-joint columns).
#[derive(Debug, Clone, Default)]
pub struct RunLog {
    /// Time of each step, s.
    pub time: Vec<f64>,
    /// True joint positions at each time.
    pub q: Vec<Vec<f64>>,
    /// True joint velocities at each time.
    pub qd: Vec<Vec<f64>>,
    /// Reference positions.
    pub reference: Vec<Vec<f64>>,
    /// Efforts commanded by the controller.
    pub commanded: Vec<Vec<f64>>,
    /// Efforts applied to the arm (after saturation and delay).
    pub effort: Vec<Vec<f64>>,
    /// Controller estimates (adaptive controllers), one column per estimate.
    pub estimates: Vec<Vec<f64>>,
    /// Contact force on the arm at each contact point of the scene after the step, three
    /// columns (x, y, z; N, base link axes) per point.
    pub contact: Vec<Vec<f64>>,
    /// The external joint torques the control estimated at each step (no columns without an
    /// estimate).
    pub external_estimate: Vec<Vec<f64>>,
    /// The joint torques the world (contacts, the external wrench) applied over the step from
    /// each row's state: the truth for `external_estimate`.
    pub external_true: Vec<Vec<f64>>,
    /// The names of the contact points, in the order of `contact`.
    pub contact_names: Vec<String>,
    /// Commands clipped at the effort limit, summed over joints and steps.
    pub saturated: usize,
    /// Wall-clock time of the loop, s.
    pub wall_seconds: f64,
}

impl RunLog {
    /// Tracking error `reference - q` of joint `i` at every step.
    pub fn error(&self, i: usize) -> Vec<f64> {
        self.reference[i]
            .iter()
            .zip(&self.q[i])
            .map(|(r, q)| r - q)
            .collect()
    }

    /// RMS of joint `i`'s error over the steps in `[from, to)` seconds.
    pub fn rms_error(&self, i: usize, from: f64, to: f64) -> f64 {
        let errors: Vec<f64> = self
            .error(i)
            .into_iter()
            .zip(&self.time)
            .filter(|(_, t)| **t >= from && **t < to)
            .map(|(e, _)| e)
            .collect();
        (errors.iter().map(|e| e * e).sum::<f64>() / errors.len().max(1) as f64).sqrt()
    }

    /// RMS over all joints of the error in `[from, to)` seconds.
    pub fn rms_error_all(&self, from: f64, to: f64) -> f64 {
        let n = self.q.len();
        ((0..n)
            .map(|i| self.rms_error(i, from, to).powi(2))
            .sum::<f64>()
            / n.max(1) as f64)
            .sqrt()
    }

    fn record(&mut self, row: &Row<'_>) {
        self.time.push(row.t);
        let columns = [
            (&mut self.q, row.q),
            (&mut self.qd, row.qd),
            (&mut self.reference, row.reference),
            (&mut self.commanded, row.commanded),
            (&mut self.effort, row.applied),
            (&mut self.estimates, row.estimates),
            (&mut self.contact, row.contact),
            (&mut self.external_estimate, row.external_estimate),
            (&mut self.external_true, row.external_true),
        ];
        for (log, values) in columns {
            for (column, &v) in log.iter_mut().zip(values) {
                column.push(v);
            }
        }
    }
}

/// The control side of a closed loop: the efforts for each measured state.
pub trait ControlLoop {
    /// Starts from the first measurement.
    fn start(&mut self, q: &[f64], qd: &[f64]);
    /// The efforts for the state measured at `t`, `dt` after the previous step.
    fn command(
        &mut self,
        t: f64,
        dt: f64,
        q: &[f64],
        qd: &[f64],
        effort: &mut [f64],
    ) -> Result<(), ControlError>;
    /// The reference positions in effect (recorded).
    fn reference(&self) -> &[f64];
    /// Estimates of adaptive laws (recorded; empty otherwise).
    fn estimates(&self) -> &[f64];
    /// The force/torque sensor's reading before the command, `[f; m]` about the tip, base
    /// link axes (when the scene has a sensor): for laws that use a measured wrench.
    fn sensed_wrench(&mut self, wrench: &[f64; 6]) {
        let _ = wrench;
    }
    /// The external joint torques the control estimates (recorded; empty when it has no
    /// estimate).
    fn external_torques(&self) -> &[f64] {
        &[]
    }
}

/// A bare controller tracking a trajectory, with nothing between it and the arm: what the
/// controller tests measure. (Runners for people go through the runtime's controller core,
/// with its safety rules.)
pub struct DirectControl<'a> {
    controller: &'a mut dyn Controller,
    trajectory: &'a dyn Trajectory,
    reference: JointReference,
}

impl<'a> DirectControl<'a> {
    /// `controller` following `trajectory` from time 0.
    pub fn new(controller: &'a mut dyn Controller, trajectory: &'a dyn Trajectory) -> Self {
        Self {
            controller,
            trajectory,
            reference: JointReference::hold(&[]),
        }
    }
}

impl ControlLoop for DirectControl<'_> {
    fn start(&mut self, q: &[f64], qd: &[f64]) {
        self.reference = JointReference::hold(q);
        self.controller.reset(&JointState { q, qd });
    }

    fn command(
        &mut self,
        t: f64,
        dt: f64,
        q: &[f64],
        qd: &[f64],
        effort: &mut [f64],
    ) -> Result<(), ControlError> {
        self.trajectory.sample(t, &mut self.reference);
        self.controller
            .update(&JointState { q, qd }, &self.reference, dt, effort)
    }

    fn reference(&self) -> &[f64] {
        &self.reference.q
    }

    fn estimates(&self) -> &[f64] {
        self.controller.estimates()
    }

    fn sensed_wrench(&mut self, wrench: &[f64; 6]) {
        if let Some(task) = self.controller.task_space() {
            task.set_external_wrench(wrench);
        }
    }
}

/// Runs `steps` steps of `sim.config().dt` with a bare controller ([`DirectControl`]).
/// `hook(step, t, controller)` runs before each controller update.
pub fn run_closed_loop(
    sim: &mut Simulator,
    controller: &mut dyn Controller,
    trajectory: &dyn Trajectory,
    steps: usize,
    mut hook: impl FnMut(usize, f64, &mut dyn Controller),
) -> Result<RunLog, SimError> {
    let mut control = DirectControl::new(controller, trajectory);
    run_loop(sim, &mut control, steps, |k, t, c| hook(k, t, c.controller))
}

/// Runs `steps` steps of `sim.config().dt`: measure (with the configured noise), let `hook`
/// act, command, step the simulator, record.
pub fn run_loop<L: ControlLoop>(
    sim: &mut Simulator,
    control: &mut L,
    steps: usize,
    mut hook: impl FnMut(usize, f64, &mut L),
) -> Result<RunLog, SimError> {
    let n = sim.q().len();
    let dt = sim.config().dt;
    let columns =
        |k: usize| -> Vec<Vec<f64>> { (0..k).map(|_| Vec::with_capacity(steps)).collect() };
    let (mut q, mut qd, mut effort, mut q_true) =
        (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let mut qd_true = vec![0.0; n];
    sim.measure(&mut q, &mut qd)?;
    control.start(&q, &qd);
    let mut log = RunLog {
        time: Vec::with_capacity(steps),
        q: columns(n),
        qd: columns(n),
        reference: columns(n),
        commanded: columns(n),
        effort: columns(n),
        estimates: columns(control.estimates().len()),
        contact: columns(3 * sim.contact_forces().len()),
        external_estimate: columns(control.external_torques().len()),
        external_true: columns(n),
        contact_names: sim
            .config()
            .scene
            .points
            .iter()
            .map(|p| p.name.clone())
            .collect(),
        ..RunLog::default()
    };
    let mut contact = vec![0.0; 3 * sim.contact_forces().len()];
    let mut external_true = vec![0.0; n];
    let start = Instant::now();
    for k in 0..steps {
        let t = k as f64 * dt;
        sim.measure(&mut q, &mut qd)?;
        hook(k, t, control);
        if let Some(wrench) = sim.sensed_wrench_at_tip() {
            control.sensed_wrench(&wrench);
        }
        control
            .command(t, dt, &q, &qd, &mut effort)
            .map_err(|source| SimError::Controller { time: t, source })?;
        q_true.copy_from_slice(sim.q());
        qd_true.copy_from_slice(sim.qd());
        log.saturated += sim.step(&effort)?.saturated;
        external_true.copy_from_slice(sim.external_torques());
        for (slot, force) in contact.chunks_mut(3).zip(sim.contact_forces()) {
            slot.copy_from_slice(force.as_slice());
        }
        log.record(&Row {
            t,
            q: &q_true,
            qd: &qd_true,
            reference: control.reference(),
            commanded: &effort,
            applied: sim.applied_effort(),
            estimates: control.estimates(),
            contact: &contact,
            external_estimate: control.external_torques(),
            external_true: &external_true,
        });
    }
    log.wall_seconds = start.elapsed().as_secs_f64();
    Ok(log)
}
