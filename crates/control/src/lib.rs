//! # armctl_control
//!
//! Torque controllers behind one [`Controller`] trait, their typed parameters
//! ([`ParameterSet`]), and joint references ([`reference`]).
//!
//! Controllers, one file each with the law in its module documentation: [`IndependentPd`],
//! [`PdGravity`], [`PdFixedGravity`], [`ComputedTorque`], [`JointImpedance`], [`SlotineLi`],
//! [`SlotineLiAdaptive`], [`CartesianImpedance`], [`SlidingMode`], [`Robust`],
//! [`ResolvedAcceleration`], [`AdaptiveComputedTorque`]. Every live gain
//! ramps to a new value ([`ParameterSet::advance`]); [`Guarded`] puts the safety layer (no NaN,
//! effort limits, optional rate limit) after any controller.
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

mod adaptation;
mod adaptive_computed_torque;
mod cartesian_impedance;
mod computed_torque;
mod controller;
mod error;
mod gains;
mod independent_pd;
mod joint_impedance;
mod parameters;
mod pd_fixed_gravity;
mod pd_gravity;
pub mod reference;
mod resolved_acceleration;
mod robust;
mod safety;
mod sliding_mode;
mod slotine_li;
mod slotine_li_adaptive;

pub use adaptive_computed_torque::AdaptiveComputedTorque;
pub use cartesian_impedance::CartesianImpedance;
pub use computed_torque::ComputedTorque;
pub use controller::{Controller, JointReference, JointState};
pub use error::ControlError;
pub use independent_pd::IndependentPd;
pub use joint_impedance::JointImpedance;
pub use parameters::{ParamKind, ParamSpec, ParamValue, ParameterSet, DEFAULT_RAMP_TIME};
pub use pd_fixed_gravity::{gravity_gradient_bound, PdFixedGravity};
pub use pd_gravity::PdGravity;
pub use resolved_acceleration::ResolvedAcceleration;
pub use robust::Robust;
pub use safety::{EffortSafety, Guarded, SafetyReport};
pub use sliding_mode::SlidingMode;
pub use slotine_li::SlotineLi;
pub use slotine_li_adaptive::SlotineLiAdaptive;

/// The controllers this crate offers, by configuration name.
pub const CONTROLLERS: [&str; 5] = [
    "independent_pd",
    "pd_gravity",
    "pd_fixed_gravity",
    "computed_torque",
    "joint_impedance",
];

/// A controller by its configuration name, with default parameters.
pub fn controller_by_name(
    name: &str,
    robot: &armctl_model::Robot,
) -> Result<Box<dyn Controller>, ControlError> {
    match name {
        "independent_pd" => Ok(Box::new(IndependentPd::new(robot)?)),
        "pd_gravity" => Ok(Box::new(PdGravity::new(robot)?)),
        "pd_fixed_gravity" => Ok(Box::new(PdFixedGravity::new(robot)?)),
        "computed_torque" => Ok(Box::new(ComputedTorque::new(robot)?)),
        "joint_impedance" => Ok(Box::new(JointImpedance::new(robot)?)),
        "slotine_li" => Ok(Box::new(SlotineLi::new(robot)?)),
        "slotine_li_adaptive" => Ok(Box::new(SlotineLiAdaptive::new(robot)?)),
        "cartesian_impedance" => Ok(Box::new(CartesianImpedance::new(robot)?)),
        "sliding_mode" => Ok(Box::new(SlidingMode::new(robot)?)),
        "robust" => Ok(Box::new(Robust::new(robot)?)),
        "resolved_acceleration" => Ok(Box::new(ResolvedAcceleration::new(robot)?)),
        "adaptive_computed_torque" => Ok(Box::new(AdaptiveComputedTorque::new(robot)?)),
        other => Err(ControlError::InvalidParameter {
            name: "controller".into(),
            reason: format!(
                "unknown controller '{other}' (known: {})",
                CONTROLLERS.join(", ")
            ),
        }),
    }
}
