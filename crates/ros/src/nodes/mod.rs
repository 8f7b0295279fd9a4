//! The nodes, written once against [`crate::transport::Transport`].

mod arm_state_messages;
pub mod controller_node;
mod lockstep;
mod loop_diagnostics;
pub mod sim_node;
mod trajectory_action;
