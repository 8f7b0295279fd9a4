//! The declared parameters: listing them (so a host declares them with descriptors),
//! validating and applying a value.

use std::ffi::c_char;
use std::panic::catch_unwind;
use std::sync::OnceLock;

use armctl_control::{Declaration, ParameterValue, Scope};
use armctl_runtime::declarations::controller_node_declarations;

use crate::handle::{guarded, invalid, refused, ArmctlController, DeclaredText};
use crate::parameter_scope::ArmctlParameterScope;
use crate::status::ArmctlStatus;
use crate::values::{text, ArmctlParameterType, ArmctlValue, ValueCache};

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
    /// The allowed values of a string, comma-separated ("" for any).
    pub choices: *const c_char,
    /// Whether a host declares it.
    pub scope: ArmctlParameterScope,
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
        let declarations = h.group.declarations();
        let d = declarations.get(index).ok_or_else(|| {
            invalid(format!(
                "parameter index {index}: there are {}",
                declarations.len()
            ))
        })?;
        let current = h.group.parameter(&d.name).unwrap_or(&d.default);
        *info = info_of(d, &h.names[index], h.value.show(current));
        Ok(())
    })
}

/// The declarations of the parameters `ArmctlConfig`'s fields give, with their defaults as C
/// values: built once, kept for the library's lifetime.
struct ConfigDeclarations(Vec<(Declaration, DeclaredText, ValueCache)>);

// SAFETY: the raw pointers inside each `ValueCache` point into that cache's own strings, which
// are never changed after the list is built; sharing them between threads reads only.
unsafe impl Sync for ConfigDeclarations {}
// SAFETY: as for `Sync`: nothing is changed after construction.
unsafe impl Send for ConfigDeclarations {}

fn config_declarations() -> &'static ConfigDeclarations {
    static LIST: OnceLock<ConfigDeclarations> = OnceLock::new();
    LIST.get_or_init(|| {
        let entries = controller_node_declarations()
            .into_iter()
            .filter(|d| d.scope == Scope::HostField)
            .map(|d| {
                let mut value = ValueCache::default();
                value.show(&d.default);
                (d.clone(), DeclaredText::of(&d), value)
            })
            .collect();
        ConfigDeclarations(entries)
    })
}

/// The number of parameters `ArmctlConfig`'s fields give (scope `Config`: the URDF, the links,
/// the joints, the law), which a host declares before it has a handle.
#[no_mangle]
pub extern "C" fn armctl_config_parameter_count() -> usize {
    catch_unwind(|| config_declarations().0.len()).unwrap_or(0)
}

/// `ArmctlConfig` parameter `index` (below `armctl_config_parameter_count`) into `*info`, its
/// value the declared default; its strings live as long as the library. `InvalidArgument` for
/// a null `info` or an index out of range (there is no handle to say why).
#[no_mangle]
pub extern "C" fn armctl_config_parameter_info(
    index: usize,
    info: *mut ArmctlParameterInfo,
) -> ArmctlStatus {
    // SAFETY: null or writable by the caller's contract.
    let Some(info) = (unsafe { info.as_mut() }) else {
        return ArmctlStatus::InvalidArgument;
    };
    let Ok(list) = catch_unwind(config_declarations) else {
        return ArmctlStatus::Panicked;
    };
    let Some((d, text, value)) = list.0.get(index) else {
        return ArmctlStatus::InvalidArgument;
    };
    *info = info_of(d, text, value.shown());
    ArmctlStatus::Ok
}

/// The C view of declaration `d`, with its texts and `value`.
fn info_of(d: &Declaration, text: &DeclaredText, value: ArmctlValue) -> ArmctlParameterInfo {
    ArmctlParameterInfo {
        name: text.name.as_ptr(),
        description: text.description.as_ptr(),
        kind: ArmctlParameterType::of(d.kind),
        has_range: d.range.is_some(),
        min: d.range.map_or(f64::NEG_INFINITY, |r| r.0),
        max: d.range.map_or(f64::INFINITY, |r| r.1),
        read_only: d.read_only,
        choices: text.choices.as_ptr(),
        scope: d.scope.into(),
        value,
    }
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
    if let Some(reason) = ArmctlParameterScope::refusal(name) {
        return Err(refused(reason));
    }
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
        h.runtime()
            .validate_parameter(&name, &value)
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
        h.runtime_mut()
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
