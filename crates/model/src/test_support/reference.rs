//! The third-party reference data of the checkout (`tests/data/reference`, described by its
//! README: numbers from Pinocchio and the Robotics Toolbox) and the bundled robot
//! descriptions (`urdf/`), and how to read them.

use std::path::PathBuf;

use nalgebra::{DMatrix, Matrix4};
use serde::Deserialize;

/// The workspace root (this crate lives in its `crates/model`).
pub fn workspace_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The folder of the third-party reference data, in the checkout (`tests/data/reference`).
pub fn reference_dir() -> PathBuf {
    workspace_dir().join("tests/data/reference")
}

/// The bundled robot descriptions (`urdf/` of the workspace).
pub fn urdf_dir() -> PathBuf {
    workspace_dir().join("urdf")
}

/// One sample of a reference file; fields absent from one kind of file are `None`.
#[derive(Debug, Clone, Deserialize)]
#[allow(non_snake_case)]
pub struct Sample {
    /// Joint positions.
    pub q: Vec<f64>,
    /// Joint velocities.
    pub qd: Vec<f64>,
    /// Joint accelerations.
    pub qdd: Vec<f64>,
    /// Inverse dynamics at (q, qd, qdd).
    pub tau: Vec<f64>,
    /// Mass matrix, rows.
    pub M: Vec<Vec<f64>>,
    /// Christoffel Coriolis matrix, rows.
    pub C: Vec<Vec<f64>>,
    /// Gravity torques.
    pub G: Vec<f64>,
    /// Random torques for the forward-dynamics check.
    pub tau_rand: Vec<f64>,
    /// Forward dynamics at (q, qd, tau_rand).
    pub qdd_fd: Vec<f64>,
    /// Tip pose (URDF arms), rows.
    pub T_tip: Option<Vec<Vec<f64>>>,
    /// Tool pose (MDH robots), rows.
    pub T_tool: Option<Vec<Vec<f64>>>,
    /// World poses of MDH frames 1..n (MDH robots).
    pub T_links: Option<Vec<Vec<Vec<f64>>>>,
    /// Joint axes `[px,py,pz,ux,uy,uz]` in the world (URDF arms).
    pub axes_world: Option<Vec<Vec<f64>>>,
}

/// One link row of an MDH reference table.
#[derive(Debug, Clone, Deserialize)]
pub struct MdhLink {
    /// "revolute" or "prismatic".
    pub joint_type: String,
    /// `a_{i-1}`.
    pub a_prev: f64,
    /// `alpha_{i-1}`.
    pub alpha_prev: f64,
    /// `d_i` (constant part).
    pub d: f64,
    /// `theta_i` (constant part).
    pub theta: f64,
    /// Joint offset.
    pub offset: f64,
    /// Mass.
    pub mass: f64,
    /// Centre of mass in frame {i}.
    pub com: [f64; 3],
    /// Inertia about the COM, frame {i} axes.
    pub inertia_com: [[f64; 3]; 3],
}

/// A reference file.
#[derive(Debug, Clone, Deserialize)]
pub struct Reference {
    /// File stem, e.g. "panda_arm".
    #[serde(skip)]
    pub stem: String,
    /// Tip frame (URDF arms).
    pub tip_frame: Option<String>,
    /// Joint names (URDF arms).
    pub joint_names: Option<Vec<String>>,
    /// MDH table (MDH robots).
    pub links: Option<Vec<MdhLink>>,
    /// Samples.
    pub samples: Vec<Sample>,
}

impl Reference {
    /// Loads `<stem>.json` from the reference folder; panics (naming the file) when it cannot.
    pub fn load(stem: &str) -> Reference {
        let path = reference_dir().join(format!("{stem}.json"));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let mut r: Reference = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("cannot parse {}: {e}", path.display()));
        r.stem = stem.to_string();
        r
    }

    /// Path of a URDF in the reference folder.
    pub fn urdf_path(name: &str) -> PathBuf {
        reference_dir().join(name)
    }
}

/// The reference URDFs: `(urdf file, json stem, tip link)`.
pub const REFERENCE_URDFS: [(&str, &str, &str); 6] = [
    ("panda_arm.urdf", "panda_arm", "panda_link8"),
    ("ur5.urdf", "ur5", "tool0"),
    ("puma560_mdh.urdf", "puma560_mdh", "tool0"),
    ("puma560_mdh_generic.urdf", "puma560_mdh", "tool0"),
    ("stanford_mdh.urdf", "stanford_mdh", "tool0"),
    ("stanford_mdh_generic.urdf", "stanford_mdh", "tool0"),
];

/// A 4x4 matrix from rows.
pub fn matrix4(rows: &[Vec<f64>]) -> Matrix4<f64> {
    Matrix4::from_fn(|r, c| rows[r][c])
}

/// A matrix from rows.
pub fn dmatrix(rows: &[Vec<f64>]) -> DMatrix<f64> {
    DMatrix::from_fn(rows.len(), rows[0].len(), |r, c| rows[r][c])
}
