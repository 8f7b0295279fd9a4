//! Simulator settings. Every non-ideal effect is off by default.

use armctl_dynamics::Wrench;

use crate::{Scene, SimError};

/// The integration scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Integrator {
    /// Classic fourth-order Runge-Kutta (four forward-dynamics evaluations per step). The
    /// passive torques (friction, limit springs) are implicit in every stage, which keeps it
    /// stable for any damping, but makes them first order, and a mode much faster than the
    /// step decays by 0.375 per step instead of at once: for very stiff damping (b dt / I over
    /// about 1) `SemiImplicitEuler` resolves stops better. Fourth order without them. Each
    /// stage solving with `M + dt D` acts as an extra armature `dt b` on a damped joint: with
    /// b = 1 N m s/rad that is 1e-3 kg m^2, which moved a Panda 4.4e-3 rad away from MuJoCo's
    /// RK4 in 2 s (`tests/mujoco_agreement.rs`); `SemiImplicitEuler` agreed to 2.2e-8.
    #[default]
    Rk4,
    /// Semi-implicit (symplectic) Euler: `qd += dt qdd(q, qd)`, then `q += dt qd`, with the
    /// passive torques implicit (backward Euler in velocity, as MuJoCo): a viscous joint
    /// decays by `1 / (1 + b dt / I)` per step, a Coulomb one stops within a step.
    SemiImplicitEuler,
}

/// Joint position limits as stiff spring-dampers: past a limit joint i feels
/// `-k_i * penetration - b_i * qd` with `k_i = w^2 M_ii`, `b_i = 2 zeta w M_ii` (`M_ii` of the
/// plant at mid-range), so every joint, light wrist or heavy shoulder, meets its limit with
/// the same natural frequency. The effective inertia can be several times smaller than M_ii in
/// other configurations, so the default (100 rad/s at 1 kHz) leaves margin; raise it with care.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LimitSpring {
    /// Natural frequency w of a joint pressed into its limit, rad/s.
    pub frequency: f64,
    /// Damping ratio zeta.
    pub damping_ratio: f64,
}

impl Default for LimitSpring {
    fn default() -> Self {
        Self {
            frequency: 100.0,
            damping_ratio: 1.0,
        }
    }
}

pub use armctl_model::Payload;

/// Gaussian measurement noise (standard deviations) and its seed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SensorNoise {
    /// On positions, rad or m.
    pub position: f64,
    /// On velocities, rad/s or m/s.
    pub velocity: f64,
    /// Seed of the noise generator (same seed, same noise).
    pub seed: u64,
}

/// How the simulated arm differs from the model the controller uses.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ModelMismatch {
    /// A payload at the tip.
    pub payload: Option<Payload>,
    /// Scale of every link's mass and inertia (1 = as modelled).
    pub mass_scale: Option<f64>,
}

/// Joint effects a URDF has no field for. Each list is empty (the model's) or has one value
/// per joint.
#[derive(Debug, Clone, PartialEq)]
pub struct JointEffects {
    /// Static friction (breakaway torque) per joint, N m (N), at least the joint's Coulomb
    /// friction: a joint that slows below `stick_velocity` sticks, held by up to this much,
    /// and slips (kinetic, the URDF's Coulomb friction) when more is needed. Empty: no
    /// stiction. Needs `friction`.
    pub static_friction: Vec<f64>,
    /// The speed below which a slowing joint sticks, rad/s (m/s).
    pub stick_velocity: f64,
    /// Rotor inertia reflected through the gear, per joint, kg m^2 (kg): the plant's, replacing
    /// the model's (which the controller keeps). Empty: the model's.
    pub armature: Vec<f64>,
    /// Gear backlash per joint, rad (m): the play the rotor crosses before the link feels a
    /// reversed torque. A joint with play needs its armature (the rotor) and the semi-implicit
    /// Euler integrator. Empty or zeros: none.
    pub backlash: Vec<f64>,
    /// The meshing teeth's stiffness where there is play, N m/rad (N/m).
    pub gear_stiffness: f64,
    /// The Coulomb friction's ripple over each joint's position (gear eccentricity), per
    /// joint `[c_1, s_1, c_2, s_2, ..]` (see `armctl_model::Robot::with_friction_ripple`): the
    /// plant's, replacing the model's. Empty: the model's. Needs `friction`.
    pub friction_ripple: Vec<Vec<f64>>,
    /// The Coulomb friction's asymmetry per joint, N m (N): sliding positively the plant's
    /// joint meets `coulomb + offset`, negatively `coulomb - offset` (see
    /// `armctl_model::Friction::offset`), replacing the model's. Empty: the model's. Needs
    /// `friction`.
    pub friction_offset: Vec<f64>,
    /// Viscous friction per joint, N m s/rad (N s/m): the plant's, replacing the URDF's
    /// `<dynamics damping>` (the controller keeps the URDF's), as a real arm has friction its
    /// vendor's URDF leaves out. Empty: the URDF's. Needs `friction`.
    pub viscous: Vec<f64>,
    /// Coulomb friction per joint, N m (N): the plant's, replacing the URDF's `<dynamics
    /// friction>`. Empty: the URDF's. Needs `friction`.
    pub coulomb: Vec<f64>,
}

impl Default for JointEffects {
    fn default() -> Self {
        Self {
            static_friction: Vec::new(),
            stick_velocity: 1e-3,
            armature: Vec::new(),
            backlash: Vec::new(),
            gear_stiffness: 1e4,
            friction_ripple: Vec::new(),
            friction_offset: Vec::new(),
            viscous: Vec::new(),
            coulomb: Vec::new(),
        }
    }
}

