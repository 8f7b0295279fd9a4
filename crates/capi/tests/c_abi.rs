//! Every entry point of the C ABI, called as a C host calls it: the Panda under computed
//! torque matches the runtime controller_node uses, bad input of every kind is refused with a
//! reason, faults hold as in controller_node, and `armctl_update` allocates nothing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ffi::{c_char, CStr, CString};
use std::ptr::{null, null_mut};

mod common;

use armctl_capi::*;
use armctl_sim::{SimConfig, Simulator};
use common::{node_runtime, panda_urdf, trajectory_points, PANDA_JOINTS};

/// Counts this thread's allocations (tests run on several threads).
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        // SAFETY: forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        // SAFETY: forwarded.
        unsafe { System.realloc(ptr, layout, size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

/// C strings and the pointer arrays a config points into.
struct Strings {
    urdf: CString,
    controller: CString,
    joints: Vec<CString>,
    joint_pointers: Vec<*const c_char>,
}

impl Strings {
    fn new(urdf: &str, controller: &str, joints: &[&str]) -> Self {
        let joints: Vec<CString> = joints.iter().map(|j| CString::new(*j).unwrap()).collect();
        Self {
            urdf: CString::new(urdf).unwrap(),
            controller: CString::new(controller).unwrap(),
            joint_pointers: joints.iter().map(|j| j.as_ptr()).collect(),
            joints,
        }
    }

    fn config(&self, parameters: &[ArmctlNamedValue]) -> ArmctlConfig {
        ArmctlConfig {
            urdf: self.urdf.as_ptr(),
            base_link: null(),
            tip_link: null(),
            joints: self.joint_pointers.as_ptr(),
            joint_count: self.joints.len(),
            controller: self.controller.as_ptr(),
            parameters: parameters.as_ptr(),
            parameter_count: parameters.len(),
        }
    }
}

fn create(config: &ArmctlConfig) -> Result<*mut ArmctlController, (ArmctlStatus, String)> {
    let mut handle = null_mut();
    let mut error = [0 as c_char; 512];
    let status = armctl_create(config, &mut handle, error.as_mut_ptr(), error.len());
    if status == ArmctlStatus::Ok {
        assert!(!handle.is_null());
        Ok(handle)
    } else {
        assert!(handle.is_null());
        // SAFETY: NUL-terminated by armctl_create.
        let text = unsafe { CStr::from_ptr(error.as_ptr()) };
        Err((status, text.to_string_lossy().into_owned()))
    }
}

fn last_error(handle: *mut ArmctlController) -> String {
    // SAFETY: a string the library owns, read before the next call.
    unsafe { CStr::from_ptr(armctl_last_error(handle)) }
        .to_string_lossy()
        .into_owned()
}

fn double(number: f64) -> ArmctlValue {
    ArmctlValue {
        kind: ArmctlParameterType::Double as u32,
        boolean: false,
        integer: 0,
        number,
        text: null(),
        numbers: null(),
        texts: null(),
        count: 0,
    }
}

fn numbers(values: &[f64]) -> ArmctlValue {
    ArmctlValue {
        kind: ArmctlParameterType::DoubleArray as u32,
        numbers: values.as_ptr(),
        count: values.len(),
        ..double(0.0)
    }
}

/// The joints in a different order from the chain, so that mapping is exercised.
fn reversed() -> Vec<&'static str> {
    PANDA_JOINTS.iter().rev().copied().collect()
}

/// A reach of every joint by 0.3 rad in 1.5 s, from `q0`, in the order of `joints`.
fn reach(q0: &[f64]) -> Vec<(f64, Vec<f64>)> {
    vec![
        (0.5, q0.to_vec()),
        (2.0, q0.iter().map(|q| q + 0.3).collect()),
    ]
}

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
        node.core_mut().on_joint_state(&names, &q, &qd, t);
        let mut chain_effort = vec![0.0; 7];
        node.core_mut().step(t, dt, &mut chain_effort);
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

fn send_trajectory(handle: *mut ArmctlController, points: &[(f64, Vec<f64>)], now: f64) {
    let raw: Vec<ArmctlTrajectoryPoint> = points
        .iter()
        .map(|(time, p)| ArmctlTrajectoryPoint {
            time: *time,
            positions: p.as_ptr(),
            velocities: null(),
            accelerations: null(),
        })
        .collect();
    let status = armctl_set_trajectory(handle, raw.as_ptr(), raw.len(), now, now);
    assert_eq!(status, ArmctlStatus::Ok, "{}", last_error(handle));
}

fn panda(controller: &str) -> *mut ArmctlController {
    let strings = Strings::new(&panda_urdf(), controller, &PANDA_JOINTS);
    create(&strings.config(&[])).unwrap()
}

fn update(
    handle: *mut ArmctlController,
    t: f64,
    q: &[f64],
    qd: &[f64],
) -> (ArmctlUpdateStatus, Vec<f64>) {
    let mut efforts = vec![f64::NAN; q.len()];
    let mut status = ArmctlUpdateStatus {
        holding: false,
        fault: ArmctlFault::None,
        changed: false,
        trajectory_cancelled: false,
        clipped: 0,
    };
    let result = armctl_update(
        handle,
        t,
        1e-3,
        q.as_ptr(),
        qd.as_ptr(),
        efforts.as_mut_ptr(),
        &mut status,
    );
    assert_eq!(result, ArmctlStatus::Ok, "{}", last_error(handle));
    (status, efforts)
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

/// `armctl_update_partial` with `readable` (one byte per joint; 0: no reading).
fn update_partial(
    handle: *mut ArmctlController,
    t: f64,
    q: &[f64],
    readable: &[u8],
) -> (ArmctlUpdateStatus, Vec<f64>) {
    let qd = vec![0.0; q.len()];
    let mut efforts = vec![f64::NAN; q.len()];
    let mut status = std::mem::MaybeUninit::<ArmctlUpdateStatus>::uninit();
    let result = armctl_update_partial(
        handle,
        t,
        1e-3,
        q.as_ptr(),
        qd.as_ptr(),
        readable.as_ptr(),
        efforts.as_mut_ptr(),
        status.as_mut_ptr(),
    );
    assert_eq!(result, ArmctlStatus::Ok, "{}", last_error(handle));
    // SAFETY: written by the call above.
    (unsafe { status.assume_init() }, efforts)
}

fn fault_text(handle: *mut ArmctlController) -> String {
    let mut buffer = [0 as c_char; 256];
    armctl_fault_text(handle, buffer.as_mut_ptr(), buffer.len());
    // SAFETY: NUL-terminated by armctl_fault_text.
    unsafe { CStr::from_ptr(buffer.as_ptr()) }
        .to_string_lossy()
        .into_owned()
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
