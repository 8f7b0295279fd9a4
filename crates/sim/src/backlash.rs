//! Gear backlash: play between a joint's rotor and its link.
//!
//! A joint with play `b` has its rotor (inertia `J`, the joint's armature) as a body of its own
//! at angle `theta`, driven by the command; the link gets only what the gear passes on. While
//! the rotor is inside the play (`|theta - q| < b/2`) the gear passes nothing; at either
//! flank the teeth mesh as a stiff spring-damper, `tau_g = k e + d (omega - qd)` with
//! `e = theta - q -+ b/2`. So a torque reversal leaves the link unpowered while the rotor
//! crosses the play, `sqrt(2 b J / |tau|)` from one flank to the other under a constant torque.
//!
//! The mesh is stiff, so it is implicit (semi-implicit Euler only): the link sees it, with the rotor's implicit Euler step
//! folded in, as a torque linear in its end-of-step velocity (on M's diagonal, as the limit
//! springs); the rotor then takes the same torque back.

use armctl_model::Robot;

use crate::{Integrator, SimConfig, SimError};

/// One joint's rotor behind its play.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Rotor {
    /// Half the play, rad (m).
    half_play: f64,
    /// The gear torque `a - b qd_new` the link took at the last stage, `None` while apart:
    /// the rotor takes back exactly that.
    meshing: Option<(f64, f64)>,
    inertia: f64,
    stiffness: f64,
    damping: f64,
    angle: f64,
    speed: f64,
}

impl Rotor {
    /// How far the teeth are pressed into each other (0 inside the play).
    fn mesh(&self, q: f64) -> f64 {
        let gap = self.angle - q;
        gap - gap.clamp(-self.half_play, self.half_play)
    }

    /// The gear's torque on the link at the step's end as `a - b qd_new`, or `None` while the
    /// teeth are apart or parting (they push, never pull). It is the mesh spring-damper
    /// `k (e + dt (omega_new - qd_new)) + d (omega_new - qd_new)` with the rotor's own step
    /// `omega_new = omega + dt (tau - gear) / J` solved into it, so link and rotor get the same
    /// torque and the pair keeps its momentum.
    fn mesh_torque(&self, dt: f64, command: f64, q: f64, qd: f64) -> Option<(f64, f64)> {
        let e = self.mesh(q);
        let c = self.stiffness * dt + self.damping;
        let s = 1.0 + c * dt / self.inertia;
        let a = (self.stiffness * e + c * (self.speed + dt * command / self.inertia)) / s;
        let b = c / s;
        (e != 0.0 && (a - b * qd) * e > 0.0).then_some((a, b))
    }
}

/// The rotors of the joints with play (`None` for the others).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Backlash {
    rotors: Vec<Option<Rotor>>,
}

impl Backlash {
    /// The rotors for `effects.backlash` (none when it is empty or all zero), each centred in
    /// its play at `q0`. A joint with play needs its armature, the rotor that crosses it.
    pub(crate) fn new(
        config: &SimConfig,
        model: &Robot,
        q0: &[f64],
    ) -> Result<Option<Self>, SimError> {
        let names: Vec<&str> = model.joint_names().collect();
        let effects = &config.joints;
        if effects.backlash.iter().all(|&b| b == 0.0) {
            return Ok(None);
        }
        if config.integrator != Integrator::SemiImplicitEuler {
            return Err(SimError::InvalidConfig {
                name: "backlash",
                reason: "needs the semi-implicit Euler integrator: the mesh is solved with the rotor's implicit Euler step, which RK4's stages would turn into extra link inertia".into(),
            });
        }
        armctl_model::check_length("backlash", names.len(), effects.backlash.len())?;
        let k = effects.gear_stiffness;
        let rotors = effects
            .backlash
            .iter()
            .enumerate()
            .map(|(i, &play)| {
                if play == 0.0 {
                    return Ok(None);
                }
                // The settings' armature, else the model's (a URDF may carry one).
                let inertia = effects
                    .armature
                    .get(i)
                    .copied()
                    .unwrap_or(model.joints()[i].armature);
                if inertia <= 0.0 {
                    return Err(SimError::InvalidConfig {
                        name: "backlash",
                        reason: format!(
                            "joint '{}' has play but no armature: give its rotor inertia (armature), the body that crosses the play",
                            names[i]
                        ),
                    });
                }
                Ok(Some(Rotor {
                    half_play: play / 2.0,
                    meshing: None,
                    inertia,
                    stiffness: k,
                    damping: 2.0 * (k * inertia).sqrt(),
                    angle: q0[i],
                    speed: 0.0,
                }))
            })
            .collect::<Result<_, _>>()?;
        Ok(Some(Self { rotors }))
    }

