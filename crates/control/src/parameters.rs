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
    /// Six numbers: x, y, z (translation) then rx, ry, rz (rotation), in base link axes.
    Cartesian,
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

/// Declared parameters and their values, in declaration order.
///
/// A live parameter has a target (what was last set) and an effective value that follows the
/// target with a first-order filter of time constant [`ParameterSet::ramp_time`], advanced by
/// [`ParameterSet::advance`] once per control step: a gain change never makes the effort jump.
#[derive(Debug, Clone, PartialEq)]
pub struct ParameterSet {
    dof: usize,
    specs: Vec<ParamSpec>,
    values: Vec<ParamValue>,
    effective: Vec<ParamValue>,
    ramp_time: f64,
}

/// Default time constant of the gain filter, s.
pub const DEFAULT_RAMP_TIME: f64 = 0.05;

impl ParameterSet {
    /// Parameters with their defaults (each default is validated).
    pub fn new(dof: usize, declared: Vec<(ParamSpec, ParamValue)>) -> Result<Self, ControlError> {
        let mut set = Self {
            dof,
            specs: Vec::new(),
            values: Vec::new(),
            effective: Vec::new(),
            ramp_time: DEFAULT_RAMP_TIME,
        };
        for (spec, value) in declared {
            set.specs.push(spec);
            set.values.push(value.clone());
            set.effective.push(value.clone());
            let name = set.specs[set.specs.len() - 1].name;
            set.set(name, value)?;
        }
        set.settle();
        Ok(set)
    }

    /// The declarations.
    pub fn specs(&self) -> &[ParamSpec] {
        &self.specs
    }

    /// The value last set for `name` (the target of the ramp).
    pub fn get(&self, name: &str) -> Option<&ParamValue> {
        self.index(name).map(|i| &self.values[i])
    }

    /// The numbers in effect for `name` now (ramping towards the target; empty when unknown).
    pub fn values(&self, name: &str) -> &[f64] {
        self.index(name).map_or(&[], |i| self.effective[i].values())
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

    /// Moves every effective value towards its target by one step of `dt` seconds.
    /// Allocates nothing.
    pub fn advance(&mut self, dt: f64) {
        let alpha = if self.ramp_time > 0.0 {
            (dt / self.ramp_time).clamp(0.0, 1.0)
        } else {
            1.0
        };
        for (effective, target) in self.effective.iter_mut().zip(&self.values) {
            match (effective, target) {
                (ParamValue::Scalar(e), ParamValue::Scalar(t)) => *e += alpha * (*t - *e),
                (ParamValue::Vector(e), ParamValue::Vector(t)) => {
                    for (ei, ti) in e.iter_mut().zip(t) {
                        *ei += alpha * (ti - *ei);
                    }
                }
                (e, t) => *e = t.clone(),
            }
        }
    }

    /// Puts every effective value at its target (on start and reset).
    pub fn settle(&mut self) {
        self.effective.clone_from(&self.values);
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
            (ParamKind::Cartesian, ParamValue::Vector(v)) if v.len() == 6 => v.as_slice(),
            (ParamKind::Cartesian, _) => {
                return reject("needs 6 values: x, y, z, rx, ry, rz".into())
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

    /// Validates and stores `value` as the new target; on error the old value stays. A
    /// parameter that is not live (structural) takes effect at once.
    pub fn set(&mut self, name: &str, value: ParamValue) -> Result<(), ControlError> {
        self.validate(name, &value)?;
        if let Some(i) = self.index(name) {
            if !self.specs[i].live {
                self.effective[i] = value.clone();
            }
            self.values[i] = value;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gains() -> ParameterSet {
        let spec = ParamSpec {
            name: "kp",
            description: "gain",
            kind: ParamKind::JointVector,
            min: 0.0,
            max: 100.0,
            live: true,
        };
        let scalar = ParamSpec {
            name: "lambda",
            description: "rate",
            kind: ParamKind::Scalar,
            min: 0.0,
            max: 10.0,
            live: false,
        };
        ParameterSet::new(
            2,
            vec![
                (spec, ParamValue::Vector(vec![1.0, 2.0])),
                (scalar, ParamValue::Scalar(1.0)),
            ],
        )
        .unwrap()
    }

    #[test]
    fn invalid_values_are_rejected_with_a_reason_and_the_old_value_kept() {
        let mut p = gains();
        for (value, reason) in [
            (ParamValue::Vector(vec![1.0]), "needs 2 values"),
            (ParamValue::Vector(vec![1.0, -1.0]), "outside [0, 100]"),
            (
                ParamValue::Vector(vec![1.0, f64::NAN]),
                "not a finite number",
            ),
            (ParamValue::Scalar(3.0), "needs a list"),
        ] {
            let e = p.set("kp", value).unwrap_err();
            assert!(e.to_string().contains(reason), "{e}");
            assert_eq!(p.values("kp"), &[1.0, 2.0]);
        }
        assert!(matches!(
            p.set("kq", ParamValue::Scalar(1.0)),
            Err(ControlError::UnknownParameter { .. })
        ));
    }

    #[test]
    fn live_values_ramp_and_structural_ones_jump() {
        let mut p = gains();
        p.set("kp", ParamValue::Vector(vec![11.0, 2.0])).unwrap();
        assert_eq!(
            p.values("kp")[0],
            1.0,
            "nothing changes before the next step"
        );
        p.advance(0.01);
        let first = p.values("kp")[0];
        assert!(
            (first - (1.0 + 10.0 * 0.01 / DEFAULT_RAMP_TIME)).abs() < 1e-12,
            "{first}"
        );
        for _ in 0..1000 {
            p.advance(0.01);
        }
        assert!((p.values("kp")[0] - 11.0).abs() < 1e-9);
        p.set("lambda", ParamValue::Scalar(5.0)).unwrap();
        assert_eq!(p.values("lambda"), &[5.0]);
    }
}
