//! The one trait every controller implements, with the control step as a template around
//! each law's `compute`, and the trait of the task-space inputs.

use nalgebra::IsometryMatrix3;

use crate::{ControlError, ParameterSet, ParameterValue};
use armctl_model::check_length;

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

    /// Holding still at `q` from now on, in place (no allocation when the sizes match).
    pub fn set_hold(&mut self, q: &[f64]) {
        self.q.clear();
        self.q.extend_from_slice(q);
        for v in [&mut self.qd, &mut self.qdd] {
            v.clear();
            v.resize(q.len(), 0.0);
        }
    }
}

/// One control step as a law sees it ([`Controller::compute`]): inputs of the right sizes, a
/// finite state, and the efforts to write.
#[derive(Debug)]
pub struct Step<'a> {
    /// The measured joint state.
    pub state: &'a JointState<'a>,
    /// The desired motion.
    pub reference: &'a JointReference,
    /// Seconds since the last step.
    pub dt: f64,
    /// The efforts to write, one per joint.
    pub effort: &'a mut [f64],
}

/// Sizes of a control step's inputs and output, and a finite state.
fn check_step(
    n: usize,
    state: &JointState<'_>,
    reference: &JointReference,
    effort: &[f64],
) -> Result<(), ControlError> {
    check_length("q", n, state.q.len())?;
    check_length("qd", n, state.qd.len())?;
    check_length("reference positions", n, reference.q.len())?;
    check_length("reference velocities", n, reference.qd.len())?;
    check_length("reference accelerations", n, reference.qdd.len())?;
    check_length("effort", n, effort.len())?;
    if state.q.iter().chain(state.qd).any(|v| !v.is_finite()) {
        return Err(ControlError::NonFinite {
            what: "joint state",
        });
    }
    Ok(())
}

/// A torque controller. A law implements [`Controller::compute`]; [`Controller::update`] is
/// the template around it. Neither allocates.
pub trait Controller: Send {
    /// The controller's name, as in configuration files.
    fn name(&self) -> &'static str;
    /// The declared parameters and their current values.
    fn parameters(&self) -> &ParameterSet;
    /// The parameters, to change them or their ramp.
    fn parameters_mut(&mut self) -> &mut ParameterSet;
    /// Changes a parameter; an invalid value is rejected with a reason and the old value kept.
    /// Live gains ramp to the new value (see [`ParameterSet::advance`]).
    fn set_parameter(&mut self, name: &str, value: ParameterValue) -> Result<(), ControlError> {
        self.parameters_mut().set(name, value)?;
        self.parameters_changed();
        Ok(())
    }
    /// Called after a parameter changed (to re-check conditions that depend on gains).
    fn parameters_changed(&mut self) {}
    /// Starts from `state`: puts every ramping gain at its target, then lets the law forget its
    /// own state ([`Controller::restart`]).
    fn reset(&mut self, state: &JointState<'_>) {
        self.parameters_mut().settle();
        self.restart(state);
    }
    /// The law's part of [`Controller::reset`]: forgets internal state (integrators, estimates,
    /// targets) and starts from `state`. Nothing by default.
    fn restart(&mut self, state: &JointState<'_>) {
        let _ = state;
    }
    /// Joint efforts for `state` tracking `reference`, `dt` seconds after the last update:
    /// checks the sizes (one per joint of [`ParameterSet::dof`]) and that the state is finite,
    /// moves the ramping gains one step, then runs the law ([`Controller::compute`]).
    fn update(
        &mut self,
        state: &JointState<'_>,
        reference: &JointReference,
        dt: f64,
        effort: &mut [f64],
    ) -> Result<(), ControlError> {
        check_step(self.parameters().dof(), state, reference, effort)?;
        self.parameters_mut().advance(dt);
        self.compute(Step {
            state,
            reference,
            dt,
            effort,
        })
    }
    /// The law: efforts for a checked step, with the gains in effect now.
    fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError>;
    /// Parameter estimates of adaptive controllers, for plotting (empty otherwise).
    fn estimates(&self) -> &[f64] {
        &[]
    }
    /// The task-space inputs (pose target, measured wrench) of a task-space law; `None` for
    /// the laws that take joint references only.
    fn task_space(&mut self) -> Option<&mut dyn TaskSpace> {
        None
    }
    /// Conditions the controller's claims need that do not hold with the current parameters
    /// (for example the gain condition of PD with fixed gravity compensation).
    fn warnings(&self) -> &[String] {
        &[]
    }
    /// The per-joint parameter the law applies as a damping torque `-D qd` (scaled at run
    /// time where it would pass the sampled-data margin, [`crate::gain_sizing::damping_bound`]); `None`
    /// when it has none. The safety layer warns when a value passes that margin.
    fn damping_parameter(&self) -> Option<&'static str> {
        None
    }
}

/// The inputs of a task-space law (see [`Controller::task_space`]).
pub trait TaskSpace {
    /// A new tip pose target (base link frame), reached in `duration` seconds from the target
    /// in effect now.
    fn set_target_pose(
        &mut self,
        pose: IsometryMatrix3<f64>,
        duration: f64,
    ) -> Result<(), ControlError>;
    /// The measured wrench the environment applies to the tip (`[f; m]`, base link axes), for
    /// the laws that use it (inertia shaping); a non-finite one is ignored.
    fn set_external_wrench(&mut self, wrench: &[f64; 6]);
}
