//! The torques a payload at the tip (a tool, a grasped part) needs, added to every law's
//! effort: the payload's own inverse dynamics `tau_p = Y_n(q, qd, qdd) pi_p`, computed as the
//! RNEA of the chain with every link massless but the payload on the last one (the dynamics is
//! linear in the inertials). Its weight, and along a joint trajectory its inertia at the
//! reference acceleration and its velocity terms at the measured velocity: the laws keep
//! computing with the arm's model, so a payload neither needs a new law nor resets one.
//!
//! A change of payload ramps in smoothly (`s^2 (3 - 2 s)` over the ramp time) from the one in
//! effect, blended by its inertial parameters, so a new tool does not kick the arm.

use armctl_dynamics::{rnea, DynamicsWorkspace};
use armctl_model::{Payload, Robot};

use crate::ControlError;

/// How long a new payload takes to come into effect when none is given, s.
pub const DEFAULT_PAYLOAD_RAMP_TIME: f64 = 1.0;

/// The payload's torques, ramping between two payload-only models.
#[derive(Debug, Clone)]
pub struct PayloadCompensation {
    /// The payload-only models ramped from and to.
    from: Robot,
    to: Robot,
    payload: Payload,
    /// Fraction of the ramp done, 0 to 1.
    progress: f64,
    ramp_time: f64,
    ws: DynamicsWorkspace,
    torque: Vec<f64>,
}

impl PayloadCompensation {
    /// No payload on `robot`'s tip.
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let none = payload_model(robot, &Payload::none())?;
        Ok(Self {
            from: none.clone(),
            to: none,
            payload: Payload::none(),
            progress: 1.0,
            ramp_time: DEFAULT_PAYLOAD_RAMP_TIME,
            ws: DynamicsWorkspace::new(robot),
            torque: vec![0.0; robot.dof()],
        })
    }

    /// Ramps to `payload` (tip frame of `robot`) over `ramp_time` seconds (0: at once), from
    /// what is in effect now. A body no real object has is refused, naming the item.
    /// Allocates: not for the control loop.
    pub fn set(
        &mut self,
        robot: &Robot,
        payload: Payload,
        ramp_time: f64,
    ) -> Result<(), ControlError> {
        if let Err((item, reason)) = payload.check() {
            return Err(ControlError::InvalidParameter {
                name: format!("payload_{item}"),
                reason,
            });
        }
        if !(ramp_time.is_finite() && ramp_time >= 0.0) {
            return Err(ControlError::InvalidParameter {
                name: "payload_ramp_time".into(),
                reason: format!("{ramp_time} must be finite and not negative"),
            });
        }
        let to = payload_model(robot, &payload)?;
        self.from = self.in_effect()?;
        self.to = to;
        self.payload = payload;
        self.ramp_time = ramp_time;
        self.progress = if ramp_time > 0.0 { 0.0 } else { 1.0 };
        Ok(())
    }

    /// The payload set last (in effect once the ramp is done).
    pub fn payload(&self) -> &Payload {
        &self.payload
    }

    /// How much of the last payload set is in effect, 0 to 1 (the ramp's smooth weight).
    pub fn weight(&self) -> f64 {
        smooth(self.progress)
    }

    /// Adds the payload's torques at `(q, qd)` with the reference acceleration `qdd` to
    /// `effort`, and advances the ramp by `dt`. Allocates nothing; non-finite torques are
    /// left out and reported.
    pub fn add(
        &mut self,
        (q, qd): (&[f64], &[f64]),
        qdd: &[f64],
        dt: f64,
        effort: &mut [f64],
    ) -> Result<(), ControlError> {
        if dt.is_finite() && dt > 0.0 && self.progress < 1.0 {
            self.progress = (self.progress + dt / self.ramp_time).min(1.0);
        }
        let weight = smooth(self.progress);
        for (model, share) in [(&self.to, weight), (&self.from, 1.0 - weight)] {
            if share == 0.0 || is_massless(model) {
                continue;
            }
            rnea(model, &mut self.ws, q, qd, qdd, &mut self.torque)?;
            if self.torque.iter().any(|t| !t.is_finite()) {
                return Err(ControlError::NonFinite {
                    what: "the payload's torques",
                });
            }
            for (e, t) in effort.iter_mut().zip(&self.torque) {
                *e += share * t;
            }
        }
        Ok(())
    }

    /// The payload-only model of the blend in effect now.
    fn in_effect(&self) -> Result<Robot, ControlError> {
        let weight = smooth(self.progress);
        let blend: Vec<f64> = self
            .from
            .parameter_vector()
            .iter()
            .zip(self.to.parameter_vector())
            .map(|(from, to)| (1.0 - weight) * from + weight * to)
            .collect();
        self.to.with_parameter_vector(&blend).map_err(refused)
    }
}

/// `s^2 (3 - 2 s)`: zero slope at both ends of the ramp.
fn smooth(s: f64) -> f64 {
    s * s * (3.0 - 2.0 * s)
}

