//! The loop every runner drives ([`GroupLoop`]) with the embedded simulator as its host
//! (`armctl_sim::ControlLoop`): each measurement goes in as a joint state at the simulator's
//! time, the loop's step (control, or a hold on a fault) gives the efforts, and what the safety
//! layer clipped and the cores reported is counted. This is how `armctl sim` and the tests run
//! a controller exactly as controller_node runs it.

use std::borrow::BorrowMut;

use armctl_control::ControlError;
use armctl_sim::ControlLoop;
use nalgebra::IsometryMatrix3;

use crate::group_loop::GroupLoop;

/// A lone arm in the simulator's loop.
#[derive(Debug)]
pub struct SimulatedLoop<G> {
    group: G,
    joints: Vec<String>,
    /// What the core reported (holds, resumptions), with the time.
    pub events: Vec<String>,
    /// Steps the core held instead of controlling.
    pub held: usize,
    /// The time of the first step it held, s.
    pub first_held: Option<f64>,
    /// A pose target for a task-space law, given after the first step (which holds the tip
    /// where it starts), with the time to reach it, s.
    pub target_pose: Option<(IsometryMatrix3<f64>, f64)>,
}

impl<G: BorrowMut<GroupLoop>> SimulatedLoop<G> {
    /// `arm` in the loop, its joints in chain order (the simulator's).
    pub fn new(arm: G) -> Self {
        let joints = arm.borrow().core().joints().to_vec();
        Self {
            group: arm,
            joints,
            events: Vec::new(),
            held: 0,
            first_held: None,
            target_pose: None,
        }
    }

    /// The arm.
    pub fn group(&self) -> &GroupLoop {
        self.group.borrow()
    }

    /// The arm, to change parameters during a run.
    pub fn group_mut(&mut self) -> &mut GroupLoop {
        self.group.borrow_mut()
    }

    /// Efforts the safety layer clipped at their limits.
    pub fn clipped(&self) -> usize {
        usize::try_from(self.group().output().saturated).unwrap_or(usize::MAX)
    }

    /// Efforts the joint-limit protection bounded.
    pub fn joint_limited(&self) -> usize {
        usize::try_from(self.group().output().joint_limited).unwrap_or(usize::MAX)
    }
}

impl<G: BorrowMut<GroupLoop>> ControlLoop for SimulatedLoop<G> {
    fn start(&mut self, q: &[f64], qd: &[f64]) {
        self.group
            .borrow_mut()
            .record_state(0, &self.joints, q, qd, 0.0);
    }

    fn command(
        &mut self,
        t: f64,
        dt: f64,
        q: &[f64],
        qd: &[f64],
        effort: &mut [f64],
    ) -> Result<(), ControlError> {
        self.group
            .borrow_mut()
            .record_state(0, &self.joints, q, qd, t);
        self.group_mut().step(t, dt);
        effort.copy_from_slice(&self.group().output().arms[0].efforts);
        if self.group().output().holding() {
            self.held += 1;
            self.first_held.get_or_insert(t);
        }
        if let Some(event) = self.group_mut().output_mut().take_event(0) {
            self.events.push(format!("t = {t:.3} s: {event}"));
        }
        if let Some((pose, duration)) = self.target_pose.take() {
            // In the base link frame; a joint-space law refuses it rather than ignore it.
            let group = self.group_mut();
            group
                .take_target_pose("", pose, duration)
                .map_err(|reason| ControlError::InvalidReference { reason })?;
        }
        Ok(())
    }

    fn sensed_wrench(&mut self, wrench: &[f64; 6]) {
        if let Some(task) = self.group_mut().task_space() {
            task.set_external_wrench(wrench);
        }
    }

    fn reference(&self) -> &[f64] {
        &self.group().core().reference().q
    }

    fn estimates(&self) -> &[f64] {
        self.group().estimates()
    }

    fn external_torques(&self) -> &[f64] {
        self.group().core().external_torques()
    }
}
