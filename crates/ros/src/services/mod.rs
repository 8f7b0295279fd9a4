//! The services a node serves, written once for both backends, which use them (this module
//! knows no transport). A backend creates the servers and carries raw requests and replies:
//! armctl's wire structs, whose CDR form is the DDS payload and which the rcl backend converts
//! to r2r's types. What a request means, what the node is asked, and the reply and announcement
//! that follow from its answer are here, the same for both.

pub mod action;
pub mod parameter_msgs;
pub mod parameters;
mod pending;
