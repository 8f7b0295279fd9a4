//! Typed parameters, declared once (as in ros2_control's generate_parameter_library): a
//! [`Declaration`] gives the name, type, description, default, bounds (choices for strings, a
//! per-joint or fixed length for arrays) and whether the parameter is read-only (structural:
//! set at start only). [`Declaration::validate`] is the one check every value passes, whoever
//! sets it (a controller, a parameter file, `-p`, the parameter services); its reason names the
//! value, and a rejected value leaves the old one.
//!
//! A controller declares its parameters into a [`ParameterSet`] at construction and keeps the
//! typed handles it gets back ([`Scalar`], [`Array`]): `update` reads `parameters[handle]`
//! (an `f64` or a `&[f64]`), never a value looked up by name. Live (not read-only) numbers
//! ramp to a new value through a first-order filter ([`ParameterSet::advance`]).
//!
//! The same declarations and [`ParameterValue`]s serve the nodes' own parameters
//! (`armctl_runtime::node_parameters`), so the types carry no middleware.

use std::ops::Index;

use crate::ControlError;

mod declaration;
pub use declaration::{Declaration, Scope};

/// The type of a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParameterType {
    /// `bool`.
    Bool,
    /// A 64-bit integer.
    Integer,
    /// A `double` (integers are accepted and widened).
    Double,
    /// A string.
    String,
    /// A list of doubles (integers are widened).
    DoubleArray,
    /// A list of strings.
    StringArray,
}

impl ParameterType {
    /// The type's name, for messages and `--print-params`.
    pub fn name(self) -> &'static str {
        match self {
            ParameterType::Bool => "bool",
            ParameterType::Integer => "integer",
            ParameterType::Double => "double",
            ParameterType::String => "string",
            ParameterType::DoubleArray => "double array",
            ParameterType::StringArray => "string array",
        }
    }
}

/// How many elements an array parameter holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Length {
    /// Any number (and every parameter that is not an array).
    Any,
    /// One per joint of the robot.
    PerJoint,
    /// One per joint, or none (the default, derived elsewhere).
    PerJointOrNone,
    /// Exactly this many (six for a Cartesian `[x y z rx ry rz]`).
    Fixed(usize),
}

/// `text` as it may appear in a refusal, a reply or a log line: cut at 64 bytes (on a character
/// boundary) with its length, so that unbounded input is never echoed, and a NUL byte written
/// `\0` (C strings, as rcl's, end at one).
pub fn shown(text: &str) -> String {
    let escaped = |t: &str| t.replace('\0', "\\0");
    if text.len() <= 64 {
        return escaped(text);
    }
    let cut = (0..=64)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    format!("{}... ({} bytes)", escaped(&text[..cut]), text.len())
}

/// A parameter value.
#[derive(Debug, Clone, PartialEq)]
pub enum ParameterValue {
    /// `bool`.
    Bool(bool),
    /// A 64-bit integer.
    Integer(i64),
    /// A `double`.
    Double(f64),
    /// A string.
    String(String),
    /// A list of doubles.
    DoubleArray(Vec<f64>),
    /// A list of strings.
    StringArray(Vec<String>),
    /// A list of booleans: parameter files and the middleware can carry one; no parameter is
    /// declared with it, so validation refuses it with the expected type.
    BoolArray(Vec<bool>),
}

impl ParameterValue {
    /// The value's type name, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            ParameterValue::Bool(_) => "bool",
            ParameterValue::Integer(_) => "integer",
            ParameterValue::Double(_) => "double",
            ParameterValue::String(_) => "string",
            ParameterValue::DoubleArray(_) => "double array",
            ParameterValue::StringArray(_) => "string array",
            ParameterValue::BoolArray(_) => "bool array",
        }
    }

    /// As YAML flow text (what a parameter file or `-p name:=value` accepts back).
    pub fn to_yaml(&self) -> String {
        match self {
            ParameterValue::Bool(b) => b.to_string(),
            ParameterValue::Integer(i) => i.to_string(),
            ParameterValue::Double(d) => format!("{d:?}"),
            ParameterValue::String(s) => format!("{s:?}"),
            ParameterValue::DoubleArray(a) => format!("{a:?}"),
            ParameterValue::StringArray(a) => format!("{a:?}"),
            ParameterValue::BoolArray(a) => format!("{a:?}"),
        }
    }

    /// The numbers of a double or a double array (empty for other types).
    pub fn numbers(&self) -> &[f64] {
        match self {
            ParameterValue::Double(v) => std::slice::from_ref(v),
            ParameterValue::DoubleArray(v) => v,
            _ => &[],
        }
    }
}

