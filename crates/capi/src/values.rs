//! Parameter values across the C boundary.

use std::ffi::{c_char, CStr, CString};

use armctl_control::{ParameterType, ParameterValue};

/// The type of a parameter value.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArmctlParameterType {
    /// `boolean`.
    Bool = 0,
    /// `integer`.
    Integer = 1,
    /// `number`.
    Double = 2,
    /// `text`.
    String = 3,
    /// `numbers[0..count]`.
    DoubleArray = 4,
    /// `texts[0..count]`.
    StringArray = 5,
}

impl ArmctlParameterType {
    pub(crate) fn of(kind: ParameterType) -> Self {
        match kind {
            ParameterType::Bool => Self::Bool,
            ParameterType::Integer => Self::Integer,
            ParameterType::Double => Self::Double,
            ParameterType::String => Self::String,
            ParameterType::DoubleArray => Self::DoubleArray,
            ParameterType::StringArray => Self::StringArray,
        }
    }
}

/// A parameter value: `kind` says which fields hold it.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ArmctlValue {
    /// Which of the fields below is the value: an `ArmctlParameterType` (a plain integer,
    /// so that an unknown one is refused rather than undefined behaviour).
    pub kind: u32,
    /// A `Bool`.
    pub boolean: bool,
    /// An `Integer`.
    pub integer: i64,
    /// A `Double`.
    pub number: f64,
    /// A `String`.
    pub text: *const c_char,
    /// A `DoubleArray` of `count` numbers.
    pub numbers: *const f64,
    /// A `StringArray` of `count` strings.
    pub texts: *const *const c_char,
    /// Length of `numbers` or `texts`.
    pub count: usize,
}

impl Default for ArmctlValue {
    /// `false`, no pointers.
    fn default() -> Self {
        Self {
            kind: ArmctlParameterType::Bool as u32,
            boolean: false,
            integer: 0,
            number: 0.0,
            text: std::ptr::null(),
            numbers: std::ptr::null(),
            texts: std::ptr::null(),
            count: 0,
        }
    }
}

/// A parameter name with its value (the start values of `ArmctlConfig`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ArmctlNamedValue {
    /// The parameter's name.
    pub name: *const c_char,
    /// Its value.
    pub value: ArmctlValue,
}

/// A NUL-terminated UTF-8 string; `what` names it in the error.
///
/// # Safety
/// `text` is null or points to a NUL-terminated string.
pub(crate) unsafe fn text<'a>(text: *const c_char, what: &str) -> Result<&'a str, String> {
    if text.is_null() {
        return Err(format!("{what} is a null pointer"));
    }
    // SAFETY: not null, and NUL-terminated by the caller's contract.
    unsafe { CStr::from_ptr(text) }
        .to_str()
        .map_err(|_| format!("{what} is not UTF-8"))
}

/// `n` values at `values` for writing.
///
/// # Safety
/// `values` is null or points to `n` writable values.
pub(crate) unsafe fn slice_mut<'a>(
    values: *mut f64,
    n: usize,
    what: &str,
) -> Result<&'a mut [f64], String> {
    if values.is_null() {
        return Err(format!("{what} is a null pointer"));
    }
    // SAFETY: not null, `n` writable values by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts_mut(values, n) })
}

/// `count` values at `values`; `what` names them in the error.
///
/// # Safety
/// `values` is null or points to `count` readable values.
pub(crate) unsafe fn slice<'a, T>(
    values: *const T,
    count: usize,
    what: &str,
) -> Result<&'a [T], String> {
    if count == 0 {
        return Ok(&[]);
    }
    if values.is_null() {
        return Err(format!("{what} is a null pointer"));
    }
    // SAFETY: not null, `count` elements by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(values, count) })
}

/// `count` strings at `texts`.
///
/// # Safety
/// As [`slice`] and [`text`] for each element.
pub(crate) unsafe fn texts(
    texts: *const *const c_char,
    count: usize,
    what: &str,
) -> Result<Vec<String>, String> {
    // SAFETY: forwarded contract.
    let pointers = unsafe { slice(texts, count, what)? };
    pointers
        .iter()
        .enumerate()
        // SAFETY: each element is a string by the caller's contract.
        .map(|(k, p)| unsafe { text(*p, &format!("{what}[{k}]")) }.map(str::to_string))
        .collect()
}

impl ArmctlValue {
    /// The Rust value.
    ///
    /// # Safety
    /// The pointer field `kind` selects is valid as documented on the struct.
    pub(crate) unsafe fn parameter_value(&self, what: &str) -> Result<ParameterValue, String> {
        // SAFETY: the caller's contract covers the field `kind` selects.
        Ok(match self.kind {
            0 => ParameterValue::Bool(self.boolean),
            1 => ParameterValue::Integer(self.integer),
            2 => ParameterValue::Double(self.number),
            3 => ParameterValue::String(unsafe { text(self.text, what) }?.to_string()),
            4 => ParameterValue::DoubleArray(
                unsafe { slice(self.numbers, self.count, what) }?.to_vec(),
            ),
            5 => ParameterValue::StringArray(unsafe { texts(self.texts, self.count, what) }?),
            other => return Err(format!("{what}: unknown value kind {other}")),
        })
    }
}

/// Storage behind an [`ArmctlValue`] handed out: it points into this until the next call.
#[derive(Debug, Default)]
pub(crate) struct ValueCache {
    text: CString,
    texts: Vec<CString>,
    pointers: Vec<*const c_char>,
    numbers: Vec<f64>,
    last: ArmctlValue,
}

impl ValueCache {
    /// The value last shown, pointing into this cache (what [`Self::show`] returned).
    pub(crate) fn shown(&self) -> ArmctlValue {
        self.last
    }

    /// `value` as an [`ArmctlValue`] pointing into this cache. A string holding a NUL byte
    /// (none is declared so) is cut there.
    pub(crate) fn show(&mut self, value: &ParameterValue) -> ArmctlValue {
        let mut out = ArmctlValue::default();
        match value {
            ParameterValue::Bool(b) => out.boolean = *b,
            ParameterValue::Integer(i) => {
                out.kind = ArmctlParameterType::Integer as u32;
                out.integer = *i;
            }
            ParameterValue::Double(d) => {
                out.kind = ArmctlParameterType::Double as u32;
                out.number = *d;
            }
            ParameterValue::String(s) => {
                out.kind = ArmctlParameterType::String as u32;
                self.text = c_string(s);
                out.text = self.text.as_ptr();
            }
            ParameterValue::DoubleArray(v) => {
                out.kind = ArmctlParameterType::DoubleArray as u32;
                self.numbers.clone_from(v);
                out.numbers = self.numbers.as_ptr();
                out.count = v.len();
            }
            ParameterValue::StringArray(v) => {
                out.kind = ArmctlParameterType::StringArray as u32;
                self.texts = v.iter().map(|s| c_string(s)).collect();
                self.pointers = self.texts.iter().map(|s| s.as_ptr()).collect();
                out.texts = self.pointers.as_ptr();
                out.count = v.len();
            }
            // Never declared; shown as an empty string array.
            ParameterValue::BoolArray(_) => out.kind = ArmctlParameterType::StringArray as u32,
        }
        self.last = out;
        out
    }
}

/// `text` as a C string, cut at its first NUL byte.
pub(crate) fn c_string(text: &str) -> CString {
    let end = text.find('\0').unwrap_or(text.len());
    CString::new(&text[..end]).unwrap_or_default()
}
