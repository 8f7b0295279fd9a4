//! Helpers for the tests of this crate, of the crates above it and of the workspace's
//! end-to-end tests (feature `test-support`; not part of the stable API):
//! random URDF chains with their own plain URDF kinematics ([`random_chain`]), random arms
//! shaped like real ones ([`random_arm`]), and the
//! third-party reference data of the checkout with its loader ([`reference`]).

pub mod random_arm;
pub mod random_chain;
pub mod reference;