/// The handle of a `double` parameter in a [`ParameterSet`]: `set[handle]` is its value in
/// effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scalar(usize);

/// The handle of a fixed-length (per-joint or fixed) double array in a [`ParameterSet`]:
/// `&set[handle]` is its values in effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Array {
    start: usize,
    len: usize,
}

/// Declared parameters and their values, in declaration order, for a robot of `dof` joints.
///
/// A live number has a target (what was last set) and an effective value that follows the
/// target with a first-order filter of time constant [`ParameterSet::ramp_time`], advanced by
/// [`ParameterSet::advance`] once per control step: a gain change never makes the effort jump.
/// Handles index the effective values; a handle is only meaningful for the set that gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct ParameterSet {
    dof: usize,
    declarations: Vec<Declaration>,
    values: Vec<ParameterValue>,
    /// Where each parameter's numbers stand in `target` and `effective` (`None`: not a
    /// double or a fixed-length double array).
    spans: Vec<Option<Array>>,
    target: Vec<f64>,
    effective: Vec<f64>,
    ramp_time: f64,
}

/// Default time constant of the gain filter, s.
pub const DEFAULT_RAMP_TIME: f64 = 0.05;

fn unknown(name: &str, declarations: &[Declaration]) -> ControlError {
    ControlError::UnknownParameter {
        name: name.to_string(),
        known: declarations
            .iter()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    }
}

impl ParameterSet {
    /// No parameters yet, for a robot of `dof` joints.
    pub fn new(dof: usize) -> Self {
        Self {
            dof,
            declarations: Vec::new(),
            values: Vec::new(),
            spans: Vec::new(),
            target: Vec::new(),
            effective: Vec::new(),
            ramp_time: DEFAULT_RAMP_TIME,
        }
    }

    /// Declares a parameter with its default (validated); refuses a name declared already.
    pub fn declare(&mut self, declaration: Declaration) -> Result<(), ControlError> {
        let name = declaration.name.clone();
        if self.index(&name).is_some() {
            return Err(ControlError::InvalidParameter {
                name,
                reason: "declared twice".into(),
            });
        }
        let value = declaration
            .validate(&declaration.default, self.dof)
            .map_err(|reason| ControlError::InvalidParameter {
                name: name.clone(),
                reason: format!("default: {reason}"),
            })?;
        let numeric = matches!(
            (declaration.kind, declaration.length),
            (ParameterType::Double, _)
                | (
                    ParameterType::DoubleArray,
                    Length::PerJoint | Length::Fixed(_)
                )
        );
        let span = numeric.then(|| Array {
            start: self.target.len(),
            len: value.numbers().len(),
        });
        self.target.extend_from_slice(value.numbers());
        self.effective.extend_from_slice(value.numbers());
        self.spans.push(span);
        self.values.push(value);
        self.declarations.push(declaration);
        Ok(())
    }

    /// Declares a `double` and returns its handle.
    pub fn declare_scalar(&mut self, declaration: Declaration) -> Result<Scalar, ControlError> {
        let name = declaration.name.clone();
        if declaration.kind != ParameterType::Double {
            return Err(ControlError::InvalidParameter {
                name,
                reason: format!("a scalar must be a double, not {}", declaration.kind.name()),
            });
        }
        self.declare(declaration)?;
        Ok(Scalar(self.span(&name)?.start))
    }

    /// Declares a per-joint or fixed-length double array and returns its handle.
    pub fn declare_array(&mut self, declaration: Declaration) -> Result<Array, ControlError> {
        let name = declaration.name.clone();
        if declaration.kind != ParameterType::DoubleArray || declaration.length == Length::Any {
            return Err(ControlError::InvalidParameter {
                name,
                reason: "an array handle needs a double array of per-joint or fixed length".into(),
            });
        }
        self.declare(declaration)?;
        self.span(&name)
    }

