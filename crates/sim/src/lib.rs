//! # armctl_sim
//!
//! The embedded simulator: a stand-in for the real arm or Gazebo. It integrates the forward
//! dynamics of [`armctl_dynamics`] at a fixed step (RK4 or semi-implicit Euler), with the
//! model's friction and armature, joint limits as stiff spring-dampers, effort saturation at the
//! URDF limits, and optional non-ideal effects: sensor noise, command delay, a plant that
//! differs from the model (payload, scaled masses), an external wrench at the tip.
//!
//! ```
//! use armctl_model::{ChainOptions, Robot};
//! use armctl_sim::{SimConfig, Simulator};
//!
//! let robot = Robot::from_urdf_file(
//!     concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/planar_2link.urdf"),
//!     &ChainOptions::default(),
//! )?;
//! let mut sim = Simulator::new(&robot, &[0.0, 0.0], SimConfig::ideal())?;
//! for _ in 0..100 {
//!     sim.step(&[0.0, 0.0])?; // no torque: the arm falls
//! }
//! assert!(sim.q()[0] < -0.01);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Friction and the limit springs are integrated implicitly (the step solves with
//! `M + dt D + dt^2 K`, D and K their velocity and position slopes), so stiff URDF damping on a
//! light joint (tested up to `b dt / I` = 1000) does not make the integration diverge; a run
//! that still leaves physics behind stops with [`SimError::Diverged`].
//!
//! ## Limitations
//! - Joint limits are springs, not hard stops: a fast joint overshoots its limit briefly.
//! - Coulomb friction uses a smooth sign (`tanh(qd / coulomb_width)`); true stiction (a stuck
//!   joint held up to its breakaway torque) needs `joints.static_friction`.
//! - No gear backlash, and no flexible joints.
//! - The external wrench is constant and acts at the tip only; contact (planes and boxes
//!   touched at chosen points of the links, module `contact`) is the way to touch things.
//! - Two arms holding one object ([`CooperativeSimulator`]) couple through explicit stiff
//!   spring-dampers, limited to what the step resolves; `armctl sim` runs it from a `pair:`
//!   scene, sim_node does not yet.
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

mod backlash;
mod closed_loop;
mod config;
mod contact;
mod cooperative;
mod error;
pub mod scene_file;
mod simulator;

/// The wrench type of [`SimConfig::external_wrench`].
pub use armctl_dynamics::Wrench;
pub use closed_loop::{run_closed_loop, run_loop, ControlLoop, DirectControl, RunLog};
pub use config::{
    Integrator, JointEffects, LimitSpring, ModelMismatch, Payload, SensorNoise, SimConfig,
};
pub use contact::{
    ContactForce, ContactPoint, ForceSensor, Obstacle, Scene, SensedWrench, Shape,
    DEFAULT_SLIP_VELOCITY,
};
pub use cooperative::{CooperativeSimulator, GraspStiffness, HeldObject, PlacedArm};
pub use error::SimError;
pub use simulator::{Simulator, StepReport, RUNAWAY_FACTOR, RUNAWAY_SPEED};
