//! The law over two arms holding one object ([`Cooperative`]), as a group of two steps it:
//! each arm keeps its own [`ControllerCore`] (its joint states by name, the state checks, the
//! safety layer, hold and resume), and the law computes both arms' efforts from both states.
//! When either arm holds, both do: the law needs both states, and the other arm holds with the
//! reason; when both states are valid again the law starts over, holding the object where it
//! is.

use armctl_control::{Cooperative, JointState};

use super::{ArmOutput, ObjectOutput};
use crate::controller_core::ControllerCore;

/// [`Cooperative`] with what stepping it over two cores needs.
pub(super) struct PairLaw {
    law: Cooperative,
    /// The law's efforts of the step, per arm.
    efforts: [Vec<f64>; 2],
    /// Whether the law ran in the last step, and whether it ever did.
    controlling: bool,
    started: bool,
    /// What the last step changed in the object's reference, to tell the operator.
    notice: Option<String>,
}

impl PairLaw {
    /// `law` for arms of `dof` joints.
    pub(crate) fn new(law: Cooperative, dof: usize) -> Self {
        Self {
            law,
            efforts: [vec![0.0; dof], vec![0.0; dof]],
            controlling: false,
            started: false,
            notice: None,
        }
    }

    /// The law.
    pub(super) fn law(&self) -> &Cooperative {
        &self.law
    }

    /// The law, to set the object's target or a parameter.
    pub(super) fn law_mut(&mut self) -> &mut Cooperative {
        &mut self.law
    }

    /// One step of both arms (`cores`, named `arms`) at `now`, `dt` after the last: each
    /// arm's efforts in chain order and its report into `outputs`. Does not allocate while
    /// both arms are controlled.
    pub(crate) fn step(
        &mut self,
        (cores, arms): (&mut [ControllerCore], &[String]),
        (now, dt): (f64, f64),
        outputs: &mut [ArmOutput],
    ) {
        let outcome = self.run(cores, arms, now, dt);
        self.controlling = outcome.is_ok();
        for (a, (core, out)) in cores.iter_mut().zip(outputs).enumerate() {
            let given = match &outcome {
                Ok(()) => Ok(self.efforts[a].as_slice()),
                Err(reason) => Err(reason.as_str()),
            };
            out.report = core.step_given(now, dt, &mut out.efforts, given);
        }
    }

    /// The object's reference and position after the step.
    pub(crate) fn object(&self) -> ObjectOutput {
        let reference = self.law.desired().pose.translation.vector;
        let position = self.law.object().pose.translation.vector;
        ObjectOutput {
            reference: reference.into(),
            position: position.into(),
        }
    }

    /// What the last step changed in the object's reference (a move cancelled by a hold), to
    /// tell the operator once.
    pub(crate) fn take_notice(&mut self) -> Option<String> {
        self.notice.take()
    }

    /// The law on both arms' newest states, or why it cannot run.
    fn run(
        &mut self,
        cores: &[ControllerCore],
        arms: &[String],
        now: f64,
        dt: f64,
    ) -> Result<(), String> {
        for (core, arm) in cores.iter().zip(arms) {
            if let Some(fault) = core.holds_at(now) {
                return Err(format!("arm '{arm}' holds: {fault}"));
            }
        }
        let measured = [cores[0].measured(), cores[1].measured()];
        let states = measured.map(|(q, qd)| JointState { q, qd });
        if !self.controlling {
            if self.started && self.law.moving() {
                self.notice = Some(
                    "control resumed after a hold: the object's move is cancelled, holding it where it is".into(),
                );
            }
            self.law
                .restart([&states[0], &states[1]])
                .map_err(|e| e.to_string())?;
            self.started = true;
        }
        let [first, second] = &mut self.efforts;
        let result = self
            .law
            .update([&states[0], &states[1]], dt, [first, second])
            .map_err(|e| e.to_string());
        if let Some((arm, sigma)) = self.law.take_reach_stop() {
            let margin = self.law.parameters().values("singularity_margin")[0];
            self.notice = Some(format!(
                "the object's move stopped where it was: arm '{}' nears the edge of its reach or a singularity (smallest singular value of its Jacobian {sigma:.3} < singularity_margin {margin})",
                arms[arm]
            ));
        }
        result
    }
}
