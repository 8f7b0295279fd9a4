//! # armctl_dynamics
//!
//! Rigid-body dynamics of a modified D-H arm ([`armctl_model::Robot`]):
//! `M(q) qdd + C(q, qd) qd + G(q) + F(qd) = tau`.
//!
//! Every algorithm is `algorithm(&robot, &mut workspace, inputs.., outputs)`: the robot is
//! immutable, the [`DynamicsWorkspace`] holds the scratch buffers, results go to the caller's
//! output arguments, and nothing allocates. Several terms at one state come from one pass:
//! [`DynamicsWorkspace::update`] returns [`Terms`].
//!
//! ```
//! use armctl_dynamics::{gravity_torques, mass_matrix, rnea, DynamicsWorkspace};
//! use armctl_model::{ChainOptions, Robot};
//!
//! let robot = Robot::from_urdf_file(
//!     concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/planar_2link.urdf"),
//!     &ChainOptions::default(),
//! )?;
//! let mut ws = DynamicsWorkspace::new(&robot);
//! let (q, qd, qdd) = ([0.0, 0.0], [0.0, 0.0], [0.0, 0.0]);
//! let mut tau = [0.0; 2];
//! rnea(&robot, &mut ws, &q, &qd, &qdd, &mut tau)?;
//! let mut g = [0.0; 2];
//! gravity_torques(&robot, &mut ws, &q, &mut g)?;
//! // Arm horizontal: G = [(m1 l1 + m2 (l1 + l2)) g, m2 l2 g] with m1 = 2, m2 = 1.5, l1 = 1, l2 = 0.8.
//! assert!((g[0] - (2.0 + 1.5 * 1.8) * 9.81).abs() < 1e-9 && (tau[0] - g[0]).abs() < 1e-9);
//! let mut m = nalgebra::DMatrix::zeros(2, 2);
//! mass_matrix(&robot, &mut ws, &q, &mut m)?;
//! assert!((m[(1, 1)] - 1.5 * 0.8 * 0.8).abs() < 1e-12);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Limitations
//! - Serial chains only (what [`armctl_model`] builds).
//! - Friction is a separate term ([`friction_torques`]); inverse and forward dynamics are
//!   rigid-body plus armature.
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

mod all_terms;
mod base_parameters;
mod cholesky;
mod closed_form;
mod composite;
mod coriolis_matrix;
mod crba;
mod error;
mod forward_dynamics;
mod forward_dynamics_derivatives;
mod friction;
mod gravity;
mod lagrange_euler;
mod regressor;
mod regressor_products;
mod regrouping;
mod rnea;
mod rnea_derivatives;
mod rnea_two_velocity;
mod spatial;
mod workspace;

pub use all_terms::{RegressorPass, RegressorTerm, Terms};
pub use base_parameters::{
    base_from_columns, numeric_base_parameters, stacked_regressor, BaseParameters, PARAMETER_NAMES,
};
pub use cholesky::{
    cholesky_backward_in_place, cholesky_forward_in_place, cholesky_in_place,
    cholesky_solve_in_place,
};
pub use closed_form::{ClosedForm, Poly, MAX_CLOSED_FORM_JOINTS};
pub use coriolis_matrix::coriolis_matrix;
pub use crba::mass_matrix;
pub use error::DynamicsError;
pub use forward_dynamics::forward_dynamics;
pub use forward_dynamics_derivatives::{forward_dynamics_derivatives, ForwardDerivatives};
pub use friction::{friction_torques, CoulombSign};
pub use gravity::gravity_torques;
pub use lagrange_euler::{
    lagrange_coriolis_matrix, lagrange_coupling, lagrange_gravity, lagrange_inverse_dynamics,
    lagrange_mass_matrix, LagrangeWorkspace, TraceMethod,
};
pub use regressor::regressor;
pub use regressor_products::{
    regressor_times, regressor_transpose_products, Gravity, RegressorMotion, RegressorPoint,
    TransposeProducts,
};
pub use regrouping::regrouped_base_parameters;
pub use rnea::{nonlinear_effects, rnea, rnea_with_wrench, Wrench};
pub use rnea_derivatives::{gravity_derivatives, rnea_derivatives};
pub use rnea_two_velocity::rnea_two_velocity;
pub use workspace::DynamicsWorkspace;
