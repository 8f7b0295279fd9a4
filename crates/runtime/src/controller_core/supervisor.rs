//! The core's supervising stage: what the last step held for, the hold's mode, and the brake
//! that stops a believed arm; `holding.rs` holds, brakes, reacts to a collision and resumes
//! with it, and the step's events come from what it saw change.

use super::braking::Brake;
use super::faults::{Fault, SafeMode};

/// Holds, brakes and resumes.
pub(super) struct Supervisor {
    /// What to send while holding.
    pub(super) safe_mode: SafeMode,
    /// The fault the last step held for.
    pub(super) fault: Option<Fault>,
    /// Whether the last step held: the next one that controls resumes.
    pub(super) was_holding: bool,
    /// The damped hold for a state that is believed (a controller failure, an over-speed).
    pub(super) brake: Brake,
}

impl Supervisor {
    /// Holding in `safe_mode` until the first state, braking with `brake`.
    pub(super) fn new(safe_mode: SafeMode, brake: Brake) -> Self {
        Self {
            safe_mode,
            fault: Some(Fault::NoState),
            was_holding: true,
            brake,
        }
    }
}
