//! Collision detection on the external torque estimate, and the reaction that follows.
//!
//! Detection is model-based: a joint's estimated external torque above its threshold, or the
//! tip force that explains the estimate above its own, is a collision. The thresholds follow
//! the force the user names (`collision_force`) and the estimate's uncertainty at every
//! step ([`armctl_control::collision_thresholds`]), unless fixed ones are given. The arm's own
//! fast motion is explained by the model and does not fire it, unlike a tracking-error test. A
//! collision latches: the core holds with the chosen reaction until it is reset.
//!
//! Reactions (`collision_reaction`): `hold` brakes the arm to rest where the braking began;
//! `compliant` holds there with a third of the hold's natural frequency, so the arm yields to
//! the obstacle and to a person and still comes to rest; `retract` moves the arm back to the
//! configuration where its tip was `collision_retract_distance` earlier along the path it came
//! by (a smooth joint-space move whose tip speed peaks near [`RETRACT_SPEED`]) and holds there.
//!
//! The reaction is chosen when the collision latches. A reset clears the latch and forgets the
//! path; if the estimate is still above its threshold the next step latches a new collision
//! (with the reaction then set) and says so again.

use std::sync::Arc;

use armctl_control::collision_thresholds::{
    CollisionThresholds, DEFAULT_MODEL_ERROR, DEFAULT_SENSITIVITY,
};
use armctl_model::{forward_kinematics, KinematicsWorkspace, Robot};
use nalgebra::Vector3;

/// The tip's peak speed on the way back, m/s.
pub const RETRACT_SPEED: f64 = 0.1;

/// A quintic blend's peak speed over its average (15/8): the retract takes this much longer
/// than the distance at [`RETRACT_SPEED`], so that its peak is that speed.
const QUINTIC_PEAK_RATIO: f64 = 1.875;

/// During an over-speed brake, what an estimate may rise by since before the brake:
/// `BRAKING_MARGIN` times the bounds `u` of what the model leaves in it now and in the loads
/// before (each may carry that much), but at least [`BRAKING_SHARE`] of its threshold. An
/// impact on a light wrist spins it past its limit within a few steps, before the estimate's
/// 20 ms filter shows the named force: on the PUMA 560's wrist the estimate reached 5 to 9
/// times `u` and 5 to 8 % of the threshold (`tests/collision_sensitivity.rs`); a joint that
/// carries almost nothing reached 3 times its tiny `u` but a thousandth of its threshold.
fn braking_threshold(threshold: f64, uncertainty: f64) -> f64 {
    (BRAKING_MARGIN * uncertainty).max(BRAKING_SHARE * threshold)
}

/// See [`braking_threshold`].
const BRAKING_MARGIN: f64 = 3.0;

/// Time constant of the loads an over-speed brake compares the estimates with, s: a steady
/// load (a tool) is in it, an impact of the last 20 ms mostly is not.
const BASELINE_TIME_CONSTANT: f64 = 0.2;

/// See [`braking_threshold`].
const BRAKING_SHARE: f64 = 0.02;

/// How many steps of the path are kept for a retract (4 s at 1 kHz).
const PATH_SAMPLES: usize = 4000;

/// Whether collisions are detected (`collision_detection`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CollisionDetection {
    /// On for a law with a fixed model; off for an adaptive law (its model is uncertain by
    /// design), for two arms holding an object (its load is on the arms) and for the hybrid
    /// force/position law (it presses on a surface by design).
    #[default]
    Auto,
    /// Always.
    On,
    /// Never.
    Off,
}

impl CollisionDetection {
    /// From the `collision_detection` parameter.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "auto" => Some(Self::Auto),
            "on" => Some(Self::On),
            "off" => Some(Self::Off),
            _ => None,
        }
    }
}

/// What to do once a collision is detected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CollisionReaction {
    /// Brake to rest where the braking began.
    #[default]
    Hold,
    /// A hold a third as stiff in frequency: the arm yields, and comes to rest.
    Compliant,
    /// Back along the path by the retract distance, then hold.
    Retract,
}

impl CollisionReaction {
    /// From the `collision_reaction` parameter.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "hold" => Some(Self::Hold),
            "compliant" => Some(Self::Compliant),
            "retract" => Some(Self::Retract),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Hold => "hold",
            Self::Compliant => "compliant",
            Self::Retract => "retract",
        }
    }
}

