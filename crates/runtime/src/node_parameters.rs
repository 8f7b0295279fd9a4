//! The nodes' parameters: the [`Declaration`]s of `armctl_control` (the one declaration
//! system, shared with the controllers' gains and by both middleware backends), their values
//! as start values and parameter services set them, and `--print-params`. Validation is
//! [`Declaration::validate`]; a read-only parameter is refused while running; a rejected
//! value leaves the old one.

use std::collections::BTreeMap;

use armctl_control::{Declaration, ParameterSet, ParameterValue};

use crate::RuntimeError;

/// The longest parameter name a node considers, bytes.
pub const MAX_NAME_LENGTH: usize = 256;

/// The most text a parameter set while the node runs may hold, bytes (a URDF comes at start).
pub const MAX_STRING_LENGTH: usize = 4096;

/// `name` as it may appear in a reply or a log line (cut at 64 bytes, with its length).
pub use armctl_control::shown;

/// Declared parameters and their values.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParameterStore {
    declarations: Vec<Declaration>,
    values: BTreeMap<String, ParameterValue>,
    /// The length of per-joint arrays (the controller's joints, once declared).
    joints: usize,
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
            joints: 0,
        }
    }

    /// Adds a controller's parameters (once the controller is known), with their current
    /// values; their per-joint arrays hold one value per joint of `parameters`.
    pub fn declare_controller(&mut self, parameters: &ParameterSet) {
        self.joints = parameters.dof();
        for d in parameters.declarations() {
            let value = parameters.get(&d.name).unwrap_or(&d.default);
            self.values.insert(d.name.clone(), value.clone());
            self.declarations.push(d.clone());
        }
    }

    /// Takes the values `law` holds for its parameters (a law may derive some values from
    /// others, as `gain_design` writes `kp`): returns each changed one with its value before.
    pub fn take_values_of(&mut self, law: &ParameterSet) -> Vec<(String, ParameterValue)> {
        let mut changed = Vec::new();
        for d in law.declarations() {
            let Some(value) = law.get(&d.name) else {
                continue;
            };
            if self.values.get(&d.name) != Some(value) {
                if let Some(before) = self.values.insert(d.name.clone(), value.clone()) {
                    changed.push((d.name.clone(), before));
                }
            }
        }
        changed
    }

    /// This store with the values `law` holds now for its parameters.
    pub fn with_values_of(mut self, law: &ParameterSet) -> Self {
        self.take_values_of(law);
        self
    }

    /// The declarations.
    pub fn declarations(&self) -> &[Declaration] {
        &self.declarations
    }

    /// The declaration of `name`.
    pub fn declaration(&self, name: &str) -> Option<&Declaration> {
        self.declarations.iter().find(|d| d.name == name)
    }

    /// The declared triggers ([`Declaration::trigger`]), in declaration order.
    pub fn triggers(&self) -> impl Iterator<Item = &str> {
        self.declarations
            .iter()
            .filter(|d| d.trigger)
            .map(|d| d.name.as_str())
    }

    /// Whether `name` is a declared trigger.
    pub fn is_trigger(&self, name: &str) -> bool {
        self.declaration(name).is_some_and(|d| d.trigger)
    }

    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<&ParameterValue> {
        self.values.get(name)
    }

    /// Checks `value` for `name`; `starting` allows read-only parameters. A name longer than
    /// [`MAX_NAME_LENGTH`] or, while running, a string longer than [`MAX_STRING_LENGTH`] is
    /// refused without being repeated.
    pub fn validate(
        &self,
        name: &str,
        value: &ParameterValue,
        starting: bool,
    ) -> Result<ParameterValue, RuntimeError> {
        let declaration = self.admit(name, value, starting)?;
        let reject = |reason: String| RuntimeError::Parameter {
            name: shown(name),
            reason,
        };
        let typed = declaration.validate(value, self.joints).map_err(reject)?;
        check_value(name, &typed).map_err(reject)?;
        Ok(typed)
    }

    /// The checks of a request before its value is checked against the declaration, which
    /// this returns: a short declared name, no NUL byte, while running no huge text and no
    /// read-only parameter. A law's parameter passes these and is then checked by the law's
    /// own declaration only ([`armctl_control::ParameterSet::set`]): once.
    pub fn admit(
        &self,
        name: &str,
        value: &ParameterValue,
        starting: bool,
    ) -> Result<&Declaration, RuntimeError> {
        let reject = |reason: String| RuntimeError::Parameter {
            name: shown(name),
            reason,
        };
        if name.len() > MAX_NAME_LENGTH {
            return Err(reject(format!(
                "a name of {} bytes is longer than any declared one ({MAX_NAME_LENGTH} at most)",
                name.len()
            )));
        }
        let longest = match value {
            ParameterValue::String(text) => text.len(),
            ParameterValue::StringArray(texts) => texts.iter().map(String::len).sum(),
            _ => 0,
        };
        let texts: &[String] = match value {
            ParameterValue::String(text) => std::slice::from_ref(text),
            ParameterValue::StringArray(texts) => texts,
            _ => &[],
        };
        if texts.iter().any(|t| t.contains('\0')) {
            return Err(reject(
                "the text holds a NUL byte, which ROS strings cannot carry".into(),
            ));
        }
        if !starting && longest > MAX_STRING_LENGTH {
            return Err(reject(format!(
                "{longest} bytes of text is more than a running node takes ({MAX_STRING_LENGTH})"
            )));
        }
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
        Ok(declaration)
    }

    /// Stores `typed`, which [`Self::validate`] returned.
    pub(crate) fn insert_validated(&mut self, name: &str, typed: ParameterValue) {
        self.values.insert(name.to_string(), typed);
    }

    /// Validates and stores `value`.
    pub fn set(
        &mut self,
        name: &str,
        value: &ParameterValue,
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
                d.kind.name(),
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

/// What a declaration's type, length and range cannot say about a value: that
/// `payload_inertia` is a real body's (positive semi-definite, the triangle inequality). Part
/// of the declaration check, so that every backend refuses it before the runtime sees it.
fn check_value(name: &str, value: &ParameterValue) -> Result<(), String> {
    if let ("payload_inertia", ParameterValue::DoubleArray(values)) = (name, value) {
        let payload = armctl_model::Payload::from_arrays(0.0, &[], values);
        return payload.check().map_err(|(_, reason)| reason);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> ParameterStore {
        ParameterStore::new(vec![
            Declaration::string("controller", "pd_gravity", "Controller.")
                .choices(&["pd_gravity", "computed_torque"])
                .read_only(),
            Declaration::double("state_timeout", 0.1, "s").range(0.001, 10.0),
        ])
    }

    #[test]
    fn validation_names_the_reason_and_keeps_the_old_value() {
        let mut s = store();
        let reason = |r: Result<(), RuntimeError>| r.unwrap_err().to_string();
        assert!(
            reason(s.set("state_timeout", &ParameterValue::Double(-1.0), false))
                .contains("-1 is outside")
        );
        assert!(
            reason(s.set("state_timeout", &ParameterValue::String("x".into()), false))
                .contains("expected double")
        );
        assert!(reason(s.set(
            "controller",
            &ParameterValue::String("computed_torque".into()),
            false
        ))
        .contains("read-only"));
        assert!(
            reason(s.set("controller", &ParameterValue::String("nope".into()), true))
                .contains("not one of")
        );
        assert!(
            reason(s.set("kp_typo", &ParameterValue::Double(1.0), false)).contains("not declared")
        );
        assert_eq!(s.get("state_timeout"), Some(&ParameterValue::Double(0.1)));
        s.set("state_timeout", &ParameterValue::Integer(2), false)
            .unwrap();
        assert_eq!(s.get("state_timeout"), Some(&ParameterValue::Double(2.0)));
        assert!(s.describe().contains("state_timeout:\n  type: double"));
    }

    #[test]
    fn a_controller_s_parameters_join_with_their_joint_count() {
        let mut gains = ParameterSet::new(3);
        gains
            .declare(
                Declaration::double_array("kp", vec![1.0; 3], "gain")
                    .per_joint()
                    .range(0.0, 10.0),
            )
            .unwrap();
        gains
            .set("kp", ParameterValue::DoubleArray(vec![2.0; 3]))
            .unwrap();
        let mut s = store();
        s.declare_controller(&gains);
        assert_eq!(
            s.get("kp"),
            Some(&ParameterValue::DoubleArray(vec![2.0; 3]))
        );
        let short = s
            .set("kp", &ParameterValue::DoubleArray(vec![1.0; 2]), false)
            .unwrap_err();
        assert!(
            short.to_string().contains("needs 3 values (one per joint)"),
            "{short}"
        );
        s.set("kp", &ParameterValue::DoubleArray(vec![3.0; 3]), false)
            .unwrap();
        assert!(s
            .describe()
            .contains("kp:\n  type: double array\n  default: [1.0, 1.0, 1.0]"));
    }

    #[test]
    fn huge_names_and_texts_are_refused_without_being_repeated() {
        let store = ParameterStore::new(vec![Declaration::string("mode", "a", "Mode.")]);
        let name = "x".repeat(200_000);
        let e = store
            .validate(&name, &ParameterValue::Double(1.0), false)
            .unwrap_err()
            .to_string();
        assert!(e.len() < 300 && e.contains("200000 bytes"), "{e}");
        let text = ParameterValue::String("y".repeat(10_000));
        let e = store
            .validate("mode", &text, false)
            .unwrap_err()
            .to_string();
        assert!(e.len() < 300 && e.contains("10000 bytes"), "{e}");
        assert_eq!(shown("short"), "short");
        assert!(shown(&"é".repeat(100)).ends_with("(200 bytes)"));
    }

    /// rcl's strings end at a NUL byte and r2r panics on one: refused in values, at start as
    /// while running, and written `\0` where a name is echoed.
    #[test]
    fn nul_bytes_are_refused_in_texts_and_escaped_in_echoed_names() {
        let store = ParameterStore::new(vec![Declaration::string("mode", "a", "Mode.")]);
        for starting in [true, false] {
            for value in [
                ParameterValue::String("a\0b".into()),
                ParameterValue::StringArray(vec!["ok".into(), "\0".into()]),
            ] {
                let e = store.validate("mode", &value, starting).unwrap_err();
                assert!(e.to_string().contains("NUL"), "{e}");
            }
        }
        let e = store
            .validate("mo\0de", &ParameterValue::Double(1.0), false)
            .unwrap_err()
            .to_string();
        assert!(!e.contains('\0') && e.contains("mo\\0de"), "{e}");
    }
}
