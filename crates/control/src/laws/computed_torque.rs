//! Computed torque (docs/theory.md section 6):
//! `tau = M(q)(qdd_d + Kd de + Kp e) + C(q, qd) qd + G(q) + F(qd_d)
//!      = RNEA(q, qd, qdd_d + Kd de + Kp e) + F(qd_d)`.
//! Claim: with the exact model the error obeys `edd + Kd de + Kp e = 0`, so it converges for any
//! positive gains; `gain_design` places its poles or makes it LQR-optimal (see `gain_design`). Gains are per unit inertia (rad/s^2 per rad). `F` is the model's joint
//! friction (an identified model's, or the URDF's with `friction_compensation`), at the reference velocity
//! with a smoothed sign: measured velocities would make the Coulomb term chatter at rest.

use armctl_dynamics::{friction_torques, CoulombSign};
use armctl_model::Robot;

use crate::gain_sizing::gain_design::{Form, GainDesign};
use crate::law_support::gains::{errors, joint_gain, PdGains};
use crate::law_support::model_terms::ModelTerms;
use crate::{
    ControlError, Controller, JointReference, JointState, ParameterSet, ParameterValue, Step,
};

/// Velocity over which the compensated Coulomb friction changes sign, rad/s (m/s).
const FRICTION_SIGN_WIDTH: f64 = 0.01;

/// Natural frequency of the default error dynamics, rad/s.
const DEFAULT_FREQUENCY: f64 = 30.0;

/// Computed torque through RNEA.
#[derive(Debug, Clone)]
pub struct ComputedTorque {
    model: ModelTerms,
    parameters: ParameterSet,
    gains: PdGains,
    design: GainDesign,
    acceleration: Vec<f64>,
    friction: Vec<f64>,
}

/// Declares the per-unit-inertia gains `kp = w^2`, `kd = 2 w` (critical) of the error
/// dynamics `what` ("error dynamics", "nominal error dynamics"), with `w` up to 30 rad/s per
/// joint as [`crate::gain_sizing::default_gains`] derives it; `kd_note` adds to kd's description.
pub(crate) fn error_dynamics_gains(
    parameters: &mut ParameterSet,
    robot: &Robot,
    what: &str,
    kd_note: &str,
) -> Result<PdGains, ControlError> {
    let w =
        crate::gain_sizing::default_gains::error_dynamics_frequencies(robot, DEFAULT_FREQUENCY)?;
    declare_error_dynamics_gains(parameters, &w, what, kd_note)
}

/// The default error dynamics `(kp, kd) = (w^2, 2 w)` per joint of [`error_dynamics_gains`].
fn default_error_dynamics(robot: &Robot) -> Result<Vec<(f64, f64)>, ControlError> {
    let w =
        crate::gain_sizing::default_gains::error_dynamics_frequencies(robot, DEFAULT_FREQUENCY)?;
    Ok(w.iter().map(|w| (w * w, 2.0 * w)).collect())
}

fn declare_error_dynamics_gains(
    parameters: &mut ParameterSet,
    w: &[f64],
    what: &str,
    kd_note: &str,
) -> Result<PdGains, ControlError> {
    let kp = format!("Stiffness of the {what} per joint, 1/s^2.");
    let kd = format!("Damping of the {what} per joint, 1/s{kd_note}.");
    Ok(PdGains {
        kp: parameters.declare_array(joint_gain(
            "kp",
            w.iter().map(|w| w * w).collect(),
            &kp,
            1e6,
        ))?,
        kd: parameters.declare_array(joint_gain(
            "kd",
            w.iter().map(|w| 2.0 * w).collect(),
            &kd,
            1e4,
        ))?,
    })
}

/// `qdd_d + Kd de + Kp e` into `out`, with the gains in effect.
pub(crate) fn commanded_acceleration(
    parameters: &ParameterSet,
    gains: PdGains,
    state: &JointState<'_>,
    reference: &JointReference,
    out: &mut [f64],
) {
    let (kp, kd) = (&parameters[gains.kp], &parameters[gains.kd]);
    for (i, (e, de)) in errors(state, reference).enumerate() {
        out[i] = reference.qdd[i] + kd[i] * de + kp[i] * e;
    }
}

impl ComputedTorque {
    /// The controller with `robot` as its model, gains `Kp = w^2`, `Kd = 2 w` per joint (critical),
    /// `w` up to 30 rad/s as [`crate::gain_sizing::default_gains`] derives it.
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let n = robot.dof();
        let mut parameters = ParameterSet::new(n);
        let defaults = default_error_dynamics(robot)?;
        let design = GainDesign::declare(&mut parameters, &defaults, ["kp", "kd"], Form::Pd)?;
        let gains = error_dynamics_gains(&mut parameters, robot, "error dynamics", "")?;
        Ok(Self {
            model: ModelTerms::new(robot),
            acceleration: vec![0.0; n],
            friction: vec![0.0; n],
            parameters,
            gains,
            design,
        })
    }
}

impl Controller for ComputedTorque {
    law_accessors!("computed_torque");
    /// `kp`, `kd` as set, or designed from `poles` or the LQR weights (`gain_design`).
    fn set_parameter(&mut self, name: &str, value: ParameterValue) -> Result<(), ControlError> {
        self.design.set(&mut self.parameters, name, value)
    }
    fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError> {
        commanded_acceleration(
            &self.parameters,
            self.gains,
            step.state,
            step.reference,
            &mut self.acceleration,
        );
        self.model
            .inverse_dynamics(step.state, &self.acceleration, step.effort)?;
        let sign = CoulombSign::Smooth {
            width: FRICTION_SIGN_WIDTH,
        };
        // At the reference velocity (no chatter from a noisy measured one), at the measured
        // position (where the gear's friction ripple is).
        friction_torques(
            &self.model.robot,
            step.state.q,
            &step.reference.qd,
            sign,
            &mut self.friction,
        )?;
        for (e, f) in step.effort.iter_mut().zip(&self.friction) {
            *e += f;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use armctl_model::ChainOptions;

    #[test]
    fn the_model_friction_is_compensated_at_the_reference_velocity() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/panda.urdf");
        let urdf = Robot::from_urdf_file(path, &ChainOptions::default()).unwrap();
        let with_friction = urdf.with_friction(&[0.4; 7], &[0.7; 7]).unwrap();
        let q = [0.1, -0.3, 0.2, -2.0, 0.1, 1.7, 0.4];
        let state = JointState {
            q: &q,
            qd: &[0.05; 7],
        };
        let mut reference = JointReference::hold(&q);
        reference
            .qd
            .copy_from_slice(&[0.5, -0.5, 0.0, 0.5, -0.5, 0.0, 0.5]);
        let (mut plain, mut compensated) = ([0.0; 7], [0.0; 7]);
        ComputedTorque::new(&urdf)
            .unwrap()
            .update(&state, &reference, 1e-3, &mut plain)
            .unwrap();
        ComputedTorque::new(&with_friction)
            .unwrap()
            .update(&state, &reference, 1e-3, &mut compensated)
            .unwrap();
        for i in 0..7 {
            let v = reference.qd[i];
            let expected = 0.4 * v + 0.7 * (v / FRICTION_SIGN_WIDTH).tanh();
            assert!(
                (compensated[i] - plain[i] - expected).abs() < 1e-9,
                "joint {i}"
            );
        }
    }
}