/// How collisions are detected and met.
#[derive(Debug, Clone, PartialEq)]
pub struct CollisionSettings {
    /// Whether collisions are detected.
    pub detection: CollisionDetection,
    /// Fixed thresholds per joint (chain order), N m or N; empty: from `sensitivity` and the
    /// estimate's uncertainty at each step.
    pub thresholds: Vec<f64>,
    /// The tip force to detect within 20 ms, N.
    pub sensitivity: f64,
    /// The share of the applied torque the model may miss.
    pub model_error: f64,
    /// What to do.
    pub reaction: CollisionReaction,
    /// How far back `retract` goes, m at the tip.
    pub retract_distance: f64,
}

impl Default for CollisionSettings {
    fn default() -> Self {
        Self {
            detection: CollisionDetection::Auto,
            thresholds: vec![],
            sensitivity: DEFAULT_SENSITIVITY,
            model_error: DEFAULT_MODEL_ERROR,
            reaction: CollisionReaction::Hold,
            retract_distance: 0.05,
        }
    }
}

/// A detected collision: what crossed its threshold, and the largest estimates since.
#[derive(Debug, Clone, PartialEq)]
pub struct Collision {
    /// The joint whose torque crossed its threshold (`None`: the tip force did).
    pub joint: Option<Arc<str>>,
    /// The estimate that crossed it, N m, N (or N for the tip force).
    pub value: f64,
    /// The threshold it crossed.
    pub threshold: f64,
    /// The reaction under way.
    pub reaction: CollisionReaction,
    /// The largest estimated tip force since the detection, N.
    pub peak_force: f64,
    /// The arm had not moved since its first state (since the last restart) when this
    /// latched.
    pub never_moved: bool,
}

impl std::fmt::Display for Collision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.joint {
            Some(joint) => write!(
                f,
                "collision: {joint}'s external torque {:.3} beyond its threshold +-{:.3}",
                self.value, self.threshold
            )?,
            None => write!(
                f,
                "collision: the estimated tip force {:.1} N above its threshold {:.1} N",
                self.value, self.threshold
            )?,
        }
        write!(
            f,
            " (reaction: {}; latched until reset_collision; a tool the model lacks or misstates reads as a contact: check payload_mass and payload_com, or raise model_error)",
            self.reaction.name()
        )?;
        if self.never_moved {
            write!(f, "; the joints have not moved since the first state: on mock hardware (mock_components/GenericSystem, which does not move under effort) set collision_detection: \"off\"; on a real arm check its drives and brakes")?;
        }
        Ok(())
    }
}

/// How many configurations the start's sensitivity survey looks at.
const SURVEY_CONFIGURATIONS: usize = 256;

/// At start: what `settings` detect on `robot` at rest (with `friction` left out of its model
/// and the observer's `gain`), when the named force is not detected everywhere (by the tip
/// force check, which fixed joint thresholds leave as it is); none when detection is off.
pub fn sensitivity_warning(
    robot: &Robot,
    friction: &[[f64; 2]],
    settings: &CollisionSettings,
    gain: f64,
) -> Option<String> {
    if settings.detection == CollisionDetection::Off {
        return None;
    }
    let detection = armctl_control::collision_thresholds::DetectionSettings {
        sensitivity: settings.sensitivity,
        model_error: settings.model_error,
        observer_gain: gain,
    };
    let found = armctl_control::collision_thresholds::survey(
        robot,
        friction,
        detection,
        SURVEY_CONFIGURATIONS,
    );
    let found = match found {
        Ok(found) => found,
        Err(e) => return Some(format!("collision_force: not surveyed ({e})")),
    };
    if found.detected_share >= 1.0 {
        return None;
    }
    let worst = if found.worst_force.is_finite() {
        format!("{:.0} N", found.worst_force)
    } else {
        "none along a direction the arm cannot feel (a stretched arm)".into()
    };
    Some(format!(
        "collision_force {:.0} N is detected within 20 ms in every direction at {:.0} % of {} configurations at rest; the median configuration detects {:.0} N, the worst {worst} (at q = {:.2?}). What the estimate may carry without a contact sets this (model_error {} of the torque held, the friction the model leaves out, velocity noise): lower model_error after armctl identify",
        settings.sensitivity,
        100.0 * found.detected_share,
        found.configurations,
        found.median_force,
        found.worst_configuration,
        settings.model_error,
    ))
}