/// Everything the simulator can be told.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// Step, s.
    pub dt: f64,
    /// Integration scheme.
    pub integrator: Integrator,
    /// Apply the model's viscous and Coulomb friction.
    pub friction: bool,
    /// Velocity over which the Coulomb sign goes smoothly from -1 to 1 (tanh), rad/s.
    pub coulomb_width: f64,
    /// Joint limits as spring-dampers; `None` lets joints pass their limits.
    pub limits: Option<LimitSpring>,
    /// Saturate commands at the URDF effort limits.
    pub saturate: bool,
    /// Measurement noise; `None` measures the true state.
    pub noise: Option<SensorNoise>,
    /// Commands act this many steps after they are given.
    pub command_delay_steps: usize,
    /// The simulated arm differs from the model.
    pub mismatch: ModelMismatch,
    /// A constant wrench the environment applies to the tip (base link axes).
    pub external_wrench: Option<Wrench>,
    /// What the arm can touch, where, and a force/torque sensor.
    pub scene: Scene,
    /// Stiction and armature.
    pub joints: JointEffects,
    /// The arm adds its own gravity torque G(q) to every command, as a Franka arm does
    /// through libfranka: a controller then sends the law without G
    /// (`gravity_compensation: false`). G of the nominal model: a payload or mass mismatch
    /// is not compensated.
    pub robot_compensates_gravity: bool,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            dt: 1e-3,
            integrator: Integrator::Rk4,
            friction: true,
            coulomb_width: 1e-3,
            limits: Some(LimitSpring::default()),
            saturate: true,
            noise: None,
            command_delay_steps: 0,
            mismatch: ModelMismatch::default(),
            external_wrench: None,
            scene: Scene::default(),
            joints: JointEffects::default(),
            robot_compensates_gravity: false,
        }
    }
}

impl SimConfig {
    /// The ideal arm: no friction, no limits, no saturation, nothing non-ideal.
    pub fn ideal() -> Self {
        Self {
            friction: false,
            limits: None,
            saturate: false,
            ..Self::default()
        }
    }

    /// Checks every value, naming the first bad one.
    pub fn validate(&self) -> Result<(), SimError> {
        const MIN_DT: f64 = 1e-6;
        const MAX_DT: f64 = 0.1;
        const MAX_DELAY_STEPS: usize = 10_000;
        let bad = |name: &'static str, reason: &str| {
            Err(SimError::InvalidConfig {
                name,
                reason: reason.into(),
            })
        };
        if !(self.dt.is_finite() && (MIN_DT..=MAX_DT).contains(&self.dt)) {
            return bad("dt", "must be between 1e-6 and 0.1 s");
        }
        if self.command_delay_steps > MAX_DELAY_STEPS {
            return bad(
                "command_delay_steps",
                "must be at most 10000 (a queue of that many commands is kept)",
            );
        }
        if !(self.coulomb_width.is_finite() && self.coulomb_width > 0.0) {
            return bad("coulomb_width", "must be positive");
        }
        if let Some(l) = self.limits {
            let valid = l.frequency > 0.0
                && l.damping_ratio >= 0.0
                && l.frequency.is_finite()
                && l.damping_ratio.is_finite();
            if !valid {
                return bad(
                    "limits",
                    "frequency must be positive and damping_ratio not negative, both finite",
                );
            }
            if l.frequency * self.dt > 1.0 {
                return bad(
                    "limits",
                    "frequency times dt must stay below 1 for a stable integration",
                );
            }
        }
        if let Some(n) = self.noise {
            if !(n.position >= 0.0
                && n.velocity >= 0.0
                && n.position.is_finite()
                && n.velocity.is_finite())
            {
                return bad(
                    "noise",
                    "standard deviations must be finite and not negative",
                );
            }
        }
        if let Some(p) = self.mismatch.payload {
            if let Err((item, reason)) = p.check() {
                return bad("payload", &format!("{item} {reason}"));
            }
        }
        if let Some(s) = self.mismatch.mass_scale {
            if !(s.is_finite() && s > 0.0) {
                return bad("mass_scale", "must be positive");
            }
        }
        let j = &self.joints;
        let values_ok = j
            .static_friction
            .iter()
            .chain(&j.armature)
            .chain(&j.backlash)
            .chain(&j.viscous)
            .chain(&j.coulomb)
            .all(|v| v.is_finite() && *v >= 0.0);
        if !values_ok {
            return bad(
                "joints",
                "static_friction, armature, backlash, viscous and coulomb must be finite and not negative",
            );
        }
        if !(j.gear_stiffness.is_finite() && j.gear_stiffness > 0.0) {
            return bad("gear_stiffness", "must be positive");
        }
        if !(j.stick_velocity.is_finite() && j.stick_velocity > 0.0) {
            return bad("stick_velocity", "must be positive");
        }
        if let Err((item, reason)) = self.scene.validate() {
            return Err(SimError::InvalidConfig {
                name: "scene",
                reason: format!("{item}: {reason}"),
            });
        }
        if let Some(w) = self.external_wrench {
            if w.force
                .iter()
                .chain(w.torque.iter())
                .any(|v| !v.is_finite())
            {
                return bad("external_wrench", "must be finite");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_and_delays_that_would_exhaust_memory_are_refused_by_name() {
        for (config, name) in [
            (
                SimConfig {
                    dt: 1e-12,
                    ..SimConfig::default()
                },
                "dt",
            ),
            (
                SimConfig {
                    command_delay_steps: 1_000_000_000_000,
                    ..SimConfig::default()
                },
                "command_delay_steps",
            ),
        ] {
            let e = config.validate().unwrap_err();
            assert!(
                matches!(e, SimError::InvalidConfig { name: n, .. } if n == name),
                "{e}"
            );
        }
        assert!(SimConfig::default().validate().is_ok());
    }
}
