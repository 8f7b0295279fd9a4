//! The payload estimate beside the core: from the poses a core's arm rested in since its
//! payload was last set, the payload at the tip with its uncertainty
//! (`armctl_ident::payload_estimation`, called from here only). The core collects the poses
//! and reports the estimate as an event; estimating allocates, so it runs when asked
//! (`estimate_payload`), never in a control step.

use armctl_dynamics::{gravity_torques, DynamicsWorkspace};
use armctl_ident::payload_estimation::PayloadEstimate;

use crate::controller_core::ControllerCore;

/// The payload at `core`'s tip estimated from its rest poses: at rest the external torque
/// estimate is minus the weight the loaded model leaves out, so the payload in effect plus
/// what it misses. Refused with the reason when the poses do not determine it (fewer than
/// two, gravity along too few axes of the tip frame) or show no payload.
pub fn estimate_payload(core: &ControllerCore) -> Result<PayloadEstimate, String> {
    let (robot, loaded) = (core.robot(), core.loaded_robot());
    let mut samples = core.rest_samples();
    let mut ws = DynamicsWorkspace::new(robot);
    let n = robot.dof();
    let (mut bare, mut with_payload) = (vec![0.0; n], vec![0.0; n]);
    for sample in &mut samples {
        gravity_torques(robot, &mut ws, &sample.q, &mut bare)
            .and_then(|()| gravity_torques(loaded, &mut ws, &sample.q, &mut with_payload))
            .map_err(|e| e.to_string())?;
        // At rest the estimate is the torque the arm feels, minus the effort that holds the
        // weight the loaded model leaves out: what the bare model leaves out is the payload
        // in effect's weight less the estimate.
        for ((u, b), l) in sample.unexplained.iter_mut().zip(&bare).zip(&with_payload) {
            *u = l - b - *u;
        }
    }
    let with_friction = core.with_unmodelled_friction()?;
    armctl_ident::payload_estimation::estimate_payload(&with_friction, &samples).map_err(|e| {
        // The reason alone: the event says what was estimated.
        match e {
            armctl_ident::IdentError::Identification { reason } => {
                reason.trim_start_matches("payload: ").to_string()
            }
            other => other.to_string(),
        }
    })
}
