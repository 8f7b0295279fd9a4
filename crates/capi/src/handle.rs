//! The opaque handle: creation, the last error, freeing, and the guard every entry point
//! runs in.

use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use armctl_control::ParameterValue;
use armctl_runtime::group_loop::GroupLoop;

use armctl_runtime::controller_core::CoreEvent;
use armctl_runtime::startup::NodeStart;

use crate::parameter_scope::ArmctlParameterScope;
use crate::status::ArmctlStatus;
use crate::values::{c_string, slice, text, texts, ArmctlNamedValue, ValueCache};

/// What a controller is created from.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ArmctlConfig {
    /// The URDF text.
    pub urdf: *const c_char,
    /// The chain's first link; null or empty: the URDF's root.
    pub base_link: *const c_char,
    /// The chain's last link; null or empty: the single leaf.
    pub tip_link: *const c_char,
    /// The controlled joints, in the order of every joint array (every chain joint once).
    pub joints: *const *const c_char,
    /// Length of `joints`.
    pub joint_count: usize,
    /// The control law, e.g. `computed_torque`.
    pub controller: *const c_char,
    /// Start values of any declared parameter (gains, `safe_mode`, `effort_limits`, ...).
    pub parameters: *const ArmctlNamedValue,
    /// Length of `parameters`.
    pub parameter_count: usize,
}

/// A configured controller (opaque).
pub struct ArmctlController {
    /// The runtime, in a loop the host paces (its `update` gives time and period).
    pub(crate) group: GroupLoop,
    /// The joints, in the caller's order.
    pub(crate) joints: Vec<String>,
    pub(crate) last_error: CString,
    /// The last incident, for `armctl_fault_text`.
    pub(crate) last_event: Option<CoreEvent>,
    /// The declarations' texts, as C strings.
    pub(crate) names: Vec<DeclaredText>,
    pub(crate) value: ValueCache,
    pub(crate) panicked: bool,
    /// The chain's base and tip link names (URDF), as C strings.
    pub(crate) links: [CString; 2],
}

/// A declaration's texts for `armctl_parameter_info`.
pub(crate) struct DeclaredText {
    pub(crate) name: CString,
    pub(crate) description: CString,
    pub(crate) choices: CString,
}

impl DeclaredText {
    /// The texts of `d`.
    pub(crate) fn of(d: &armctl_control::Declaration) -> Self {
        Self {
            name: c_string(&d.name),
            description: c_string(&d.description),
            choices: c_string(&d.choices.as_deref().unwrap_or_default().join(", ")),
        }
    }
}

impl ArmctlController {
    /// Records `reason` for `armctl_last_error` and returns `status`.
    pub(crate) fn fail(&mut self, status: ArmctlStatus, reason: &str) -> ArmctlStatus {
        self.last_error = c_string(reason);
        status
    }

    pub(crate) fn runtime(&self) -> &GroupLoop {
        &self.group
    }

    pub(crate) fn runtime_mut(&mut self) -> &mut GroupLoop {
        &mut self.group
    }
}

/// Runs `body` on the handle unless it is null or has panicked before; a panic becomes
/// [`ArmctlStatus::Panicked`].
pub(crate) fn guarded(
    handle: *mut ArmctlController,
    body: impl FnOnce(&mut ArmctlController) -> Result<(), (ArmctlStatus, String)>,
) -> ArmctlStatus {
    // SAFETY: the caller passes a handle from `armctl_create` (or null), used by one thread.
    let Some(h) = (unsafe { handle.as_mut() }) else {
        return ArmctlStatus::InvalidArgument;
    };
    if h.panicked {
        return ArmctlStatus::Panicked;
    }
    match catch_unwind(AssertUnwindSafe(|| body(&mut *h))) {
        Ok(Ok(())) => ArmctlStatus::Ok,
        Ok(Err((status, reason))) => h.fail(status, &reason),
        Err(_) => {
            h.panicked = true;
            h.fail(
                ArmctlStatus::Panicked,
                "armctl panicked (a bug): send the safe command and free the handle",
            )
        }
    }
}

pub(crate) fn invalid(reason: String) -> (ArmctlStatus, String) {
    (ArmctlStatus::InvalidArgument, reason)
}

pub(crate) fn refused(reason: impl ToString) -> (ArmctlStatus, String) {
    (ArmctlStatus::Refused, reason.to_string())
}

/// The start values `config` gives, as a node start.
///
/// # Safety
/// `config`'s pointers are valid as documented on [`ArmctlConfig`].
unsafe fn node_start(
    config: &ArmctlConfig,
) -> Result<(NodeStart, Vec<String>), (ArmctlStatus, String)> {
    // SAFETY: the caller's contract covers every pointer read here.
    let (urdf, controller, joints, named) = unsafe {
        (
            text(config.urdf, "urdf").map_err(invalid)?,
            text(config.controller, "controller").map_err(invalid)?,
            texts(config.joints, config.joint_count, "joints").map_err(invalid)?,
            slice(config.parameters, config.parameter_count, "parameters").map_err(invalid)?,
        )
    };
    let string = |s: &str| ParameterValue::String(s.to_string());
    let mut values = vec![
        ("robot_description".to_string(), string(urdf)),
        ("controller".to_string(), string(controller)),
        (
            "joints".to_string(),
            ParameterValue::StringArray(joints.clone()),
        ),
    ];
    for (name, link) in [
        ("base_link", config.base_link),
        ("tip_link", config.tip_link),
    ] {
        if !link.is_null() {
            // SAFETY: not null, a string by the caller's contract.
            values.push((
                name.to_string(),
                string(unsafe { text(link, name) }.map_err(invalid)?),
            ));
        }
    }
    for (k, entry) in named.iter().enumerate() {
        // SAFETY: the caller's contract.
        let name =
            unsafe { text(entry.name, &format!("parameters[{k}].name")) }.map_err(invalid)?;
        // SAFETY: the caller's contract.
        let value = unsafe { entry.value.parameter_value(name) }.map_err(invalid)?;
        if let Some(reason) = ArmctlParameterScope::refusal(name) {
            return Err(refused(reason));
        }
        values.push((name.to_string(), value));
    }
    let start = NodeStart {
        name: "armctl_controller".into(),
        namespace: "/".into(),
        remaps: vec![],
        values,
    };
    Ok((start, joints))
}

