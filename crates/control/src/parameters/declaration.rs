//! The declaration of one parameter: name, type, description, default, bounds, and the one
//! check every value passes ([`Declaration::validate`]).

use super::{shown, Length, ParameterType, ParameterValue};

/// The declaration of one parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Declaration {
    /// Name, as in parameter files and `ros2 param set`.
    pub name: String,
    /// What it does, with its unit.
    pub description: String,
    /// Type.
    pub kind: ParameterType,
    /// Default value.
    pub default: ParameterValue,
    /// Number of elements of an array.
    pub length: Length,
    /// Bounds of a number (of each element of an array).
    pub range: Option<(f64, f64)>,
    /// Allowed values of a string.
    pub choices: Option<Vec<String>>,
    /// Structural: only settable at start (a live parameter may change while running).
    pub read_only: bool,
    /// Which host gives the value.
    pub scope: Scope,
    /// A bool that acts once when set true and then reads false again; a set that includes
    /// one applies it after every other change succeeded.
    pub trigger: bool,
}

/// Which host gives a parameter's value: every host, or only some (the C ABI derives its
/// scopes from this).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    /// Every host: a node, the C ABI, `armctl sim`.
    #[default]
    Any,
    /// The host's own configuration gives it (the URDF, the links, the joints, the law), not a
    /// parameter value.
    HostField,
    /// A standalone node's own (its rate, topics, clock, action, control thread, URDF path):
    /// meaningless where a host runs the loop.
    NodeOnly,
}

impl Declaration {
    fn new(name: &str, kind: ParameterType, default: ParameterValue, description: &str) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            kind,
            default,
            length: Length::Any,
            range: None,
            choices: None,
            read_only: false,
            scope: Scope::Any,
            trigger: false,
        }
    }

    /// A `bool` parameter.
    pub fn bool(name: &str, default: bool, description: &str) -> Self {
        Self::new(
            name,
            ParameterType::Bool,
            ParameterValue::Bool(default),
            description,
        )
    }

    /// An integer parameter.
    pub fn integer(name: &str, default: i64, description: &str) -> Self {
        Self::new(
            name,
            ParameterType::Integer,
            ParameterValue::Integer(default),
            description,
        )
    }

    /// A `double` parameter.
    pub fn double(name: &str, default: f64, description: &str) -> Self {
        Self::new(
            name,
            ParameterType::Double,
            ParameterValue::Double(default),
            description,
        )
    }

    /// A string parameter.
    pub fn string(name: &str, default: &str, description: &str) -> Self {
        Self::new(
            name,
            ParameterType::String,
            ParameterValue::String(default.into()),
            description,
        )
    }

    /// A list of doubles (of any length until [`Declaration::per_joint`] or
    /// [`Declaration::length`]).
    pub fn double_array(name: &str, default: Vec<f64>, description: &str) -> Self {
        Self::new(
            name,
            ParameterType::DoubleArray,
            ParameterValue::DoubleArray(default),
            description,
        )
    }

    /// A list of strings.
    pub fn string_array(name: &str, default: Vec<String>, description: &str) -> Self {
        Self::new(
            name,
            ParameterType::StringArray,
            ParameterValue::StringArray(default),
            description,
        )
    }

    /// With bounds on each number.
    pub fn range(mut self, lo: f64, hi: f64) -> Self {
        self.range = Some((lo, hi));
        self
    }

    /// With the allowed strings.
    pub fn choices(mut self, choices: &[&str]) -> Self {
        self.choices = Some(choices.iter().map(|c| c.to_string()).collect());
        self
    }

    /// Read-only (structural): set at start only.
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// Given by the host's own configuration, not as a parameter value ([`Scope::HostField`]).
    pub fn host_field(mut self) -> Self {
        self.scope = Scope::HostField;
        self
    }

    /// A standalone node's own ([`Scope::NodeOnly`]).
    pub fn node_only(mut self) -> Self {
        self.scope = Scope::NodeOnly;
        self
    }

    /// A trigger: acts once when set true, then reads false again.
    pub fn trigger(mut self) -> Self {
        self.trigger = true;
        self
    }

    /// An array with one element per joint, or empty (a default derived elsewhere).
    pub fn per_joint_or_none(mut self) -> Self {
        self.length = Length::PerJointOrNone;
        self
    }

    /// An array with one element per joint.
    pub fn per_joint(mut self) -> Self {
        self.length = Length::PerJoint;
        self
    }

    /// An array of exactly `n` elements.
    pub fn length(mut self, n: usize) -> Self {
        self.length = Length::Fixed(n);
        self
    }

    /// `value` converted to this declaration's type (integers widened to doubles) and checked
    /// against the length (`joints` for a per-joint array), the range and the choices; or the
    /// reason it is refused, naming the value.
    pub fn validate(
        &self,
        value: &ParameterValue,
        joints: usize,
    ) -> Result<ParameterValue, String> {
        use ParameterType as T;
        use ParameterValue as V;
        let typed = match (self.kind, value) {
            (T::Bool, V::Bool(_))
            | (T::Integer, V::Integer(_))
            | (T::Double, V::Double(_))
            | (T::String, V::String(_))
            | (T::DoubleArray, V::DoubleArray(_))
            | (T::StringArray, V::StringArray(_)) => value.clone(),
            (T::Double, V::Integer(i)) => V::Double(*i as f64),
            // An empty YAML list reads as a double array.
            (T::StringArray, V::DoubleArray(v)) if v.is_empty() => V::StringArray(vec![]),
            (kind, other) => {
                return Err(format!(
                    "expected {}, got {} {}",
                    kind.name(),
                    other.type_name(),
                    shown(&other.to_yaml())
                ))
            }
        };
        let count = match &typed {
            V::DoubleArray(v) => Some(v.len()),
            V::StringArray(v) => Some(v.len()),
            _ => None,
        };
        match (self.length, count) {
            (Length::PerJoint, Some(n)) if n != joints => {
                return Err(format!(
                    "needs {joints} values (one per joint), got {n}: {}",
                    shown(&typed.to_yaml())
                ))
            }
            // `joints` is 0 while the joints are not known yet (a node's first pass).
            (Length::PerJointOrNone, Some(n)) if joints > 0 && n != joints && n != 0 => {
                return Err(format!(
                    "needs {joints} values (one per joint) or none, got {n}: {}",
                    shown(&typed.to_yaml())
                ))
            }
            (Length::Fixed(expected), Some(n)) if n != expected => {
                return Err(format!(
                    "needs {expected} values, got {n}: {}",
                    shown(&typed.to_yaml())
                ))
            }
            _ => {}
        }
        let numbers: &[f64] = match &typed {
            V::Double(v) => std::slice::from_ref(v),
            V::DoubleArray(v) => v,
            _ => &[],
        };
        let integer = match &typed {
            V::Integer(i) => Some(*i as f64),
            _ => None,
        };
        for &v in numbers.iter().chain(integer.as_ref()) {
            if !v.is_finite() {
                return Err(format!("{v} is not a finite number"));
            }
            if let Some((lo, hi)) = self.range {
                if v < lo || v > hi {
                    return Err(format!("{v} is outside [{lo}, {hi}]"));
                }
            }
        }
        if let (Some(choices), V::String(s)) = (&self.choices, &typed) {
            if !choices.contains(s) {
                return Err(format!(
                    "'{}' is not one of {}",
                    shown(s),
                    choices.join(", ")
                ));
            }
        }
        Ok(typed)
    }
}
