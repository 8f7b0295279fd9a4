//! The parameter list (types, ranges, values, scopes, choices), start values, and the
//! configuration parameters a host declares before it has a handle.

use super::*;

#[test]
fn parameters_are_listed_with_types_ranges_and_values_and_a_refusal_keeps_the_old_value() {
    let handle = panda("computed_torque");
    let count = armctl_parameter_count(handle);
    assert!(count > 10, "{count}");
    let mut info = std::mem::MaybeUninit::<ArmctlParameterInfo>::uninit();
    let mut found = None;
    for index in 0..count {
        assert_eq!(
            armctl_parameter_info(handle, index, info.as_mut_ptr()),
            ArmctlStatus::Ok
        );
        // SAFETY: written by the call above.
        let info = unsafe { info.assume_init() };
        // SAFETY: strings the library owns, read before the next call.
        let name = unsafe { CStr::from_ptr(info.name) }
            .to_str()
            .unwrap()
            .to_string();
        let description = unsafe { CStr::from_ptr(info.description) }
            .to_str()
            .unwrap();
        assert!(!description.is_empty(), "{name}");
        if name == "kp" {
            assert_eq!(info.kind, ArmctlParameterType::DoubleArray);
            assert!(info.has_range && info.min >= 0.0 && !info.read_only);
            assert_eq!(info.value.count, 7);
            // SAFETY: `count` numbers owned by the library.
            let kp = unsafe { std::slice::from_raw_parts(info.value.numbers, 7) }.to_vec();
            found = Some((index, kp));
        }
        if name == "effort_limits" {
            assert!(info.read_only, "effort_limits is read-only");
        }
    }
    let (index, kp) = found.expect("computed torque declares kp");
    let name = CString::new("kp").unwrap();
    let negative = [-1.0; 7];
    let value = numbers(&negative);
    assert_eq!(
        armctl_validate_parameter(handle, name.as_ptr(), &value),
        ArmctlStatus::Refused
    );
    assert_eq!(
        armctl_set_parameter(handle, name.as_ptr(), &value),
        ArmctlStatus::Refused
    );
    let reason = last_error(handle);
    assert!(
        reason.starts_with("parameter 'kp': ") && reason.matches("kp").count() == 1,
        "{reason}"
    );
    assert_eq!(
        armctl_parameter_info(handle, index, info.as_mut_ptr()),
        ArmctlStatus::Ok
    );
    // SAFETY: written above; `count` numbers owned by the library.
    let now = unsafe {
        let info = info.assume_init();
        std::slice::from_raw_parts(info.value.numbers, 7).to_vec()
    };
    assert_eq!(now, kp, "a refused value changes nothing");
    let halved: Vec<f64> = kp.iter().map(|k| k / 2.0).collect();
    assert_eq!(
        armctl_set_parameter(handle, name.as_ptr(), &numbers(&halved)),
        ArmctlStatus::Ok
    );
    let read_only = CString::new("effort_limits").unwrap();
    assert_eq!(
        armctl_set_parameter(handle, read_only.as_ptr(), &numbers(&[10.0; 7])),
        ArmctlStatus::Refused
    );
    assert!(
        last_error(handle).contains("read-only"),
        "{}",
        last_error(handle)
    );
    let config = CString::new("controller").unwrap();
    let text = CString::new("pd_gravity").unwrap();
    let value = ArmctlValue {
        kind: ArmctlParameterType::String as u32,
        text: text.as_ptr(),
        ..double(0.0)
    };
    assert_eq!(
        armctl_set_parameter(handle, config.as_ptr(), &value),
        ArmctlStatus::Refused
    );
    assert!(
        last_error(handle).contains("ArmctlConfig field"),
        "{}",
        last_error(handle)
    );
    armctl_free(handle);
}

/// Name, scope and choices of every declared parameter.
fn scopes(handle: *mut ArmctlController) -> Vec<(String, ArmctlParameterScope, String)> {
    (0..armctl_parameter_count(handle))
        .map(|index| {
            let mut info = std::mem::MaybeUninit::<ArmctlParameterInfo>::uninit();
            assert_eq!(
                armctl_parameter_info(handle, index, info.as_mut_ptr()),
                ArmctlStatus::Ok
            );
            // SAFETY: written above; strings the library owns, copied before the next call.
            unsafe {
                let info = info.assume_init();
                let text = |p| CStr::from_ptr(p).to_string_lossy().into_owned();
                (text(info.name), info.scope, text(info.choices))
            }
        })
        .collect()
}

