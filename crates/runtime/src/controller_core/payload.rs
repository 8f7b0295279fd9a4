//! The payload at the tip: set (refused when no real body has the values), and estimated from
//! the poses the arm rested in.

use armctl_dynamics::{gravity_torques, DynamicsWorkspace};
use armctl_ident::payload_estimation::PayloadEstimate;
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
        self.controller
            .payload_mut()
            .set(&self.robot, payload, ramp_time)
            .map_err(|e| e.to_string())?;
        self.loaded = loaded;
        self.observers.external.restart();
        self.observers.external.forget_rest_poses();
        Ok(())
    }

    /// The robot with the friction its model leaves out as Coulomb friction (its viscous part
    /// at the rest speed added): what a resting joint may hold, which the payload estimate
    /// counts in its uncertainty.
    fn with_unmodelled_friction(&self) -> Result<Robot, String> {
        let left_out = self.observers.external.thresholds().unmodelled_friction();
        let joints = self.robot.joints().iter().zip(left_out);
        let (viscous, coulomb): (Vec<f64>, Vec<f64>) = joints
            .map(|(joint, [c, v])| {
                let f = &joint.friction;
                (
                    f.viscous.abs(),
                    f.coulomb.abs() + c + v * rest_poses::REST_SPEED,
                )
            })
            .unzip();
        self.robot
            .with_friction(&viscous, &coulomb)
            .map_err(|e| e.to_string())
    }

    /// The payload at the tip estimated from the poses the arm rested in since the payload
    /// was last set (the newest [`MAX_POSES`](super::MAX_POSES)): at rest the external torque estimate is minus
    /// the weight the loaded model leaves out, so the payload in effect plus what it misses.
    /// Refused with the reason when the poses do not determine it (fewer than two, gravity
    /// along too few axes of the tip frame) or show no payload. Allocates: not for the loop.
    pub fn payload_estimate(&self) -> Result<PayloadEstimate, String> {
        let mut samples = self.observers.external.rest_samples();
        let mut ws = DynamicsWorkspace::new(&self.robot);
        let n = self.robot.dof();
        let (mut bare, mut loaded) = (vec![0.0; n], vec![0.0; n]);
        for sample in &mut samples {
            gravity_torques(&self.robot, &mut ws, &sample.q, &mut bare)
                .and_then(|()| gravity_torques(&self.loaded, &mut ws, &sample.q, &mut loaded))
                .map_err(|e| e.to_string())?;
            // At rest the estimate is the torque the arm feels, minus the effort that holds
            // the weight the loaded model leaves out: what the bare model leaves out is the
            // payload in effect's weight less the estimate.
            for ((u, b), l) in sample.unexplained.iter_mut().zip(&bare).zip(&loaded) {
                *u = l - b - *u;
            }
        }
        let with_friction = self.with_unmodelled_friction()?;
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

    /// Estimates the payload ([`Self::payload_estimate`]) for the next step to report as an
    /// event, found or not (`estimate_payload`). Allocates: not for the loop.
    pub fn request_payload_estimate(&mut self) {
        self.payload_estimated = Some(self.payload_estimate());
    }
}