/// Whether an estimate is above its threshold; NaN is (never let through unseen).
fn exceeds(value: f64, threshold: f64) -> bool {
    value.is_nan() || value > threshold
}

/// The detector, the latched collision and the path a retract goes back along.
#[derive(Debug, Clone)]
pub(crate) struct CollisionMonitor {
    settings: CollisionSettings,
    /// What `Auto` means for this core's law.
    auto: bool,
    latched: Option<Collision>,
    /// The estimates outside an over-speed brake, low-pass filtered.
    before_brake: Vec<f64>,
    force_before_brake: f64,
    /// Their bounds of what the model leaves, filtered alike.
    uncertainty_before: Vec<f64>,
    force_uncertainty_before: f64,
    /// A collision latched since [`Self::take_new_latch`] last asked (one may latch again
    /// right after a reset, while the previous one is still the core's fault).
    new_latch: bool,
    /// Ring of the last steps' configurations and tip positions.
    path_q: Vec<Vec<f64>>,
    path_tip: Vec<Vector3<f64>>,
    newest: usize,
    recorded: usize,
    kin: KinematicsWorkspace,
    /// A retract under way: its duration and the time since it began; the anchor moves from
    /// `retract_from` to `retract_to` (buffers allocated once).
    retract: Option<(f64, f64)>,
    retract_from: Vec<f64>,
    retract_to: Vec<f64>,
    /// The anchor of the retract at the current step.
    anchor: Vec<f64>,
}

impl CollisionMonitor {
    pub(crate) fn new(robot: &Robot) -> Self {
        let n = robot.dof();
        Self {
            settings: CollisionSettings::default(),
            auto: true,
            latched: None,
            new_latch: false,
            path_q: vec![vec![0.0; n]; PATH_SAMPLES],
            path_tip: vec![Vector3::zeros(); PATH_SAMPLES],
            newest: 0,
            recorded: 0,
            kin: KinematicsWorkspace::new(robot),
            retract: None,
            retract_from: vec![0.0; n],
            retract_to: vec![0.0; n],
            anchor: vec![0.0; n],
            before_brake: vec![0.0; n],
            force_before_brake: 0.0,
            uncertainty_before: vec![0.0; n],
            force_uncertainty_before: 0.0,
        }
    }

    /// Whether `Auto` detects (the law's model is fixed, and no held object loads the arm).
    pub(crate) fn set_auto(&mut self, on: bool) {
        self.auto = on;
    }

    /// New settings; fixed thresholds have one entry per joint or none (checked by the
    /// declaration).
    pub(crate) fn set(&mut self, settings: CollisionSettings) {
        self.settings = settings;
    }

    /// The latched collision, if any.
    pub(crate) fn latched(&self) -> Option<&Collision> {
        self.latched.as_ref()
    }

    /// Clears the latch and a retract under way, and forgets the path (what came before the
    /// reset leads back toward the obstacle); returns what was latched.
    pub(crate) fn reset(&mut self) -> Option<Collision> {
        self.forget_path();
        self.latched.take()
    }

    /// Forgets the path and a retract under way (a restart: the arm may be elsewhere); a
    /// latched collision stays latched.
    pub(crate) fn forget_path(&mut self) {
        self.retract = None;
        self.recorded = 0;
    }

    /// Records the believed configuration `q` on the path, unless a collision is latched (the
    /// reaction's own motion is not a path to go back along).
    pub(crate) fn record(&mut self, robot: &Robot, q: &[f64]) {
        if self.latched.is_some() {
            return;
        }
        let Ok(poses) = forward_kinematics(robot, &mut self.kin, q) else {
            return;
        };
        let tip = poses.tip().translation.vector;
        self.newest = (self.newest + 1) % PATH_SAMPLES;
        self.path_q[self.newest].copy_from_slice(q);
        self.path_tip[self.newest] = tip;
        self.recorded = (self.recorded + 1).min(PATH_SAMPLES);
    }

