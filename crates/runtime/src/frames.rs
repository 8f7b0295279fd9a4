//! The frames a stamped input (a PoseStamped target, a WrenchStamped measurement) may be given
//! in, and their transformation into what the laws take: tip targets in the base link frame,
//! and the wrench on the tip as `[f; m]` in base link axes with the moment about the tip.
//!
//! A frame is the base link, the chain's tip link, or any URDF link fixed to a body of the
//! chain (a flange, a force/torque sensor frame), placed with the model's kinematics at the
//! newest measured configuration. An empty `frame_id` is the base link.
//!
//! A wrench in a frame fixed to the base (the base link, a world link above it, or empty) is the
//! tip's wrench expressed in that frame's axes, its moment about the tip: how drivers publish
//! the end effector's wrench in the base frame (Franka's `O_F_ext_hat_K`, the plugin's
//! convention). A wrench in a frame on the moving chain (a force/torque sensor, the flange) is
//! the sensor's: its axes, its moment about its origin, moved to the tip.
//! Any other frame is refused, naming it and the frames known.

use armctl_model::{forward_kinematics, FrameId, KinematicsWorkspace, LinkFrame, Robot};
use nalgebra::{IsometryMatrix3, Vector3};

/// Where each named frame sits on the chain.
#[derive(Debug, Clone)]
pub struct ChainFrames {
    links: Vec<LinkFrame>,
    kin: KinematicsWorkspace,
}

/// A frame resolved: fixed to the base (its pose in the base link frame), or on a moving body
/// (that body's MDH frame or the tip, and its pose there).
enum Placed {
    Fixed(IsometryMatrix3<f64>),
    Moving(FrameId, IsometryMatrix3<f64>),
}

impl ChainFrames {
    /// The frames of `robot`, with the URDF links fixed to its bodies (`link_frames` of the
    /// conversion; empty when the model did not come from a URDF: the base and tip links only).
    pub fn new(robot: &Robot, links: Vec<LinkFrame>) -> Self {
        Self {
            links,
            kin: KinematicsWorkspace::new(robot),
        }
    }

    fn place(&self, robot: &Robot, frame: &str) -> Result<Placed, String> {
        if frame.is_empty() || frame == robot.base_link() {
            return Ok(Placed::Fixed(IsometryMatrix3::identity()));
        }
        if frame == robot.tip_link() {
            return Ok(Placed::Moving(FrameId::Tip, IsometryMatrix3::identity()));
        }
        match self.links.iter().find(|l| l.link == frame) {
            // MDH frame {0} is the base transform, whatever q.
            Some(l) if l.frame == 0 => Ok(Placed::Fixed(robot.base() * l.pose)),
            Some(l) => Ok(Placed::Moving(FrameId::Mdh(l.frame), l.pose)),
            None => {
                let mut known = vec![robot.base_link(), robot.tip_link()];
                for link in self.links.iter().map(|l| l.link.as_str()) {
                    if !known.contains(&link) {
                        known.push(link);
                    }
                }
                Err(format!(
                    "frame '{}' is not a link of the chain (frames: {}, or empty for the base link)",
                    armctl_control::shown(frame),
                    known.join(", ")
                ))
            }
        }
    }

    /// The pose of `frame` and of the tip in the base link frame at `q` (`None`: `q` unknown).
    fn poses(
        &mut self,
        robot: &Robot,
        frame: &str,
        q: Option<&[f64]>,
    ) -> Result<(IsometryMatrix3<f64>, IsometryMatrix3<f64>), String> {
        let placed = self.place(robot, frame)?;
        let q = q.ok_or_else(|| {
            format!("frame '{}' is placed at the measured configuration, and no valid joint state has arrived yet", armctl_control::shown(frame))
        })?;
        let poses = forward_kinematics(robot, &mut self.kin, q).map_err(|e| e.to_string())?;
        let frame_pose = match placed {
            Placed::Fixed(pose) => pose,
            Placed::Moving(id, offset) => poses.get(id).map(|p| p * offset).unwrap_or(poses.tip()),
        };
        Ok((frame_pose, poses.tip()))
    }

    /// `pose` given in `frame` as a pose in the base link frame.
    pub fn pose_in_base(
        &mut self,
        robot: &Robot,
        frame: &str,
        pose: IsometryMatrix3<f64>,
        q: Option<&[f64]>,
    ) -> Result<IsometryMatrix3<f64>, String> {
        if let Placed::Fixed(fixed) = self.place(robot, frame)? {
            return Ok(fixed * pose);
        }
        let (frame_pose, _) = self.poses(robot, frame, q)?;
        Ok(frame_pose * pose)
    }

    /// A wrench `[f; m]` given in `frame` as the wrench on the tip: base link axes, the moment
    /// about the tip. In a frame fixed to the base it is rotated only (its moment is about the
    /// tip already); in a frame on the chain its moment is about the frame's origin, and moved.
    pub fn wrench_at_tip(
        &mut self,
        robot: &Robot,
        frame: &str,
        wrench: [f64; 6],
        q: Option<&[f64]>,
    ) -> Result<[f64; 6], String> {
        if let Placed::Fixed(fixed) = self.place(robot, frame)? {
            let r = fixed.rotation;
            let force = r * Vector3::new(wrench[0], wrench[1], wrench[2]);
            let moment = r * Vector3::new(wrench[3], wrench[4], wrench[5]);
            return Ok([force.x, force.y, force.z, moment.x, moment.y, moment.z]);
        }
        let (frame_pose, tip) = self.poses(robot, frame, q)?;
        let rotation = frame_pose.rotation;
        let force = rotation * Vector3::new(wrench[0], wrench[1], wrench[2]);
        let moment = rotation * Vector3::new(wrench[3], wrench[4], wrench[5]);
        // The moment about the tip: m_tip = m_frame + (p_frame - p_tip) x f.
        let moment =
            moment + (frame_pose.translation.vector - tip.translation.vector).cross(&force);
        Ok([force.x, force.y, force.z, moment.x, moment.y, moment.z])
    }
}

