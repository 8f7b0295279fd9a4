use super::*;
use armctl_dynamics::gravity_torques;

/// The bundled arms.
const BUNDLED: [&str; 4] = [
    "panda.urdf",
    "ur5e.urdf",
    "puma560.urdf",
    "planar_2link.urdf",
];

fn panda() -> Robot {
    armctl_model::test_support::bundled_robot("panda.urdf")
}

fn gravity_at(robot: &Robot, q: &[f64]) -> Vec<f64> {
    let mut gravity = vec![0.0; robot.dof()];
    gravity_torques(robot, &mut DynamicsWorkspace::new(robot), q, &mut gravity).unwrap();
    gravity
}

/// Far from its limits, at any speed within its velocity limit, no joint is bounded and
/// no dynamics are computed.
#[test]
fn far_from_the_limits_nothing_is_bounded() {
    let robot = panda();
    let mut guard = JointLimitGuard::new(&robot, DEFAULT_SOFT_LIMIT_MARGIN).unwrap();
    let q = robot.middle_configuration();
    let mut effort: Vec<f64> = robot.joints().iter().map(|j| j.limits.effort).collect();
    let before = effort.clone();
    let qd: Vec<f64> = robot
        .joints()
        .iter()
        .map(|j| 0.3 * j.limits.velocity)
        .collect();
    assert_eq!(
        guard.apply((&q, &qd), 1e-3, &[f64::INFINITY; 7], &mut effort),
        0
    );
    assert_eq!(effort, before);
}

/// At rest on the upper soft limit a push toward it is cut to gravity, one away from it
/// passes, and a NaN effort is left for the safety layer.
#[test]
fn at_the_soft_limit_only_the_push_toward_it_is_cut() {
    let robot = panda();
    let mut guard = JointLimitGuard::new(&robot, DEFAULT_SOFT_LIMIT_MARGIN).unwrap();
    let mut q = robot.middle_configuration();
    let (_, soft_upper) = guard.soft_limits(1).unwrap();
    q[1] = soft_upper;
    let qd = vec![0.0; 7];
    let gravity = gravity_at(&robot, &q);
    let mut effort = gravity.clone();
    effort[1] += 50.0;
    effort[3] = f64::NAN;
    assert_eq!(
        guard.apply((&q, &qd), 1e-3, &[f64::INFINITY; 7], &mut effort),
        1
    );
    assert!((effort[1] - gravity[1]).abs() < 1e-9, "{effort:?}");
    assert!(effort[3].is_nan());
    let mut away = gravity.clone();
    away[1] -= 50.0;
    let expected = away.clone();
    assert_eq!(
        guard.apply((&q, &qd), 1e-3, &[f64::INFINITY; 7], &mut away),
        0
    );
    assert_eq!(away, expected);
}

/// Beyond a soft limit at rest the bound pulls back (below gravity); moving toward the
/// limit faster than the profile allows, it brakes.
#[test]
fn beyond_the_soft_limit_and_too_fast_the_bound_brakes() {
    let robot = panda();
    let mut guard = JointLimitGuard::new(&robot, DEFAULT_SOFT_LIMIT_MARGIN).unwrap();
    let mut q = robot.middle_configuration();
    let (soft_lower, soft_upper) = guard.soft_limits(3).unwrap();
    q[3] = soft_upper + 0.02;
    let gravity = gravity_at(&robot, &q);
    let mut effort = gravity.clone();
    guard.apply((&q, &[0.0; 7]), 1e-3, &[f64::INFINITY; 7], &mut effort);
    assert!(
        effort[3] < gravity[3] - 1.0,
        "{} vs {}",
        effort[3],
        gravity[3]
    );
    q[3] = soft_lower + 0.1;
    let gravity = gravity_at(&robot, &q);
    let mut qd = [0.0; 7];
    qd[3] = -2.0;
    let mut effort = gravity.clone();
    guard.apply((&q, &qd), 1e-3, &[f64::INFINITY; 7], &mut effort);
    assert!(
        effort[3] > gravity[3] + 1.0,
        "{} vs {}",
        effort[3],
        gravity[3]
    );
}

/// A non-finite state bounds nothing; a bad margin is refused by name.
#[test]
fn a_non_finite_state_bounds_nothing_and_a_bad_margin_is_refused() {
    let robot = panda();
    let mut guard = JointLimitGuard::new(&robot, DEFAULT_SOFT_LIMIT_MARGIN).unwrap();
    let mut q = robot.middle_configuration();
    q[1] = f64::NAN;
    let mut effort = vec![80.0; 7];
    assert_eq!(
        guard.apply((&q, &[f64::NAN; 7]), 1e-3, &[f64::INFINITY; 7], &mut effort),
        0
    );
    assert_eq!(effort, vec![80.0; 7]);
    for bad in [-0.1, f64::NAN, f64::INFINITY] {
        let error = guard.set_margin(bad).unwrap_err().to_string();
        assert!(error.contains("soft_limit_margin"), "{error}");
    }
    assert_eq!(guard.margin(), DEFAULT_SOFT_LIMIT_MARGIN);
}

/// The margin takes at most a quarter of a joint's range.
#[test]
fn the_margin_takes_at_most_a_quarter_of_the_range() {
    let robot = panda();
    let guard = JointLimitGuard::new(&robot, 10.0).unwrap();
    for (i, joint) in robot.joints().iter().enumerate() {
        let (lower, upper) = guard.soft_limits(i).unwrap();
        let range = joint.limits.upper - joint.limits.lower;
        assert!((lower - joint.limits.lower - 0.25 * range).abs() < 1e-12);
        assert!((joint.limits.upper - upper - 0.25 * range).abs() < 1e-12);
    }
}

/// Every joint's braking deceleration is positive and finite on the bundled arms.
#[test]
fn every_joint_plans_a_braking_deceleration() {
    for file in BUNDLED {
        let robot = armctl_model::test_support::bundled_robot(file);
        let guard = JointLimitGuard::new(&robot, DEFAULT_SOFT_LIMIT_MARGIN).unwrap();
        for (a, joint) in guard.decelerations().iter().zip(robot.joints()) {
            assert!(*a > 0.0 && a.is_finite(), "{file} {}: {a}", joint.name);
        }
    }
}

/// Effort limits all alike and far beyond gravity (a template's 1000 N m) are said at
/// start; the bundled arms' real limits are not.
#[test]
fn placeholder_effort_limits_are_flagged() {
    for file in BUNDLED {
        let robot = armctl_model::test_support::bundled_robot(file);
        let guard = JointLimitGuard::new(&robot, DEFAULT_SOFT_LIMIT_MARGIN).unwrap();
        assert_eq!(guard.warning(), None, "{file}");
        let placeholder = robot
            .with_effort_limits(&vec![1000.0; robot.dof()])
            .unwrap();
        let guard = JointLimitGuard::new(&placeholder, DEFAULT_SOFT_LIMIT_MARGIN).unwrap();
        let warning = guard.warning().unwrap_or_default();
        assert!(
            warning.contains("effort limit is 1000") && warning.contains("placeholder"),
            "{file}: {warning}"
        );
    }
}
