//! Bad configurations, null handles and arrays, and bad references: refused with the
//! reason, never a crash.

use super::*;

#[test]
fn bad_configurations_are_refused_with_the_reason() {
    let urdf = panda_urdf();
    let cases: Vec<(Strings, &str)> = vec![
        (
            Strings::new(&urdf, "no_such_law", &PANDA_JOINTS),
            "no_such_law",
        ),
        (
            Strings::new(&urdf, "pd_gravity", &PANDA_JOINTS[..6]),
            "panda_joint7",
        ),
        (
            Strings::new(&urdf, "pd_gravity", &["panda_joint1", "panda_joint1"]),
            "twice",
        ),
        (
            Strings::new(
                "<robot name='x'><link name='a'/>",
                "pd_gravity",
                &PANDA_JOINTS,
            ),
            "line",
        ),
    ];
    for (strings, expected) in cases {
        let (status, reason) = create(&strings.config(&[])).unwrap_err();
        assert_eq!(status, ArmctlStatus::Refused, "{reason}");
        assert!(reason.contains(expected), "{expected}: {reason}");
    }
    // Null and non-UTF-8 pointers.
    let strings = Strings::new(&urdf, "pd_gravity", &PANDA_JOINTS);
    let mut config = strings.config(&[]);
    config.urdf = null();
    let (status, reason) = create(&config).unwrap_err();
    assert_eq!(status, ArmctlStatus::InvalidArgument);
    assert!(reason.contains("urdf"), "{reason}");
    let latin1 = [0xe9u8 as c_char, 0];
    let mut config = strings.config(&[]);
    config.controller = latin1.as_ptr();
    let (status, reason) = create(&config).unwrap_err();
    assert!(
        status == ArmctlStatus::InvalidArgument && reason.contains("UTF-8"),
        "{reason}"
    );
    let (status, _) = {
        let mut error = [0 as c_char; 8];
        let status = armctl_create(null(), &mut null_mut(), error.as_mut_ptr(), error.len());
        // A reason cut to the buffer, still terminated.
        // SAFETY: NUL-terminated by armctl_create.
        let text = unsafe { CStr::from_ptr(error.as_ptr()) }.to_bytes().len();
        assert_eq!(text, 7);
        (status, ())
    };
    assert_eq!(status, ArmctlStatus::InvalidArgument);
    assert_eq!(
        armctl_create(&config, null_mut(), null_mut(), 0),
        ArmctlStatus::InvalidArgument
    );
}

#[test]
fn null_handles_and_arrays_are_invalid_arguments_not_crashes() {
    let q = [0.0; 7];
    let mut out = [0.0; 7];
    let null_handle: *mut ArmctlController = null_mut();
    assert_eq!(
        armctl_update(
            null_handle,
            0.0,
            1e-3,
            q.as_ptr(),
            q.as_ptr(),
            out.as_mut_ptr(),
            null_mut()
        ),
        ArmctlStatus::InvalidArgument
    );
    assert_eq!(armctl_reset(null_handle), ArmctlStatus::InvalidArgument);
    assert_eq!(
        armctl_safe_command(null_handle, out.as_mut_ptr()),
        ArmctlStatus::InvalidArgument
    );
    assert_eq!(armctl_parameter_count(null_handle), 0);
    assert_eq!(armctl_joint_count(null_handle), 0);
    assert_eq!(
        armctl_set_parameter(null_handle, null(), null()),
        ArmctlStatus::InvalidArgument
    );
    assert_eq!(
        armctl_set_trajectory(null_handle, null(), 0, 0.0, 0.0),
        ArmctlStatus::InvalidArgument
    );
    armctl_free(null_handle);
    let handle = panda("pd_gravity");
    assert_eq!(
        armctl_update(
            handle,
            0.0,
            1e-3,
            null(),
            q.as_ptr(),
            out.as_mut_ptr(),
            null_mut()
        ),
        ArmctlStatus::InvalidArgument
    );
    assert!(
        last_error(handle).contains("positions"),
        "{}",
        last_error(handle)
    );
    assert_eq!(
        armctl_update(
            handle,
            0.0,
            1e-3,
            q.as_ptr(),
            q.as_ptr(),
            null_mut(),
            null_mut()
        ),
        ArmctlStatus::InvalidArgument
    );
    assert_eq!(
        armctl_set_parameter(handle, null(), &double(1.0)),
        ArmctlStatus::InvalidArgument
    );
    let mut info = std::mem::MaybeUninit::<ArmctlParameterInfo>::uninit();
    assert_eq!(
        armctl_parameter_info(handle, 100_000, info.as_mut_ptr()),
        ArmctlStatus::InvalidArgument
    );
    assert_eq!(
        armctl_parameter_info(handle, 0, null_mut()),
        ArmctlStatus::InvalidArgument
    );
    assert_eq!(
        armctl_set_external_wrench(handle, null()),
        ArmctlStatus::InvalidArgument
    );
    armctl_free(handle);
}

#[test]
fn references_are_checked_as_controller_node_checks_them() {
    let handle = panda("computed_torque");
    let q = [0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8];
    let before_state = [ArmctlTrajectoryPoint {
        time: 1.0,
        positions: q.as_ptr(),
        velocities: null(),
        accelerations: null(),
    }];
    assert_eq!(
        armctl_set_trajectory(handle, before_state.as_ptr(), 1, 0.0, 0.0),
        ArmctlStatus::Refused
    );
    update(handle, 0.0, &q, &[0.0; 7]);
    let mut beyond = q;
    beyond[0] = 4.0;
    let points = [ArmctlTrajectoryPoint {
        time: 1.0,
        positions: beyond.as_ptr(),
        velocities: null(),
        accelerations: null(),
    }];
    assert_eq!(
        armctl_set_trajectory(handle, points.as_ptr(), 1, 0.0, 0.0),
        ArmctlStatus::Refused
    );
    assert!(
        last_error(handle).contains("panda_joint1"),
        "{}",
        last_error(handle)
    );
    let position = [0.3, 0.0, 0.5];
    let orientation = [1.0, 0.0, 0.0, 0.0];
    assert_eq!(
        armctl_set_target_pose(handle, position.as_ptr(), orientation.as_ptr(), 1.0),
        ArmctlStatus::Refused
    );
    assert!(
        last_error(handle).contains("joint references"),
        "{}",
        last_error(handle)
    );
    armctl_free(handle);
    let cartesian = panda("cartesian_impedance");
    update(cartesian, 0.0, &q, &[0.0; 7]);
    assert_eq!(
        armctl_set_target_pose(cartesian, position.as_ptr(), orientation.as_ptr(), 1.0),
        ArmctlStatus::Ok,
        "{}",
        last_error(cartesian)
    );
    let wrench = [0.0, 0.0, -5.0, 0.0, 0.0, 0.0];
    assert_eq!(
        armctl_set_external_wrench(cartesian, wrench.as_ptr()),
        ArmctlStatus::Ok
    );
    let zero = [0.0; 4];
    assert_eq!(
        armctl_set_target_pose(cartesian, position.as_ptr(), zero.as_ptr(), 1.0),
        ArmctlStatus::Refused
    );
    armctl_free(cartesian);
}
