//! Every entry point of the C ABI, called as a C host calls it: the Panda under computed
//! torque matches the runtime controller_node uses, bad input of every kind is refused with a
//! reason, faults hold as in controller_node, and `armctl_update` allocates nothing. The
//! counting allocator and the helpers are here, the tests in one file per concern.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ffi::{c_char, CStr, CString};
use std::ptr::{null, null_mut};

#[path = "../common/mod.rs"]
mod common;

use armctl_capi::*;
use armctl_sim::{SimConfig, Simulator};
use common::{node_runtime, panda_urdf, trajectory_points, PANDA_JOINTS};

mod estimates;
mod parameters;
mod refusals;
mod update;

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