/// Writes `reason` into `error[0..capacity]`, cut to fit, NUL-terminated.
fn write_error(error: *mut c_char, capacity: usize, reason: &str) {
    if error.is_null() || capacity == 0 {
        return;
    }
    let bytes = reason.as_bytes();
    let n = bytes.len().min(capacity - 1);
    // SAFETY: the caller gives `capacity` writable bytes at `error`.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr().cast::<c_char>(), error, n);
        *error.add(n) = 0;
    }
}

fn create(config: *const ArmctlConfig) -> Result<Box<ArmctlController>, (ArmctlStatus, String)> {
    // SAFETY: null or a valid config by the caller's contract.
    let config =
        unsafe { config.as_ref() }.ok_or_else(|| invalid("config is a null pointer".into()))?;
    // SAFETY: the caller's contract on the config's pointers.
    let (start, joints) = unsafe { node_start(config) }?;
    let mut runtime = GroupLoop::lone(&start).map_err(refused)?;
    runtime.core_mut().expect_state_layout(&joints);
    let names = runtime
        .declarations()
        .iter()
        .map(DeclaredText::of)
        .collect();
    let robot = runtime.core().robot();
    let links = [c_string(robot.base_link()), c_string(robot.tip_link())];
    Ok(Box::new(ArmctlController {
        links,
        joints,
        group: runtime,
        last_error: CString::default(),
        last_event: None,
        names,
        value: ValueCache::default(),
        panicked: false,
    }))
}

/// Creates a controller from `config`. On success `*out` holds the handle (free it with
/// `armctl_free`); otherwise `*out` is null and `error[0..error_capacity]` says why (a URDF
/// error with its line, an unknown controller, a refused parameter naming it).
#[no_mangle]
pub extern "C" fn armctl_create(
    config: *const ArmctlConfig,
    out: *mut *mut ArmctlController,
    error: *mut c_char,
    error_capacity: usize,
) -> ArmctlStatus {
    if out.is_null() {
        write_error(error, error_capacity, "out is a null pointer");
        return ArmctlStatus::InvalidArgument;
    }
    // SAFETY: `out` is not null and writable by the caller's contract.
    unsafe { *out = std::ptr::null_mut() };
    let result = catch_unwind(AssertUnwindSafe(|| create(config)));
    let (status, reason) = match result {
        Ok(Ok(handle)) => {
            // SAFETY: as above.
            unsafe { *out = Box::into_raw(handle) };
            return ArmctlStatus::Ok;
        }
        Ok(Err(failure)) => failure,
        Err(_) => (
            ArmctlStatus::Panicked,
            "armctl panicked (a bug) while creating the controller".into(),
        ),
    };
    write_error(error, error_capacity, &reason);
    status
}

/// Frees a handle from `armctl_create` (null is ignored).
#[no_mangle]
pub extern "C" fn armctl_free(handle: *mut ArmctlController) {
    if !handle.is_null() {
        // SAFETY: a handle from `armctl_create`, freed once by the caller's contract.
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(handle) })));
    }
}

/// The reason for the last failed call on `handle` ("" if none; "null handle" for null).
#[no_mangle]
pub extern "C" fn armctl_last_error(handle: *const ArmctlController) -> *const c_char {
    // SAFETY: null or a live handle by the caller's contract.
    match unsafe { handle.as_ref() } {
        Some(h) => h.last_error.as_ptr(),
        None => c"null handle".as_ptr(),
    }
}

/// The number of controlled joints (the length of every joint array); 0 for null.
#[no_mangle]
pub extern "C" fn armctl_joint_count(handle: *const ArmctlController) -> usize {
    // SAFETY: null or a live handle by the caller's contract.
    unsafe { handle.as_ref() }.map_or(0, |h| h.joints.len())
}

/// The URDF name of the chain's base link (the frame of poses and wrenches; resolved when
/// `ArmctlConfig::base_link` was empty), "" for null. Lives as long as the handle.
#[no_mangle]
pub extern "C" fn armctl_base_link(handle: *const ArmctlController) -> *const c_char {
    // SAFETY: null or a live handle by the caller's contract.
    unsafe { handle.as_ref() }.map_or(c"".as_ptr(), |h| h.links[0].as_ptr())
}

/// The URDF name of the chain's tip link, "" for null. Lives as long as the handle.
#[no_mangle]
pub extern "C" fn armctl_tip_link(handle: *const ArmctlController) -> *const c_char {
    // SAFETY: null or a live handle by the caller's contract.
    unsafe { handle.as_ref() }.map_or(c"".as_ptr(), |h| h.links[1].as_ptr())
}
