//! Slotine-Li with a known model (docs/theory.md section 6):
//! `qd_r = qd_d + Lambda e`, `qdd_r = qdd_d + Lambda de`, `s = de + Lambda e`,
//! `tau = M(q) qdd_r + C(q, qd) qd_r + G(q) + Kd s`, the two-velocity RNEA with
//! `v = qd_r`, `a = qdd_r`; `Kd` scaled where it would pass the sampled-data margin
//! ([`crate::gain_sizing::damping_bound`]). Claim: with the Christoffel C, `M sdot + (C + Kd) s = 0` and
//! e, de -> 0.

use armctl_model::Robot;
use nalgebra::DVector;

use crate::gain_sizing::damping_bound::DampingBound;
use crate::gain_sizing::default_gains::DEFAULT_BANDWIDTH;
use crate::law_support::gains::{errors, joint_gain};
use crate::law_support::model_terms::ModelTerms;
use crate::{Array, ControlError, Controller, JointReference, JointState, ParameterSet, Step};

/// The gains `lambda` and `kd` shared by both Slotine-Li controllers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SlotineLiGains {
    pub(crate) lambda: Array,
    pub(crate) kd: Array,
}

impl SlotineLiGains {
    /// Declares the defaults of [`slotine_li_gains`].
    pub(crate) fn declare(
        parameters: &mut ParameterSet,
        robot: &Robot,
    ) -> Result<Self, ControlError> {
        let (lambda, kd) = slotine_li_gains(robot)?;
        Ok(Self {
            lambda: parameters.declare_array(joint_gain(
                "lambda",
                lambda,
                "Slope Lambda of the sliding surface s = de + Lambda e per joint, 1/s.",
                1e4,
            ))?,
            kd: parameters.declare_array(joint_gain(
                "kd",
                kd,
                "Gain Kd on s per joint, N m s/rad (N s/m).",
                1e5,
            ))?,
        })
    }

    /// Reference velocity, acceleration and sliding variable of this step into `terms`.
    pub(crate) fn reference_terms(
        self,
        parameters: &ParameterSet,
        state: &JointState<'_>,
        reference: &JointReference,
        terms: &mut ReferenceTerms,
    ) {
        let lambda = &parameters[self.lambda];
        for (i, (e, de)) in errors(state, reference).enumerate() {
            terms.qd_r[i] = reference.qd[i] + lambda[i] * e;
            terms.qdd_r[i] = reference.qdd[i] + lambda[i] * de;
            terms.s[i] = de + lambda[i] * e;
        }
    }
}

/// Default `(Lambda, Kd)`. With the exact model the loop is `M sdot + (C + Kd) s = 0`,
/// `s = de + Lambda e`: per joint the poles `-Lambda` and about `-Kd / M_ii`. `Kd` is plain
/// velocity feedback, so it is bounded like the damping of the PD defaults
/// ([`crate::gain_sizing::default_gains`]: discrete limit on the median effective inertia, step effort,
/// coupled joints): `Kd = kd_pd / 2 = w (R_i M_ii)^1/2`. `Lambda` acts through the model, like
/// the gains of computed torque, and takes their frequency `w_ct` (up to 20 rad/s, sized for a
/// step of every joint at once). A 0.1 rad step then starts with `Kd Lambda e`, within the
/// step's effort share for these frequencies.
pub(crate) fn slotine_li_gains(robot: &Robot) -> Result<(Vec<f64>, Vec<f64>), ControlError> {
    let (_, kd) = crate::gain_sizing::default_gains::pd_gains(robot, DEFAULT_BANDWIDTH)?;
    let lambda =
        crate::gain_sizing::default_gains::error_dynamics_frequencies(robot, DEFAULT_BANDWIDTH)?;
    Ok((lambda, kd.iter().map(|d| 0.5 * d).collect()))
}

/// `qd_r = qd_d + Lambda e`, `qdd_r = qdd_d + Lambda de`, `s = de + Lambda e` of one step.
#[derive(Debug, Clone)]
pub(crate) struct ReferenceTerms {
    pub(crate) qd_r: Vec<f64>,
    pub(crate) qdd_r: Vec<f64>,
    pub(crate) s: DVector<f64>,
}

impl ReferenceTerms {
    pub(crate) fn new(n: usize) -> Self {
        Self {
            qd_r: vec![0.0; n],
            qdd_r: vec![0.0; n],
            s: DVector::zeros(n),
        }
    }
}

/// Slotine-Li with the model's parameters.
#[derive(Debug, Clone)]
pub struct SlotineLi {
    model: ModelTerms,
    parameters: ParameterSet,
    gains: SlotineLiGains,
    terms: ReferenceTerms,
    bound: DampingBound,
}

impl SlotineLi {
    /// The controller with `robot` as its model and the gains of [`slotine_li_gains`].
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let n = robot.dof();
        let mut parameters = ParameterSet::new(n);
        Ok(Self {
            gains: SlotineLiGains::declare(&mut parameters, robot)?,
            parameters,
            model: ModelTerms::new(robot),
            terms: ReferenceTerms::new(n),
            bound: DampingBound::new(n),
        })
    }
}

impl Controller for SlotineLi {
    law_accessors!("slotine_li", damping = "kd");
    fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError> {
        let (p, gains) = (&self.parameters, self.gains);
        // Kd is torque-valued velocity feedback; Lambda acts through the model.
        let scales = self
            .model
            .damping_scales(&mut self.bound, &step, &p[gains.kd])?;
        let terms = &mut self.terms;
        gains.reference_terms(p, step.state, step.reference, terms);
        self.model
            .two_velocity(step.state, &terms.qd_r, &terms.qdd_r, step.effort)?;
        let feedback = p[gains.kd].iter().zip(scales).zip(&terms.s);
        for (e, ((kd, c), s)) in step.effort.iter_mut().zip(feedback) {
            *e += c * kd * s;
        }
        Ok(())
    }
}