    /// Whether joint `i` has play (its armature is then the rotor's, not the link's).
    pub(crate) fn has_play(&self, i: usize) -> bool {
        self.rotors.get(i).is_some_and(Option::is_some)
    }

    /// On the link side at a stage `(q, qd)`: each joint with play gets the gear's torque
    /// instead of the command, linearised in the step's end velocity (`dt b` into `implicit`).
    pub(crate) fn act_on_links(
        &mut self,
        dt: f64,
        command: &[f64],
        (q, qd): (&[f64], &[f64]),
        torque: &mut [f64],
        implicit: &mut [f64],
    ) {
        for (i, rotor) in self.rotors.iter_mut().enumerate() {
            let Some(r) = rotor else { continue };
            torque[i] -= command[i];
            r.meshing = r.mesh_torque(dt, command[i], q[i], qd[i]);
            if let Some((a, b)) = r.meshing {
                torque[i] += a - b * qd[i];
                implicit[i] += dt * b;
            }
        }
    }

    /// After the links' step, with `qd` the links' new velocities: each rotor takes the command
    /// less the very torque its link got (the last stage's linearisation at `qd`, so the pair
    /// keeps its momentum also on the step the teeth meet or part).
    pub(crate) fn step_rotors(&mut self, dt: f64, command: &[f64], qd: &[f64]) {
        for (i, rotor) in self.rotors.iter_mut().enumerate() {
            let Some(r) = rotor else { continue };
            let gear = r.meshing.map_or(0.0, |(a, b)| a - b * qd[i]);
            r.speed += dt * (command[i] - gear) / r.inertia;
            r.angle += dt * r.speed;
        }
    }

    /// Puts each rotor in the middle of its play at `q`, at the link's speed `qd` (after the
    /// links are moved by hand).
    pub(crate) fn recentre(&mut self, q: &[f64], qd: &[f64]) {
        for (i, rotor) in self.rotors.iter_mut().enumerate() {
            if let Some(r) = rotor {
                (r.angle, r.speed, r.meshing) = (q[i], qd[i], None);
            }
        }
    }

    /// The rotors' kinetic energy plus the energy in the meshing teeth, J.
    pub(crate) fn energy(&self, q: &[f64]) -> f64 {
        self.rotors
            .iter()
            .zip(q)
            .filter_map(|(r, &q)| {
                let r = r.as_ref()?;
                let e = r.mesh(q);
                Some(0.5 * r.inertia * r.speed * r.speed + 0.5 * r.stiffness * e * e)
            })
            .sum()
    }

    /// Joint `i`'s rotor angle (`None` without play).
    pub(crate) fn rotor_angle(&self, i: usize) -> Option<f64> {
        self.rotors.get(i).copied().flatten().map(|r| r.angle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One revolute joint named `name` turning a 0.01 kg m^2 body.
    fn one_joint(name: &str) -> Robot {
        let urdf = format!(
            r#"<robot name="one"><link name="base_link"/>
<joint name="{name}" type="revolute"><parent link="base_link"/><child link="l"/><axis xyz="0 0 1"/>
<limit lower="-10" upper="10" effort="10" velocity="10"/></joint>
<link name="l"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="0.01"/></inertial></link></robot>"#
        );
        Robot::from_urdf_str(&urdf, &armctl_model::ChainOptions::default()).unwrap()
    }

    fn effects(play: f64, armature: f64) -> SimConfig {
        SimConfig {
            integrator: Integrator::SemiImplicitEuler,
            joints: crate::JointEffects {
                backlash: vec![play],
                armature: vec![armature],
                ..crate::JointEffects::default()
            },
            ..SimConfig::default()
        }
    }

    #[test]
    fn no_play_is_no_rotor() {
        assert!(
            Backlash::new(&SimConfig::default(), &one_joint("j"), &[0.0])
                .unwrap()
                .is_none()
        );
        assert!(Backlash::new(&effects(0.0, 0.1), &one_joint("j"), &[0.0])
            .unwrap()
            .is_none());
    }

    #[test]
    fn play_without_a_rotor_inertia_is_refused_naming_the_joint() {
        let e = Backlash::new(&effects(0.01, 0.0), &one_joint("elbow"), &[0.0]).unwrap_err();
        assert!(e.to_string().contains("'elbow'"), "{e}");
    }

    #[test]
    fn inside_the_play_the_gear_passes_nothing() {
        let mut b = Backlash::new(&effects(0.02, 0.1), &one_joint("j"), &[0.3])
            .unwrap()
            .unwrap();
        let (mut torque, mut implicit) = ([5.0], [0.0]);
        b.act_on_links(1e-3, &[5.0], (&[0.3], &[0.0]), &mut torque, &mut implicit);
        assert_eq!((torque, implicit), ([0.0], [0.0]));
    }
}
