//! What entry points return, and what `armctl_update` reports.

use armctl_runtime::controller_core::Fault;

/// The result of every entry point.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArmctlStatus {
    /// Done.
    Ok = 0,
    /// A null pointer, a string that is not UTF-8, an array of the wrong size, a bad index;
    /// `armctl_last_error` says which.
    InvalidArgument = 1,
    /// Refused (a parameter value, a reference, a configuration); `armctl_last_error` says why
    /// and nothing changed.
    Refused = 2,
    /// A bug: the library panicked. The handle is unusable except for `armctl_safe_command`,
    /// `armctl_last_error` and `armctl_free`.
    Panicked = 3,
}

/// Why the controller holds (`ArmctlUpdateStatus::fault`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArmctlFault {
    /// Not holding: the controller ran.
    None = 0,
    /// No state yet.
    NoState = 1,
    /// A joint of the state is missing (through the C ABI: marked unreadable).
    MissingJoint = 2,
    /// A position or velocity is NaN or infinite.
    NonFinite = 3,
    /// The newest state is older than `state_timeout`.
    Stale = 4,
    /// A joint is listed twice.
    DuplicateJoint = 5,
    /// The state's arrays do not fit its names.
    Malformed = 6,
    /// The state cannot be true (far beyond a limit, far too fast).
    Implausible = 7,
    /// The control law failed.
    Controller = 8,
    /// A joint moved faster than `over_speed` times its velocity limit: braking to rest.
    OverSpeed = 9,
    /// A collision was detected on the external torque estimate: reacting
    /// (`collision_reaction`), latched until `reset_collision`.
    Collision = 10,
}

impl ArmctlFault {
    pub(crate) fn of(fault: Option<&Fault>) -> Self {
        match fault {
            None => Self::None,
            Some(Fault::NoState) => Self::NoState,
            Some(Fault::MissingJoint(_) | Fault::Unreadable(_)) => Self::MissingJoint,
            Some(Fault::NonFinite(_)) => Self::NonFinite,
            Some(Fault::Stale(_)) => Self::Stale,
            Some(Fault::DuplicateJoint(_)) => Self::DuplicateJoint,
            Some(Fault::Malformed(_)) => Self::Malformed,
            Some(Fault::Implausible(_)) => Self::Implausible,
            Some(Fault::Controller(_)) => Self::Controller,
            Some(Fault::OverSpeed(_)) => Self::OverSpeed,
            Some(Fault::Collision(_)) => Self::Collision,
        }
    }
}

/// What one `armctl_update` did.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArmctlUpdateStatus {
    /// Whether the efforts are the hold (`safe_mode`) instead of the control law's.
    pub holding: bool,
    /// Why it holds.
    pub fault: ArmctlFault,
    /// Whether this update started or ended an incident, or reports a payload estimate asked
    /// for with `estimate_payload`: tell the operator once, with `armctl_fault_text`, which
    /// allocates nothing.
    pub changed: bool,
    /// Whether a trajectory was cancelled (control resumed after a hold).
    pub trajectory_cancelled: bool,
    /// Efforts the safety layer clipped at their limits in this update.
    pub clipped: u32,
}
