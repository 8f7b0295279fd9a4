//! The payload at the tip: set (refused when no real body has the values), and what its
//! estimate beside the core ([`crate::payload_service`]) reads: the poses the arm rested in.

use armctl_ident::payload_estimation::{PayloadEstimate, RestSample};
use armctl_model::{Payload, Robot};

use super::{rest_poses, ControllerCore};

impl ControllerCore {
    /// The payload at the tip (tip frame): its torques ramp into every law's over `ramp_time`
    /// seconds; the holds and the external torque estimate take it at once (it is on the arm
    /// already), and the estimate starts over. Refused with the item named (the payload in
    /// effect stays) when no real body has these values. Allocates: not for the loop.
    pub fn set_payload(&mut self, payload: Payload, ramp_time: f64) -> Result<(), String> {
        let loaded = self
            .robot
            .with_payload(&payload)
            .map_err(|e| e.to_string())?;
        self.layer
            .payload_mut()
            .set(&self.robot, payload, ramp_time)
            .map_err(|e| e.to_string())?;
        self.loaded = loaded;
        self.observers.external.restart();
        self.observers.external.forget_rest_poses();
        Ok(())
    }

    /// The rest samples of the poses the arm rested in since the payload was last set (the
    /// newest [`MAX_POSES`](super::MAX_POSES)), with the external torque estimate at each:
    /// what [`crate::payload_service`] estimates the payload from. Allocates: not for the loop.
    pub fn rest_samples(&self) -> Vec<RestSample> {
        self.observers.external.rest_samples()
    }

    /// The arm with the payload in effect (what the holds and the estimate compute with).
    pub fn loaded_robot(&self) -> &Robot {
        &self.loaded
    }

    /// The robot with the friction its model leaves out as Coulomb friction (its viscous part
    /// at the rest speed added): what a resting joint may hold, which the payload estimate
    /// counts in its uncertainty.
    pub fn with_unmodelled_friction(&self) -> Result<Robot, String> {
        let left_out = self.observers.external.thresholds().unmodelled_friction();
        let joints = self.robot.joints().iter().zip(left_out);
        let (viscous, coulomb): (Vec<f64>, Vec<f64>) = joints
            .map(|(joint, [c, v])| {
                let f = &joint.friction;
                (f.viscous.abs(), f.peak() + c + v * rest_poses::REST_SPEED)
            })
            .unzip();
        self.robot
            .with_friction(&viscous, &coulomb)
            .map_err(|e| e.to_string())
    }

    /// A payload estimate (`estimate_payload`), found or not, for the next step to report
    /// as an event.
    pub fn report_payload_estimate(&mut self, estimate: Result<PayloadEstimate, String>) {
        self.payload_estimated = Some(estimate);
    }
}
