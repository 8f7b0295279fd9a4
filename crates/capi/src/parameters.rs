//! The declared parameters: listing them (so a host declares them with descriptors),
//! validating and applying a value.

use std::ffi::c_char;

use armctl_control::ParameterValue;

use crate::handle::{guarded, invalid, refused, ArmctlController};
use crate::status::ArmctlStatus;
use crate::values::{text, ArmctlParameterType, ArmctlValue};

/// One declared parameter. Its strings and value live until the next call on the handle.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ArmctlParameterInfo {
    /// Name, as in parameter files.
    pub name: *const c_char,
    /// What it does, with its unit.
    pub description: *const c_char,
    /// Type.
    pub kind: ArmctlParameterType,
    /// Whether `min`/`max` bound the number (each element of an array).
    pub has_range: bool,
    /// Lower bound.
    pub min: f64,
    /// Upper bound.
    pub max: f64,
    /// Settable only at creation (`ArmctlConfig::parameters`).
    pub read_only: bool,
    /// The current value.
    pub value: ArmctlValue,
}

/// The number of declared parameters (node, safety and the controller's); 0 for null.
#[no_mangle]
pub extern "C" fn armctl_parameter_count(handle: *const ArmctlController) -> usize {
    // SAFETY: null or a live handle by the caller's contract.
    unsafe { handle.as_ref() }.map_or(0, |h| h.names.len())
}

/// Parameter `index` (below `armctl_parameter_count`) into `*info`.
#[no_mangle]
pub extern "C" fn armctl_parameter_info(
    handle: *mut ArmctlController,
    index: usize,
    info: *mut ArmctlParameterInfo,
) -> ArmctlStatus {
    guarded(handle, |h| {
        // SAFETY: null or writable by the caller's contract.
        let info =
            unsafe { info.as_mut() }.ok_or_else(|| invalid("info is a null pointer".into()))?;
        let declarations = h.runtime.parameters().declarations();
        let d = declarations.get(index).ok_or_else(|| {
            invalid(format!(
                "parameter index {index}: there are {}",
                declarations.len()
            ))
        })?;
        let current = h.runtime.parameters().get(&d.name).unwrap_or(&d.default);
        let (name, description) = &h.names[index];
        *info = ArmctlParameterInfo {
            name: name.as_ptr(),
            description: description.as_ptr(),
            kind: ArmctlParameterType::of(d.kind),
            has_range: d.range.is_some(),
            min: d.range.map_or(f64::NEG_INFINITY, |r| r.0),
            max: d.range.map_or(f64::INFINITY, |r| r.1),
            read_only: d.read_only,
            value: h.value.show(current),
        };
        Ok(())
    })
}

/// The name and value of a call, checked for null and UTF-8.
///
/// # Safety
/// `name` and `value` are valid as documented on the entry points.
unsafe fn named_value(
    name: *const c_char,
    value: *const ArmctlValue,
) -> Result<(String, ParameterValue), (ArmctlStatus, String)> {
    // SAFETY: the caller's contract.
    let name = unsafe { text(name, "name") }.map_err(invalid)?;
    // SAFETY: the caller's contract.
    let value =
        unsafe { value.as_ref() }.ok_or_else(|| invalid("value is a null pointer".into()))?;
    // SAFETY: the caller's contract.
    let value = unsafe { value.parameter_value(name) }.map_err(invalid)?;
    Ok((name.to_string(), value))
}

/// Checks a value for a running controller without applying it (type, range, length,
/// choices, read-only): for a host's parameter callback. `Refused` with the reason in
/// `armctl_last_error`. The law may still refuse a value that passes (e.g. a model it cannot
/// use) when it is applied.
#[no_mangle]
pub extern "C" fn armctl_validate_parameter(
    handle: *mut ArmctlController,
    name: *const c_char,
    value: *const ArmctlValue,
) -> ArmctlStatus {
    guarded(handle, |h| {
        // SAFETY: the caller's contract.
        let (name, value) = unsafe { named_value(name, value) }?;
        h.runtime
            .parameters()
            .validate(&name, &value, false)
            .map(|_| ())
            .map_err(refused)
    })
}

/// Validates and applies a value, as controller_node applies `ros2 param set`; on `Refused`
/// nothing changed and `armctl_last_error` says why.
#[no_mangle]
pub extern "C" fn armctl_set_parameter(
    handle: *mut ArmctlController,
    name: *const c_char,
    value: *const ArmctlValue,
) -> ArmctlStatus {
    guarded(handle, |h| {
        // SAFETY: the caller's contract.
        let (name, value) = unsafe { named_value(name, value) }?;
        h.runtime
            .set_parameter(&name, &value)
            .map(|_| ())
            .map_err(|reason| {
                let prefix = format!("parameter '{name}': ");
                match reason.starts_with(&prefix) {
                    true => refused(reason),
                    false => refused(prefix + &reason),
                }
            })
    })
}
