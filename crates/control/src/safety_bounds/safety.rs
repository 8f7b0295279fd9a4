//! The safety layer after every controller (whose effort first gets the payload's torques,
//! [`crate::safety_bounds::payload_compensation`]): no effort pushes a joint past its soft limits
//! ([`crate::safety_bounds::joint_limit_guard`]), no NaN or infinity leaves it, every effort is within the
//! URDF effort limit, and no effort changes faster than its rate limit (when one is set). [`Guarded`]
//! wraps any [`Controller`] with it.

use armctl_model::Robot;

use crate::safety_bounds::checked_law::CheckedLaw;
use crate::safety_bounds::joint_limit_guard::JointLimitGuard;
use crate::safety_bounds::payload_compensation::PayloadCompensation;
use crate::safety_bounds::safety_layer::SafetyLayer;

use crate::{
    ControlError, Controller, JointReference, JointState, ParameterSet, ParameterValue, Step,
    TaskSpace,
};

/// What the safety layer changed in one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SafetyReport {
    /// Efforts that were NaN or infinite (replaced by the previous safe effort).
    pub non_finite: usize,
    /// Efforts clipped at the effort limit.
    pub saturated: usize,
    /// Efforts held back by the rate limit.
    pub rate_limited: usize,
    /// Efforts bounded by the joint-limit protection.
    pub joint_limited: usize,
}

/// Default time in which the rate limit lets an effort swing from zero to its limit, s: the
/// rate limit of each joint is its effort limit over this (`EffortSafety::set_rise_time`).
pub const DEFAULT_EFFORT_RISE_TIME: f64 = 0.02;

/// Effort limits, rate limits per joint and the last effort sent.
#[derive(Debug, Clone, PartialEq)]
pub struct EffortSafety {
    limits: Vec<f64>,
    /// N m/s (N/s) per joint; infinite for none.
    rates: Vec<f64>,
    last: Vec<f64>,
    /// `last` before the latest [`EffortSafety::apply`]: the effort sent the cycle before.
    before: Vec<f64>,
}

impl EffortSafety {
    /// The URDF effort limits of `robot`; `rate_limit` in N m/s (N/s), `None` for none.
    pub fn new(robot: &Robot, rate_limit: Option<f64>) -> Result<Self, ControlError> {
        // Saturation is the last line of defence: no joint is commanded without a limit.
        if let Some(joint) = robot.joints().iter().find(|j| !j.limits.effort.is_finite()) {
            return Err(ControlError::InvalidParameter {
                name: "effort_limits".into(),
                reason: format!(
                    "joint '{}' has no effort limit in the URDF (a continuous joint without <limit>): give one per joint in effort_limits",
                    joint.name
                ),
            });
        }
        let mut safety = Self {
            limits: robot.joints().iter().map(|j| j.limits.effort).collect(),
            rates: vec![f64::INFINITY; robot.dof()],
            last: vec![0.0; robot.dof()],
            before: vec![0.0; robot.dof()],
        };
        safety.set_rate_limit(rate_limit)?;
        Ok(safety)
    }

    /// The same rate limit for every joint, N m/s (N/s) (`None`: no limit).
    pub fn set_rate_limit(&mut self, rate_limit: Option<f64>) -> Result<(), ControlError> {
        let rate = positive_or_none("rate_limit", rate_limit)?;
        self.rates.fill(rate);
        Ok(())
    }

    /// Rate limits sized from the effort limits: each joint's effort may swing from zero to
    /// its limit in `rise_time` seconds, no faster (`None`: no limit).
    pub fn set_rise_time(&mut self, rise_time: Option<f64>) -> Result<(), ControlError> {
        let time = positive_or_none("effort_rise_time", rise_time)?;
        for (rate, limit) in self.rates.iter_mut().zip(&self.limits) {
            // No rise time: no limit (not a zero rate).
            *rate = if time.is_finite() {
                limit / time
            } else {
                f64::INFINITY
            };
        }
        Ok(())
    }

    /// The rate limit of each joint, N m/s (N/s); infinite for none.
    pub fn rate_limits(&self) -> &[f64] {
        &self.rates
    }

    /// Starts the rate limit from zero, as a new layer does.
    pub fn restart(&mut self) {
        self.last.fill(0.0);
        self.before.fill(0.0);
    }

