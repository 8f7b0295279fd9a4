//! `~/controller_state` on rcl, when the installed control_msgs has Jazzy's
//! JointTrajectoryControllerState (`ros_controller_state_jazzy`, build.rs): r2r binds the
//! installed package's layout, and Humble's (with `desired` and `actual`) is published by the
//! DDS backend only.

use r2r::control_msgs::msg as control;

use super::control_msgs::multi_dof_point_out;
use super::convert::{header_in, header_out, point_in, point_out, texts, RclMessage};
use crate::msgs;

impl RclMessage for msgs::ControllerState {
    type Rcl = control::JointTrajectoryControllerState;

    /// Read back by tests only (a node publishes it); the multi-DOF parts stay empty.
    fn from_rcl(m: Self::Rcl) -> Self {
        Self {
            header: header_in(&m.header),
            joint_names: m.joint_names,
            reference: point_in(m.reference),
            feedback: point_in(m.feedback),
            error: point_in(m.error),
            output: point_in(m.output),
            speed_scaling_factor: m.speed_scaling_factor,
            ..Self::default()
        }
    }

    fn to_rcl(&self) -> Self::Rcl {
        control::JointTrajectoryControllerState {
            header: header_out(&self.header),
            joint_names: texts(&self.joint_names),
            reference: point_out(&self.reference),
            feedback: point_out(&self.feedback),
            error: point_out(&self.error),
            output: point_out(&self.output),
            multi_dof_joint_names: texts(&self.multi_dof_joint_names),
            multi_dof_reference: multi_dof_point_out(&self.multi_dof_reference),
            multi_dof_feedback: multi_dof_point_out(&self.multi_dof_feedback),
            multi_dof_error: multi_dof_point_out(&self.multi_dof_error),
            multi_dof_output: multi_dof_point_out(&self.multi_dof_output),
            speed_scaling_factor: self.speed_scaling_factor,
        }
    }
}
