//! Without control_msgs installed when r2r generated its bindings (no `ros_control_msgs`,
//! build.rs), rcl cannot serve FollowJointTrajectory: no action server exists, and this type
//! has no values, so the transport's action calls are never reached.

use super::Pump;
use crate::follow_joint_trajectory::{ActionOutput, ActionRequest, ActionResponse};
use crate::RosError;

/// No action server: the type has no values.
pub(super) enum TrajectoryActionServer {}

impl TrajectoryActionServer {
    /// None can be served (the start log says why).
    pub(super) fn new(
        _node: &mut r2r::Node,
        _name: &str,
    ) -> Result<Option<(Self, Vec<Pump>)>, RosError> {
        Ok(None)
    }

    pub(super) async fn next(&mut self) -> Option<(u64, ActionRequest)> {
        match *self {}
    }

    pub(super) fn respond(&mut self, _id: u64, _response: ActionResponse) -> Result<(), String> {
        match *self {}
    }

    pub(super) fn publish(&self, _output: ActionOutput<'_>) -> Result<(), String> {
        match *self {}
    }
}
