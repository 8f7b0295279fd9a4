//! What an `armctl sim` run is told to reach besides its trajectory: a tip pose
//! (`--target-pose`) or a move of a pair's object (`--object-move`).

use anyhow::{bail, Context, Result};
use armctl_model::Robot;
use nalgebra::IsometryMatrix3;

/// The comma-separated numbers of option `flag`.
fn numbers(flag: &str, text: &str) -> Result<Vec<f64>> {
    text.split(',')
        .map(|v| v.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .with_context(|| format!("{flag} '{text}': numbers separated by commas"))
}

/// `--object-move DX,DY,DZ`: the object's displacement (world axes, m); none: hold it.
pub(crate) fn object_move(text: Option<&str>) -> Result<Option<nalgebra::Vector3<f64>>> {
    let Some(text) = text else {
        return Ok(None);
    };
    let values = numbers("--object-move", text)?;
    if values.len() != 3 || values.iter().any(|v| !v.is_finite()) {
        bail!("--object-move '{text}': give DX,DY,DZ (finite numbers, m)");
    }
    Ok(Some(nalgebra::Vector3::new(
        values[0], values[1], values[2],
    )))
}

/// The time a `--target-pose` is reached in, s (as controller_node's `~/target_pose`).
pub(crate) const TARGET_POSE_SECONDS: f64 = 1.0;

/// `--target-pose`: X,Y,Z keeps the tip's orientation at `q0`; X,Y,Z,QX,QY,QZ,QW sets it.
pub(crate) fn target_pose(
    text: Option<&str>,
    robot: &Robot,
    q0: &[f64],
) -> Result<Option<IsometryMatrix3<f64>>> {
    let Some(text) = text else {
        return Ok(None);
    };
    let values = numbers("--target-pose", text)?;
    if values.iter().any(|v| !v.is_finite()) || !(values.len() == 3 || values.len() == 7) {
        bail!("--target-pose '{text}': give X,Y,Z or X,Y,Z,QX,QY,QZ,QW (finite numbers)");
    }
    let mut ws = armctl_model::KinematicsWorkspace::new(robot);
    let start = armctl_model::forward_kinematics(robot, &mut ws, q0)?.tip();
    let rotation = if values.len() == 7 {
        let q = nalgebra::Quaternion::new(values[6], values[3], values[4], values[5]);
        if q.norm() < 1e-9 {
            bail!("--target-pose '{text}': the quaternion is zero");
        }
        nalgebra::UnitQuaternion::from_quaternion(q).to_rotation_matrix()
    } else {
        start.rotation
    };
    Ok(Some(IsometryMatrix3::from_parts(
        nalgebra::Translation3::new(values[0], values[1], values[2]),
        rotation,
    )))
}
