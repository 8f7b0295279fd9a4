//! `armctl_update` as a host calls it: the runtime's efforts step by step, no allocation,
//! holds on bad states and their reasons, the safe command, what handing over a change costs.

use super::*;

#[test]
fn computed_torque_on_the_panda_matches_the_node_runtime_step_by_step() {
    let urdf = panda_urdf();
    let joints = reversed();
    let strings = Strings::new(&urdf, "computed_torque", &joints);
    let handle = create(&strings.config(&[])).unwrap();
    assert_eq!(armctl_joint_count(handle), 7);
    let mut node = node_runtime(&urdf, "computed_torque", &joints);
    let names: Vec<String> = joints.iter().map(|j| j.to_string()).collect();
    let robot = node.core().robot().clone();
    let start = robot.middle_configuration();
    let mut sim = Simulator::new(&robot, &start, SimConfig::default()).unwrap();
    let order: Vec<usize> = joints
        .iter()
        .map(|j| PANDA_JOINTS.iter().position(|p| p == j).unwrap())
        .collect();
    let in_caller_order = |chain: &[f64]| -> Vec<f64> { order.iter().map(|&i| chain[i]).collect() };
    let (mut efforts, mut expected, mut command) = (vec![0.0; 7], vec![0.0; 7], vec![0.0; 7]);
    let mut status = ArmctlUpdateStatus {
        holding: true,
        fault: ArmctlFault::NoState,
        changed: false,
        trajectory_cancelled: false,
        clipped: 0,
    };
    let dt = 1e-3;
    let mut largest_difference = 0.0f64;
    for k in 0..2500 {
        let t = k as f64 * dt;
        let (q, qd) = (in_caller_order(sim.q()), in_caller_order(sim.qd()));
        let result = armctl_update(
            handle,
            t,
            dt,
            q.as_ptr(),
            qd.as_ptr(),
            efforts.as_mut_ptr(),
            &mut status,
        );
        assert_eq!(result, ArmctlStatus::Ok);
        node.record_state(0, &names, &q, &qd, t);
        node.step(t, dt);
        let chain_effort = node.output().arms[0].efforts.clone();
        node.to_command_order(&chain_effort, &mut expected);
        for (a, b) in efforts.iter().zip(&expected) {
            largest_difference = largest_difference.max((a - b).abs());
        }
        if k == 1 {
            assert!(!status.holding, "{status:?}");
            let points = reach(&q);
            send_trajectory(handle, &points, t);
            let node_points = trajectory_points(&points);
            node.core_mut()
                .set_trajectory(&names, &node_points, t, t)
                .unwrap();
        }
        for (slot, &i) in order.iter().enumerate() {
            command[i] = efforts[slot];
        }
        sim.step(&command).unwrap();
    }
    assert!(largest_difference <= 1e-9, "{largest_difference}");
    assert_eq!(status.fault, ArmctlFault::None);
    let moved = in_caller_order(sim.q());
    let target: Vec<f64> = in_caller_order(&start).iter().map(|q| q + 0.3).collect();
    for (q, goal) in moved.iter().zip(&target) {
        assert!(
            (q - goal).abs() < 1e-3,
            "reached {moved:?}, wanted {target:?}"
        );
    }
    armctl_free(handle);
}

#[test]
fn update_allocates_nothing_while_it_controls_follows_a_trajectory_or_holds() {
    let handle = panda("computed_torque");
    let q = [0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8];
    let qd = [0.0; 7];
    update(handle, 0.0, &q, &qd);
    update(handle, 0.001, &q, &qd);
    send_trajectory(handle, &reach(&q), 0.001);
    let mut efforts = [0.0; 7];
    let before = allocations();
    for k in 2..1000 {
        let result = armctl_update(
            handle,
            k as f64 * 1e-3,
            1e-3,
            q.as_ptr(),
            qd.as_ptr(),
            efforts.as_mut_ptr(),
            null_mut(),
        );
        assert_eq!(result, ArmctlStatus::Ok);
    }
    assert_eq!(allocations() - before, 0, "armctl_update allocated");
    // Holding allocates nothing either: NaN, a velocity beyond belief, then control again.
    let mut nan = q;
    nan[3] = f64::NAN;
    let fast = [0.0, 0.0, 0.0, 0.0, 0.0, 1e6, 0.0];
    let before = allocations();
    for (k, (q, qd)) in [(&nan, &qd), (&nan, &qd), (&q, &fast), (&q, &qd)]
        .into_iter()
        .enumerate()
    {
        let result = armctl_update(
            handle,
            1.0 + k as f64 * 1e-3,
            1e-3,
            q.as_ptr(),
            qd.as_ptr(),
            efforts.as_mut_ptr(),
            null_mut(),
        );
        assert_eq!(result, ArmctlStatus::Ok);
    }
    assert_eq!(
        allocations() - before,
        0,
        "armctl_update allocated while holding"
    );
    armctl_free(handle);
}

