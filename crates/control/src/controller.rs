//! The one trait every controller implements.

use crate::{ControlError, ParamValue, ParameterSet};

/// The measured joint state handed to a controller.
#[derive(Debug, Clone, Copy)]
pub struct JointState<'a> {
    /// Positions, rad or m.
    pub q: &'a [f64],
    /// Velocities.
    pub qd: &'a [f64],
}

/// The desired motion at one instant.
#[derive(Debug, Clone, PartialEq)]
pub struct JointReference {
    /// Desired positions.
    pub q: Vec<f64>,
    /// Desired velocities.
    pub qd: Vec<f64>,
    /// Desired accelerations.
    pub qdd: Vec<f64>,
}

impl JointReference {
    /// Holding still at `q`.
    pub fn hold(q: &[f64]) -> Self {
        Self {
            q: q.to_vec(),
            qd: vec![0.0; q.len()],
            qdd: vec![0.0; q.len()],
        }
    }
}

/// A torque controller. `update` allocates nothing.
pub trait Controller: Send {
    /// The controller's name, as in configuration files.
    fn name(&self) -> &'static str;
    /// The declared parameters and their current values.
    fn parameters(&self) -> &ParameterSet;
    /// Changes a parameter; an invalid value is rejected with a reason and the old value kept.
    fn set_parameter(&mut self, name: &str, value: ParamValue) -> Result<(), ControlError>;
    /// Forgets internal state (integrators, estimates) and starts from `state`.
    fn reset(&mut self, state: &JointState<'_>);
    /// Joint efforts for `state` tracking `reference`, `dt` seconds after the last update.
    fn update(
        &mut self,
        state: &JointState<'_>,
        reference: &JointReference,
        dt: f64,
        effort: &mut [f64],
    ) -> Result<(), ControlError>;
    /// Parameter estimates of adaptive controllers, for plotting (empty otherwise).
    fn estimates(&self) -> &[f64] {
        &[]
    }
}
