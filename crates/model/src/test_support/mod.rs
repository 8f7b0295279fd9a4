//! Helpers for the tests of this crate, of the crates above it and of the workspace's
//! end-to-end tests (feature `test-support`; not part of the stable API):
//! random URDF chains with their own plain URDF kinematics ([`random_chain`]), random arms
//! shaped like real ones ([`random_arm`]), the
//! third-party reference data of the checkout with its loader ([`reference`]), and the one
//! harness of the property tests that mutate a file ([`mutation`]).

pub mod mutation;
pub mod random_arm;
pub mod random_chain;
pub mod reference;
pub mod spherical_wrist_arm;

/// A robot of the checkout's `urdf/` folder (`panda.urdf`, ...) with the default chain options.
///
/// # Panics
/// When the file does not load: a test's fixture is missing.
pub fn bundled_robot(file: &str) -> crate::Robot {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../urdf")
        .join(file);
    crate::Robot::from_urdf_file(&path, &crate::ChainOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
