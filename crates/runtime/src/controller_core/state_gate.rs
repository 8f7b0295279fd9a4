//! The first stage of a core: a joint state in, mapped to chain order by name, and judged:
//! missing joints, values no drive can reach (implausible), an over-speed (the brake's
//! latch, decided at the state's arrival), and later its age against `state_timeout`. It
//! keeps the newest believed configuration, which every hold and frame placement uses.

use std::sync::Arc;

use armctl_model::Robot;

use super::braking::Brake;
use super::faults::{Fault, Implausible, ImplausibleRule, Plausibility};
use crate::joint_map::JointMap;

/// The newest state and what is wrong with it.
pub(super) struct StateGate {
    pub(super) map: JointMap,
    /// The newest positions and velocities, chain order.
    pub(super) q: Vec<f64>,
    pub(super) qd: Vec<f64>,
    pub(super) last_valid_q: Option<Vec<f64>>,
    /// The buffer `last_valid_q` takes at the first valid state (allocated once, up front).
    pub(super) spare_q: Vec<f64>,
    pub(super) state_time: Option<f64>,
    /// What is wrong with the newest state, if anything.
    pub(super) state_fault: Option<Fault>,
    pub(super) plausibility: Plausibility,
    pub(super) state_timeout: f64,
    /// The first believed configuration since the start or the last restart, and whether any
    /// later one differed from it: an arm that never moved under the commanded torques may not
    /// be moved by them (ros2_control's mock hardware), which a collision then says.
    first_q: Vec<f64>,
    pub(super) moved: bool,
}

impl StateGate {
    /// A gate for the chain's `joints` (chain order), no state yet.
    pub(super) fn new(joints: Vec<String>, state_timeout: f64) -> Self {
        let n = joints.len();
        Self {
            map: JointMap::new(joints),
            q: vec![0.0; n],
            qd: vec![0.0; n],
            last_valid_q: None,
            spare_q: vec![0.0; n],
            state_time: None,
            state_fault: None,
            plausibility: Plausibility::default(),
            state_timeout,
            first_q: Vec::with_capacity(n),
            moved: false,
        }
    }

    /// A new joint state at `now`: mapped, judged (an over-speed latches `brake`), and kept
    /// as the newest believed configuration when it can be believed, which is returned.
    pub(super) fn admit(
        &mut self,
        (names, position, velocity): (&[String], &[f64], &[f64]),
        now: f64,
        (robot, joint_names): (&Robot, &[Arc<str>]),
        brake: &mut Brake,
    ) -> bool {
        self.state_fault =
            match self
                .map
                .extract(names, position, velocity, &mut self.q, &mut self.qd)
            {
                Err(fault) => Some(Fault::from(fault)),
                Ok(()) => self.implausible(robot, joint_names).or_else(|| {
                    let factor = self.plausibility.over_speed_factor;
                    brake.over_speed(robot, joint_names, &self.qd, factor)
                }),
            };
        self.state_time = Some(now);
        let believable = matches!(self.state_fault, None | Some(Fault::OverSpeed(_)));
        if believable {
            self.keep_valid_q();
        }
        believable
    }

    fn keep_valid_q(&mut self) {
        if self.first_q.is_empty() {
            self.first_q.extend_from_slice(&self.q);
        }
        self.moved = self.moved || self.first_q != self.q;
        match &mut self.last_valid_q {
            Some(q) => q.copy_from_slice(&self.q),
            None => {
                let mut q = std::mem::take(&mut self.spare_q);
                q.clear();
                q.extend_from_slice(&self.q);
                self.last_valid_q = Some(q);
            }
        }
    }

    /// A state in which chain joint `joint` has no reading at `now`.
    pub(super) fn unreadable(&mut self, joint: usize, now: f64) {
        self.state_fault = Some(Fault::Unreadable(self.map.shared_name(joint)));
        self.state_time = Some(now);
    }

    /// The first joint of the newest state that cannot be true, as a fault naming it.
    fn implausible(&self, robot: &Robot, joint_names: &[Arc<str>]) -> Option<Fault> {
        let Plausibility {
            position_margin,
            velocity_factor,
            ..
        } = self.plausibility;
        robot
            .joints()
            .iter()
            .zip(joint_names)
            .zip(self.q.iter().zip(&self.qd))
            .find_map(|((joint, name), (&q, &qd))| {
                let limits = &joint.limits;
                let (lo, hi) = (
                    limits.lower - position_margin,
                    limits.upper + position_margin,
                );
                let (value, rule) = if limits.is_bounded() && !(lo..=hi).contains(&q) {
                    let (lower, upper) = (limits.lower, limits.upper);
                    let margin = position_margin;
                    (
                        q,
                        ImplausibleRule::Position {
                            lower,
                            upper,
                            margin,
                        },
                    )
                } else if limits.velocity > 0.0 && qd.abs() > velocity_factor * limits.velocity {
                    let (limit, factor) = (limits.velocity, velocity_factor);
                    (qd, ImplausibleRule::Velocity { limit, factor })
                } else {
                    return None;
                };
                let joint = name.clone();
                Some(Fault::Implausible(Implausible { joint, value, rule }))
            })
    }

    /// What is wrong with the newest state at `now`: none yet, its own fault, or its age.
    pub(super) fn fault_at(&self, now: f64) -> Option<Fault> {
        let Some(time) = self.state_time else {
            return Some(Fault::NoState);
        };
        if let Some(fault) = &self.state_fault {
            return Some(fault.clone());
        }
        let age = now - time;
        (age > self.state_timeout).then_some(Fault::Stale(age))
    }

    /// Forgets the states (a restart): the believed configuration's buffer is kept.
    pub(super) fn forget(&mut self) {
        self.state_time = None;
        self.state_fault = None;
        // Whether the arm moves is asked again from the next state (the buffer is kept).
        self.first_q.clear();
        self.moved = false;
        if let Some(q) = self.last_valid_q.take() {
            self.spare_q = q;
        }
    }
}
