//! What a step gives, in one value a runner reads and publishes without asking the loop
//! again: each arm's command in command order (and whether it was sent), its efforts in chain
//! order, its report (fault, event, what the safety layer did) and the state a node publishes
//! (`~/state`, `~/controller_state`, the external torques and wrench); what the step changed
//! beyond the arms' events; the counts of what the safety layer bounded; whether the state
//! is due.

use armctl_control::JointReference;

use crate::controller_core::{ControllerCore, CoreEvent, Fault, StepReport};
use crate::frames::ChainFrames;
use crate::node_configuration::in_command_order;

/// The last step's outcome.
#[derive(Debug, Clone)]
pub struct StepOutput {
    /// The step's time on the loop's clock, s.
    pub now: f64,
    /// The same as a ROS stamp (the clock's epoch added), s.
    pub stamp: f64,
    /// Per arm, in the group's order.
    pub arms: Vec<ArmOutput>,
    /// What the step changed beyond the arms' own events (a pair's move cancelled by a hold),
    /// to tell the operator once.
    pub notice: Option<String>,
    /// Efforts the safety layer clipped at their limits since the start, all arms.
    pub saturated: u64,
    /// Efforts the joint-limit protection bounded since the start, all arms.
    pub joint_limited: u64,
    /// A pair's object: its reference and where it is (world frame, m).
    pub object: Option<ObjectOutput>,
    /// Whether the state is due for publishing (`state_publish_rate`, once an arm was
    /// commanded); the loop counts it as published.
    pub state_due: bool,
}

/// The object a pair holds, after a step (world frame, m).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ObjectOutput {
    /// Where the law wants it.
    pub reference: [f64; 3],
    /// Where it is, from both arms' grasps.
    pub position: [f64; 3],
}

/// One arm's part of a step.
#[derive(Debug, Clone)]
pub struct ArmOutput {
    /// Whether the step commanded the arm (not before its first state: nothing to compute
    /// from, and a guess is worse than nothing).
    pub sent: bool,
    /// The efforts in chain order.
    pub efforts: Vec<f64>,
    /// The same in command order (the `joints` parameter): what is sent.
    pub command: Vec<f64>,
    /// The step's fault, event and safety report.
    pub report: StepReport,
    /// The arm's state after the step.
    pub state: ArmState,
}

/// What a node publishes of an arm after a step, chain order.
#[derive(Debug, Clone)]
pub struct ArmState {
    /// The reference in effect.
    pub reference: JointReference,
    /// The newest measured positions.
    pub position: Vec<f64>,
    /// The newest measured velocities.
    pub velocity: Vec<f64>,
    /// The law's parameter estimates (an adaptive law's), else empty.
    pub estimates: Vec<f64>,
    /// The estimated external joint torques.
    pub external_torque: Vec<f64>,
    /// Their bounds from model uncertainty (what the estimate may show with no contact).
    pub external_torque_bound: Vec<f64>,
    /// The estimated external wrench on the tip, base link axes, the moment about the tip.
    pub external_wrench: [f64; 6],
    /// The same in the tip link's axes, when the state is due and a valid state came.
    pub external_wrench_in_tip_axes: Option<[f64; 6]>,
    /// When the trajectory being followed ends (loop time), if one is.
    pub trajectory_end: Option<f64>,
}

impl StepOutput {
    /// Before any step of `cores` (whose law has `estimates`): nothing sent; each arm's
    /// buffers as long as its core's, so that no step allocates.
    pub(crate) fn new(cores: &[ControllerCore], estimates: &[f64]) -> Self {
        let arm = |core: &ControllerCore| {
            let n = core.joints().len();
            ArmOutput {
                sent: false,
                efforts: vec![0.0; n],
                command: vec![0.0; n],
                report: StepReport::default(),
                state: ArmState {
                    reference: core.reference().clone(),
                    position: vec![0.0; n],
                    velocity: vec![0.0; n],
                    estimates: estimates.to_vec(),
                    external_torque: vec![0.0; n],
                    external_torque_bound: vec![0.0; n],
                    external_wrench: [0.0; 6],
                    external_wrench_in_tip_axes: None,
                    trajectory_end: None,
                },
            }
        };
        Self {
            now: 0.0,
            stamp: 0.0,
            arms: cores.iter().map(arm).collect(),
            notice: None,
            saturated: 0,
            joint_limited: 0,
            object: None,
            state_due: false,
        }
    }

    /// Arm `a`'s command in command order, if the step commanded it.
    pub fn sent(&self, a: usize) -> Option<&[f64]> {
        let arm = &self.arms[a];
        arm.sent.then_some(arm.command.as_slice())
    }

    /// Whether the step commanded any arm.
    pub fn sent_any(&self) -> bool {
        self.arms.iter().any(|arm| arm.sent)
    }

    /// Whether any arm held in the step.
    pub fn holding(&self) -> bool {
        self.arms.iter().any(|arm| arm.report.fault.is_some())
    }

    /// Arm `a`'s event, taken out of its report (to keep without a copy).
    pub fn take_event(&mut self, a: usize) -> Option<CoreEvent> {
        self.arms[a].report.event.take()
    }
}

impl ArmOutput {
    /// Takes the step's report of `core` with the counts, the command in command `order`
    /// (when sent) and the arm's state; the wrench in the tip's axes only when `due`.
    pub(crate) fn take_step(
        &mut self,
        (core, estimates): (&ControllerCore, &[f64]),
        (order, frames): (&[usize], &mut ChainFrames),
        due: bool,
    ) {
        self.sent = self.report.fault != Some(Fault::NoState);
        if self.sent {
            in_command_order(order, &self.efforts, &mut self.command);
        }
        let state = &mut self.state;
        state.take_reference(core.reference());
        let (q, qd) = core.measured();
        copy(&mut state.position, q);
        copy(&mut state.velocity, qd);
        copy(&mut state.estimates, estimates);
        copy(&mut state.external_torque, core.external_torques());
        copy(
            &mut state.external_torque_bound,
            core.external_torque_bounds(),
        );
        state.external_wrench = *core.external_wrench();
        state.trajectory_end = core.trajectory_end();
        state.external_wrench_in_tip_axes = due
            .then(|| {
                let q = core.last_valid_q()?;
                frames
                    .in_tip_axes(core.robot(), &state.external_wrench, q)
                    .ok()
            })
            .flatten();
    }
}

impl ArmState {
    /// `reference` becomes the reference in effect, without allocating.
    pub(crate) fn take_reference(&mut self, reference: &JointReference) {
        copy(&mut self.reference.q, &reference.q);
        copy(&mut self.reference.qd, &reference.qd);
        copy(&mut self.reference.qdd, &reference.qdd);
    }
}

/// `to` becomes `from`, reusing its storage (no allocation once it is long enough).
fn copy(to: &mut Vec<f64>, from: &[f64]) {
    to.clear();
    to.extend_from_slice(from);
}
