//! Scratch buffers of the kinematics algorithms, allocated once per robot.

use nalgebra::{IsometryMatrix3, Vector3};

use crate::Robot;

/// Preallocated buffers for [`crate::forward_kinematics`], [`crate::jacobian`] and
/// [`crate::jacobian_dot_qd`]. Create one per robot and reuse it; the algorithms allocate
/// nothing.
#[derive(Debug, Clone)]
pub struct KinematicsWorkspace {
    /// World (base link) poses of MDH frames {0}..{n}.
    pub(crate) frames: Vec<IsometryMatrix3<f64>>,
    /// Angular velocity of each link, world axes.
    pub(crate) omega: Vec<Vector3<f64>>,
}

impl KinematicsWorkspace {
    /// Buffers sized for `robot`.
    pub fn new(robot: &Robot) -> Self {
        let n = robot.dof();
        Self {
            frames: vec![IsometryMatrix3::identity(); n + 1],
            omega: vec![Vector3::zeros(); n + 1],
        }
    }

    pub(crate) fn dof(&self) -> usize {
        self.omega.len() - 1
    }
}
