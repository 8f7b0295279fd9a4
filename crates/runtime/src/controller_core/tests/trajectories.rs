//! The core's rules for trajectories: matched by name, refused with the reason, started and
//! joined smoothly, within the limits to the end.

use super::*;

#[test]
fn trajectories_are_matched_by_name_and_bad_ones_refused() {
    let mut core = core();
    let joints = names(&["joint1", "joint2"]);
    let e = core.set_trajectory(&joints, &[point(1.0, vec![0.5, -0.3])], 0.0, 0.0);
    assert!(e
        .unwrap_err()
        .to_string()
        .contains("no valid joint state yet"));
    core.on_joint_state(&joints, &[0.0, 0.0], &[0.0, 0.0], 0.0);
    // Joints in another order.
    core.set_trajectory(
        &names(&["joint2", "joint1"]),
        &[point(1.0, vec![0.5, -0.3])],
        0.0,
        0.0,
    )
    .unwrap();
    core.on_joint_state(&joints, &[0.0, 0.0], &[0.0, 0.0], 1.0);
    let mut effort = [0.0; 2];
    core.step(1.0, 1e-3, &mut effort);
    // Control starts after the point was due: the arm is brought there by a move from
    // where it is, not by a step.
    assert_eq!(core.reference().q, vec![0.0, 0.0]);
    let end = core.trajectory_end().unwrap();
    assert!(end > 1.1, "{end}");
    core.on_joint_state(&joints, &[0.0, 0.0], &[0.0, 0.0], end);
    core.step(end, 1e-3, &mut effort);
    assert_eq!(core.reference().q, vec![-0.3, 0.5]);
    let refused = |core: &mut ControllerCore, names: &[String], p: TrajectoryPoint| {
        core.set_trajectory(names, &[p], 1.0, 1.0)
            .unwrap_err()
            .to_string()
    };
    let e = refused(&mut core, &joints, point(1.0, vec![0.5]));
    assert!(e.contains("1 values for 2 joint names"), "{e}");
    let e = refused(&mut core, &names(&["joint1"]), point(1.0, vec![0.5]));
    assert!(e.contains("'joint2' is missing"), "{e}");
    let e = refused(
        &mut core,
        &names(&["joint1", "joint1"]),
        point(1.0, vec![0.5, 0.5]),
    );
    assert!(e.contains("listed twice"), "{e}");
    let e = refused(
        &mut core,
        &names(&["joint1", "joint2", "gripper"]),
        point(1.0, vec![0.0; 3]),
    );
    assert!(e.contains("'gripper' is not controlled"), "{e}");
    let e = refused(&mut core, &joints, point(1.0, vec![1e308, 0.0]));
    assert!(e.contains("outside"), "{e}");
    let e = refused(&mut core, &joints, point(1.0, vec![f64::NAN, 0.0]));
    assert!(e.contains("NaN"), "{e}");
    // The refused ones left the first trajectory in place.
    core.step(end, 1e-3, &mut effort);
    assert_eq!(core.reference().q, vec![-0.3, 0.5]);
}

