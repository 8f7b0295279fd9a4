//! Typed controller parameters, declared once: name, description, type, default, bounds, and
//! whether they may change while the controller runs (as in ros2_control's
//! generate_parameter_library). Validation returns a reason; a rejected value leaves the old one.

use crate::ControlError;

/// The shape of a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// One number.
    Scalar,
    /// One number per joint.
    JointVector,
}

/// A parameter value.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    /// One number.
    Scalar(f64),
    /// One number per joint.
    Vector(Vec<f64>),
}

impl ParamValue {
    /// The numbers, whatever the shape.
    pub fn values(&self) -> &[f64] {
        match self {
            ParamValue::Scalar(v) => std::slice::from_ref(v),
            ParamValue::Vector(v) => v,
        }
    }
}

/// The declaration of one parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamSpec {
    /// Name, as in parameter files and `ros2 param set`.
    pub name: &'static str,
    /// What it does, with its unit.
    pub description: &'static str,
    /// Shape.
    pub kind: ParamKind,
    /// Smallest allowed value (each element).
    pub min: f64,
    /// Largest allowed value (each element).
    pub max: f64,
    /// Whether it may change while running.
    pub live: bool,
}

/// Declared parameters and their current values, in declaration order.
#[derive(Debug, Clone, PartialEq)]
pub struct ParameterSet {
    dof: usize,
    specs: Vec<ParamSpec>,
    values: Vec<ParamValue>,
}

impl ParameterSet {
    /// Parameters with their defaults (each default is validated).
    pub fn new(dof: usize, declared: Vec<(ParamSpec, ParamValue)>) -> Result<Self, ControlError> {
        let mut set = Self {
            dof,
            specs: Vec::new(),
            values: Vec::new(),
        };
        for (spec, value) in declared {
            set.specs.push(spec);
            set.values.push(value.clone());
            let name = set.specs[set.specs.len() - 1].name;
            set.set(name, value)?;
        }
        Ok(set)
    }

    /// The declarations.
    pub fn specs(&self) -> &[ParamSpec] {
        &self.specs
    }

    /// The current value of `name`.
    pub fn get(&self, name: &str) -> Option<&ParamValue> {
        self.index(name).map(|i| &self.values[i])
    }

    /// The current numbers of `name` (empty when unknown).
    pub fn values(&self, name: &str) -> &[f64] {
        self.get(name).map_or(&[], ParamValue::values)
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.specs.iter().position(|s| s.name == name)
    }

    /// Checks `value` for `name` without changing anything.
    pub fn validate(&self, name: &str, value: &ParamValue) -> Result<(), ControlError> {
        let i = self
            .index(name)
            .ok_or_else(|| ControlError::UnknownParameter {
                name: name.to_string(),
                known: self
                    .specs
                    .iter()
                    .map(|s| s.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        let spec = &self.specs[i];
        let reject = |reason: String| {
            Err(ControlError::InvalidParameter {
                name: name.to_string(),
                reason,
            })
        };
        let numbers = match (spec.kind, value) {
            (ParamKind::Scalar, ParamValue::Scalar(v)) => std::slice::from_ref(v),
            (ParamKind::JointVector, ParamValue::Vector(v)) if v.len() == self.dof => v.as_slice(),
            (ParamKind::JointVector, ParamValue::Vector(v)) => {
                return reject(format!(
                    "needs {} values (one per joint), got {}",
                    self.dof,
                    v.len()
                ))
            }
            (ParamKind::JointVector, ParamValue::Scalar(_)) => {
                return reject(format!("needs a list of {} values", self.dof))
            }
            (ParamKind::Scalar, ParamValue::Vector(_)) => {
                return reject("needs a single number".into())
            }
        };
        for v in numbers {
            if !v.is_finite() {
                return reject(format!("{v} is not a finite number"));
            }
            if *v < spec.min || *v > spec.max {
                return reject(format!("{v} is outside [{}, {}]", spec.min, spec.max));
            }
        }
        Ok(())
    }

    /// Validates and stores `value`; on error the old value stays.
    pub fn set(&mut self, name: &str, value: ParamValue) -> Result<(), ControlError> {
        self.validate(name, &value)?;
        if let Some(i) = self.index(name) {
            self.values[i] = value;
        }
        Ok(())
    }
}
