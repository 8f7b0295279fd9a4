//! # armctl_control
//!
//! Torque controllers behind one [`Controller`] trait (a template: checks, gain ramp, then
//! each law's `compute`; task-space laws also take [`TaskSpace`] inputs), their typed
//! parameters declared once ([`Declaration`], [`ParameterValue`], [`ParameterSet`] with typed
//! handles [`Scalar`] and [`Array`]; the nodes declare theirs with the same types), and joint
//! references ([`reference`]).
//!
//! Controllers, one file each with the law in its module documentation: [`IndependentPd`],
//! [`PdGravity`], [`PdFixedGravity`], [`ComputedTorque`], [`JointImpedance`], [`SlotineLi`],
//! [`SlotineLiAdaptive`] (also on the base parameters: [`SlotineLiAdaptive::on_base_parameters`]),
//! [`CartesianImpedance`], [`SlidingMode`], [`Robust`],
//! [`ResolvedAcceleration`], [`AdaptiveComputedTorque`]. Every live gain
//! ramps to a new value ([`ParameterSet::advance`]); the [`SafetyLayer`] (no NaN, effort
//! limits, optional rate limit, soft joint limits, the payload) comes after any controller
//! ([`Guarded`] puts one after a law for a caller without the runtime's core), and
//! [`CheckedLaw`] checks a law's damping against the sampled-data bound.
//!
//! The files sit in folders by concept: `laws/`, `law_support/`, `safety_bounds/`, `estimation/`,
//! `gain_sizing/`, `numerics/` and `reference/`, each using only the ones after it.
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

/// Inside a law's `impl Controller`: its fixed `name` and the accessors of its `parameters`
/// field.
macro_rules! law_accessors {
    ($name:literal) => {
        fn name(&self) -> &'static str {
            $name
        }
        fn parameters(&self) -> &crate::ParameterSet {
            &self.parameters
        }
        fn parameters_mut(&mut self) -> &mut crate::ParameterSet {
            &mut self.parameters
        }
    };
    ($name:literal, damping = $damping:literal) => {
        law_accessors!($name);
        fn damping_parameter(&self) -> Option<&'static str> {
            Some($damping)
        }
    };
}

mod controller;
mod error;
mod estimation;
mod gain_sizing;
mod law_support;
mod laws;
mod numerics;
mod parameters;
pub mod reference;
mod safety_bounds;

pub use estimation::{collision_thresholds, momentum_observer, tip_wrench_estimate};
pub use gain_sizing::{damping_bound, default_gains};
pub use safety_bounds::{joint_limit_guard, payload_compensation};

pub use controller::{Controller, JointReference, JointState, Step, TaskSpace};
pub use error::ControlError;
pub use estimation::momentum_observer::MomentumObserver;
pub use estimation::tip_wrench_estimate::TipWrenchEstimate;
pub use gain_sizing::gain_design::{lqr_double_integrator, place_poles};
pub use law_support::tip_target::orientation_error;
pub use laws::adaptive_computed_torque::AdaptiveComputedTorque;
pub use laws::cartesian_impedance::CartesianImpedance;
pub use laws::computed_torque::ComputedTorque;
pub use laws::cooperative::{share_load, Cooperative, ObjectState};
pub use laws::hybrid_force_position::HybridForcePosition;
pub use laws::independent_pd::IndependentPd;
pub use laws::joint_impedance::JointImpedance;
pub use laws::pd_fixed_gravity::{gravity_gradient_bound, gravity_gradients, PdFixedGravity};
pub use laws::pd_gravity::PdGravity;
pub use laws::resolved_acceleration::ResolvedAcceleration;
pub use laws::robust::Robust;
pub use laws::sliding_mode::SlidingMode;
pub use laws::slotine_li::SlotineLi;
pub use laws::slotine_li_adaptive::SlotineLiAdaptive;
pub use laws::slotine_sliding_mode::SlotineSlidingMode;
pub use parameters::{
    shown, Array, Declaration, Length, ParameterSet, ParameterType, ParameterValue, Scalar, Scope,
    DEFAULT_RAMP_TIME,
};
pub use safety_bounds::checked_law::CheckedLaw;
pub use safety_bounds::payload_compensation::PayloadCompensation;
pub use safety_bounds::safety::{EffortSafety, Guarded, SafetyReport, DEFAULT_EFFORT_RISE_TIME};
pub use safety_bounds::safety_layer::SafetyLayer;

/// Builds a controller with default parameters for a robot.
type Constructor = fn(&armctl_model::Robot) -> Result<Box<dyn Controller>, ControlError>;

fn boxed<C: Controller + 'static>(
    built: Result<C, ControlError>,
) -> Result<Box<dyn Controller>, ControlError> {
    built.map(|c| Box::new(c) as Box<dyn Controller>)
}

/// Every controller by configuration name: the one list the names and the factory come from.
const REGISTRY: [(&str, Constructor); 15] = [
    ("independent_pd", |r| boxed(IndependentPd::new(r))),
    ("pd_gravity", |r| boxed(PdGravity::new(r))),
    ("pd_fixed_gravity", |r| boxed(PdFixedGravity::new(r))),
    ("computed_torque", |r| boxed(ComputedTorque::new(r))),
    ("joint_impedance", |r| boxed(JointImpedance::new(r))),
    ("slotine_li", |r| boxed(SlotineLi::new(r))),
    ("slotine_li_adaptive", |r| boxed(SlotineLiAdaptive::new(r))),
    ("slotine_li_adaptive_base", |r| {
        boxed(SlotineLiAdaptive::on_base_parameters(r))
    }),
    ("cartesian_impedance", |r| boxed(CartesianImpedance::new(r))),
    ("sliding_mode", |r| boxed(SlidingMode::new(r))),
    ("robust", |r| boxed(Robust::new(r))),
    ("resolved_acceleration", |r| {
        boxed(ResolvedAcceleration::new(r))
    }),
    ("adaptive_computed_torque", |r| {
        boxed(AdaptiveComputedTorque::new(r))
    }),
    ("hybrid_force_position", |r| {
        boxed(HybridForcePosition::new(r))
    }),
    ("slotine_sliding_mode", |r| {
        boxed(SlotineSlidingMode::new(r))
    }),
];

/// The controllers this crate offers, by configuration name.
pub const CONTROLLERS: [&str; REGISTRY.len()] = {
    let mut names = [""; REGISTRY.len()];
    let mut i = 0;
    while i < REGISTRY.len() {
        names[i] = REGISTRY[i].0;
        i += 1;
    }
    names
};

/// A controller by its configuration name, with default parameters.
pub fn controller_by_name(
    name: &str,
    robot: &armctl_model::Robot,
) -> Result<Box<dyn Controller>, ControlError> {
    match REGISTRY.iter().find(|(n, _)| *n == name) {
        Some((_, build)) => build(robot),
        None => Err(ControlError::InvalidParameter {
            name: "controller".into(),
            reason: format!(
                "unknown controller '{name}' (known: {})",
                CONTROLLERS.join(", ")
            ),
        }),
    }
}
