//! Typed, described node parameters, declared once and shared by both middleware backends
//! (as ros2_control's generate_parameter_library does): type, description, default, bounds or
//! choices, read-only. Validation returns a reason; a rejected value leaves the old one.

use std::collections::BTreeMap;

use crate::params_file::RosValue;
use crate::RuntimeError;

/// The type of a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RosKind {
    /// `bool`.
    Bool,
    /// `int64`.
    Integer,
    /// `double` (integers are accepted and widened).
    Double,
    /// `string`.
    String,
    /// `double[]`.
    DoubleArray,
    /// `string[]`.
    StringArray,
}

/// The declaration of one node parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Declaration {
    /// Name.
    pub name: String,
    /// What it does, with its unit.
    pub description: String,
    /// Type.
    pub kind: RosKind,
    /// Default value.
    pub default: RosValue,
    /// Bounds for numbers (each element of arrays).
    pub range: Option<(f64, f64)>,
    /// Allowed strings.
    pub choices: Option<Vec<String>>,
    /// Structural: only settable at start.
    pub read_only: bool,
}

impl Declaration {
    /// A declaration without bounds.
    pub fn new(
        name: &str,
        kind: RosKind,
        default: RosValue,
        read_only: bool,
        description: &str,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            kind,
            default,
            range: None,
            choices: None,
            read_only,
        }
    }
    /// With numeric bounds.
    pub fn range(mut self, lo: f64, hi: f64) -> Self {
        self.range = Some((lo, hi));
        self
    }
    /// With allowed strings.
    pub fn choices(mut self, choices: &[&str]) -> Self {
        self.choices = Some(choices.iter().map(|c| c.to_string()).collect());
        self
    }

    /// `value` converted to this declaration's type and checked, or the reason it is not.
    pub fn check(&self, value: &RosValue) -> Result<RosValue, String> {
        let typed = match (self.kind, value) {
            (RosKind::Bool, RosValue::Bool(_))
            | (RosKind::Integer, RosValue::Integer(_))
            | (RosKind::Double, RosValue::Double(_))
            | (RosKind::String, RosValue::String(_))
            | (RosKind::DoubleArray, RosValue::DoubleArray(_))
            | (RosKind::StringArray, RosValue::StringArray(_)) => value.clone(),
            (RosKind::Double, RosValue::Integer(i)) => RosValue::Double(*i as f64),
            (RosKind::StringArray, RosValue::DoubleArray(v)) if v.is_empty() => {
                RosValue::StringArray(vec![])
            }
            (kind, other) => {
                return Err(format!(
                    "expected {}, got {}",
                    kind_name(kind),
                    other.type_name()
                ))
            }
        };
        let numbers: Vec<f64> = match &typed {
            RosValue::Double(v) => vec![*v],
            RosValue::Integer(v) => vec![*v as f64],
            RosValue::DoubleArray(v) => v.clone(),
            _ => vec![],
        };
        if let Some(bad) = numbers.iter().find(|v| !v.is_finite()) {
            return Err(format!("{bad} is not a finite number"));
        }
        if let Some((lo, hi)) = self.range {
            if let Some(bad) = numbers.iter().find(|v| **v < lo || **v > hi) {
                return Err(format!("{bad} is outside [{lo}, {hi}]"));
            }
        }
        if let (Some(choices), RosValue::String(s)) = (&self.choices, &typed) {
            if !choices.contains(s) {
                return Err(format!("'{s}' is not one of {}", choices.join(", ")));
            }
        }
        Ok(typed)
    }
}

fn kind_name(kind: RosKind) -> &'static str {
    match kind {
        RosKind::Bool => "bool",
        RosKind::Integer => "integer",
        RosKind::Double => "double",
        RosKind::String => "string",
        RosKind::DoubleArray => "double array",
        RosKind::StringArray => "string array",
    }
}

/// Declared parameters and their values.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParameterStore {
    declarations: Vec<Declaration>,
    values: BTreeMap<String, RosValue>,
}

impl ParameterStore {
    /// The declarations with their defaults.
    pub fn new(declarations: Vec<Declaration>) -> Self {
        let values = declarations
            .iter()
            .map(|d| (d.name.clone(), d.default.clone()))
            .collect();
        Self {
            declarations,
            values,
        }
    }

