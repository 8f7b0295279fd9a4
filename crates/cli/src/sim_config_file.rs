//! `armctl sim --sim-config FILE.yaml`: the simulator's settings. Every key is optional. What
//! the URDF describes is on unless turned off (its `<dynamics>` friction, the joint limits as
//! springs, saturation at its effort limits); every other non-ideal effect (noise, delay, a
//! payload, a mass scale, stiction, armature, backlash, ripple, an external wrench, a scene)
//! is off unless given:
//!
//! ```yaml
//! integrator: rk4            # or euler
//! friction: true             # the model's viscous and Coulomb friction
//! coulomb_width: 0.001       # rad/s over which the Coulomb sign changes (tanh)
//! limits: {frequency: 100.0, damping_ratio: 1.0}   # rad/s, scaled by each joint's inertia; null: none
//! saturate: true             # clip commands at the URDF effort limits
//! noise: {position: 1.0e-4, velocity: 1.0e-3, seed: 7}
//! command_delay_steps: 2
//! payload: {mass: 1.5, com: [0, 0, 0.05], inertia: [[0.002, 0, 0], [0, 0.002, 0], [0, 0, 0.002]]}
//! mass_scale: 1.2
//! external_wrench: {force: [0, 0, -20], torque: [0, 0, 0]}   # on the tip, base link axes
//! static_friction: [2.0, 2.0, 1.5, 1.5, 0.8, 0.8, 0.5]   # breakaway per joint (stiction)
//! stick_velocity: 0.001      # rad/s below which a slowing joint sticks
//! armature: [0.3, 0.3, 0.2, 0.2, 0.05, 0.05, 0.05]     # rotor inertia per joint, plant only
//! backlash: [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.002]       # gear play per joint, rad (needs
//!                            # the joint's armature and integrator: euler)
//! gear_stiffness: 10000.0    # N m/rad, the meshing teeth where there is play
//! friction_ripple: [[0.2, 0.1], [], [], [], [], [], []]  # per joint: cos, sin of harmonics
//!                            # 1, 2, .. of the Coulomb friction over the position (plant only)
//! friction_offset: [0.0, 0.0, 0.07, 0.0, 0.0, 0.0, 0.0]   # per joint, N m: sliding positively
//!                            # meets coulomb + offset, negatively coulomb - offset (plant only)
//! viscous: [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]          # the plant's friction per joint in place
//! coulomb: [0.27, 0.44, 0.32, 0.64, 0.42, 0.15, 0.28]   # of the URDF's (plant only)
//! robot_compensates_gravity: false   # the arm adds G(q) itself, as a Franka arm does
//!                            # (default: what the controller's gravity_compensation implies)
//! scene: {obstacles: [...], points: [...], sensor: {...}}    # see scene_file.rs
//! ```

use std::path::Path;