/// Found by a review of the FollowJointTrajectory action, each for `~/reference` too: a
/// newer trajectory starts from the reference's velocity (no step in it); a later start is
/// reached smoothly, not by a step at once; a point due at once far from the reference is
/// refused; times must increase from 0, said with the message's point numbers.
#[test]
fn newer_and_later_trajectories_start_smoothly_and_bad_times_are_refused() {
    let mut core = core();
    let joints = names(&["joint1", "joint2"]);
    let mut effort = [0.0; 2];
    let mut state = |core: &mut Armed, t: f64| {
        core.on_joint_state(&joints, &[0.0, 0.0], &[0.0, 0.0], t);
        core.step(t, 1e-3, &mut effort);
        (core.reference().q.clone(), core.reference().qd.clone())
    };
    state(&mut core, 0.0);
    core.set_trajectory(&joints, &[point(2.0, vec![0.5, 0.5])], 0.0, 0.0)
        .unwrap();
    let (_, qd_before) = state(&mut core, 1.0);
    assert!(qd_before[0] > 0.3, "{qd_before:?}");
    // Replaced mid-motion: the reference velocity carries on.
    core.set_trajectory(&joints, &[point(1.0, vec![0.5, 0.5])], 1.0, 1.0)
        .unwrap();
    let (_, qd_after) = state(&mut core, 1.0);
    assert!(
        (qd_after[0] - qd_before[0]).abs() < 1e-9,
        "{qd_before:?} -> {qd_after:?}"
    );
    // A start 3 s ahead whose first point is due then: the reference does not jump now.
    let (q_now, _) = state(&mut core, 2.0);
    let later = [point(0.0, vec![0.2, 0.2]), point(1.0, vec![0.3, 0.3])];
    core.set_trajectory(&joints, &later, 5.0, 2.0).unwrap();
    let (q_soon, _) = state(&mut core, 2.001);
    assert!(
        (q_soon[0] - q_now[0]).abs() < 1e-4,
        "{q_now:?} -> {q_soon:?}"
    );
    assert!((core.trajectory_end().unwrap() - 6.0).abs() < 1e-12);
    // A point due now far from the reference: refused; one within the start tolerance: taken.
    let far = core
        .set_trajectory(
            &joints,
            &[point(0.0, vec![0.2, 0.2]), point(1.0, vec![0.3, 0.3])],
            3.0,
            3.0,
        )
        .unwrap_err()
        .to_string();
    assert!(far.contains("due now") && far.contains("joint1"), "{far}");
    let (q, _) = state(&mut core, 3.0);
    let near = [
        point(0.0, vec![q[0] + 0.01, q[1]]),
        point(1.0, vec![0.3, 0.3]),
    ];
    core.set_trajectory(&joints, &near, 3.0, 3.0).unwrap();
    // Times: out of order, negative, not finite; numbered as in the message.
    let mut times = |t: [f64; 3]| {
        let points: Vec<_> = t.iter().map(|t| point(*t, vec![0.3, 0.3])).collect();
        core.set_trajectory(&joints, &points, 3.0, 3.0)
            .unwrap_err()
            .to_string()
    };
    let e = times([0.5, 1e-9, 1.0]);
    assert!(
        e.contains("point 1: time_from_start 1e-9 s must be after point 0's 0.5 s"),
        "{e}"
    );
    assert!(times([-1.0, 1.0, 2.0]).contains("point 0: time_from_start -1.0 s must be 0 or later"));
    assert!(times([0.5, f64::NAN, 2.0]).contains("point 1"));
    assert!(
        !times([0.5, 0.5, 2.0]).contains("invalid reference"),
        "no doubled prefix"
    );
}

#[test]
fn a_late_reference_is_never_a_step_and_a_too_fast_one_is_refused() {
    let mut core = core();
    let joints = names(&["joint1", "joint2"]);
    let mut effort = [0.0; 2];
    core.on_joint_state(&joints, &[0.0, 0.0], &[0.0, 0.0], 10.0);
    core.step(10.0, 1e-3, &mut effort);
    // Stamped 10 s ago: points at 1 s and 12 s. The first is due already and dropped; the
    // second is reached from the reference in effect in the 2 s still ahead.
    core.set_trajectory(
        &joints,
        &[point(1.0, vec![1.5, 0.0]), point(12.0, vec![0.2, 0.0])],
        0.0,
        10.0,
    )
    .unwrap();
    core.on_joint_state(&joints, &[0.0, 0.0], &[0.0, 0.0], 10.001);
    core.step(10.001, 1e-3, &mut effort);
    assert!(
        core.reference().q[0].abs() < 1e-3,
        "no step: {:?}",
        core.reference().q
    );
    // (States keep coming; a stall would hold and cancel the trajectory.)
    for k in 1..=2000 {
        let t = 10.001 + k as f64 * 1e-3;
        core.on_joint_state(&joints, &[0.0, 0.0], &[0.0, 0.0], t);
        core.step(t, 1e-3, &mut effort);
    }
    assert!(
        (core.reference().q[0] - 0.2).abs() < 1e-9,
        "{:?}",
        core.reference().q
    );
    let e = core
        .set_trajectory(&joints, &[point(1.0, vec![0.5, 0.0])], 0.0, 10.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("every point lies in the past"), "{e}");
    // 2 rad in 10 ms, through waypoints within the limits: refused, naming the joint.
    let e = core
        .set_trajectory(&joints, &[point(0.01, vec![2.0, 0.0])], 12.0, 12.0)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("joint1 would move at") && e.contains("velocity limit 4"),
        "{e}"
    );
    core.set_max_points(3);
    let many: Vec<TrajectoryPoint> = (1..=4).map(|k| point(k as f64, vec![0.1, 0.0])).collect();
    let e = core
        .set_trajectory(&joints, &many, 12.0, 12.0)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("4 points exceed max_reference_points (3)"),
        "{e}"
    );
}