    /// Adds declarations (a controller's gains, once the controller is known).
    pub fn extend(&mut self, declarations: Vec<Declaration>) {
        for d in declarations {
            self.values.insert(d.name.clone(), d.default.clone());
            self.declarations.push(d);
        }
    }

    /// The declarations.
    pub fn declarations(&self) -> &[Declaration] {
        &self.declarations
    }

    /// The declaration of `name`.
    pub fn declaration(&self, name: &str) -> Option<&Declaration> {
        self.declarations.iter().find(|d| d.name == name)
    }

    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<&RosValue> {
        self.values.get(name)
    }

    /// A string parameter (empty when unset or of another type).
    pub fn string(&self, name: &str) -> String {
        match self.get(name) {
            Some(RosValue::String(s)) => s.clone(),
            _ => String::new(),
        }
    }

    /// A double parameter (NaN when unset).
    pub fn double(&self, name: &str) -> f64 {
        match self.get(name) {
            Some(RosValue::Double(v)) => *v,
            Some(RosValue::Integer(v)) => *v as f64,
            _ => f64::NAN,
        }
    }

    /// Checks `value` for `name`; `starting` allows read-only parameters.
    pub fn validate(
        &self,
        name: &str,
        value: &RosValue,
        starting: bool,
    ) -> Result<RosValue, RuntimeError> {
        let reject = |reason: String| RuntimeError::Parameter {
            name: name.into(),
            reason,
        };
        let declaration = self.declaration(name).ok_or_else(|| {
            reject(format!(
                "not declared by this node (known: {})",
                self.declarations
                    .iter()
                    .map(|d| d.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        if declaration.read_only && !starting {
            return Err(reject(
                "read-only: set it at start (parameter file or -p)".into(),
            ));
        }
        declaration.check(value).map_err(reject)
    }

    /// Validates and stores `value`.
    pub fn set(
        &mut self,
        name: &str,
        value: &RosValue,
        starting: bool,
    ) -> Result<(), RuntimeError> {
        let typed = self.validate(name, value, starting)?;
        self.values.insert(name.to_string(), typed);
        Ok(())
    }

    /// The declarations as YAML (what `--print-params` prints).
    pub fn describe(&self) -> String {
        let mut out = String::new();
        for d in &self.declarations {
            out += &format!(
                "{}:\n  type: {}\n  default: {}\n  read_only: {}\n  description: {:?}\n",
                d.name,
                kind_name(d.kind),
                d.default.to_yaml(),
                d.read_only,
                d.description
            );
            if let Some((lo, hi)) = d.range {
                out += &format!("  range: [{lo}, {hi}]\n");
            }
            if let Some(c) = &d.choices {
                out += &format!("  choices: [{}]\n", c.join(", "));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> ParameterStore {
        ParameterStore::new(vec![
            Declaration::new(
                "controller",
                RosKind::String,
                RosValue::String("pd_gravity".into()),
                true,
                "Controller.",
            )
            .choices(&["pd_gravity", "computed_torque"]),
            Declaration::new(
                "state_timeout",
                RosKind::Double,
                RosValue::Double(0.1),
                false,
                "s",
            )
            .range(0.001, 10.0),
        ])
    }

    #[test]
    fn validation_names_the_reason_and_keeps_the_old_value() {
        let mut s = store();
        let reason = |r: Result<(), RuntimeError>| r.unwrap_err().to_string();
        assert!(reason(s.set("state_timeout", &RosValue::Double(-1.0), false)).contains("outside"));
        assert!(
            reason(s.set("state_timeout", &RosValue::String("x".into()), false))
                .contains("expected double")
        );
        assert!(reason(s.set(
            "controller",
            &RosValue::String("computed_torque".into()),
            false
        ))
        .contains("read-only"));
        assert!(
            reason(s.set("controller", &RosValue::String("nope".into()), true))
                .contains("not one of")
        );
        assert!(reason(s.set("kp_typo", &RosValue::Double(1.0), false)).contains("not declared"));
        assert_eq!(s.double("state_timeout"), 0.1);
        s.set("state_timeout", &RosValue::Integer(2), false)
            .unwrap();
        assert_eq!(s.double("state_timeout"), 2.0);
        assert!(s.describe().contains("state_timeout:\n  type: double"));
    }
}
