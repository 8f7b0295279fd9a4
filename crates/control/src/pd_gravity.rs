//! PD with online gravity compensation (theory.md section 6):
//! `tau = Kp e + Kd de + G(q)`, `e = q_d - q`, `de = qd_d - qd`.
//! Claim: regulation to a set point is globally asymptotically stable for any positive
//! diagonal gains (with the exact G).

use armctl_dynamics::{gravity_torques, mass_matrix, DynamicsWorkspace};
use armctl_model::Robot;
use nalgebra::DMatrix;

use crate::error::check;
use crate::{
    ControlError, Controller, JointReference, JointState, ParamKind, ParamSpec, ParamValue,
    ParameterSet,
};

/// Natural frequency of the default gains, rad/s: `Kp = w^2 M_ii`, `Kd = 2 w M_ii`.
const DEFAULT_BANDWIDTH: f64 = 20.0;

/// PD plus online gravity compensation.
#[derive(Debug, Clone)]
pub struct PdGravity {
    robot: Robot,
    ws: DynamicsWorkspace,
    parameters: ParameterSet,
    gravity: Vec<f64>,
}

/// Critically damped default gains from the mass matrix diagonal at `q`.
pub(crate) fn default_gains(
    robot: &Robot,
    q: &[f64],
    bandwidth: f64,
) -> Result<(Vec<f64>, Vec<f64>), ControlError> {
    let n = robot.dof();
    let mut m = DMatrix::zeros(n, n);
    mass_matrix(robot, &mut DynamicsWorkspace::new(robot), q, &mut m)?;
    let kp = (0..n).map(|i| bandwidth * bandwidth * m[(i, i)]).collect();
    let kd = (0..n).map(|i| 2.0 * bandwidth * m[(i, i)]).collect();
    Ok((kp, kd))
}

/// The middle of each joint's range (0 for unlimited joints): where default gains are sized.
pub(crate) fn mid_range(robot: &Robot) -> Vec<f64> {
    robot
        .joints()
        .iter()
        .map(|j| {
            if j.limits.is_bounded() {
                0.5 * (j.limits.lower + j.limits.upper)
            } else {
                0.0
            }
        })
        .collect()
}

pub(crate) fn gain_specs() -> [ParamSpec; 2] {
    [
        ParamSpec {
            name: "kp",
            description: "Proportional gain per joint, N m/rad (N/m). Default: (20 rad/s)^2 times the joint's inertia M_ii at mid-range.",
            kind: ParamKind::JointVector,
            min: 0.0,
            max: 1e6,
            live: true,
        },
        ParamSpec {
            name: "kd",
            description: "Derivative gain per joint, N m s/rad (N s/m). Default: critical damping 2 (20 rad/s) M_ii.",
            kind: ParamKind::JointVector,
            min: 0.0,
            max: 1e5,
            live: true,
        },
    ]
}

impl PdGravity {
    /// The controller for `robot` with default gains.
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let (kp, kd) = default_gains(robot, &mid_range(robot), DEFAULT_BANDWIDTH)?;
        let [kp_spec, kd_spec] = gain_specs();
        let parameters = ParameterSet::new(
            robot.dof(),
            vec![
                (kp_spec, ParamValue::Vector(kp)),
                (kd_spec, ParamValue::Vector(kd)),
            ],
        )?;
        Ok(Self {
            ws: DynamicsWorkspace::new(robot),
            gravity: vec![0.0; robot.dof()],
            robot: robot.clone(),
            parameters,
        })
    }
}

impl Controller for PdGravity {
    fn name(&self) -> &'static str {
        "pd_gravity"
    }

    fn parameters(&self) -> &ParameterSet {
        &self.parameters
    }

    fn set_parameter(&mut self, name: &str, value: ParamValue) -> Result<(), ControlError> {
        self.parameters.set(name, value)
    }

    fn reset(&mut self, _state: &JointState<'_>) {}

    fn update(
        &mut self,
        state: &JointState<'_>,
        reference: &JointReference,
        _dt: f64,
        effort: &mut [f64],
    ) -> Result<(), ControlError> {
        let n = self.robot.dof();
        check("effort", n, effort.len())?;
        check("reference", n, reference.q.len())?;
        check("qd", n, state.qd.len())?;
        gravity_torques(&self.robot, &mut self.ws, state.q, &mut self.gravity)?;
        let kp = self.parameters.values("kp");
        let kd = self.parameters.values("kd");
        for i in 0..n {
            let e = reference.q[i] - state.q[i];
            let de = reference.qd[i] - state.qd[i];
            effort[i] = kp[i] * e + kd[i] * de + self.gravity[i];
        }
        Ok(())
    }
}
