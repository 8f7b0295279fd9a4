//! Joint impedance (docs/theory.md section 6):
//! `tau = K (q_d - q) + D (qd_d - qd) + G(q)` (+ `C(q, qd) qd` when `coriolis` is 1).
//! Claim: the arm behaves as a spring-damper about q_d; a constant external torque `tau_ext`
//! deflects it statically by `K^-1 tau_ext` (for a tip wrench F, `K^-1 J^T F`).

use armctl_dynamics::{gravity_torques, nonlinear_effects, DynamicsWorkspace};
use armctl_model::Robot;

use crate::gains::{check_step, joint_gain, joint_inertias, pd, sized_gains};
use crate::{
    ControlError, Controller, JointReference, JointState, ParamKind, ParamSpec, ParamValue,
    ParameterSet,
};

/// Natural frequency of the default impedance, rad/s.
const DEFAULT_FREQUENCY: f64 = 10.0;

/// Joint-space spring-damper with gravity (and optionally Coriolis) compensation.
#[derive(Debug, Clone)]
pub struct JointImpedance {
    robot: Robot,
    ws: DynamicsWorkspace,
    parameters: ParameterSet,
    model_terms: Vec<f64>,
}

impl JointImpedance {
    /// The controller with default stiffness `(10 rad/s)^2 M_ii` and critical damping.
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let (k, d) = sized_gains(&joint_inertias(robot)?, DEFAULT_FREQUENCY);
        let parameters = ParameterSet::new(
            robot.dof(),
            vec![
                (joint_gain("stiffness", "Joint stiffness K per joint, N m/rad (N/m).", 1e6), ParamValue::Vector(k)),
                (joint_gain("damping", "Joint damping D per joint, N m s/rad (N s/m).", 1e5), ParamValue::Vector(d)),
                (
                    ParamSpec {
                        name: "coriolis",
                        description: "1 to add the Coriolis and centrifugal torques C(q, qd) qd, 0 for gravity only.",
                        kind: ParamKind::Scalar,
                        min: 0.0,
                        max: 1.0,
                        live: false,
                    },
                    ParamValue::Scalar(1.0),
                ),
            ],
        )?;
        Ok(Self {
            ws: DynamicsWorkspace::new(robot),
            model_terms: vec![0.0; robot.dof()],
            robot: robot.clone(),
            parameters,
        })
    }
}

impl Controller for JointImpedance {
    fn name(&self) -> &'static str {
        "joint_impedance"
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
        if self
            .parameters
            .values("coriolis")
            .first()
            .copied()
            .unwrap_or(0.0)
            >= 0.5
        {
            nonlinear_effects(
                &self.robot,
                &mut self.ws,
                state.q,
                state.qd,
                &mut self.model_terms,
            )?;
        } else {
            gravity_torques(&self.robot, &mut self.ws, state.q, &mut self.model_terms)?;
        }
        pd(
            self.parameters.values("stiffness"),
            self.parameters.values("damping"),
            state,
            reference,
            effort,
        );
        for (e, m) in effort.iter_mut().zip(&self.model_terms) {
            *e += m;
        }
        Ok(())
    }
}
