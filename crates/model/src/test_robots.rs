//! Small models for unit tests.

use nalgebra::{IsometryMatrix3, Matrix3, Rotation3, Translation3, Vector3};

use crate::{Friction, Joint, JointKind, JointLimits, MdhParams, RigidInertia, Robot, RobotParts};

/// Five joints, one prismatic, with a base and tool transform and non-trivial inertials.
pub(crate) fn mixed_arm() -> Robot {
    let table = [
        (JointKind::Revolute, 0.0, 0.0, 0.3, 0.1),
        (JointKind::Revolute, 0.1, -1.2, 0.05, -0.4),
        (JointKind::Prismatic, 0.4, 0.7, 0.2, 0.3),
        (JointKind::Revolute, -0.05, 1.5, 0.25, 0.0),
        (JointKind::Revolute, 0.0, -0.8, 0.0, 1.0),
    ];
    let joints = table
        .iter()
        .enumerate()
        .map(|(i, &(kind, a, alpha, d, theta))| Joint {
            name: format!("j{}", i + 1),
            kind,
            mdh: MdhParams::new(a, alpha, d, theta),
            limits: JointLimits {
                lower: -2.0,
                upper: 2.0,
                velocity: 2.0,
                effort: 50.0,
            },
            friction: Friction::default(),
            armature: 0.0,
        })
        .collect();
    let links = (0..table.len())
        .map(|i| RigidInertia {
            mass: 1.0 + i as f64 * 0.5,
            com: Vector3::new(0.05, -0.02 * i as f64, 0.1),
            inertia_com: Matrix3::new(0.02, 0.001, 0.0, 0.001, 0.03, 0.002, 0.0, 0.002, 0.025),
        })
        .collect();
    Robot::new(RobotParts {
        name: "mixed".into(),
        base_link: "base".into(),
        tip_link: "tip".into(),
        joints,
        links,
        base: IsometryMatrix3::from_parts(
            Translation3::new(0.1, -0.2, 0.05),
            Rotation3::from_euler_angles(0.2, 0.1, -0.3),
        ),
        tool: IsometryMatrix3::from_parts(
            Translation3::new(0.02, 0.0, 0.12),
            Rotation3::from_euler_angles(-0.4, 0.0, 0.2),
        ),
        gravity: Vector3::new(0.0, 0.0, -9.81),
    })
    .expect("valid test model")
}
