//! What controller_node publishes of an arm after a step, filled from the step's output
//! alone: `~/state` (labelled blocks for plotting), `~/controller_state` (as
//! joint_trajectory_controller fills it, for a joint-space law), `~/external_torques`,
//! `~/external_torque_bounds` and `~/external_wrench_estimate`. The buffers are sized once.

use armctl_runtime::group_loop::{GroupLoop, StepOutput};

use crate::msgs::{
    labelled_array, ControllerState, ControllerStateHumble, Float64MultiArray, JointState,
    JointTrajectoryPoint, Time, WrenchStamped,
};
use crate::transport::{Outgoing, Transport};

/// The messages, reused every step.
#[derive(Debug)]
pub(crate) struct ArmStateMessages {
    state: Float64MultiArray,
    error: Vec<f64>,
    external_torques: JointState,
    external_torque_bounds: JointState,
    external_wrench: WrenchStamped,
    /// For joint-space laws, in the layout chosen at start.
    controller_state: Option<(ControllerState, Option<ControllerStateHumble>)>,
}

impl ArmStateMessages {
    /// Sized for `group`'s arm; `~/controller_state` in `layout` (`controller_state_layout`).
    pub(crate) fn new(group: &mut GroupLoop, layout: &str) -> Self {
        let joints = group.core().joints().to_vec();
        let n = joints.len();
        let external_torques = JointState {
            name: joints,
            effort: vec![0.0; n],
            ..JointState::default()
        };
        let external_wrench = WrenchStamped {
            header: crate::msgs::Header {
                frame_id: group.core().robot().tip_link().to_string(),
                ..Default::default()
            },
            ..WrenchStamped::default()
        };
        Self {
            controller_state: controller_state(group, layout),
            state: Float64MultiArray::default(),
            error: vec![0.0; n],
            external_torque_bounds: external_torques.clone(),
            external_torques,
            external_wrench,
        }
    }

    /// Whether `~/controller_state` is published, and in Humble's layout.
    pub(crate) fn controller_state_layout(&self) -> Option<bool> {
        self.controller_state
            .as_ref()
            .map(|(_, humble)| humble.is_some())
    }

    /// Publishes arm 0's state after the step `out`.
    pub(crate) fn publish<T: Transport>(&mut self, transport: &mut T, out: &StepOutput) {
        let arm = &out.arms[0];
        let state = &arm.state;
        let reference = &state.reference;
        for ((e, r), q) in self.error.iter_mut().zip(&reference.q).zip(&state.position) {
            *e = r - q;
        }
        let holding = [f64::from(u8::from(out.holding()))];
        labelled_array(
            &[
                ("time", &[out.now]),
                ("holding", &holding),
                ("reference", &reference.q),
                ("position", &state.position),
                ("velocity", &state.velocity),
                ("error", &self.error),
                ("effort", &arm.efforts),
                ("estimates", &state.estimates),
                ("saturated", &[out.saturated as f64]),
                ("external_torque", &state.external_torque),
                ("external_torque_bound", &state.external_torque_bound),
                ("external_wrench", &state.external_wrench),
                ("joint_limited", &[out.joint_limited as f64]),
            ],
            &mut self.state,
        );
        transport.publish(Outgoing::State(&self.state));
        self.publish_controller_state(transport, out);
        self.publish_external(transport, out);
    }

    /// `~/external_torques` and their bounds (per joint, named) and `~/external_wrench_estimate`
    /// (in the tip link's frame).
    fn publish_external<T: Transport>(&mut self, transport: &mut T, out: &StepOutput) {
        let state = &out.arms[0].state;
        let stamp = Time::from_seconds(out.stamp);
        let torques = &mut self.external_torques;
        torques.effort.copy_from_slice(&state.external_torque);
        torques.header.stamp = stamp;
        transport.publish(Outgoing::ExternalTorques(torques));
        let bounds = &mut self.external_torque_bounds;
        bounds.effort.copy_from_slice(&state.external_torque_bound);
        bounds.header.stamp = stamp;
        transport.publish(Outgoing::ExternalTorqueBounds(bounds));
        let Some(w) = state.external_wrench_in_tip_axes else {
            return;
        };
        let wrench = &mut self.external_wrench;
        wrench.header.stamp = stamp;
        (
            wrench.wrench.force.x,
            wrench.wrench.force.y,
            wrench.wrench.force.z,
        ) = (w[0], w[1], w[2]);
        (
            wrench.wrench.torque.x,
            wrench.wrench.torque.y,
            wrench.wrench.torque.z,
        ) = (w[3], w[4], w[5]);
        transport.publish(Outgoing::ExternalWrenchEstimate(&self.external_wrench));
    }

    /// `~/controller_state`, as joint_trajectory_controller fills it: the reference, the
    /// measured positions and velocities, their errors, the efforts sent.
    fn publish_controller_state<T: Transport>(&mut self, transport: &mut T, out: &StepOutput) {
        let Some((message, humble)) = &mut self.controller_state else {
            return;
        };
        let arm = &out.arms[0];
        let (reference, q, qd) = (
            &arm.state.reference,
            &arm.state.position,
            &arm.state.velocity,
        );
        message.header.stamp = Time::from_seconds(out.stamp);
        message.reference.positions.clone_from(&reference.q);
        message.reference.velocities.clone_from(&reference.qd);
        message.reference.accelerations.clone_from(&reference.qdd);
        message.feedback.positions.clone_from_slice(q);
        message.feedback.velocities.clone_from_slice(qd);
        for j in 0..q.len() {
            message.error.positions[j] = reference.q[j] - q[j];
            message.error.velocities[j] = reference.qd[j] - qd[j];
        }
        message.output.effort.clone_from(&arm.command);
        match humble {
            Some(humble) => {
                humble.copy_from(message);
                transport.publish(Outgoing::ControllerStateHumble(humble));
            }
            None => transport.publish(Outgoing::ControllerState(message)),
        }
    }
}

/// The `~/controller_state` buffers of a joint-space law (none for a task-space one, whose
/// reference is a pose): sized for the joints, with the Humble buffer when the layout is
/// Humble's (`controller_state_layout`, or `ROS_DISTRO` for `auto`).
fn controller_state(
    group: &mut GroupLoop,
    layout: &str,
) -> Option<(ControllerState, Option<ControllerStateHumble>)> {
    if group.task_space().is_some() {
        return None;
    }
    let joints = group.core().joints().to_vec();
    let n = joints.len();
    let measured = JointTrajectoryPoint {
        positions: vec![0.0; n],
        velocities: vec![0.0; n],
        ..JointTrajectoryPoint::default()
    };
    let state = ControllerState {
        joint_names: joints,
        feedback: measured.clone(),
        error: measured,
        output: JointTrajectoryPoint {
            effort: vec![0.0; n],
            ..JointTrajectoryPoint::default()
        },
        speed_scaling_factor: 1.0,
        ..ControllerState::default()
    };
    let humble = match layout {
        "humble" => true,
        "jazzy" => false,
        _ => std::env::var("ROS_DISTRO").is_ok_and(|d| d.trim() == "humble"),
    };
    Some((state, humble.then(ControllerStateHumble::default)))
}