fn payload_model(robot: &Robot, payload: &Payload) -> Result<Robot, ControlError> {
    robot.payload_only(payload).map_err(refused)
}

fn refused(error: armctl_model::ModelError) -> ControlError {
    ControlError::InvalidParameter {
        name: "payload".into(),
        reason: error.to_string(),
    }
}

/// Whether the payload-only model carries nothing (its last link's parameters are zero).
fn is_massless(model: &Robot) -> bool {
    let p = model.link_parameters();
    p.last()
        .is_none_or(|last| last.to_vector().iter().all(|v| *v == 0.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use armctl_dynamics::gravity_torques;
    use nalgebra::{Matrix3, Vector3};

    fn panda() -> Robot {
        armctl_model::test_support::bundled_robot("panda.urdf")
    }

    fn tool() -> Payload {
        Payload {
            mass: 1.0,
            com: Vector3::new(0.03, -0.02, 0.08),
            inertia: Matrix3::from_diagonal(&Vector3::new(2e-3, 2e-3, 1e-3)),
        }
    }

    /// The payload's torques are the loaded arm's inverse dynamics minus the arm's.
    #[test]
    fn adds_what_the_payload_adds_to_the_inverse_dynamics() {
        let robot = panda();
        let loaded = robot.with_payload(&tool()).unwrap();
        let mut compensation = PayloadCompensation::new(&robot).unwrap();
        compensation.set(&robot, tool(), 0.0).unwrap();
        let q = [0.3, -0.5, 0.2, -2.0, 0.4, 1.6, -0.7];
        let qd = [0.5, -0.3, 0.8, 0.2, -1.0, 0.6, 1.2];
        let qdd = [1.0, 2.0, -1.5, 0.5, 3.0, -2.0, 1.0];
        let mut ws = DynamicsWorkspace::new(&robot);
        let (mut with, mut without) = ([0.0; 7], [0.0; 7]);
        rnea(&loaded, &mut ws, &q, &qd, &qdd, &mut with).unwrap();
        rnea(&robot, &mut ws, &q, &qd, &qdd, &mut without).unwrap();
        let mut effort = without;
        compensation
            .add((&q, &qd), &qdd, 1e-3, &mut effort)
            .unwrap();
        for (e, w) in effort.iter().zip(&with) {
            assert!((e - w).abs() < 1e-10, "{effort:?} vs {with:?}");
        }
    }

    /// A ramp starts with zero slope, ends at the payload's weight, and a change half-way
    /// continues from where it was.
    #[test]
    fn a_new_payload_ramps_in_smoothly_from_the_one_in_effect() {
        let robot = panda();
        let q = robot.middle_configuration();
        let zero = vec![0.0; 7];
        let mut compensation = PayloadCompensation::new(&robot).unwrap();
        compensation.set(&robot, tool(), 1.0).unwrap();
        let weight_torque = |c: &mut PayloadCompensation, dt: f64| {
            let mut effort = vec![0.0; 7];
            c.add((&q, &zero), &zero, dt, &mut effort).unwrap();
            effort[1]
        };
        let full = {
            let loaded = robot.payload_only(&tool()).unwrap();
            let mut g = vec![0.0; 7];
            gravity_torques(&loaded, &mut DynamicsWorkspace::new(&robot), &q, &mut g).unwrap();
            g[1]
        };
        let first = weight_torque(&mut compensation, 1e-3);
        assert!(first.abs() < 1e-5 * full.abs(), "{first} of {full}");
        let mut half = 0.0;
        for _ in 1..500 {
            half = weight_torque(&mut compensation, 1e-3);
        }
        assert!((half - 0.5 * full).abs() < 1e-9 * full.abs().max(1.0));
        // A lighter tool set half-way starts from half the first one's torque.
        let mut light = tool();
        light.mass = 0.5;
        light.inertia *= 0.5;
        compensation.set(&robot, light, 1.0).unwrap();
        let next = weight_torque(&mut compensation, 1e-6);
        assert!(
            (next - half).abs() < 1e-6 * full.abs(),
            "{next} after {half}"
        );
        for _ in 0..1000 {
            weight_torque(&mut compensation, 1e-3);
        }
        let end = weight_torque(&mut compensation, 1e-3);
        assert!((end - 0.5 * full).abs() < 1e-9 * full.abs().max(1.0));
    }

    #[test]
    fn a_body_no_real_object_has_is_refused_and_the_old_payload_kept() {
        let robot = panda();
        let mut compensation = PayloadCompensation::new(&robot).unwrap();
        compensation.set(&robot, tool(), 0.0).unwrap();
        let mut bad = tool();
        bad.mass = -1.0;
        let error = compensation.set(&robot, bad, 0.0).unwrap_err().to_string();
        assert!(error.contains("payload_mass"), "{error}");
        let error = compensation
            .set(&robot, tool(), f64::NAN)
            .unwrap_err()
            .to_string();
        assert!(error.contains("payload_ramp_time"), "{error}");
        assert_eq!(compensation.payload(), &tool());
    }
}
