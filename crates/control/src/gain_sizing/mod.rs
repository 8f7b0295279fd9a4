//! Gains sized for a robot: default gains, the sampled-data damping bound, pole placement and modal damping.

pub mod damping_bound;
pub mod default_gains;
pub(crate) mod gain_design;
pub(crate) mod modal_damping;
