//! Passive joint torques: friction with stiction, and the springs at the joint limits.

use super::*;

/// `(w^2 M_ii, 2 zeta w M_ii)` per joint at mid-range, or zeros without limit springs.
pub(super) fn limit_springs(
    plant: &Robot,
    config: &SimConfig,
) -> Result<Vec<(f64, f64)>, SimError> {
    let n = plant.dof();
    let Some(spring) = config.limits else {
        return Ok(vec![(0.0, 0.0); n]);
    };
    let mid: Vec<f64> = plant.middle_configuration();
    let mut m = DMatrix::zeros(n, n);
    mass_matrix(plant, &mut DynamicsWorkspace::new(plant), &mid, &mut m)?;
    let w = spring.frequency;
    Ok((0..n)
        .map(|i| {
            (
                w * w * m[(i, i)],
                2.0 * spring.damping_ratio * w * m[(i, i)],
            )
        })
        .collect())
}

/// Per joint, the anchor spring of stiction: stiffness `f_s / STICK_DEFLECTION`, critically
/// damped on `M_ii` at the middle of the range; zeros without stiction. Refuses a static
/// friction below the joint's Coulomb friction, naming it.
pub(super) fn stick_springs(
    plant: &Robot,
    config: &SimConfig,
) -> Result<Vec<(f64, f64)>, SimError> {
    let n = plant.dof();
    let statics = &config.joints.static_friction;
    if statics.is_empty() {
        return Ok(vec![(0.0, 0.0); n]);
    }
    check_length("static_friction", n, statics.len())?;
    if !config.friction && statics.iter().any(|&f| f > 0.0) {
        return Err(SimError::InvalidConfig {
            name: "static_friction",
            reason: "needs friction on".into(),
        });
    }
    let mut m = DMatrix::zeros(n, n);
    mass_matrix(
        plant,
        &mut DynamicsWorkspace::new(plant),
        &plant.middle_configuration(),
        &mut m,
    )?;
    plant
        .joints()
        .iter()
        .zip(statics)
        .enumerate()
        .map(|(i, (joint, &f_s))| {
            let peak = joint.friction.peak();
            if f_s > 0.0 && f_s < peak {
                return Err(SimError::InvalidConfig {
                    name: "static_friction",
                    reason: format!(
                        "joint '{}': {f_s} is below its Coulomb friction {peak} (at its highest over the position; breakaway takes at least the sliding friction)",
                        joint.name
                    ),
                });
            }
            let k = f_s / STICK_DEFLECTION;
            Ok((k, 2.0 * (k * m[(i, i)]).sqrt()))
        })
        .collect()
}

/// How far a stuck joint's anchor gives at its breakaway torque, rad (m): stiff enough to hold
/// the joint still, integrated implicitly so any stiffness is stable.
pub(super) const STICK_DEFLECTION: f64 = 1e-4;

impl Simulator {
    /// Friction `F(q, qd)` out of `torque`, its velocity slope (times dt) into `implicit`.
    ///
    /// The Coulomb slope is the tangent of the smoothed sign (`c / width` at rest, zero at
    /// speed), raised where needed to a stick clamp: when a step of full Coulomb friction
    /// would reverse the joint (`dt F > M_ii |qd|`), the slope `F / |qd| - M_ii / dt` makes
    /// the friction exactly what stops it in this step (one joint alone), never more. So a
    /// sliding joint decelerates at the Coulomb rate and stops without chattering in sign.
    /// `mass` must hold M at the stage position.
    pub(super) fn add_friction(&mut self, stage: usize) -> Result<(), SimError> {
        let (dt, width) = (self.config.dt, self.config.coulomb_width);
        let qd = &self.stage_qd[stage];
        let sign = CoulombSign::Smooth { width };
        friction_torques(&self.plant, &self.stage_q, qd, sign, &mut self.friction)?;
        for (i, (joint, &v)) in self.plant.joints().iter().zip(qd).enumerate() {
            let viscous = joint.friction.viscous;
            // The level on the side the joint slides (the offset's kink at rest: the mean).
            let f = &joint.friction;
            let coulomb =
                f.coulomb_at(self.stage_q[i]) + f.offset * v.signum() * f64::from(v != 0.0);
            if let Some(anchor) = self.anchors[i] {
                // Stuck: the anchor spring replaces the Coulomb friction (limited to the
                // breakaway torque by `update_sticking`), implicit like the limit springs.
                let (k, c) = self.stick_springs[i];
                let past = self.stage_q[i] - anchor;
                self.torque[i] -= viscous * v + k * (past + dt * v) + c * v;
                self.implicit[i] += dt * (viscous + c) + dt * dt * k;
                continue;
            }
            let tangent = coulomb / width / (v / width).cosh().powi(2);
            let clamp = if v == 0.0 {
                0.0
            } else {
                (self.friction[i] - viscous * v) / v - self.mass[(i, i)] / dt
            };
            self.torque[i] -= self.friction[i];
            self.implicit[i] += dt * (viscous + tangent.max(clamp));
        }
        Ok(())
    }

    /// After a step: a stuck joint whose anchor needs more than its breakaway torque slips; a
    /// slipping joint that slowed below `stick_velocity` sticks where it is.
    pub(super) fn update_sticking(&mut self) {
        let statics = &self.config.joints.static_friction;
        let stick_velocity = self.config.joints.stick_velocity;
        for (i, anchor) in self.anchors.iter_mut().enumerate() {
            let (k, c) = self.stick_springs[i];
            if k == 0.0 {
                continue;
            }
            let (q, qd) = (self.q[i], self.qd[i]);
            match *anchor {
                Some(at) if (k * (q - at) + c * qd).abs() > statics[i] => *anchor = None,
                None if qd.abs() < stick_velocity && qd.abs() <= self.previous_qd[i].abs() => {
                    *anchor = Some(q)
                }
                _ => {}
            }
        }
    }

    /// Per joint, whether it is stuck (static friction holds it; `joints.static_friction`).
    pub fn stuck(&self) -> impl Iterator<Item = bool> + '_ {
        self.anchors.iter().map(Option::is_some)
    }

    /// Past a limit, the spring-damper at the end of the step (`past + dt qd_new`, linearised):
    /// `-k (past + dt qd) - c qd` out of `torque`, `dt c + dt^2 k` into `implicit`.
    pub(super) fn add_limit_springs(&mut self, stage: usize) {
        let dt = self.config.dt;
        let (q, qd) = (&self.stage_q, &self.stage_qd[stage]);
        let joints = self.plant.joints().iter().zip(&self.limit_springs);
        for ((t, d), ((joint, &(stiffness, damping)), (&qi, &qdi))) in self
            .torque
            .iter_mut()
            .zip(&mut self.implicit)
            .zip(joints.zip(q.iter().zip(qd)))
        {
            let past = if qi > joint.limits.upper {
                qi - joint.limits.upper
            } else if qi < joint.limits.lower {
                qi - joint.limits.lower
            } else {
                continue;
            };
            *t -= stiffness * (past + dt * qdi) + damping * qdi;
            *d += dt * damping + dt * dt * stiffness;
        }
    }
}
