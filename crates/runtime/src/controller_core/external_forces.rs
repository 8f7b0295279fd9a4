//! What the core estimates and meets of forces from outside: the external joint torques and
//! their bounds, the tip wrench that explains them, and collisions.

use super::{Collision, CollisionSettings, ControllerCore};

impl ControllerCore {
    /// The external joint torques estimated from the motion (chain order, N m or N; zero
    /// until two believable states were seen): what the model and the commands do not
    /// explain, filtered with the time constant `1 / external_torque_gain`.
    pub fn external_torques(&self) -> &[f64] {
        self.observers.external.torques()
    }

    /// Per joint, the bound of what [`Self::external_torques`] may carry without any contact
    /// (chain order, N m or N): `model_error` of the applied torque, the friction the model
    /// leaves out (the URDF's, uncompensated), the Coulomb friction whose sign is lost at
    /// rest, a command delay and the velocity noise (`armctl_control::collision_thresholds`).
    pub fn external_torque_bounds(&self) -> &[f64] {
        self.observers.external.thresholds().uncertainty()
    }

    /// The tip wrench that explains [`Self::external_torques`] (`[f; m]`, base link axes,
    /// the moment about the tip; damped near singularities).
    pub fn external_wrench(&self) -> &[f64; 6] {
        self.observers.external.tip_wrench()
    }

    /// Whether a task-space law takes the estimated tip wrench ([`Self::external_wrench`]) as
    /// the measured one at every step, for an arm without a force/torque sensor.
    pub fn set_wrench_from_estimate(&mut self, from_estimate: bool) {
        self.observers.wrench_from_estimate = from_estimate;
    }

    /// How collisions are detected and met (the thresholds: one per joint or none).
    pub fn set_collision(&mut self, settings: CollisionSettings) {
        let (sensitivity, model_error) = (settings.sensitivity, settings.model_error);
        self.observers
            .external
            .set_detection(sensitivity, model_error);
        self.observers.collision.set(settings);
    }

    /// The friction the model leaves out, `[coulomb, viscous]` per joint (chain order): the
    /// collision thresholds allow for what it may add to the estimate.
    pub fn allow_for_friction(&mut self, friction: &[[f64; 2]]) {
        self.observers
            .external
            .set_unmodelled_friction(&self.robot, friction);
    }

    /// The collision thresholds of the last step (what fixed ones replace).
    pub fn collision_thresholds(
        &self,
    ) -> &armctl_control::collision_thresholds::CollisionThresholds {
        self.observers.external.thresholds()
    }

    /// The latched collision, if one is.
    pub fn collision(&self) -> Option<&Collision> {
        self.observers.collision.latched()
    }

    /// Clears a latched collision: the next step with a valid state resumes control from
    /// where the arm is (a running trajectory is cancelled, as after any hold). If the
    /// estimate is still above its threshold, that step latches a new collision and reports
    /// it as a new hold. Returns what was latched.
    pub fn reset_collision(&mut self) -> Option<Collision> {
        self.observers.collision.reset()
    }

    /// A new gain of the external torque estimate, 1/s.
    pub fn set_external_torque_gain(&mut self, gain: f64) {
        self.observers.external.set_gain(gain);
    }
}
