//! Conversions between armctl's FollowJointTrajectory types ([`crate::follow_joint_trajectory`])
//! and r2r's, built when control_msgs was installed as r2r generated its bindings
//! (`ros_control_msgs`, build.rs); `~/controller_state` is in controller_state.rs.

use r2r::control_msgs::action::FollowJointTrajectory as Fjt;
use r2r::control_msgs::msg as control;
use r2r::{geometry_msgs, trajectory_msgs};

use super::convert::{
    duration_in, header_in, header_out, point_out, text, texts, trajectory_in, vector_in,
    vector_out,
};
use crate::follow_joint_trajectory::{
    ActionResult, Feedback, Goal, JointComponentTolerance, JointTolerance, MultiDofJointTrajectory,
};
use crate::msgs;

fn quaternion_in(q: &geometry_msgs::msg::Quaternion) -> msgs::Quaternion {
    msgs::Quaternion {
        x: q.x,
        y: q.y,
        z: q.z,
        w: q.w,
    }
}

fn quaternion_out(q: &msgs::Quaternion) -> geometry_msgs::msg::Quaternion {
    geometry_msgs::msg::Quaternion {
        x: q.x,
        y: q.y,
        z: q.z,
        w: q.w,
    }
}

fn twist_in(t: &geometry_msgs::msg::Twist) -> msgs::Twist {
    msgs::Twist {
        linear: vector_in(&t.linear),
        angular: vector_in(&t.angular),
    }
}

fn twist_out(t: &msgs::Twist) -> geometry_msgs::msg::Twist {
    geometry_msgs::msg::Twist {
        linear: vector_out(&t.linear),
        angular: vector_out(&t.angular),
    }
}

fn multi_dof_point_in(
    p: &trajectory_msgs::msg::MultiDOFJointTrajectoryPoint,
) -> msgs::MultiDofJointTrajectoryPoint {
    msgs::MultiDofJointTrajectoryPoint {
        transforms: p
            .transforms
            .iter()
            .map(|t| msgs::Transform {
                translation: vector_in(&t.translation),
                rotation: quaternion_in(&t.rotation),
            })
            .collect(),
        velocities: p.velocities.iter().map(twist_in).collect(),
        accelerations: p.accelerations.iter().map(twist_in).collect(),
        time_from_start: duration_in(&p.time_from_start),
    }
}

pub(super) fn multi_dof_point_out(
    p: &msgs::MultiDofJointTrajectoryPoint,
) -> trajectory_msgs::msg::MultiDOFJointTrajectoryPoint {
    trajectory_msgs::msg::MultiDOFJointTrajectoryPoint {
        transforms: p
            .transforms
            .iter()
            .map(|t| geometry_msgs::msg::Transform {
                translation: vector_out(&t.translation),
                rotation: quaternion_out(&t.rotation),
            })
            .collect(),
        velocities: p.velocities.iter().map(twist_out).collect(),
        accelerations: p.accelerations.iter().map(twist_out).collect(),
        time_from_start: super::convert::duration_out(&p.time_from_start),
    }
}

fn tolerance_in(t: &control::JointTolerance) -> JointTolerance {
    JointTolerance {
        name: t.name.clone(),
        position: t.position,
        velocity: t.velocity,
        acceleration: t.acceleration,
    }
}

fn component_tolerance_in(t: &control::JointComponentTolerance) -> JointComponentTolerance {
    JointComponentTolerance {
        joint_name: t.joint_name.clone(),
        component: t.component,
        position: t.position,
        velocity: t.velocity,
        acceleration: t.acceleration,
    }
}

/// A goal as the node checks it (every field, so that what it refuses it can name).
pub(super) fn goal_in(g: Fjt::Goal) -> Goal {
    Goal {
        trajectory: trajectory_in(g.trajectory),
        multi_dof_trajectory: MultiDofJointTrajectory {
            header: header_in(&g.multi_dof_trajectory.header),
            joint_names: g.multi_dof_trajectory.joint_names.clone(),
            points: g
                .multi_dof_trajectory
                .points
                .iter()
                .map(multi_dof_point_in)
                .collect(),
        },
        path_tolerance: g.path_tolerance.iter().map(tolerance_in).collect(),
        component_path_tolerance: g
            .component_path_tolerance
            .iter()
            .map(component_tolerance_in)
            .collect(),
        goal_tolerance: g.goal_tolerance.iter().map(tolerance_in).collect(),
        component_goal_tolerance: g
            .component_goal_tolerance
            .iter()
            .map(component_tolerance_in)
            .collect(),
        goal_time_tolerance: duration_in(&g.goal_time_tolerance),
    }
}

pub(super) fn result_out(r: &ActionResult) -> Fjt::Result {
    Fjt::Result {
        error_code: r.error_code,
        error_string: text(&r.error_string),
    }
}

pub(super) fn feedback_out(f: &Feedback) -> Fjt::Feedback {
    Fjt::Feedback {
        header: header_out(&f.header),
        joint_names: texts(&f.joint_names),
        desired: point_out(&f.desired),
        actual: point_out(&f.actual),
        error: point_out(&f.error),
        multi_dof_joint_names: texts(&f.multi_dof_joint_names),
        multi_dof_desired: multi_dof_point_out(&f.multi_dof_desired),
        multi_dof_actual: multi_dof_point_out(&f.multi_dof_actual),
        multi_dof_error: multi_dof_point_out(&f.multi_dof_error),
    }
}