    /// Starts the rate limit from `effort` (for example the effort a hold mode sent).
    pub fn reset(&mut self, effort: &[f64]) {
        for (last, (&e, &limit)) in self.last.iter_mut().zip(effort.iter().zip(&self.limits)) {
            *last = if e.is_finite() {
                e.clamp(-limit, limit)
            } else {
                0.0
            };
        }
        self.before.copy_from_slice(&self.last);
    }

    /// Makes `effort` safe in place, `dt` seconds after the last call. Allocates nothing.
    pub fn apply(&mut self, effort: &mut [f64], dt: f64) -> SafetyReport {
        self.before.copy_from_slice(&self.last);
        let mut report = SafetyReport::default();
        let dt = dt.max(0.0);
        for (((e, last), &limit), &rate) in effort
            .iter_mut()
            .zip(self.last.iter_mut())
            .zip(&self.limits)
            .zip(&self.rates)
        {
            if !e.is_finite() {
                report.non_finite += 1;
                *e = *last;
            }
            if rate.is_finite() {
                let step = rate * dt;
                let limited = e.clamp(*last - step, *last + step);
                if limited != *e {
                    report.rate_limited += 1;
                    *e = limited;
                }
            }
            if e.abs() > limit {
                report.saturated += 1;
                *e = e.clamp(-limit, limit);
            }
            *last = *e;
        }
        report
    }

    /// Makes `effort` safe in place as the replacement of the effort the latest
    /// [`EffortSafety::apply`] made safe in this same cycle (a hold after a failed update): the
    /// rate limit counts from the effort sent the cycle before, so no effort moves more than
    /// `rate_limit dt` in a cycle. Allocates nothing.
    pub fn replace(&mut self, effort: &mut [f64], dt: f64) -> SafetyReport {
        self.last.copy_from_slice(&self.before);
        self.apply(effort, dt)
    }
}

/// `value` when it is a positive number, infinity for `None`; else refused naming `name`.
fn positive_or_none(name: &str, value: Option<f64>) -> Result<f64, ControlError> {
    match value {
        None => Ok(f64::INFINITY),
        Some(v) if v.is_finite() && v > 0.0 => Ok(v),
        Some(v) => Err(ControlError::InvalidParameter {
            name: name.into(),
            reason: format!("{v} must be positive"),
        }),
    }
}

/// Any controller followed by the safety layer; its parameters ramp each step.
pub struct Guarded {
    law: CheckedLaw,
    layer: SafetyLayer,
}

impl std::fmt::Debug for Guarded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guarded")
            .field("controller", &self.law.name())
            .field("safety", self.layer.safety())
            .finish()
    }
}

impl Guarded {
    /// Wraps `inner` with the soft limits (the default margin) and effort limits of `robot`
    /// and an optional rate limit.
    pub fn new(
        inner: Box<dyn Controller>,
        robot: &Robot,
        rate_limit: Option<f64>,
    ) -> Result<Self, ControlError> {
        let layer = SafetyLayer::new(robot, rate_limit)?;
        Ok(Self {
            law: CheckedLaw::new(inner, robot, &layer),
            layer,
        })
    }

    /// See [`CheckedLaw::check_damping`].
    pub fn check_damping(&mut self) {
        self.law.check_damping();
    }

    /// What the safety layer changed in the last update.
    pub fn last_report(&self) -> SafetyReport {
        self.layer.last_report()
    }

    /// The safety layer.
    pub fn layer(&self) -> &SafetyLayer {
        &self.layer
    }

    /// The safety layer, to set its payload, margins and limits.
    pub fn layer_mut(&mut self) -> &mut SafetyLayer {
        &mut self.layer
    }

    /// The effort safety.
    pub fn safety_mut(&mut self) -> &mut EffortSafety {
        self.layer.safety_mut()
    }

    /// The payload's torques, added to the law's.
    pub fn payload_mut(&mut self) -> &mut PayloadCompensation {
        self.layer.payload_mut()
    }

    /// The payload's torques.
    pub fn payload(&self) -> &PayloadCompensation {
        self.layer.payload()
    }

    /// The joint-limit protection.
    pub fn limits_mut(&mut self) -> &mut JointLimitGuard {
        self.layer.limits_mut()
    }

    /// Efforts another law computed for the arm at `state` through the safety layer, as the
    /// wrapped law's would go; [`Guarded::last_report`] then tells what it did.
    pub fn guard(&mut self, state: &JointState<'_>, effort: &mut [f64], dt: f64) {
        self.layer.guard(state, effort, dt);
    }
}