    fn span(&self, name: &str) -> Result<Array, ControlError> {
        self.index(name)
            .and_then(|i| self.spans[i])
            .ok_or_else(|| unknown(name, &self.declarations))
    }

    /// The number of joints per-joint arrays hold.
    pub fn dof(&self) -> usize {
        self.dof
    }

    /// The declarations, in order.
    pub fn declarations(&self) -> &[Declaration] {
        &self.declarations
    }

    /// The declaration of `name`.
    pub fn declaration(&self, name: &str) -> Option<&Declaration> {
        self.index(name).map(|i| &self.declarations[i])
    }

    /// The value last set for `name` (the target of the ramp).
    pub fn get(&self, name: &str) -> Option<&ParameterValue> {
        self.index(name).map(|i| &self.values[i])
    }

    /// The numbers in effect for `name` now (ramping towards the target; empty when unknown or
    /// not a number). A lookup by name, for callers outside the control step.
    pub fn values(&self, name: &str) -> &[f64] {
        match self.index(name).and_then(|i| self.spans[i]) {
            Some(span) => &self[span],
            None => &[],
        }
    }

    /// The values last set for `array` (the target of its ramp).
    pub fn target(&self, array: Array) -> &[f64] {
        &self.target[array.start..array.start + array.len]
    }

    /// The gain filter's time constant, s.
    pub fn ramp_time(&self) -> f64 {
        self.ramp_time
    }

    /// Changes the gain filter's time constant (0: changes act at once).
    pub fn set_ramp_time(&mut self, seconds: f64) -> Result<(), ControlError> {
        if !(seconds.is_finite() && seconds >= 0.0) {
            return Err(ControlError::InvalidParameter {
                name: "ramp_time".into(),
                reason: format!("{seconds} must be finite and not negative"),
            });
        }
        self.ramp_time = seconds;
        Ok(())
    }

    /// Moves every effective number towards its target by one step of `dt` seconds.
    /// Allocates nothing.
    pub fn advance(&mut self, dt: f64) {
        let alpha = if self.ramp_time > 0.0 {
            (dt / self.ramp_time).clamp(0.0, 1.0)
        } else {
            1.0
        };
        for (e, t) in self.effective.iter_mut().zip(&self.target) {
            *e += alpha * (t - *e);
        }
    }

    /// Puts every effective number at its target (on start and reset).
    pub fn settle(&mut self) {
        self.effective.copy_from_slice(&self.target);
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.declarations.iter().position(|d| d.name == name)
    }

    /// `value` for `name` as it would be stored (integers widened), without changing anything.
    pub fn validate(
        &self,
        name: &str,
        value: &ParameterValue,
    ) -> Result<ParameterValue, ControlError> {
        let i = self
            .index(name)
            .ok_or_else(|| unknown(name, &self.declarations))?;
        self.declarations[i]
            .validate(value, self.dof)
            .map_err(|reason| ControlError::InvalidParameter {
                name: name.to_string(),
                reason,
            })
    }

    /// Validates and stores `value` as the new target; on error the old value stays. A
    /// read-only (structural) parameter takes effect at once, a live one ramps.
    pub fn set(&mut self, name: &str, value: ParameterValue) -> Result<(), ControlError> {
        let typed = self.validate(name, &value)?;
        let Some(i) = self.index(name) else {
            return Err(unknown(name, &self.declarations));
        };
        if let Some(span) = self.spans[i] {
            let range = span.start..span.start + span.len;
            self.target[range.clone()].copy_from_slice(typed.numbers());
            if self.declarations[i].read_only {
                self.effective[range].copy_from_slice(typed.numbers());
            }
        }
        self.values[i] = typed;
        Ok(())
    }
}

impl Index<Scalar> for ParameterSet {
    type Output = f64;
    fn index(&self, scalar: Scalar) -> &f64 {
        &self.effective[scalar.0]
    }
}

impl Index<Array> for ParameterSet {
    type Output = [f64];
    fn index(&self, array: Array) -> &[f64] {
        &self.effective[array.start..array.start + array.len]
    }
}

#[cfg(test)]
mod tests;
