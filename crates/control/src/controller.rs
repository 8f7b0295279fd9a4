//! The one trait every controller implements.

use nalgebra::IsometryMatrix3;

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
    /// The parameters, to change them or their ramp.
    fn parameters_mut(&mut self) -> &mut ParameterSet;
    /// Changes a parameter; an invalid value is rejected with a reason and the old value kept.
    /// Live gains ramp to the new value (see [`ParameterSet::advance`]).
    fn set_parameter(&mut self, name: &str, value: ParamValue) -> Result<(), ControlError> {
        self.parameters_mut().set(name, value)?;
        self.parameters_changed();
        Ok(())
    }
    /// Called after a parameter changed (to re-check conditions that depend on gains).
    fn parameters_changed(&mut self) {}
    /// Forgets internal state (integrators, estimates) and starts from `state`; by default
    /// puts every ramping gain at its target.
    fn reset(&mut self, state: &JointState<'_>) {
        let _ = state;
        self.parameters_mut().settle();
    }
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
    /// A new tip pose target (base link frame), reached in `duration` seconds, for task-space
    /// controllers; the others refuse it.
    fn set_target_pose(
        &mut self,
        pose: IsometryMatrix3<f64>,
        duration: f64,
    ) -> Result<(), ControlError> {
        let _ = (pose, duration);
        Err(ControlError::InvalidReference {
            reason: format!(
                "controller '{}' takes joint references, not pose targets",
                self.name()
            ),
        })
    }
    /// The measured wrench the environment applies to the tip (`[f; m]`, base link axes), for
    /// controllers that use it (inertia shaping); the others ignore it.
    fn set_external_wrench(&mut self, wrench: &[f64; 6]) {
        let _ = wrench;
    }
    /// Conditions the controller's claims need that do not hold with the current parameters
    /// (for example the gain condition of PD with fixed gravity compensation).
    fn warnings(&self) -> &[String] {
        &[]
    }
}