#[test]
fn references_beyond_the_acceleration_limits_are_refused_naming_the_joint() {
    let mut core = core();
    let joints = vec!["joint1".to_string(), "joint2".to_string()];
    core.on_joint_state(&joints, &[0.0, 0.0], &[0.0, 0.0], 1.0);
    let mut effort = [0.0; 2];
    core.step(1.0, 1e-3, &mut effort);
    // The derived defaults are positive and finite for every joint.
    assert!(core
        .acceleration_limits()
        .iter()
        .all(|a| a.is_finite() && *a > 0.0));
    core.set_acceleration_limits(&[2.0, 2.0]).unwrap();
    // 0.5 rad in 1 s from rest (a quintic peaks at 5.77 s^-2 per rad: 2.9 rad/s^2).
    let e = core
        .set_trajectory(&joints, &[point(1.0, vec![0.5, 0.0])], 1.0, 1.0)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("joint1 would accelerate at") && e.contains("acceleration_limits"),
        "{e}"
    );
    // The same move over 2 s needs 0.72 rad/s^2: accepted.
    core.set_trajectory(&joints, &[point(2.0, vec![0.5, 0.0])], 1.0, 1.0)
        .unwrap();
    // A given waypoint acceleration above the limit is refused too.
    let mut fast = point(3.0, vec![0.5, 0.0]);
    fast.accelerations = Some(vec![0.0, 3.0]);
    let e = core
        .set_trajectory(&joints, &[fast], 1.0, 1.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("point 0: joint2 acceleration 3"), "{e}");
    assert!(core.set_acceleration_limits(&[1.0]).is_err());
    assert!(core.set_acceleration_limits(&[1.0, -1.0]).is_err());
    core.set_acceleration_limits(&[]).unwrap();
}

#[test]
fn in_process_waypoints_are_checked_to_the_end_and_between_every_point() {
    let mut core = core();
    let follow = |core: &mut ControllerCore, points: &[TrajectoryPoint]| {
        let trajectory = MultiPoint::new(2, points).unwrap();
        core.follow(Box::new(trajectory), 0.0)
            .map_err(|e| e.to_string())
    };
    let mut points: Vec<TrajectoryPoint> =
        (0..=60).map(|k| point(k as f64, vec![0.0, 0.0])).collect();
    points.push(point(200.0, vec![3.0, 0.0]));
    follow(&mut core, &points).unwrap();
    // Beyond the limit (3.1) 200 s in: once, only the first minute was checked.
    points[61].positions[0] = 3.5;
    let e = follow(&mut core, &points).unwrap_err();
    assert!(
        e.contains("joint1 = 3.") && e.contains("outside [-3.1, 3.1]"),
        "{e}"
    );
    // A spike of 0.5 ms between the 1000 even samples of 70 s.
    let mut spike = vec![point(0.0, vec![0.0, 0.0]), point(35.0, vec![0.0, 0.0])];
    spike.push(point(35.0005, vec![0.0, 0.0]));
    spike.push(point(70.0, vec![0.0, 0.0]));
    spike[1].positions[1] = 1e-3;
    let e = follow(&mut core, &spike).unwrap_err();
    assert!(e.contains("joint2 would"), "{e}");
}