#[test]
fn each_parameter_says_whether_a_host_declares_it_and_strings_list_their_choices() {
    let handle = panda("computed_torque");
    let listed = scopes(handle);
    let find = |name: &str| listed.iter().find(|(n, ..)| n == name).unwrap().clone();
    assert_eq!(find("kp").1, ArmctlParameterScope::Runtime);
    assert_eq!(find("state_timeout").1, ArmctlParameterScope::Runtime);
    assert_eq!(find("joints").1, ArmctlParameterScope::Config);
    assert_eq!(find("robot_description").1, ArmctlParameterScope::Config);
    assert_eq!(find("update_rate").1, ArmctlParameterScope::NodeOnly);
    assert_eq!(find("command_topic").1, ArmctlParameterScope::NodeOnly);
    assert_eq!(find("safe_mode").2, "gravity, zero");
    assert!(find("controller").2.contains("computed_torque, "));
    assert_eq!(find("kp").2, "");
    // SAFETY: strings owned by the handle.
    let (base, tip) = unsafe {
        (
            CStr::from_ptr(armctl_base_link(handle)).to_str().unwrap(),
            CStr::from_ptr(armctl_tip_link(handle)).to_str().unwrap(),
        )
    };
    assert_eq!(
        (base, tip),
        ("world", "panda_link8"),
        "resolved from the URDF"
    );
    // SAFETY: a static empty string for null.
    assert_eq!(
        unsafe { CStr::from_ptr(armctl_base_link(null())) }.to_bytes(),
        b""
    );
    let name = CString::new("update_rate").unwrap();
    assert_eq!(
        armctl_set_parameter(handle, name.as_ptr(), &double(500.0)),
        ArmctlStatus::Refused
    );
    assert!(
        last_error(handle).contains("'update_rate': controller_node's own"),
        "{}",
        last_error(handle)
    );
    armctl_free(handle);
    // As a start value too.
    let strings = Strings::new(&panda_urdf(), "computed_torque", &PANDA_JOINTS);
    let name = CString::new("state_publish_rate").unwrap();
    let start = [ArmctlNamedValue {
        name: name.as_ptr(),
        value: double(10.0),
    }];
    let (status, reason) = create(&strings.config(&start)).unwrap_err();
    assert_eq!(status, ArmctlStatus::Refused);
    assert!(reason.contains("'state_publish_rate'"), "{reason}");
}

#[test]
fn start_values_are_applied_and_bad_ones_name_the_item() {
    let urdf = panda_urdf();
    let strings = Strings::new(&urdf, "pd_gravity", &PANDA_JOINTS);
    let safe = CString::new("state_timeout").unwrap();
    let ok = [ArmctlNamedValue {
        name: safe.as_ptr(),
        value: double(0.05),
    }];
    let handle = create(&strings.config(&ok)).unwrap();
    armctl_free(handle);
    let bad = [ArmctlNamedValue {
        name: safe.as_ptr(),
        value: double(-1.0),
    }];
    let (status, reason) = create(&strings.config(&bad)).unwrap_err();
    assert_eq!(status, ArmctlStatus::Refused);
    assert!(reason.contains("state_timeout"), "{reason}");
    let unknown = CString::new("no_such_parameter").unwrap();
    let bad = [ArmctlNamedValue {
        name: unknown.as_ptr(),
        value: double(1.0),
    }];
    let (_, reason) = create(&strings.config(&bad)).unwrap_err();
    assert!(reason.contains("no_such_parameter"), "{reason}");
    let weird = [ArmctlNamedValue {
        name: safe.as_ptr(),
        value: ArmctlValue {
            kind: 99,
            ..double(0.0)
        },
    }];
    let (status, reason) = create(&strings.config(&weird)).unwrap_err();
    assert_eq!(status, ArmctlStatus::InvalidArgument);
    assert!(reason.contains("kind 99"), "{reason}");
}

/// A host declares the parameters `ArmctlConfig`'s fields give before it has a handle: armctl
/// lists them with their descriptions and defaults (the plugin no longer writes its own), and
/// the handle's list gives the same ones with scope `Config`.
#[test]
fn the_configuration_parameters_are_listed_without_a_handle() {
    let text = |p: *const c_char| unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_string();
    let mut info = std::mem::MaybeUninit::<ArmctlParameterInfo>::uninit();
    let mut listed = vec![];
    for k in 0..armctl_config_parameter_count() {
        assert_eq!(
            armctl_config_parameter_info(k, info.as_mut_ptr()),
            ArmctlStatus::Ok
        );
        let info = unsafe { info.assume_init() };
        assert_eq!(info.scope, ArmctlParameterScope::Config);
        assert!(info.read_only && !text(info.description).is_empty());
        if text(info.name) == "controller" {
            assert_eq!(text(info.value.text), "computed_torque");
            assert!(text(info.choices).contains("cartesian_impedance"));
        }
        listed.push(text(info.name));
    }
    listed.sort();
    assert_eq!(
        listed,
        [
            "base_link",
            "controller",
            "joints",
            "robot_description",
            "tip_link"
        ]
    );
    let past = armctl_config_parameter_count();
    assert_eq!(
        armctl_config_parameter_info(past, info.as_mut_ptr()),
        ArmctlStatus::InvalidArgument
    );
    assert_eq!(
        armctl_config_parameter_info(0, null_mut()),
        ArmctlStatus::InvalidArgument
    );
    let handle = panda("computed_torque");
    let mut config_scoped = vec![];
    for k in 0..armctl_parameter_count(handle) {
        assert_eq!(
            armctl_parameter_info(handle, k, info.as_mut_ptr()),
            ArmctlStatus::Ok
        );
        let info = unsafe { info.assume_init() };
        if info.scope == ArmctlParameterScope::Config {
            config_scoped.push(text(info.name));
        }
    }
    config_scoped.sort();
    assert_eq!(config_scoped, listed);
    armctl_free(handle);
}