impl ChainFrames {
    /// A wrench on the tip (base link axes, the moment about the tip) in the tip link's own
    /// axes at `q`, as a WrenchStamped with the tip link as its frame carries it.
    pub fn in_tip_axes(
        &mut self,
        robot: &Robot,
        wrench: &[f64; 6],
        q: &[f64],
    ) -> Result<[f64; 6], String> {
        let poses = forward_kinematics(robot, &mut self.kin, q).map_err(|e| e.to_string())?;
        let to_tip = poses.tip().rotation.inverse();
        let force = to_tip * Vector3::new(wrench[0], wrench[1], wrench[2]);
        let moment = to_tip * Vector3::new(wrench[3], wrench[4], wrench[5]);
        Ok([force.x, force.y, force.z, moment.x, moment.y, moment.z])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use armctl_model::{urdf_file_to_robot, ChainOptions};

    fn panda() -> (Robot, ChainFrames) {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/panda.urdf");
        let c = urdf_file_to_robot(std::path::Path::new(path), &ChainOptions::default()).unwrap();
        let frames = ChainFrames::new(&c.robot, c.report.link_frames.clone());
        (c.robot, frames)
    }

    const Q: [f64; 7] = [0.3, -0.5, 0.2, -2.0, 0.4, 1.5, 0.6];

    /// A pose in a link's frame is that link's pose times it; in the base link (or no frame)
    /// it is itself; an unknown frame is refused naming it and the known ones.
    #[test]
    fn poses_are_placed_through_the_named_link() {
        let (robot, mut frames) = panda();
        let offset = IsometryMatrix3::translation(0.0, 0.0, 0.1);
        let tip = forward_kinematics(&robot, &mut KinematicsWorkspace::new(&robot), &Q)
            .unwrap()
            .tip();
        let tip_link = robot.tip_link().to_string();
        let placed = frames
            .pose_in_base(&robot, &tip_link, offset, Some(&Q))
            .unwrap();
        assert!((placed.to_homogeneous() - (tip * offset).to_homogeneous()).norm() < 1e-12);
        for base in ["", "panda_link0"] {
            let same = frames.pose_in_base(&robot, base, offset, None).unwrap();
            assert_eq!(same, offset);
        }
        let e = frames
            .pose_in_base(&robot, "camera", offset, Some(&Q))
            .unwrap_err();
        assert!(e.contains("'camera'") && e.contains("panda_link3"), "{e}");
        let e = frames
            .pose_in_base(&robot, "panda_link3", offset, None)
            .unwrap_err();
        assert!(e.contains("no valid joint state"), "{e}");
    }

    /// A wrench measured in a frame above the tip, turned into base axes about the tip, does
    /// the same work as the original on every small motion of the tip body: the force is
    /// rotated, the moment rotated and moved by the lever arm between the frames.
    #[test]
    fn a_wrench_is_moved_to_the_tip_in_base_axes() {
        let (robot, mut frames) = panda();
        let measured = [3.0, -2.0, 5.0, 0.4, 0.1, -0.3];
        let at_tip = frames
            .wrench_at_tip(&robot, "panda_link7", measured, Some(&Q))
            .unwrap();
        let mut kin = KinematicsWorkspace::new(&robot);
        let poses = forward_kinematics(&robot, &mut kin, &Q).unwrap();
        let link7 = poses.get(FrameId::Mdh(7)).unwrap()
            * frames
                .links
                .iter()
                .find(|l| l.link == "panda_link7")
                .unwrap()
                .pose;
        let tip = poses.tip();
        // Power of the wrench on a twist of the body (v at a point, w): the same at either point.
        let w = Vector3::new(0.2, -0.7, 0.3);
        let v_tip = Vector3::new(0.1, 0.4, -0.2);
        let v_link7 = v_tip + w.cross(&(link7.translation.vector - tip.translation.vector));
        let r = link7.rotation;
        let f_base = r * Vector3::new(measured[0], measured[1], measured[2]);
        let m_base = r * Vector3::new(measured[3], measured[4], measured[5]);
        let power_link7 = f_base.dot(&v_link7) + m_base.dot(&w);
        let power_tip = Vector3::new(at_tip[0], at_tip[1], at_tip[2]).dot(&v_tip)
            + Vector3::new(at_tip[3], at_tip[4], at_tip[5]).dot(&w);
        assert!(
            (power_link7 - power_tip).abs() < 1e-12,
            "{power_link7} vs {power_tip}"
        );
        assert_eq!(
            frames.wrench_at_tip(&robot, "", measured, None).unwrap(),
            measured
        );
        // The base link: the tip's wrench in base axes already (its moment about the tip).
        let base = robot.base_link().to_string();
        let as_given = frames.wrench_at_tip(&robot, &base, measured, None).unwrap();
        assert_eq!(as_given, measured);
    }
}
