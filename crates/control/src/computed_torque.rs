//! Computed torque (theory.md section 6):
//! `tau = M(q)(qdd_d + Kd de + Kp e) + C(q, qd) qd + G(q) = RNEA(q, qd, qdd_d + Kd de + Kp e)`.
//! Claim: with the exact model the error obeys `edd + Kd de + Kp e = 0`, so it converges for any
//! positive gains. Gains are per unit inertia (rad/s^2 per rad).

use armctl_dynamics::{rnea, DynamicsWorkspace};
use armctl_model::Robot;

use crate::gains::{check_step, joint_gain};
use crate::{ControlError, Controller, JointReference, JointState, ParamValue, ParameterSet};

/// Natural frequency of the default error dynamics, rad/s.
const DEFAULT_FREQUENCY: f64 = 30.0;

/// Computed torque through RNEA.
#[derive(Debug, Clone)]
pub struct ComputedTorque {
    robot: Robot,
    ws: DynamicsWorkspace,
    parameters: ParameterSet,
    acceleration: Vec<f64>,
}

impl ComputedTorque {
    /// The controller with `robot` as its model, gains `Kp = 900`, `Kd = 60` (30 rad/s, critical).
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let n = robot.dof();
        let w = DEFAULT_FREQUENCY;
        let parameters = ParameterSet::new(
            n,
            vec![
                (
                    joint_gain(
                        "kp",
                        "Stiffness of the error dynamics per joint, 1/s^2.",
                        1e6,
                    ),
                    ParamValue::Vector(vec![w * w; n]),
                ),
                (
                    joint_gain("kd", "Damping of the error dynamics per joint, 1/s.", 1e4),
                    ParamValue::Vector(vec![2.0 * w; n]),
                ),
            ],
        )?;
        Ok(Self {
            ws: DynamicsWorkspace::new(robot),
            acceleration: vec![0.0; n],
            robot: robot.clone(),
            parameters,
        })
    }
}

impl Controller for ComputedTorque {
    fn name(&self) -> &'static str {
        "computed_torque"
    }
    fn parameters(&self) -> &ParameterSet {
        &self.parameters
    }
    fn parameters_mut(&mut self) -> &mut ParameterSet {
        &mut self.parameters
    }
    fn update(
        &mut self,
        state: &JointState<'_>,
        reference: &JointReference,
        dt: f64,
        effort: &mut [f64],
    ) -> Result<(), ControlError> {
        check_step(self.robot.dof(), state, reference, effort)?;
        self.parameters.advance(dt);
        let (kp, kd) = (self.parameters.values("kp"), self.parameters.values("kd"));
        for i in 0..self.acceleration.len() {
            let (e, de) = (reference.q[i] - state.q[i], reference.qd[i] - state.qd[i]);
            self.acceleration[i] = reference.qdd[i] + kd[i] * de + kp[i] * e;
        }
        rnea(
            &self.robot,
            &mut self.ws,
            state.q,
            state.qd,
            &self.acceleration,
            effort,
        )?;
        Ok(())
    }
}