use anyhow::{Context, Result};
use armctl_dynamics::Wrench;
use armctl_sim::{
    Integrator, JointEffects, LimitSpring, ModelMismatch, Payload, SensorNoise, SimConfig,
};
use nalgebra::{Matrix3, Vector3};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LimitsFile {
    frequency: f64,
    damping_ratio: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NoiseFile {
    position: f64,
    velocity: f64,
    #[serde(default)]
    seed: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PayloadFile {
    mass: f64,
    com: [f64; 3],
    inertia: [[f64; 3]; 3],
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WrenchFile {
    force: [f64; 3],
    #[serde(default)]
    torque: [f64; 3],
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SimConfigFile {
    integrator: Option<String>,
    friction: Option<bool>,
    coulomb_width: Option<f64>,
    /// Absent: keep the default; `null`: no limits; a mapping: these springs.
    #[serde(default, deserialize_with = "present")]
    limits: Option<Option<LimitsFile>>,
    saturate: Option<bool>,
    noise: Option<NoiseFile>,
    command_delay_steps: Option<usize>,
    payload: Option<PayloadFile>,
    mass_scale: Option<f64>,
    external_wrench: Option<WrenchFile>,
    static_friction: Option<Vec<f64>>,
    stick_velocity: Option<f64>,
    armature: Option<Vec<f64>>,
    backlash: Option<Vec<f64>>,
    gear_stiffness: Option<f64>,
    friction_ripple: Option<Vec<Vec<f64>>>,
    friction_offset: Option<Vec<f64>>,
    viscous: Option<Vec<f64>>,
    coulomb: Option<Vec<f64>>,
    robot_compensates_gravity: Option<bool>,
    scene: Option<armctl_sim::scene_file::SceneFile>,
}

/// Marks a key that is present (even as `null`) as `Some`.
fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// `base` with the settings of `path` applied; the result is validated. A scene is returned
/// as written: its links are placed on the robot by the caller.
pub(crate) fn load(
    path: &Path,
    base: SimConfig,
) -> Result<(SimConfig, Option<armctl_sim::scene_file::SceneFile>)> {
    let text = crate::input_file::read_text(
        path,
        "simulator settings",
        armctl_model::files::MAX_CONFIG_BYTES,
    )?;
    let file: SimConfigFile = if text.trim().is_empty() {
        SimConfigFile::default()
    } else {
        serde_yaml::from_str(&text)
            .with_context(|| format!("parsing simulator settings {}", path.display()))?
    };
    let integrator = match file.integrator.as_deref() {
        None => base.integrator,
        Some("rk4") => Integrator::Rk4,
        Some("euler") => Integrator::SemiImplicitEuler,
        Some(other) => anyhow::bail!(
            "{}: integrator '{other}' is not rk4 or euler",
            path.display()
        ),
    };
    let config = SimConfig {
        integrator,
        friction: file.friction.unwrap_or(base.friction),
        coulomb_width: file.coulomb_width.unwrap_or(base.coulomb_width),
        limits: match file.limits {
            None => base.limits,
            Some(None) => None,
            Some(Some(l)) => Some(LimitSpring {
                frequency: l.frequency,
                damping_ratio: l.damping_ratio,
            }),
        },
        saturate: file.saturate.unwrap_or(base.saturate),
        noise: file
            .noise
            .map(|n| SensorNoise {
                position: n.position,
                velocity: n.velocity,
                seed: n.seed,
            })
            .or(base.noise),
        command_delay_steps: file.command_delay_steps.unwrap_or(base.command_delay_steps),
        mismatch: ModelMismatch {
            payload: file
                .payload
                .map(|p| Payload {
                    mass: p.mass,
                    com: Vector3::from(p.com),
                    inertia: Matrix3::from_fn(|r, c| p.inertia[r][c]),
                })
                .or(base.mismatch.payload),
            mass_scale: file.mass_scale.or(base.mismatch.mass_scale),
        },
        external_wrench: file
            .external_wrench
            .map(|w| Wrench {
                force: Vector3::from(w.force),
                torque: Vector3::from(w.torque),
            })
            .or(base.external_wrench),
        joints: JointEffects {
            static_friction: file
                .static_friction
                .unwrap_or(base.joints.static_friction.clone()),
            stick_velocity: file.stick_velocity.unwrap_or(base.joints.stick_velocity),
            armature: file.armature.unwrap_or(base.joints.armature.clone()),
            backlash: file.backlash.unwrap_or(base.joints.backlash.clone()),
            gear_stiffness: file.gear_stiffness.unwrap_or(base.joints.gear_stiffness),
            friction_ripple: file
                .friction_ripple
                .unwrap_or(base.joints.friction_ripple.clone()),
            friction_offset: file
                .friction_offset
                .unwrap_or(base.joints.friction_offset.clone()),
            viscous: file.viscous.unwrap_or(base.joints.viscous.clone()),
            coulomb: file.coulomb.unwrap_or(base.joints.coulomb.clone()),
        },
        robot_compensates_gravity: file
            .robot_compensates_gravity
            .unwrap_or(base.robot_compensates_gravity),
        ..base
    };
    config
        .validate()
        .with_context(|| path.display().to_string())?;
    Ok((config, file.scene))
}
