//! # armctl_control
//!
//! Torque controllers behind one [`Controller`] trait, their typed parameters
//! ([`ParameterSet`]), and joint references ([`reference`]).
//!
//! Controllers: [`PdGravity`] (PD with online gravity compensation). More follow the same
//! shape: one file per controller, the law in its module documentation.
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

mod controller;
mod error;
mod parameters;
mod pd_gravity;
pub mod reference;

pub use controller::{Controller, JointReference, JointState};
pub use error::ControlError;
pub use parameters::{ParamKind, ParamSpec, ParamValue, ParameterSet};
pub use pd_gravity::PdGravity;

/// The controllers this crate offers, by configuration name.
pub const CONTROLLERS: [&str; 1] = ["pd_gravity"];

/// A controller by its configuration name, with default parameters.
pub fn controller_by_name(
    name: &str,
    robot: &armctl_model::Robot,
) -> Result<Box<dyn Controller>, ControlError> {
    match name {
        "pd_gravity" => Ok(Box::new(PdGravity::new(robot)?)),
        other => Err(ControlError::InvalidParameter {
            name: "controller".into(),
            reason: format!(
                "unknown controller '{other}' (known: {})",
                CONTROLLERS.join(", ")
            ),
        }),
    }
}