    /// Checks the estimates (chain order) against the fixed joint thresholds or those of
    /// `bounds`, and the tip force against that of `bounds` (while `braking` from an
    /// over-speed, their rise too: see [`Self::crossing`]); latches a collision, keeping the
    /// peak tip force of a latched one. Returns the latched collision.
    pub(crate) fn check(
        &mut self,
        names: &[Arc<str>],
        torques: &[f64],
        (bounds, braking): (&CollisionThresholds, bool),
        (q, dt, never_moved): (&[f64], f64, bool),
    ) -> Option<&Collision> {
        let force = bounds.force();
        if let Some(latched) = &mut self.latched {
            latched.peak_force = latched.peak_force.max(force);
            return self.latched.as_ref();
        }
        let enabled = match self.settings.detection {
            CollisionDetection::Auto => self.auto,
            CollisionDetection::On => true,
            CollisionDetection::Off => false,
        };
        if !enabled {
            return None;
        }
        let crossed = self.crossing(torques, force, (bounds, braking));
        if !braking {
            // The loads that were there before: followed slowly, so that a push in the last
            // steps before the over-speed is not among them.
            let a = (dt / BASELINE_TIME_CONSTANT).clamp(0.0, 1.0);
            for (b, t) in self.before_brake.iter_mut().zip(torques) {
                *b += a * (t - *b);
            }
            for (b, u) in self.uncertainty_before.iter_mut().zip(bounds.uncertainty()) {
                *b += a * (u - *b);
            }
            self.force_before_brake += a * (force - self.force_before_brake);
            let df = bounds.force_uncertainty();
            self.force_uncertainty_before += a * (df - self.force_uncertainty_before);
        }
        let (joint, value, threshold) = match crossed? {
            (Some(j), value, threshold) => (Some(names[j].clone()), value, threshold),
            (None, value, threshold) => (None, value, threshold),
        };
        self.new_latch = true;
        self.latched = Some(Collision {
            joint,
            value,
            threshold,
            reaction: self.settings.reaction,
            peak_force: force,
            never_moved,
        });
        if self.settings.reaction == CollisionReaction::Retract {
            self.plan_retract(q);
        }
        self.latched.as_ref()
    }

    /// The joint (none: the tip force) whose estimate crossed its threshold, the estimate and
    /// the threshold. While `braking` from an over-speed, what the estimates rose by since the
    /// brake began is held against [`braking_threshold`] too: a push that spun a light wrist
    /// past its limit is a collision however brief, a load that was there before (a tool the
    /// model lacks, which may be what let the wrist fall) is not.
    fn crossing(
        &self,
        torques: &[f64],
        force: f64,
        (bounds, braking): (&CollisionThresholds, bool),
    ) -> Option<(Option<usize>, f64, f64)> {
        let fixed = self.settings.thresholds.len() == torques.len();
        let threshold_of = |j: usize| match fixed {
            true => self.settings.thresholds[j],
            false => bounds.joints()[j],
        };
        if let Some(j) = (0..torques.len()).find(|&j| exceeds(torques[j].abs(), threshold_of(j))) {
            return Some((Some(j), torques[j], threshold_of(j)));
        }
        if exceeds(force, bounds.force_threshold()) {
            return Some((None, force, bounds.force_threshold()));
        }
        if !braking || fixed {
            return None;
        }
        // Both the estimate now and the loads before carry what the model leaves.
        let rise_limit = |j: usize| {
            let u = bounds.uncertainty()[j] + self.uncertainty_before[j];
            braking_threshold(bounds.joints()[j], u)
        };
        let rose = |j: usize| (torques[j] - self.before_brake[j]).abs();
        if let Some(j) = (0..torques.len()).find(|&j| exceeds(rose(j), rise_limit(j))) {
            return Some((
                Some(j),
                torques[j],
                self.before_brake[j].abs() + rise_limit(j),
            ));
        }
        let df = bounds.force_uncertainty() + self.force_uncertainty_before;
        let force_limit = braking_threshold(bounds.force_threshold(), df);
        exceeds((force - self.force_before_brake).abs(), force_limit).then_some((
            None,
            force,
            self.force_before_brake + force_limit,
        ))
    }

    /// The retract from `q` to where the tip was `retract_distance` back along the path (or
    /// the oldest recorded point).
    fn plan_retract(&mut self, q: &[f64]) {
        let mut travelled = 0.0;
        let mut back = self.newest;
        for k in 1..self.recorded {
            let older = (self.newest + PATH_SAMPLES - k) % PATH_SAMPLES;
            travelled += (self.path_tip[back] - self.path_tip[older]).norm();
            back = older;
            if travelled >= self.settings.retract_distance {
                break;
            }
        }
        self.retract_from.copy_from_slice(q);
        self.retract_to.copy_from_slice(&self.path_q[back]);
        let duration = QUINTIC_PEAK_RATIO * travelled / RETRACT_SPEED;
        self.retract = Some((duration.max(0.1), 0.0));
    }

