//! # armctl_ident
//!
//! Identification of a serial arm's dynamics (docs/theory.md section 5): the base inertial
//! parameters and joint friction from a log of positions, velocities (accelerations) and
//! efforts, by weighted least squares on the base regressor; exciting trajectories (finite
//! Fourier series) that make that regressor well conditioned; and the identified model in the
//! form controllers load.

mod consistent_fit;
mod differentiation;
mod error;
mod excitation;
mod identification;
mod identified_model;
mod joint_log;
mod log_cholesky;
pub mod payload_estimation;
mod physical_consistency;
mod validation;

pub use differentiation::{differentiate, low_pass};
pub use error::IdentError;
pub use excitation::{
    excitation, fourier_from_yaml, is_fourier_file, regressor_condition, Excitation,
    ExcitationLimits,
};
pub use identification::{
    identify, identify_with_instruments, HeldOutSeries, Identification, IdentifyOptions, Method,
};
pub use identified_model::IdentifiedModel;
pub use joint_log::JointLog;
pub use payload_estimation::{
    estimate_payload, payload_poses, pose_move_time, rest_samples, PayloadEstimate, RestSample,
};
pub use physical_consistency::{ConsistencyGap, FrictionAtZero};
pub use validation::{validate, Validation};