#[test]
fn bad_states_hold_as_in_controller_node_and_control_resumes() {
    let handle = panda("pd_gravity");
    let q = [0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8];
    let qd = [0.0; 7];
    let (status, _) = update(handle, 0.0, &q, &qd);
    assert!(
        !status.holding && status.fault == ArmctlFault::None,
        "{status:?}"
    );
    let mut nan = q;
    nan[2] = f64::NAN;
    let (status, efforts) = update(handle, 0.001, &nan, &qd);
    assert!(
        status.holding && status.changed && status.fault == ArmctlFault::NonFinite,
        "{status:?}"
    );
    assert!(efforts.iter().all(|e| e.is_finite()), "{efforts:?}");
    let mut buffer = [0 as c_char; 256];
    let before = allocations();
    let length = armctl_fault_text(handle, buffer.as_mut_ptr(), buffer.len());
    assert_eq!(allocations(), before, "armctl_fault_text allocates nothing");
    // A buffer too small gets the start of the text, terminated, and the full length.
    let mut small = [0 as c_char; 8];
    assert_eq!(
        armctl_fault_text(handle, small.as_mut_ptr(), small.len()),
        length
    );
    // SAFETY: NUL-terminated by armctl_fault_text.
    assert_eq!(
        unsafe { CStr::from_ptr(small.as_ptr()) }.to_bytes().len(),
        7
    );
    // SAFETY: NUL-terminated by armctl_fault_text.
    let text = unsafe { CStr::from_ptr(buffer.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    assert!(
        text.contains("panda_joint3") && text.len() == length,
        "{text}"
    );
    let mut far = q;
    far[0] = 100.0;
    let (status, _) = update(handle, 0.002, &far, &qd);
    assert_eq!(status.fault, ArmctlFault::Implausible);
    let (status, _) = update(handle, 0.003, &q, &qd);
    assert!(!status.holding && status.changed, "{status:?}");
    armctl_free(handle);
}

#[test]
fn an_unreadable_joint_holds_naming_it_and_no_readings_become_a_stale_state() {
    let handle = panda("pd_gravity");
    let q = [0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8];
    let all = [1u8; 7];
    let (status, _) = update_partial(handle, 0.0, &q, &all);
    assert!(!status.holding, "{status:?}");
    let mut one_missing = all;
    one_missing[4] = 0;
    let (status, efforts) = update_partial(handle, 0.001, &q, &one_missing);
    assert!(
        status.holding && status.changed && status.fault == ArmctlFault::MissingJoint,
        "{status:?}"
    );
    assert!(efforts.iter().all(|e| e.is_finite()), "{efforts:?}");
    let text = fault_text(handle);
    assert!(
        text.contains("panda_joint5") && text.contains("no reading"),
        "{text}"
    );
    let (status, _) = update_partial(handle, 0.002, &q, &all);
    assert!(!status.holding && status.changed, "{status:?}");
    // No joint readable: no new state; past state_timeout (0.1 s) the state is stale.
    let none = [0u8; 7];
    let (status, _) = update_partial(handle, 0.05, &q, &none);
    assert!(!status.holding, "{status:?}");
    let (status, _) = update_partial(handle, 0.2, &q, &none);
    assert!(
        status.holding && status.fault == ArmctlFault::Stale,
        "{status:?}"
    );
    assert!(fault_text(handle).contains("old"), "{}", fault_text(handle));
    let (status, _) = update_partial(handle, 0.201, &q, &all);
    assert!(!status.holding, "{status:?}");
    // Allocation-free through every case; a null mask is every joint readable.
    let (qd, mut efforts) = ([0.0; 7], [0.0; 7]);
    let before = allocations();
    for (k, mask) in [one_missing, all, none, all].iter().enumerate() {
        for readable in [mask.as_ptr(), null()] {
            let result = armctl_update_partial(
                handle,
                0.3 + k as f64 * 0.2,
                1e-3,
                q.as_ptr(),
                qd.as_ptr(),
                readable,
                efforts.as_mut_ptr(),
                null_mut(),
            );
            assert_eq!(result, ArmctlStatus::Ok);
        }
    }
    assert_eq!(allocations() - before, 0, "armctl_update_partial allocated");
    armctl_free(handle);
}

#[test]
fn the_safe_command_is_gravity_at_the_last_valid_configuration_and_reset_starts_over() {
    let handle = panda("computed_torque");
    let mut out = [f64::NAN; 7];
    assert_eq!(
        armctl_safe_command(handle, out.as_mut_ptr()),
        ArmctlStatus::Ok
    );
    assert_eq!(out, [0.0; 7], "before any state: zero");
    let q = [0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8];
    update(handle, 0.0, &q, &[0.0; 7]);
    assert_eq!(
        armctl_safe_command(handle, out.as_mut_ptr()),
        ArmctlStatus::Ok
    );
    assert!(out[1].abs() > 1.0, "gravity on joint 2: {out:?}");
    assert_eq!(armctl_reset(handle), ArmctlStatus::Ok);
    assert_eq!(
        armctl_safe_command(handle, out.as_mut_ptr()),
        ArmctlStatus::Ok
    );
    assert_eq!(out, [0.0; 7], "reset forgets the state");
    let (status, _) = update(handle, 0.5, &q, &[0.0; 7]);
    assert!(
        !status.holding,
        "holds where the arm is after the first state"
    );
    // Reset again, then no joint readable: the step's own hold (zero: no valid state of this
    // run), not the command of the run before the reset.
    let away = [0.1, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8];
    for k in 0..100 {
        let (_, efforts) = update(handle, 0.6 + k as f64 * 1e-3, &away, &[0.0; 7]);
        assert!(efforts[0].abs() > 1.0, "pulled back toward the hold");
    }
    assert_eq!(armctl_reset(handle), ArmctlStatus::Ok);
    let (status, efforts) = update_partial(handle, 1.0, &q, &[0; 7]);
    assert!(status.holding);
    assert_eq!(efforts, [0.0; 7]);
    armctl_free(handle);
}

/// Handing over a change is not allocation-free (the thread rules say so): this measures it
/// and keeps it small, so a host that hands over on its real-time thread, between two updates,
/// knows what it pays.
#[test]
fn handing_over_a_change_allocates_a_few_blocks_in_proportion_to_its_size() {
    let handle = panda("computed_torque");
    let q = [0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8];
    update(handle, 0.0, &q, &[0.0; 7]);
    let counted = |what: &str, change: &mut dyn FnMut() -> ArmctlStatus| {
        let before = allocations();
        assert_eq!(change(), ArmctlStatus::Ok, "{}", last_error(handle));
        let n = allocations() - before;
        println!("{what}: {n} allocations");
        n
    };
    let (timeout, kp) = (
        CString::new("state_timeout").unwrap(),
        CString::new("kp").unwrap(),
    );
    let gains = numbers(&[100.0; 7]);
    // With the live lists set, a number still costs only its own handing over.
    let accelerations = CString::new("acceleration_limits").unwrap();
    let limits = numbers(&[1000.0; 7]);
    assert_eq!(
        armctl_set_parameter(handle, accelerations.as_ptr(), &limits),
        ArmctlStatus::Ok
    );
    let scalar = counted("state_timeout", &mut || {
        armctl_set_parameter(handle, timeout.as_ptr(), &double(0.2))
    });
    let array = counted("kp (7 numbers)", &mut || {
        armctl_set_parameter(handle, kp.as_ptr(), &gains)
    });
    let points = reach(&q);
    let raw: Vec<ArmctlTrajectoryPoint> = points
        .iter()
        .map(|(t, p)| ArmctlTrajectoryPoint {
            time: *t,
            positions: p.as_ptr(),
            velocities: null(),
            accelerations: null(),
        })
        .collect();
    let trajectory = counted("trajectory (2 points)", &mut || {
        armctl_set_trajectory(handle, raw.as_ptr(), raw.len(), 0.001, 0.001)
    });
    assert!(scalar <= 5 && array <= 10, "{scalar}, {array}");
    assert!(trajectory <= 40, "{trajectory}");
    armctl_free(handle);
}

/// No points (a null array of 0, as an empty JointTrajectory hands over) stop the trajectory:
/// the arm is held where it is, as a handle that never had a trajectory holds it, and the old
/// reference does not come back.
#[test]
fn no_points_stop_the_trajectory_and_hold_where_the_arm_is() {
    let handle = panda("computed_torque");
    let q = [0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8];
    update(handle, 0.0, &q, &[0.0; 7]);
    send_trajectory(handle, &reach(&q), 0.0);
    let (_, moving) = update(handle, 1.0, &q, &[0.0; 7]);
    assert_eq!(
        armctl_set_trajectory(handle, null(), 0, 1.0, 1.0),
        ArmctlStatus::Ok,
        "{}",
        last_error(handle)
    );
    let (status, held) = update(handle, 1.1, &q, &[0.0; 7]);
    assert!(!status.holding, "{status:?}");
    let fresh = panda("computed_torque");
    update(fresh, 0.0, &q, &[0.0; 7]);
    let (_, expected) = update(fresh, 1.1, &q, &[0.0; 7]);
    let differs = moving
        .iter()
        .zip(&expected)
        .any(|(a, b)| (a - b).abs() > 1e-6);
    assert!(
        differs,
        "the trajectory was pulling: {moving:?} vs {expected:?}"
    );
    for (a, b) in held.iter().zip(&expected) {
        assert!((a - b).abs() < 1e-9, "{held:?} vs {expected:?}");
    }
    armctl_free(handle);
    armctl_free(fresh);
}
