//! Forward kinematics: `T_0i(q) = base * T_1(q_1) * ... * T_i(q_i)`, `T_tip = T_0n * tool`.
//!
//! Poses are in the base link frame. Cost: n MDH transforms (one sin/cos each) and n pose
//! products.

use nalgebra::{IsometryMatrix3, Rotation3, Translation3};

use crate::error::check_length;
use crate::{KinematicsWorkspace, ModelError, Robot};

/// Which frame a kinematic quantity refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameId {
    /// MDH frame {i}, i in 0..=n ({0} is fixed to the base).
    Mdh(usize),
    /// The tip: frame {n} times the tool transform.
    Tip,
}

/// The result of [`forward_kinematics`]: every MDH frame and the tip.
#[derive(Debug, Clone, Copy)]
pub struct FramePoses<'w> {
    frames: &'w [IsometryMatrix3<f64>],
    tip: IsometryMatrix3<f64>,
}

impl FramePoses<'_> {
    /// Pose of the tip in the base link frame.
    pub fn tip(&self) -> IsometryMatrix3<f64> {
        self.tip
    }
    /// Poses of MDH frames {0}..{n} in the base link frame.
    pub fn mdh_frames(&self) -> &[IsometryMatrix3<f64>] {
        self.frames
    }
    /// Pose of `frame`, or `None` when the index is past {n}.
    pub fn get(&self, frame: FrameId) -> Option<IsometryMatrix3<f64>> {
        match frame {
            FrameId::Tip => Some(self.tip),
            FrameId::Mdh(i) => self.frames.get(i).copied(),
        }
    }
}

/// Computes every frame pose at `q`.
pub fn forward_kinematics<'w>(
    robot: &Robot,
    ws: &'w mut KinematicsWorkspace,
    q: &[f64],
) -> Result<FramePoses<'w>, ModelError> {
    check_length("q", robot.dof(), q.len())?;
    check_length("workspace", robot.dof(), ws.dof())?;
    update_frames(robot, ws, q);
    let tip = ws.frames[robot.dof()] * robot.tool();
    Ok(FramePoses {
        frames: &ws.frames,
        tip,
    })
}

/// Fills `ws.frames` (sizes already checked).
pub(crate) fn update_frames(robot: &Robot, ws: &mut KinematicsWorkspace, q: &[f64]) {
    ws.frames[0] = *robot.base();
    for (i, (joint, &qi)) in robot.joints().iter().zip(q).enumerate() {
        let (theta, d) = joint.mdh.theta_d(joint.kind, qi);
        let parent = &ws.frames[i];
        let (r, o) = joint.mdh.child_frame(
            (parent.rotation.matrix(), &parent.translation.vector),
            theta.sin_cos(),
            d,
        );
        ws.frames[i + 1] =
            IsometryMatrix3::from_parts(Translation3::from(o), Rotation3::from_matrix_unchecked(r));
    }
}

/// Index of the last joint that moves `frame`, and the frame's pose (frames already updated).
pub(crate) fn frame_pose(
    robot: &Robot,
    ws: &KinematicsWorkspace,
    frame: FrameId,
) -> Result<(usize, IsometryMatrix3<f64>), ModelError> {
    let n = robot.dof();
    match frame {
        FrameId::Tip => Ok((n, ws.frames[n] * robot.tool())),
        FrameId::Mdh(i) if i <= n => Ok((i, ws.frames[i])),
        FrameId::Mdh(i) => Err(ModelError::Dimension {
            what: "MDH frame index",
            expected: n,
            got: i,
        }),
    }
}
