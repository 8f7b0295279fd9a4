//! The two nodes, written once against [`crate::transport::Transport`].

pub mod controller_node;
pub mod sim_node;
