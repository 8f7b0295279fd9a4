//! The services a node serves, written once above the transports. A backend creates the
//! servers and carries raw requests and replies (armctl's wire structs, whose CDR form is the
//! DDS payload and which the rcl backend converts to r2r's types); what a request means, what
//! the node is asked, and the reply and announcement that follow from its answer are here, the
//! same for both.

pub mod action;
pub mod parameter_msgs;
pub mod parameters;
mod pending;

use crate::transport::{NodeSpec, Topic};

/// Where every node announces changed parameter values.
pub const PARAMETER_EVENTS: &str = "/parameter_events";

/// What a node publishes: its own publications (their order is [`NodeSpec::publications`]'s,
/// so a slot means the same) and then what its services publish, `/parameter_events`.
pub fn publications(spec: &NodeSpec) -> Vec<(Topic, String)> {
    let mut all = spec.publications.clone();
    all.push((Topic::ParameterEvents, PARAMETER_EVENTS.into()));
    all
}

/// The slot of `/parameter_events` among [`publications`]: a node's own announcements go there,
/// whatever else of that type its spec publishes.
pub fn parameter_events_slot(spec: &NodeSpec) -> usize {
    spec.publications.len()
}
