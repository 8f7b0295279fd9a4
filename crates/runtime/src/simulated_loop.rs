//! The controller core driving the embedded simulator (`armctl_sim::ControlLoop`): each
//! measurement goes in as a joint state, the core's step (control, or a hold on a fault) gives
//! the efforts, and what the safety layer clipped and the core reported is counted. This is
//! how `armctl sim` and the tests run a controller exactly as controller_node runs it.

use armctl_control::{ControlError, Controller};
use armctl_sim::ControlLoop;
use nalgebra::IsometryMatrix3;

use crate::controller_core::ControllerCore;

/// The core in the simulator's loop.
#[derive(Debug)]
pub struct SimulatedLoop<'a> {
    core: &'a mut ControllerCore,
    joints: Vec<String>,
    /// What the core reported (holds, resumptions), with the time.
    pub events: Vec<String>,
    /// Efforts the safety layer clipped at their limits.
    pub clipped: usize,
    /// Steps the core held instead of controlling.
    pub held: usize,
    /// A pose target for a task-space law, given after the first step (which holds the tip
    /// where it starts), with the time to reach it, s.
    pub target_pose: Option<(IsometryMatrix3<f64>, f64)>,
}

impl<'a> SimulatedLoop<'a> {
    /// `core` in the loop, its joints in chain order (the simulator's).
    pub fn new(core: &'a mut ControllerCore) -> Self {
        let joints = core.joints().to_vec();
        Self {
            core,
            joints,
            events: Vec::new(),
            clipped: 0,
            held: 0,
            target_pose: None,
        }
    }
}

impl ControlLoop for SimulatedLoop<'_> {
    fn start(&mut self, q: &[f64], qd: &[f64]) {
        self.core.on_joint_state(&self.joints, q, qd, 0.0);
    }

    fn command(
        &mut self,
        t: f64,
        dt: f64,
        q: &[f64],
        qd: &[f64],
        effort: &mut [f64],
    ) -> Result<(), ControlError> {
        self.core.on_joint_state(&self.joints, q, qd, t);
        let report = self.core.step(t, dt, effort);
        self.clipped += report.safety.saturated;
        self.held += usize::from(report.fault.is_some());
        if let Some(event) = report.event {
            self.events.push(format!("t = {t:.3} s: {event}"));
        }
        if let Some((pose, duration)) = self.target_pose.take() {
            if let Some(task) = self.core.controller_mut().task_space() {
                task.set_target_pose(pose, duration)?;
            }
        }
        Ok(())
    }

    fn sensed_wrench(&mut self, wrench: &[f64; 6]) {
        if let Some(task) = self.core.controller_mut().task_space() {
            task.set_external_wrench(wrench);
        }
    }

    fn reference(&self) -> &[f64] {
        &self.core.reference().q
    }

    fn estimates(&self) -> &[f64] {
        self.core.controller().estimates()
    }
}
