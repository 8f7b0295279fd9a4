//! The core's observing stage: the external torques and tip wrench estimated from the motion
//! (`external_torque.rs`), collision detection on them and the latch (`collision.rs`), and
//! whether a task-space law takes the estimated wrench.

use armctl_model::Robot;

use super::collision::CollisionMonitor;
use super::external_torque::ExternalTorque;

/// What the motion tells of the world.
pub(super) struct Observers {
    /// The external torques on the arm and the tip wrench, estimated from the motion.
    pub(super) external: ExternalTorque,
    /// Collision detection on the estimate, and the reaction.
    pub(super) collision: CollisionMonitor,
    /// Whether a task-space law takes the estimated tip wrench as its measured one
    /// (`external_wrench_source: estimated`).
    pub(super) wrench_from_estimate: bool,
}

impl Observers {
    /// Observers of `robot` at rest, the wrench measured.
    pub(super) fn new(robot: &Robot) -> Self {
        Self {
            external: ExternalTorque::new(robot),
            collision: CollisionMonitor::new(robot),
            wrench_from_estimate: false,
        }
    }
}
