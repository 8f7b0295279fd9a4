//! The layer every effort passes after its law, per arm: the payload's torques are added
//! ([`crate::safety_bounds::payload_compensation`]), no effort pushes a joint past its soft
//! limits ([`crate::safety_bounds::joint_limit_guard`]), and [`EffortSafety`] keeps NaN and
//! infinity out, every effort within its limit and its rate. Each arm's controller core owns
//! one: a law over one arm passes its update's result to [`SafetyLayer::after_law`], a law
//! over two arms hands each arm's efforts to that arm's [`SafetyLayer::guard`].
//! [`crate::Guarded`] is a law with its own layer, for a caller without a core.

use armctl_model::Robot;

use crate::safety_bounds::joint_limit_guard::{JointLimitGuard, DEFAULT_SOFT_LIMIT_MARGIN};
use crate::safety_bounds::payload_compensation::PayloadCompensation;
use crate::safety_bounds::safety::{EffortSafety, SafetyReport};
use crate::{ControlError, JointReference, JointState};

/// One arm's safety layer and what it did last.
#[derive(Debug, Clone)]
pub struct SafetyLayer {
    payload: PayloadCompensation,
    limits: JointLimitGuard,
    safety: EffortSafety,
    last_report: SafetyReport,
}

impl SafetyLayer {
    /// The soft limits (the default margin) and effort limits of `robot`, an optional rate
    /// limit, and no payload.
    pub fn new(robot: &Robot, rate_limit: Option<f64>) -> Result<Self, ControlError> {
        Ok(Self {
            payload: PayloadCompensation::new(robot)?,
            limits: JointLimitGuard::new(robot, DEFAULT_SOFT_LIMIT_MARGIN)?,
            safety: EffortSafety::new(robot, rate_limit)?,
            last_report: SafetyReport::default(),
        })
    }

    /// The efforts a law's update left for the arm at `state` tracking `reference`, `dt`
    /// after the last, with the payload's torques, made safe ([`Self::guard`]). A failed
    /// law's efforts (`updated` is its result) are not trusted: the last safe effort is held,
    /// and the failure returned.
    pub fn after_law(
        &mut self,
        updated: Result<(), ControlError>,
        (state, reference): (&JointState<'_>, &JointReference),
        dt: f64,
        effort: &mut [f64],
    ) -> Result<(), ControlError> {
        let result = updated.and_then(|()| self.add_payload(state, &reference.qdd, dt, effort));
        if result.is_err() {
            effort.fill(f64::NAN);
        }
        self.guard(state, effort, dt);
        result
    }

    /// Adds the payload's torques at the measured state to a law's `effort`.
    pub fn add_payload(
        &mut self,
        state: &JointState<'_>,
        qdd: &[f64],
        dt: f64,
        effort: &mut [f64],
    ) -> Result<(), ControlError> {
        self.payload.add((state.q, state.qd), qdd, dt, effort)
    }

    /// Bounds `effort` for the arm at `state`: the joint-limit protection, then the effort
    /// safety; [`Self::last_report`] then tells what it did.
    pub fn guard(&mut self, state: &JointState<'_>, effort: &mut [f64], dt: f64) {
        let rates = self.safety.rate_limits();
        let joint_limited = self.limits.apply((state.q, state.qd), dt, rates, effort);
        self.last_report = self.safety.apply(effort, dt);
        self.last_report.joint_limited = joint_limited;
    }

    /// What the last [`Self::guard`] changed.
    pub fn last_report(&self) -> SafetyReport {
        self.last_report
    }

    /// The effort safety.
    pub fn safety(&self) -> &EffortSafety {
        &self.safety
    }

    /// The effort safety, to set its limits and restart it.
    pub fn safety_mut(&mut self) -> &mut EffortSafety {
        &mut self.safety
    }

    /// The payload's torques.
    pub fn payload(&self) -> &PayloadCompensation {
        &self.payload
    }

    /// The payload's torques, to set a payload.
    pub fn payload_mut(&mut self) -> &mut PayloadCompensation {
        &mut self.payload
    }

    /// The joint-limit protection.
    pub fn limits(&self) -> &JointLimitGuard {
        &self.limits
    }

    /// The joint-limit protection, to set its margin.
    pub fn limits_mut(&mut self) -> &mut JointLimitGuard {
        &mut self.limits
    }
}
