//! The core's estimate of the external torques on the arm ([`MomentumObserver`]) and of the
//! tip wrench that explains them ([`TipWrenchEstimate`]), for every law and every runner.
//!
//! The observer integrates what was applied between two measured states: each command for as
//! long as it was held (the steps' durations), so a timer that steps faster than states come,
//! or a state that is missed, does not count an interval twice. A state that cannot be believed
//! (missing joints, implausible, stale) or a restart starts the estimate over.

use armctl_control::collision_thresholds::{
    CollisionThresholds, DetectionSettings, UnmodelledFriction, DEFAULT_MODEL_ERROR,
    DEFAULT_SENSITIVITY,
};
use armctl_control::{MomentumObserver, TipWrenchEstimate};
use armctl_ident::payload_estimation::RestSample;
use armctl_model::Robot;

use super::rest_poses::RestPoses;

/// The observer's gain when none is given, 1/s: a time constant of 20 ms, quick enough to
/// see a collision within a few steps at 1 kHz, slow enough to filter velocity noise.
pub const DEFAULT_OBSERVER_GAIN: f64 = 50.0;

/// The estimate and what it integrates.
#[derive(Debug, Clone)]
pub(crate) struct ExternalTorque {
    observer: MomentumObserver,
    wrench: TipWrenchEstimate,
    tip_wrench: [f64; 6],
    /// The command in effect, chain order.
    held: Vec<f64>,
    /// `integral tau dt` and the time since the last observed state.
    impulse: Vec<f64>,
    elapsed: f64,
    /// A believable state came that the observer has not taken.
    fresh: bool,
    /// The poses at rest and the estimate there, for a payload estimate.
    rest: RestPoses,
    /// The collision thresholds the estimate's uncertainty allows.
    thresholds: CollisionThresholds,
}

impl ExternalTorque {
    pub(crate) fn new(robot: &Robot) -> Self {
        let n = robot.dof();
        Self {
            observer: MomentumObserver::new(robot, DEFAULT_OBSERVER_GAIN),
            wrench: TipWrenchEstimate::new(robot),
            tip_wrench: [0.0; 6],
            held: vec![0.0; n],
            impulse: vec![0.0; n],
            elapsed: 0.0,
            fresh: false,
            rest: RestPoses::new(n, DEFAULT_OBSERVER_GAIN),
            thresholds: CollisionThresholds::new(
                robot,
                &vec![[0.0; 2]; n],
                DetectionSettings {
                    sensitivity: DEFAULT_SENSITIVITY,
                    model_error: DEFAULT_MODEL_ERROR,
                    observer_gain: DEFAULT_OBSERVER_GAIN,
                },
            ),
        }
    }

    /// A new gain, 1/s.
    pub(crate) fn set_gain(&mut self, gain: f64) {
        self.observer.set_gain(gain);
        self.rest.set_gain(gain);
        let settings = DetectionSettings {
            observer_gain: gain,
            ..self.thresholds.settings()
        };
        self.thresholds.set(settings);
    }

    /// The force to detect, N, and the share of the applied torque the model may miss.
    pub(crate) fn set_detection(&mut self, sensitivity: f64, model_error: f64) {
        let settings = DetectionSettings {
            sensitivity,
            model_error,
            ..self.thresholds.settings()
        };
        self.thresholds.set(settings);
    }

    /// The friction the model leaves out, per joint (the thresholds allow for it).
    pub(crate) fn set_unmodelled_friction(
        &mut self,
        robot: &Robot,
        friction: &[UnmodelledFriction],
    ) {
        self.thresholds = CollisionThresholds::new(robot, friction, self.thresholds.settings());
    }

    /// The collision thresholds of this step.
    pub(crate) fn thresholds(&self) -> &CollisionThresholds {
        &self.thresholds
    }

    /// A state came; `believable` when it can be used (else the estimate starts over).
    pub(crate) fn on_state(&mut self, believable: bool) {
        self.fresh = believable;
        if !believable {
            self.restart();
        }
    }

    /// Starts over: zero until two believable states were observed.
    pub(crate) fn restart(&mut self) {
        self.observer.reset();
        self.tip_wrench = [0.0; 6];
        self.impulse.fill(0.0);
        self.elapsed = 0.0;
        self.fresh = false;
        self.rest.restart();
        self.thresholds.restart();
    }

    /// Forgets the poses at rest (the model the estimate is taken against changed).
    pub(crate) fn forget_rest_poses(&mut self) {
        self.rest.forget();
    }

    /// The poses at rest so far, each with the mean estimate there (allocates).
    pub(crate) fn rest_samples(&self) -> Vec<RestSample> {
        self.rest.samples()
    }

    /// A step `dt` after the last, on the newest state `(q, qd)`: the held command counts for
    /// `dt`, and a fresh state is observed. A step that is not a finite time, a failed model
    /// evaluation or a non-finite residual starts the estimate over.
    pub(crate) fn step(&mut self, robot: &Robot, (q, qd): (&[f64], &[f64]), dt: f64) {
        if !(dt.is_finite() && dt >= 0.0) {
            self.restart();
            return;
        }
        for (i, t) in self.impulse.iter_mut().zip(&self.held) {
            *i += t * dt;
        }
        self.elapsed += dt;
        if !self.fresh {
            return;
        }
        self.fresh = false;
        let observed = self
            .observer
            .update(robot, (q, qd), &self.impulse, self.elapsed)
            .and_then(|()| {
                self.wrench
                    .estimate(robot, q, self.observer.external_torques())
            });
        self.impulse.fill(0.0);
        let interval = std::mem::take(&mut self.elapsed);
        match observed {
            Ok(wrench) => {
                self.tip_wrench = wrench;
                let residual = self.observer.external_torques();
                self.rest.observe((q, qd), residual, interval);
                let model = (self.observer.mass_matrix(), self.observer.gravity());
                let applied = (self.held.as_slice(), residual);
                if self
                    .thresholds
                    .update(robot, (q, qd), applied, model, interval)
                    .is_err()
                {
                    self.restart();
                }
            }
            Err(_) => self.restart(),
        }
    }

    /// The command the step sent, held until the next.
    pub(crate) fn sent(&mut self, effort: &[f64]) {
        self.held.copy_from_slice(effort);
    }

    /// The external joint torques, chain order (zero until estimated).
    pub(crate) fn torques(&self) -> &[f64] {
        self.observer.external_torques()
    }

    /// The tip wrench that explains them, `[f; m]`, base link axes, the moment about the tip.
    pub(crate) fn tip_wrench(&self) -> &[f64; 6] {
        &self.tip_wrench
    }
}
