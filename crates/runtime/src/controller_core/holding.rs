//! Holding and resuming: the hold of a state that cannot be used, the braking of one that is
//! believed, the reaction to a collision, the last command at a stop, and the restart of the
//! law when control resumes.

use super::*;

impl ControllerCore {
    /// Starts the reference from where the arm is (the law starts over beside it). After a hold, a
    /// trajectory that ran on meanwhile would jump: it is cancelled (returns whether one was).
    /// At the first start a trajectory sent since the first state is kept, and joined from
    /// where the arm is by a move within half the velocity limits (slower where viscous
    /// friction would take more than a quarter of the effort limit) and a quarter of the
    /// smallest acceleration limit (a set point or a trajectory that starts elsewhere is not
    /// a step). At the first start the rate limit starts from the gravity torque at the
    /// measured configuration ([`ControllerCore::hand_off`]).
    pub(super) fn resume(&mut self, first_start: bool, now: f64) -> bool {
        self.source.reference.set_hold(&self.gate.q);
        if !first_start {
            return self.source.trajectory.take().is_some();
        }
        self.hand_off();
        self.source.join(&self.gate.q, now, &self.robot);
        false
    }

    /// Starts the rate limit from `G(q)` at the measured configuration: whatever held the arm
    /// before the first command (its brakes, the drive, the controller before this one) held
    /// its weight, so the first command ramps from there rather than from zero, and the arm
    /// does not sag while the law's effort ramps in. (Zero without gravity compensation; the
    /// measured effort of /joint_states is not used: often absent, or offset by the drive's
    /// own friction and gravity models.)
    fn hand_off(&mut self) {
        gravity_or_zero(&self.loaded, &mut self.ws, &self.gate.q, &mut self.hand_off);
        self.layer.safety_mut().reset(&self.hand_off);
    }

    /// The `safe_mode` effort for a last command (gravity compensation at the last valid
    /// configuration, or zero; zero too before any valid state), within the effort limits and
    /// finite. Unlike a hold, no rate limit applies: the command must be the safe one itself,
    /// since it stays in effect after the node is gone. Returns what it is.
    pub fn safe_command(&mut self, effort: &mut [f64]) -> &'static str {
        effort.fill(0.0);
        let mut what = "zero effort";
        let robot_compensates = self.robot.gravity().iter().all(|g| *g == 0.0);
        if let (SafeMode::Gravity, Some(q)) = (self.supervisor.safe_mode, &self.gate.last_valid_q) {
            what = if robot_compensates {
                "zero effort (gravity_compensation is false: the robot holds its own weight)"
            } else {
                "gravity compensation at the last valid configuration"
            };
            if !gravity_or_zero(&self.loaded, &mut self.ws, q, effort) {
                what = "zero effort (gravity could not be computed)";
            }
        }
        for (e, joint) in effort.iter_mut().zip(self.robot.joints()) {
            let limit = joint.limits.effort;
            *e = if e.is_finite() {
                e.clamp(-limit, limit)
            } else {
                0.0
            };
        }
        what
    }

    /// Records the believed configuration on the path and checks the estimate: the latched
    /// collision, if any.
    pub(super) fn detect_collision(&mut self, dt: f64) -> Option<Fault> {
        self.observers.collision.record(&self.robot, &self.gate.q);
        let (torques, bounds) = (
            self.observers.external.torques(),
            self.observers.external.thresholds(),
        );
        let names = &self.joint_names;
        // An over-speed brake asks whether a push caused it, with lower thresholds.
        let braking = matches!(self.gate.state_fault, Some(Fault::OverSpeed(_)));
        let collision = self.observers.collision.check(
            names,
            torques,
            (bounds, braking),
            (&self.gate.q, dt, !self.gate.moved),
        )?;
        Some(Fault::Collision(collision.clone()))
    }

    /// The reaction to a latched collision, through the safety layer: `safe_mode`'s gravity
    /// term at the measured configuration (the state is believed) with the brake's yielding
    /// hold (`compliant`), or the brake holding where it began (`hold`) or at the retract's
    /// anchor (`retract`).
    pub(super) fn react_to_collision(&mut self, effort: &mut [f64], dt: f64) -> SafetyReport {
        effort.fill(0.0);
        if self.supervisor.safe_mode == SafeMode::Gravity {
            gravity_or_zero(&self.loaded, &mut self.ws, &self.gate.q, effort);
        }
        let state = (self.gate.q.as_slice(), self.gate.qd.as_slice());
        if self.observers.collision.compliant() {
            self.supervisor
                .brake
                .yielding_hold(&self.loaded, &mut self.ws, state, dt, effort);
        } else {
            if let Some(anchor) = self.observers.collision.retract_anchor(dt) {
                self.supervisor.brake.anchor_at(anchor);
            }
            self.supervisor
                .brake
                .hold(&self.loaded, &mut self.ws, state, dt, effort);
        }
        self.layer.safety_mut().apply(effort, dt)
    }

    /// The hold effort, through the safety layer; when the controller ran this cycle (and its
    /// effort went through the layer already) the hold replaces that effort, so the rate limit
    /// applies once per cycle. With a `trusted` state (the controller failed, or an over-speed)
    /// the hold brakes the arm: `G(q) - s D qd + s^2 K (q_b - q)` (without `G` in
    /// `safe_mode: zero`), `q_b` where the braking began, within the sampled-data bound at `q`
    /// ([`Brake`]); otherwise the state is not to be believed and it is `G` at the last valid
    /// configuration (or zero), undamped.
    pub(super) fn hold(
        &mut self,
        effort: &mut [f64],
        dt: f64,
        replaces: bool,
        trusted: bool,
    ) -> SafetyReport {
        effort.fill(0.0);
        if let (SafeMode::Gravity, Some(q)) = (self.supervisor.safe_mode, &self.gate.last_valid_q) {
            let q = if trusted { &self.gate.q } else { q };
            gravity_or_zero(&self.loaded, &mut self.ws, q, effort);
        }
        if trusted {
            let state = (self.gate.q.as_slice(), self.gate.qd.as_slice());
            self.supervisor
                .brake
                .hold(&self.loaded, &mut self.ws, state, dt, effort);
        } else {
            // Undamped, the arm may drift: a later braking holds where it begins, not where
            // an earlier one did.
            self.supervisor.brake.release();
        }
        let safety = self.layer.safety_mut();
        if replaces {
            safety.replace(effort, dt)
        } else {
            safety.apply(effort, dt)
        }
    }
}

/// `G(q)` of `robot` into `effort`, or zeros where it cannot be computed (a broken model: a
/// hold without gravity beats none); whether it was computed.
fn gravity_or_zero(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    q: &[f64],
    effort: &mut [f64],
) -> bool {
    let computed = gravity_torques(robot, ws, q, effort).is_ok();
    if !computed {
        effort.fill(0.0);
    }
    computed
}
