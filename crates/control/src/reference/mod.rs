//! Joint references: where the arm should be at time t.

mod approach;
mod cartesian;
mod fourier;
mod multi_point;
mod quintic;
mod set_point;
mod sinusoid;
mod time_scaled;

pub use approach::Approach;
pub use cartesian::{PoseInterpolation, PoseSample};
pub use fourier::Fourier;
pub use multi_point::{MultiPoint, TrajectoryPoint};
pub use quintic::Quintic;
pub use set_point::SetPoint;
pub use sinusoid::Sinusoid;
pub use time_scaled::{SpeedControl, TimeScaled, MIN_RATE};

use crate::JointReference;

/// A joint trajectory. `sample` allocates nothing.
pub trait Trajectory: Send {
    /// Number of joints.
    fn dof(&self) -> usize;
    /// Time after which the reference stays constant, s (0 for a set point, infinite for a
    /// periodic one).
    fn duration(&self) -> f64;
    /// The reference at time `t` (before 0: the start; after the end: the end, at rest).
    fn sample(&self, t: f64, out: &mut JointReference);
    /// The times its pieces join at, for one through waypoints (a check samples every piece);
    /// empty for one given by a formula.
    fn knots(&self) -> &[f64] {
        &[]
    }
}