impl Controller for Guarded {
    fn name(&self) -> &'static str {
        self.law.name()
    }
    fn parameters(&self) -> &ParameterSet {
        self.law.parameters()
    }
    fn parameters_mut(&mut self) -> &mut ParameterSet {
        self.law.parameters_mut()
    }
    fn reset(&mut self, state: &JointState<'_>) {
        self.law.reset(state);
    }
    /// The wrapped law; [`Guarded`] overrides `update` (the wrapped controller's update, then
    /// the safety layer), so this only serves a caller that checked the step itself.
    fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError> {
        self.law.compute(step)
    }
    fn update(
        &mut self,
        state: &JointState<'_>,
        reference: &JointReference,
        dt: f64,
        effort: &mut [f64],
    ) -> Result<(), ControlError> {
        let updated = self.law.law_mut().update(state, reference, dt, effort);
        self.layer
            .after_law(updated, (state, reference), dt, effort)
    }
    fn estimates(&self) -> &[f64] {
        self.law.estimates()
    }
    /// As of the last [`Guarded::check_damping`] (see [`CheckedLaw`]'s).
    fn warnings(&self) -> &[String] {
        self.law.warnings()
    }
    fn damping_parameter(&self) -> Option<&'static str> {
        self.law.damping_parameter()
    }
    fn set_parameter(&mut self, name: &str, value: ParameterValue) -> Result<(), ControlError> {
        self.law.set_parameter(name, value)
    }
    fn task_space(&mut self) -> Option<&mut dyn TaskSpace> {
        self.law.task_space()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use armctl_model::{
        Friction, Joint, JointKind, JointLimits, MdhParams, RigidInertia, RobotParts,
    };
    use nalgebra::{IsometryMatrix3, Vector3};

    fn two_joints() -> Robot {
        let joint = |name: &str, effort: f64| Joint {
            name: name.into(),
            kind: JointKind::Revolute,
            mdh: MdhParams::new(0.3, 0.0, 0.0, 0.0),
            limits: JointLimits {
                lower: -3.0,
                upper: 3.0,
                velocity: 2.0,
                effort,
            },
            friction: Friction::default(),
            armature: 0.0,
        };
        let link = RigidInertia {
            mass: 1.0,
            com: Vector3::new(0.1, 0.0, 0.0),
            inertia_com: nalgebra::Matrix3::identity() * 0.01,
        };
        Robot::new(RobotParts {
            name: "two".into(),
            base_link: "base".into(),
            tip_link: "tip".into(),
            joints: vec![joint("a", 10.0), joint("b", 5.0)],
            links: vec![link, link],
            base: IsometryMatrix3::identity(),
            tool: IsometryMatrix3::identity(),
            gravity: Vector3::new(0.0, 0.0, -9.81),
        })
        .unwrap()
    }

    /// A damping set beyond the sampled-data limit is warned about, naming the parameter,
    /// the joint and the configuration; the defaults and a safe value are not.
    #[test]
    fn a_damping_beyond_the_sampled_data_limit_is_warned_about() {
        let robot = armctl_model::test_support::bundled_robot("panda.urdf");
        let law = crate::controller_by_name("pd_gravity", &robot).unwrap();
        let mut guarded = Guarded::new(law, &robot, None).unwrap();
        assert!(guarded.warnings().is_empty(), "{:?}", guarded.warnings());
        let heavy = ParameterValue::DoubleArray(vec![30.0, 50.0, 20.0, 20.0, 60.0, 60.0, 60.0]);
        guarded.set_parameter("kd", heavy).unwrap();
        assert!(guarded.warnings().is_empty(), "checked only when asked");
        guarded.check_damping();
        let warning = guarded.warnings().join("\n");
        assert!(warning.starts_with("kd: at 1000 Hz"), "{warning}");
        assert!(
            warning.contains("q = [") && warning.contains("panda_joint"),
            "{warning}"
        );
        let gentle = ParameterValue::DoubleArray(vec![1.0; 7]);
        guarded.set_parameter("kd", gentle).unwrap();
        guarded.check_damping();
        assert!(guarded.warnings().is_empty(), "{:?}", guarded.warnings());
        // Gains given before the law is wrapped (a parameter file) are checked too.
        let mut law = crate::controller_by_name("pd_gravity", &robot).unwrap();
        let heavy = ParameterValue::DoubleArray(vec![30.0, 50.0, 20.0, 20.0, 60.0, 60.0, 60.0]);
        law.set_parameter("kd", heavy).unwrap();
        let guarded = Guarded::new(law, &robot, None).unwrap();
        assert_eq!(guarded.warnings().len(), 1, "{:?}", guarded.warnings());
    }

    #[test]
    fn non_finite_efforts_are_replaced_by_the_last_safe_ones() {
        let mut safety = EffortSafety::new(&two_joints(), None).unwrap();
        let mut effort = [2.0, -1.0];
        assert_eq!(safety.apply(&mut effort, 1e-3), SafetyReport::default());
        let mut bad = [f64::NAN, f64::INFINITY];
        let report = safety.apply(&mut bad, 1e-3);
        assert_eq!(report.non_finite, 2);
        assert_eq!(bad, [2.0, -1.0]);
    }

    #[test]
    fn efforts_are_clipped_at_the_limits_and_rate_limited() {
        let mut safety = EffortSafety::new(&two_joints(), Some(100.0)).unwrap();
        let mut effort = [50.0, -50.0];
        let report = safety.apply(&mut effort, 1e-3);
        assert_eq!(report.rate_limited, 2);
        assert_eq!(effort, [0.1, -0.1]);
        safety.set_rate_limit(None).unwrap();
        let mut effort = [50.0, -50.0];
        assert_eq!(safety.apply(&mut effort, 1e-3).saturated, 2);
        assert_eq!(effort, [10.0, -5.0]);
        assert!(safety.set_rate_limit(Some(-1.0)).is_err());
    }

    #[test]
    fn rise_time_rate_limits_are_sized_from_the_effort_limits() {
        let mut safety = EffortSafety::new(&two_joints(), None).unwrap();
        safety.set_rise_time(Some(0.05)).unwrap();
        assert_eq!(safety.rate_limits(), [200.0, 100.0]);
        let mut effort = [50.0, -50.0];
        assert_eq!(safety.apply(&mut effort, 1e-3).rate_limited, 2);
        assert_eq!(effort, [0.2, -0.1]);
        for bad in [0.0, -1.0, f64::NAN] {
            let error = safety.set_rise_time(Some(bad)).unwrap_err().to_string();
            assert!(error.contains("effort_rise_time"), "{error}");
        }
        safety.set_rise_time(None).unwrap();
        assert!(safety.rate_limits().iter().all(|r| r.is_infinite()));
    }

    #[test]
    fn a_replaced_effort_is_rate_limited_from_the_effort_sent_the_cycle_before() {
        let mut safety = EffortSafety::new(&two_joints(), Some(100.0)).unwrap();
        let mut first = [f64::NAN, 5.0];
        safety.apply(&mut first, 1e-3);
        assert_eq!(first, [0.0, 0.1]);
        let mut hold = [5.0, 5.0];
        let report = safety.replace(&mut hold, 1e-3);
        assert_eq!(
            hold,
            [0.1, 0.1],
            "one step of 0.1 from the effort sent before (0, 0)"
        );
        assert_eq!(report.rate_limited, 2);
        let mut next = [5.0, 5.0];
        safety.apply(&mut next, 1e-3);
        assert_eq!(next, [0.2, 0.2], "the replacement is what was sent");
    }

    #[test]
    fn a_failing_controller_holds_the_last_safe_effort() {
        struct Failing(ParameterSet);
        impl Controller for Failing {
            fn name(&self) -> &'static str {
                "failing"
            }
            fn parameters(&self) -> &ParameterSet {
                &self.0
            }
            fn parameters_mut(&mut self) -> &mut ParameterSet {
                &mut self.0
            }
            fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError> {
                step.effort.fill(1e9);
                Err(ControlError::NonFinite { what: "test" })
            }
        }
        let robot = two_joints();
        let mut guarded =
            Guarded::new(Box::new(Failing(ParameterSet::new(2))), &robot, None).unwrap();
        guarded.safety_mut().reset(&[1.5, -0.5]);
        let mut effort = [0.0; 2];
        let q = [0.0; 2];
        assert!(guarded
            .update(
                &JointState { q: &q, qd: &q },
                &JointReference::hold(&q),
                1e-3,
                &mut effort
            )
            .is_err());
        assert_eq!(effort, [1.5, -0.5]);
        assert_eq!(guarded.last_report().non_finite, 2);
    }
}
