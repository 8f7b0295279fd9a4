//! The safety layer after every law and the bounds it enforces: effort, soft joint limits, payload.

pub(crate) mod checked_law;
pub(crate) mod configuration_bounds;
pub mod joint_limit_guard;
pub mod payload_compensation;
pub(crate) mod safety;
pub(crate) mod safety_layer;
