//! What a step reports: its outcome and the events the node says once.

use super::*;

/// One control step's outcome.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StepReport {
    /// Holding, and why.
    pub fault: Option<Fault>,
    /// What changed in this step, to tell the operator (once per incident).
    pub event: Option<CoreEvent>,
    /// What the safety layer did to this step's efforts (clipped, rate-limited, replaced).
    pub safety: SafetyReport,
}

/// A change of the core's situation worth telling the operator once.
#[derive(Debug, Clone, PartialEq)]
pub enum CoreEvent {
    /// The core started holding (or holds for a new reason).
    Holding {
        /// Why.
        fault: Fault,
        /// What it sends meanwhile.
        mode: SafeMode,
    },
    /// Valid states came back and control resumed.
    Resumed {
        /// A trajectory that ran on meanwhile was cancelled; the arm holds where it is.
        trajectory_cancelled: bool,
    },
    /// A latched collision was reset and control resumed.
    CollisionCleared {
        /// The largest estimated tip force from the detection to the reset, N.
        peak_force: f64,
        /// A trajectory that ran before the collision was cancelled.
        trajectory_cancelled: bool,
    },
    /// The payload estimated from the poses at rest (`estimate_payload`), or why none was.
    PayloadEstimated(Result<PayloadEstimate, String>),
}

impl CoreEvent {
    /// Whether the operator should be warned (otherwise it is information).
    pub fn is_warning(&self) -> bool {
        matches!(
            self,
            CoreEvent::Holding { .. } | CoreEvent::PayloadEstimated(Err(_))
        )
    }
}

impl std::fmt::Display for CoreEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CoreEvent::Holding { fault, mode } => {
                let sending = match mode {
                    SafeMode::Gravity => "gravity compensation",
                    SafeMode::Zero => "zero effort",
                };
                write!(f, "holding ({sending}): {fault}")
            }
            CoreEvent::Resumed {
                trajectory_cancelled: true,
            } => write!(
                f,
                "joint states valid again: control resumed, holding where the arm is (trajectory cancelled)"
            ),
            CoreEvent::Resumed {
                trajectory_cancelled: false,
            } => write!(f, "joint states valid again: control resumed"),
            CoreEvent::CollisionCleared {
                peak_force,
                trajectory_cancelled,
            } => {
                write!(f, "collision reset (largest estimated tip force {peak_force:.1} N): control resumed, holding where the arm is")?;
                if *trajectory_cancelled {
                    write!(f, " (trajectory cancelled)")?;
                }
                Ok(())
            }
            CoreEvent::PayloadEstimated(Ok(estimate)) => write_estimate(f, estimate),
            CoreEvent::PayloadEstimated(Err(reason)) => {
                write!(f, "no payload estimate: {reason}")
            }
        }
    }
}

/// The estimate, its uncertainty, and the values to apply it with.
fn write_estimate(f: &mut std::fmt::Formatter<'_>, e: &PayloadEstimate) -> std::fmt::Result {
    let (mass, c, s) = (e.payload.mass, e.payload.com, e.com_std);
    write!(
        f,
        "payload estimate from {} poses at rest: mass {mass:.4} kg (standard deviation \
         {:.1e} kg), centre of mass [{:.4}, {:.4}, {:.4}] m in the tip frame (standard \
         deviations [{:.1e}, {:.1e}, {:.1e}] m), {:.1e} N m left unexplained (RMS); apply with \
         payload_mass {mass:.4} and payload_com [{:.4}, {:.4}, {:.4}]",
        e.poses, e.mass_std, c.x, c.y, c.z, s.x, s.y, s.z, e.residual_rms, c.x, c.y, c.z
    )
}
