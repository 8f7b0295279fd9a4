//! `armctl_external_torques`, `armctl_external_torque_bounds` and `armctl_external_wrench` as a
//! host reads them after each
//! update: the Panda held in place while the simulator pushes its flange down with 20 N.

use super::*;
use armctl_sim::Wrench;
use nalgebra::Vector3;

#[test]
fn a_push_on_the_flange_is_estimated_without_allocating() {
    let urdf = panda_urdf();
    let joints = reversed();
    let strings = Strings::new(&urdf, "pd_gravity", &joints);
    let handle = create(&strings.config(&[])).unwrap();
    let robot = node_runtime(&urdf, "pd_gravity", &joints)
        .core()
        .robot()
        .clone();
    let push = Wrench {
        force: Vector3::new(0.0, 0.0, -20.0),
        torque: Vector3::zeros(),
    };
    let config = SimConfig {
        external_wrench: Some(push),
        ..SimConfig::default()
    };
    let mut sim = Simulator::new(&robot, &robot.middle_configuration(), config).unwrap();
    let order: Vec<usize> = joints
        .iter()
        .map(|j| PANDA_JOINTS.iter().position(|p| p == j).unwrap())
        .collect();
    let in_caller_order = |chain: &[f64]| -> Vec<f64> { order.iter().map(|&i| chain[i]).collect() };
    let (mut efforts, mut torques, mut wrench) = (vec![0.0; 7], vec![0.0; 7], [0.0; 6]);
    let mut bounds = vec![0.0; 7];
    let mut read_allocations = 0;
    let dt = 1e-3;
    for k in 0..1000 {
        let (q, qd) = (in_caller_order(sim.q()), in_caller_order(sim.qd()));
        let status = armctl_update(
            handle,
            k as f64 * dt,
            dt,
            q.as_ptr(),
            qd.as_ptr(),
            efforts.as_mut_ptr(),
            null_mut(),
        );
        assert_eq!(status, ArmctlStatus::Ok);
        let before = allocations();
        assert_eq!(
            armctl_external_torques(handle, torques.as_mut_ptr()),
            ArmctlStatus::Ok
        );
        assert_eq!(
            armctl_external_wrench(handle, wrench.as_mut_ptr()),
            ArmctlStatus::Ok
        );
        assert_eq!(
            armctl_external_torque_bounds(handle, bounds.as_mut_ptr()),
            ArmctlStatus::Ok
        );
        read_allocations += allocations() - before;
        let chain: Vec<f64> = PANDA_JOINTS
            .iter()
            .map(|p| efforts[joints.iter().position(|j| j == p).unwrap()])
            .collect();
        sim.step(&chain).unwrap();
    }
    assert_eq!(read_allocations, 0, "reading the estimates allocated");
    // After 50 time constants of the observer, the estimate is the push.
    let truth = in_caller_order(sim.external_torques());
    for (estimate, true_torque) in torques.iter().zip(&truth) {
        assert!(
            (estimate - true_torque).abs() < 0.01 * 20.0,
            "{torques:?} vs {truth:?}"
        );
    }
    // The bounds: the model's error on the torque held (20 % by default) and the noise; the
    // push's torques stand out of them where the push has a lever.
    for ((bound, estimate), true_torque) in bounds.iter().zip(&torques).zip(&truth) {
        assert!(bound.is_finite() && *bound > 0.0, "{bounds:?}");
        assert!((estimate - true_torque).abs() <= *bound, "{bounds:?}");
    }
    let force = Vector3::new(wrench[0], wrench[1], wrench[2]).norm();
    let moment = Vector3::new(wrench[3], wrench[4], wrench[5]).norm();
    assert!((force - 20.0).abs() < 0.2, "{wrench:?}");
    assert!(moment < 0.05, "{wrench:?}");
    assert_eq!(
        armctl_external_torques(handle, null_mut()),
        ArmctlStatus::InvalidArgument
    );
    assert!(last_error(handle).contains("torques is a null pointer"));
    assert_eq!(
        armctl_external_torque_bounds(handle, null_mut()),
        ArmctlStatus::InvalidArgument
    );
    assert!(last_error(handle).contains("bounds is a null pointer"));
    armctl_free(handle);
}

/// A host that hands a non-finite period (a first cycle's clock, a bug) does not turn the
/// estimate into NaN, which every threshold would let through: it starts over.
#[test]
fn a_non_finite_period_starts_the_estimate_over() {
    let urdf = panda_urdf();
    let joints = reversed();
    let strings = Strings::new(&urdf, "pd_gravity", &joints);
    let handle = create(&strings.config(&[])).unwrap();
    let q = [0.8, 1.8, 0.0, -2.0, 0.0, -0.3, 0.0];
    let (mut efforts, mut torques) = (vec![0.0; 7], vec![0.0; 7]);
    for (k, period) in [1e-3, f64::INFINITY, f64::NAN, 1e-3, 1e-3]
        .into_iter()
        .enumerate()
    {
        let status = armctl_update(
            handle,
            k as f64 * 1e-3,
            period,
            q.as_ptr(),
            [0.0; 7].as_ptr(),
            efforts.as_mut_ptr(),
            null_mut(),
        );
        assert_eq!(status, ArmctlStatus::Ok);
        assert_eq!(
            armctl_external_torques(handle, torques.as_mut_ptr()),
            ArmctlStatus::Ok
        );
        assert!(
            torques.iter().all(|t| t.is_finite()),
            "{period}: {torques:?}"
        );
    }
    armctl_free(handle);
}