    /// The anchor the brake holds the arm at this step, `dt` after the last: along a retract
    /// (a quintic in time), else none (the brake keeps where it began).
    pub(crate) fn retract_anchor(&mut self, dt: f64) -> Option<&[f64]> {
        let (duration, elapsed) = self.retract.as_mut()?;
        *elapsed = (*elapsed + dt).min(*duration);
        let s = *elapsed / *duration;
        let blend = s * s * s * (10.0 - 15.0 * s + 6.0 * s * s);
        let path = self.retract_from.iter().zip(&self.retract_to);
        for (a, (from, to)) in self.anchor.iter_mut().zip(path) {
            *a = from + blend * (to - from);
        }
        Some(&self.anchor)
    }

    /// Whether a collision latched since the last call.
    pub(crate) fn take_new_latch(&mut self) -> bool {
        std::mem::take(&mut self.new_latch)
    }

    /// Whether the reaction yields (`compliant`).
    pub(crate) fn compliant(&self) -> bool {
        self.latched
            .as_ref()
            .is_some_and(|c| c.reaction == CollisionReaction::Compliant)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panda() -> Robot {
        armctl_model::test_support::bundled_robot("panda.urdf")
    }

    /// The first joint turned by 0.3 rad over 300 steps, recorded; then a collision latched.
    fn latched_after_a_swing(robot: &Robot) -> (CollisionMonitor, Vec<f64>) {
        let mut monitor = CollisionMonitor::new(robot);
        monitor.set(CollisionSettings {
            detection: CollisionDetection::On,
            reaction: CollisionReaction::Retract,
            ..CollisionSettings::default()
        });
        let mut q = robot.middle_configuration();
        for _ in 0..300 {
            q[0] += 1e-3;
            monitor.record(robot, &q);
        }
        let names: Vec<Arc<str>> = (0..robot.dof()).map(|j| format!("j{j}").into()).collect();
        let torques = vec![1e3; robot.dof()];
        let bounds = CollisionThresholds::new(
            robot,
            &vec![[0.0; 2]; robot.dof()],
            armctl_control::collision_thresholds::DetectionSettings {
                sensitivity: DEFAULT_SENSITIVITY,
                model_error: DEFAULT_MODEL_ERROR,
                observer_gain: 50.0,
            },
        );
        assert!(monitor
            .check(&names, &torques, (&bounds, false), (&q, 1e-3, false))
            .is_some());
        (monitor, q)
    }

    #[test]
    fn the_retract_goes_back_along_the_path_with_its_tip_speed_peaking_at_the_retract_speed() {
        let robot = panda();
        let (mut monitor, q) = latched_after_a_swing(&robot);
        let mut kin = KinematicsWorkspace::new(&robot);
        let mut tip = |q: &[f64]| {
            forward_kinematics(&robot, &mut kin, q)
                .unwrap()
                .tip()
                .translation
                .vector
        };
        let (start, dt) = (tip(&q), 1e-3);
        let (mut last, mut peak) = (start, 0.0_f64);
        while let Some(anchor) = monitor.retract_anchor(dt) {
            let now = tip(anchor);
            peak = peak.max((now - last).norm() / dt);
            last = now;
            if monitor.retract.is_some_and(|(d, e)| e >= d) {
                break;
            }
        }
        let back = (last - start).norm();
        assert!((0.05..0.06).contains(&back), "{back} m back");
        assert!((0.09..=0.1001).contains(&peak), "peak tip speed {peak} m/s");
    }

    #[test]
    fn the_path_is_not_recorded_while_latched_and_a_reset_forgets_it() {
        let robot = panda();
        let (mut monitor, mut q) = latched_after_a_swing(&robot);
        let target = monitor.retract_to.clone();
        for _ in 0..100 {
            q[0] -= 1e-3;
            monitor.record(&robot, &q);
        }
        assert_eq!(
            monitor.recorded, 300,
            "the reaction's motion is not recorded"
        );
        monitor.forget_path();
        assert!(monitor.latched().is_some(), "a restart keeps the latch");
        assert!(monitor.retract.is_none());
        assert!(monitor.reset().is_some());
        assert_eq!(monitor.recorded, 0, "after a reset the path starts anew");
        assert!(target[0] < robot.middle_configuration()[0] + 0.3);
    }
}
