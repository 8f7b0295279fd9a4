//! The nodes, written once against [`crate::transport::Transport`].

mod arm_state_messages;
pub mod controller_node;
pub mod cooperative_node;
mod lockstep;
mod loop_diagnostics;
mod loop_node;
pub mod sim_node;
mod trajectory_action;

use armctl_runtime::configure::COOPERATIVE;
use armctl_runtime::ros_args::RosArgs;
use armctl_runtime::startup::NodeStart;

use crate::transport::{NodeLogic, NodeSpec, Transport};
use crate::RosError;

/// What the controller_node program runs: one arm under a registered law, or two arms under
/// `cooperative`.
#[derive(Debug)]
pub enum AnyControllerNode {
    /// One arm.
    One(Box<controller_node::ControllerNode>),
    /// Two arms holding one object.
    Pair(Box<cooperative_node::CooperativeNode>),
}

impl AnyControllerNode {
    /// Configures from the command line: the `controller` parameter picks the node.
    pub fn new(args: &RosArgs) -> Result<Self, RosError> {
        Self::from_start(&NodeStart::new(args, "controller_node")?)
    }

    /// Configures from the start values: the `controller` parameter picks the node.
    pub fn from_start(start: &NodeStart) -> Result<Self, RosError> {
        Ok(if start.controller() == Some(COOPERATIVE) {
            Self::Pair(Box::new(cooperative_node::CooperativeNode::from_start(
                start,
            )?))
        } else {
            Self::One(Box::new(controller_node::ControllerNode::from_start(
                start,
            )?))
        })
    }
}

impl NodeLogic for AnyControllerNode {
    fn spec(&self) -> &NodeSpec {
        match self {
            Self::One(node) => node.spec(),
            Self::Pair(node) => node.spec(),
        }
    }

    async fn run<T: Transport + Send>(self, transport: &mut T) -> Result<(), RosError> {
        match self {
            Self::One(node) => node.run(transport).await,
            Self::Pair(node) => node.run(transport).await,
        }
    }
}
