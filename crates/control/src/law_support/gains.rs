//! Pieces shared by the controllers: gain declarations, model-sized defaults, the tracking
//! errors and the PD term.

use armctl_model::Robot;

use crate::gain_sizing::default_gains;
use crate::{Array, ControlError, Declaration, JointReference, JointState, ParameterSet, Step};

/// The description of a model-sized proportional gain.
pub(crate) const KP_DESCRIPTION: &str = "Proportional gain per joint, N m/rad (N/m).";

/// A live per-joint gain, from 0 to `max`.
pub(crate) fn joint_gain(
    name: &str,
    default: Vec<f64>,
    description: &str,
    max: f64,
) -> Declaration {
    Declaration::double_array(name, default, description)
        .per_joint()
        .range(0.0, max)
}

/// A live Cartesian gain `[x y z rx ry rz]`, from 0 to `max`.
pub(crate) fn cartesian_gain(
    name: &str,
    default: Vec<f64>,
    description: &str,
    max: f64,
) -> Declaration {
    Declaration::double_array(name, default, description)
        .length(6)
        .range(0.0, max)
}

/// The handles of a joint-space PD pair (`kp`, `kd` or `stiffness`, `damping`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PdGains {
    pub(crate) kp: Array,
    pub(crate) kd: Array,
}

impl PdGains {
    /// A parameter set with `kp` and `kd` in N m/rad and N m s/rad, the defaults derived for
    /// natural frequencies up to [`default_gains::DEFAULT_BANDWIDTH`];
    /// `kp_description` says what the law needs of kp.
    pub(crate) fn sized(
        robot: &Robot,
        kp_description: &str,
    ) -> Result<(ParameterSet, Self), ControlError> {
        let design = default_gains::pd_design(robot, default_gains::DEFAULT_BANDWIDTH)?;
        let kp_description = format!("{kp_description} {}", design.describe(robot));
        let (kp, kd) = (design.kp, design.kd);
        let mut parameters = ParameterSet::new(robot.dof());
        let gains = Self {
            kp: parameters.declare_array(joint_gain("kp", kp, &kp_description, 1e6))?,
            kd: parameters.declare_array(joint_gain(
                "kd",
                kd,
                "Derivative gain per joint, N m s/rad (N s/m).",
                1e5,
            ))?,
        };
        Ok((parameters, gains))
    }

    /// `effort_i = s_i^2 kp_i e_i + s_i kd_i de_i + model_i` (`model` may be empty: no model
    /// term), `s` the factors of `ModelTerms::damping_scales` for `kd`: the damping ratio
    /// stays, the damping stays within the sampled-data margin.
    pub(crate) fn pd_plus(
        self,
        parameters: &ParameterSet,
        step: Step<'_>,
        model: &[f64],
        s: &[f64],
    ) {
        let (kp, kd) = (&parameters[self.kp], &parameters[self.kd]);
        for (i, (e, de)) in errors(step.state, step.reference).enumerate() {
            step.effort[i] = s[i] * s[i] * kp[i] * e + s[i] * kd[i] * de;
        }
        for (o, m) in step.effort.iter_mut().zip(model) {
            *o += m;
        }
    }
}

/// The tracking errors `(e_i, de_i) = (q_d,i - q_i, qd_d,i - qd_i)`, joint by joint.
pub(crate) fn errors<'a>(
    state: &'a JointState<'_>,
    reference: &'a JointReference,
) -> impl Iterator<Item = (f64, f64)> + 'a {
    reference
        .q
        .iter()
        .zip(state.q)
        .zip(reference.qd.iter().zip(state.qd))
        .map(|((qd_, q), (vd, v))| (qd_ - q, vd - v))
}
