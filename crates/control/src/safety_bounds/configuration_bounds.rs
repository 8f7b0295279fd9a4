//! Upper bounds, over every configuration, of each joint's gravity torque and inertia: every
//! link beyond the joint as far from its axis as the chain allows (the frame offsets added
//! up). Bounds, not samples: what the joint-limit protection plans its braking on must hold
//! where random sampling does not look (a stretched arm, aligned axes).

use armctl_model::{Joint, JointKind, Robot};
use nalgebra::Vector3;

/// Upper bounds, per joint and over every configuration, of its gravity torque and of its
/// inertia `M_ii` (see [`lever_bounds`]), the armature included. The first joint's axis is
/// fixed, so only the gravity across it counts.
pub(crate) fn gravity_and_inertia_bounds(robot: &Robot) -> (Vec<f64>, Vec<f64>) {
    let (_, mut inertia) = lever_bounds(robot);
    for (bound, joint) in inertia.iter_mut().zip(robot.joints()) {
        *bound += joint.armature;
    }
    (gravity_bounds(robot, &robot.gravity_in_frame0()), inertia)
}

/// Upper bounds of each joint's gravity torque under gravity `g` (frame 0 axes).
pub(crate) fn gravity_bounds(robot: &Robot, g: &Vector3<f64>) -> Vec<f64> {
    lever_bounds(robot)
        .0
        .iter()
        .enumerate()
        .map(|(i, lever)| {
            let across = if i == 0 {
                across_first_axis(&robot.joints()[0], g)
            } else {
                g.norm()
            };
            lever * across
        })
        .collect()
}

/// Per joint, upper bounds over every configuration of `sum_k m_k r_k` (a prismatic joint:
/// `sum_k m_k`), the weight lever of the links it carries per unit of gravity, and of
/// `sum_k (m_k r_k^2 + tr I_k)`, their inertia about its axis: every link beyond the joint as
/// far from its axis as the chain allows (the frame offsets added up).
fn lever_bounds(robot: &Robot) -> (Vec<f64>, Vec<f64>) {
    let joints = robot.joints();
    let links = robot.links();
    let n = robot.dof();
    let mut levers = vec![0.0; n];
    let mut inertia = vec![0.0; n];
    for i in 0..n {
        let mut reach = 0.0;
        for k in i..n {
            if k > i {
                reach += offset_bound(&joints[k]);
            }
            let link = &links[k];
            let r = reach + link.com.norm();
            let (moment, lever) = match joints[i].kind {
                JointKind::Revolute => (link.mass * r * r + link.inertia_com.trace(), r),
                JointKind::Prismatic => (link.mass, 1.0),
            };
            inertia[i] += moment;
            levers[i] += link.mass * lever;
        }
    }
    (levers, inertia)
}

/// The component of gravity across the first joint's axis (a revolute joint) or along it (a
/// prismatic one), whose direction in frame 0 is fixed: `[0, -sin alpha, cos alpha]`.
fn across_first_axis(joint: &Joint, g: &Vector3<f64>) -> f64 {
    let axis = Vector3::new(0.0, -joint.mdh.sin_alpha(), joint.mdh.cos_alpha());
    match joint.kind {
        JointKind::Revolute => g.cross(&axis).norm(),
        JointKind::Prismatic => g.dot(&axis).abs(),
    }
}

/// The largest distance of a frame's origin from its parent's: `sqrt(a^2 + d^2)`, with a
/// prismatic joint's `d` anywhere within its limits.
fn offset_bound(joint: &Joint) -> f64 {
    let (a, d) = (joint.mdh.a(), joint.mdh.d());
    let d = match joint.kind {
        JointKind::Revolute => d.abs(),
        JointKind::Prismatic => (d + joint.limits.lower)
            .abs()
            .max((d + joint.limits.upper).abs()),
    };
    a.hypot(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use armctl_dynamics::{gravity_torques, mass_matrix, DynamicsWorkspace};
    use nalgebra::DMatrix;

    /// The bounds hold at every configuration tried: random ones, the zero configuration (a
    /// stretched Panda and UR5e) and each joint at its limits.
    #[test]
    fn the_braking_bounds_hold_everywhere_tried() {
        for file in [
            "panda.urdf",
            "ur5e.urdf",
            "puma560.urdf",
            "planar_2link.urdf",
        ] {
            let robot = armctl_model::test_support::bundled_robot(file);
            let (gravity_bound, inertia_bound) = gravity_and_inertia_bounds(&robot);
            let n = robot.dof();
            let mut ws = DynamicsWorkspace::new(&robot);
            let mut mass = DMatrix::zeros(n, n);
            let mut rng = armctl_model::test_support::random_chain::Rng::new(5);
            let mut configurations = vec![vec![0.0; n], robot.middle_configuration()];
            for _ in 0..200 {
                let q = robot.joints().iter().map(|j| {
                    let (lower, upper) = j.limits.within_half_turn();
                    rng.range(lower, upper)
                });
                configurations.push(q.collect());
            }
            for i in 0..n {
                for end in [
                    robot.joints()[i].limits.lower,
                    robot.joints()[i].limits.upper,
                ] {
                    let mut q = vec![0.0; n];
                    q[i] = end;
                    configurations.push(q);
                }
            }
            for q in &configurations {
                let mut gravity = vec![0.0; n];
                gravity_torques(&robot, &mut ws, q, &mut gravity).unwrap();
                mass_matrix(&robot, &mut ws, q, &mut mass).unwrap();
                for i in 0..n {
                    assert!(
                        gravity[i].abs() <= gravity_bound[i] + 1e-9,
                        "{file} joint {i} at {q:?}"
                    );
                    assert!(
                        mass[(i, i)] <= inertia_bound[i] + 1e-12,
                        "{file} joint {i} at {q:?}"
                    );
                }
            }
        }
    }
}
