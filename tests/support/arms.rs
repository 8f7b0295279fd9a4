//! The arms the protections are proven on, and the plant they run against: the bundled ones,
//! the classes real users bring (`tests/data/arms`) and generated ones. Included by the tests
//! that use it (`#[path]`), as it needs the simulator and the random arms (dev-dependencies).
// Each test that includes it uses part of it.
#![allow(dead_code)]

use armctl_model::test_support::random_arm::RandomArm;
use armctl_model::{ChainOptions, Robot};
use armctl_sim::{ModelMismatch, SensorNoise, SimConfig};

/// The arms of the classes real users bring: a light spherical wrist, URDF friction, a
/// placeholder effort limit (`tests/data/arms`).
pub const ARM_CLASSES: [&str; 4] = [
    "jaco2_class.urdf",
    "xarm7_class.urdf",
    "z1_class.urdf",
    "puma560_placeholder.urdf",
];

/// A bundled arm (`urdf/`).
pub fn bundled(file: &str) -> Robot {
    Robot::from_urdf_file(armctl_e2e::urdf_dir().join(file), &ChainOptions::default()).unwrap()
}

/// An arm of [`ARM_CLASSES`].
pub fn arm_class(file: &str) -> Robot {
    let path = armctl_e2e::workspace_dir()
        .join("tests/data/arms")
        .join(file);
    Robot::from_urdf_file(path, &ChainOptions::default()).unwrap()
}

/// Generated arm `seed` (damped on odd seeds), its effort limits as generated (three times a
/// bound of its gravity torques), tight (half that) or a placeholder's 1000 N m by `seed % 3`.
pub fn generated_arm(seed: u64) -> (String, Robot) {
    let arm = RandomArm::generate(seed);
    let robot = Robot::from_urdf_str(&arm.urdf, &ChainOptions::default()).unwrap();
    let generated: Vec<f64> = robot.joints().iter().map(|j| j.limits.effort).collect();
    let (kind, efforts) = match seed % 3 {
        0 => ("", generated),
        1 => (
            ", tight limits",
            generated.iter().map(|e| 0.5 * e).collect(),
        ),
        _ => (", placeholder limits", vec![1000.0; robot.dof()]),
    };
    let robot = robot.with_effort_limits(&efforts).unwrap();
    (format!("random arm {seed}{kind}"), robot)
}

/// The population the protections are proven on: the bundled arms, [`ARM_CLASSES`] and 20
/// generated arms, each with its name.
pub fn population() -> Vec<(String, Robot)> {
    let bundled_arms = ["panda.urdf", "ur5e.urdf", "puma560.urdf"]
        .into_iter()
        .map(|f| (f.to_string(), bundled(f)));
    let classes = ARM_CLASSES
        .into_iter()
        .map(|f| (f.to_string(), arm_class(f)));
    bundled_arms
        .chain(classes)
        .chain((0..20).map(generated_arm))
        .collect()
}

/// A plant unlike its model, as a real arm is: 10 % heavier, the URDF's friction, encoder
/// noise and a step of command delay.
pub fn realistic_plant() -> SimConfig {
    SimConfig {
        noise: Some(SensorNoise {
            position: 1e-5,
            velocity: 1e-3,
            seed: 7,
        }),
        command_delay_steps: 1,
        mismatch: ModelMismatch {
            payload: None,
            mass_scale: Some(1.1),
        },
        ..SimConfig::default()
    }
}
