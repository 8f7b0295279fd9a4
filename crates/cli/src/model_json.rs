//! The JSON form of a converted model (`armctl model --json`); schema in docs/cli.md.

use armctl_model::{BranchPolicy, Conversion};
use nalgebra::IsometryMatrix3;
use serde::Serialize;

/// One joint row. `a`, `alpha` are Craig's `a_{i-1}`, `alpha_{i-1}`; a revolute joint's angle
/// is `theta + q`, a prismatic joint's offset `d + q`. Infinite limits are `null`.
#[derive(Debug, Serialize)]
pub(crate) struct JointJson {
    name: String,
    #[serde(rename = "type")]
    kind: &'static str,
    a: f64,
    alpha: f64,
    d: f64,
    theta: f64,
    lower: Option<f64>,
    upper: Option<f64>,
    velocity: f64,
    effort: f64,
    viscous: f64,
    coulomb: f64,
    /// The Coulomb level's asymmetry (an identified model's; a URDF has none).
    friction_offset: f64,
    urdf_frame_kept: bool,
}

/// Link i's inertial in MDH frame {i}; inertia about the COM.
#[derive(Debug, Serialize)]
pub(crate) struct LinkJson {
    mass: f64,
    com: [f64; 3],
    inertia: [[f64; 3]; 3],
}

/// A link lumped into a chain link.
#[derive(Debug, Serialize)]
pub(crate) struct LumpedJson {
    link: String,
    into_joint: String,
}

/// The whole document.
#[derive(Debug, Serialize)]
pub(crate) struct ModelJson {
    name: String,
    base_link: String,
    tip_link: String,
    joints: Vec<JointJson>,
    /// 4x4 row-major; `T_tip = base * T_1(q_1) ... T_n(q_n) * tool`.
    base: [[f64; 4]; 4],
    tool: [[f64; 4]; 4],
    gravity: [f64; 3],
    links: Vec<LinkJson>,
    branches: &'static str,
    locked: Vec<(String, f64)>,
    dropped: Vec<String>,
    lumped: Vec<LumpedJson>,
    fk_residual: f64,
    warnings: Vec<String>,
}

fn rows(pose: &IsometryMatrix3<f64>) -> [[f64; 4]; 4] {
    let m = pose.to_homogeneous();
    std::array::from_fn(|r| std::array::from_fn(|c| m[(r, c)]))
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

impl ModelJson {
    pub(crate) fn new(conversion: &Conversion, branches: BranchPolicy) -> Self {
        let robot = &conversion.robot;
        let report = &conversion.report;
        let joints = robot
            .joints()
            .iter()
            .enumerate()
            .map(|(i, j)| JointJson {
                name: j.name.clone(),
                kind: j.kind.as_str(),
                a: j.mdh.a(),
                alpha: j.mdh.alpha(),
                d: j.mdh.d(),
                theta: j.mdh.theta(),
                lower: finite(j.limits.lower),
                upper: finite(j.limits.upper),
                velocity: j.limits.velocity,
                effort: j.limits.effort,
                viscous: j.friction.viscous,
                coulomb: j.friction.coulomb,
                friction_offset: j.friction.offset,
                urdf_frame_kept: report.urdf_frame_kept[i + 1],
            })
            .collect();
        let links = robot
            .links()
            .iter()
            .map(|l| LinkJson {
                mass: l.mass,
                com: [l.com.x, l.com.y, l.com.z],
                inertia: std::array::from_fn(|r| std::array::from_fn(|c| l.inertia_com[(r, c)])),
            })
            .collect();
        let g = robot.gravity();
        Self {
            name: robot.name().to_string(),
            base_link: robot.base_link().to_string(),
            tip_link: robot.tip_link().to_string(),
            joints,
            base: rows(robot.base()),
            tool: rows(robot.tool()),
            gravity: [g.x, g.y, g.z],
            links,
            branches: branches.as_str(),
            locked: report.chain.locked.clone(),
            dropped: report.chain.dropped.clone(),
            lumped: report
                .chain
                .lumped
                .iter()
                .map(|(link, joint)| LumpedJson {
                    link: link.clone(),
                    into_joint: joint.clone(),
                })
                .collect(),
            fk_residual: report.fk_residual,
            warnings: report.warnings.clone(),
        }
    }
}
