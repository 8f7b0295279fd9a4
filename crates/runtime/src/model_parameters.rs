//! An identified model (`armctl identify --out`) given to controller_node as parameters:
//! `model_base_names`, `model_base_parameters` and optionally `model_link_parameters` (the
//! bodies that give them), `model_viscous`, `model_coulomb`, `model_friction_ripple` and `model_friction_offset`.
//! The controller, and the node's gravity hold, then compute with it instead of the URDF's
//! inertials; the friction replaces the URDF's (computed torque compensates it).

use armctl_ident::IdentifiedModel;

use crate::RuntimeError;

use armctl_control::{Declaration, ParameterValue};

/// The seven declarations (read-only).
pub fn model_declarations() -> Vec<Declaration> {
    let doubles =
        |name: &str, what: &str| Declaration::double_array(name, vec![], what).read_only();
    vec![
        Declaration::string_array("model_base_names", vec![], "Identified model: the base parameters' names (armctl params --base), which must be the robot's own.").read_only(),
        doubles("model_base_parameters", "Identified model: base parameter values replacing the URDF's inertials (empty: use the URDF)."),
        doubles("model_link_parameters", "Identified model: bodies that give model_base_parameters, 10 per link base to tip [XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M] about its MDH frame, each a body that exists (empty: the URDF's inertials changed least to give them)."),
        doubles("model_viscous", "Identified model: viscous friction per joint (empty: the URDF's)."),
        doubles("model_coulomb", "Identified model: Coulomb friction per joint (empty: the URDF's)."),
        doubles("model_friction_ripple", "Identified model: the Coulomb friction's harmonics over each joint's position, joint after joint, [cos_1, sin_1, cos_2, sin_2, ..] each (empty: none)."),
        doubles("model_friction_offset", "Identified model: the Coulomb friction's asymmetry per joint: sliding positively the joint meets Coulomb + offset, negatively Coulomb - offset; nothing at rest (empty: none)."),
    ]
}

/// The identified model in `values`, if they hold one. Friction without base parameters is
/// refused, naming the parameter: it was identified together with them and means nothing alone
/// (it used to be ignored in silence).
pub fn identified_model<'a>(
    mut value: impl FnMut(&str) -> Option<&'a ParameterValue>,
) -> Result<Option<IdentifiedModel>, RuntimeError> {
    let doubles = |v: Option<&ParameterValue>| match v {
        Some(ParameterValue::DoubleArray(d)) => d.clone(),
        _ => vec![],
    };
    let base_values = doubles(value("model_base_parameters"));
    if base_values.is_empty() {
        for name in [
            "model_link_parameters",
            "model_viscous",
            "model_coulomb",
            "model_friction_ripple",
            "model_friction_offset",
        ] {
            if !doubles(value(name)).is_empty() {
                return Err(RuntimeError::Parameter {
                    name: name.into(),
                    reason: "given without model_base_parameters: identified friction comes with \
                             the base parameters it was fitted with (armctl identify --out writes both)"
                        .into(),
                });
            }
        }
        return Ok(None);
    }
    let base_names = match value("model_base_names") {
        Some(ParameterValue::StringArray(n)) => n.clone(),
        _ => vec![],
    };
    let viscous = doubles(value("model_viscous"));
    let ripple = doubles(value("model_friction_ripple"));
    let joints = viscous.len();
    let friction_ripple = if ripple.is_empty() {
        vec![]
    } else if joints == 0 {
        return Err(RuntimeError::Parameter {
            name: "model_friction_ripple".into(),
            reason: "needs model_viscous and model_coulomb: the harmonics ride on the identified Coulomb friction".into(),
        });
    } else if ripple.len() % (2 * joints) == 0 {
        ripple
            .chunks(ripple.len() / joints)
            .map(<[f64]>::to_vec)
            .collect()
    } else {
        return Err(RuntimeError::Parameter {
            name: "model_friction_ripple".into(),
            reason: format!(
                "{} values are not cosine, sine pairs for each of the {joints} joints of model_viscous",
                ripple.len()
            ),
        });
    };
    Ok(Some(IdentifiedModel {
        base_names,
        base_values,
        link_parameters: doubles(value("model_link_parameters")),
        viscous,
        coulomb: doubles(value("model_coulomb")),
        friction_ripple,
        friction_offset: friction_offset(doubles(value("model_friction_offset")), joints)?,
    }))
}

/// The offsets given, one per joint of `model_viscous` (`joints`), or refused naming the
/// parameter.
fn friction_offset(offset: Vec<f64>, joints: usize) -> Result<Vec<f64>, RuntimeError> {
    if offset.is_empty() || offset.len() == joints {
        return Ok(offset);
    }
    Err(RuntimeError::Parameter {
        name: "model_friction_offset".into(),
        reason: format!(
            "{} values for the {joints} joints of model_viscous: the offset rides on the identified Coulomb friction, one per joint",
            offset.len()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(values: &[(&str, ParameterValue)]) -> Result<Option<IdentifiedModel>, RuntimeError> {
        identified_model(|name| values.iter().find(|(n, _)| *n == name).map(|(_, v)| v))
    }

    fn doubles(v: &[f64]) -> ParameterValue {
        ParameterValue::DoubleArray(v.to_vec())
    }

    /// A two-joint identified model with friction, and `name: values`.
    fn with(name: &'static str, values: &[f64]) -> Vec<(&'static str, ParameterValue)> {
        vec![
            ("model_base_parameters", doubles(&[1.0])),
            ("model_viscous", doubles(&[0.1, 0.2])),
            ("model_coulomb", doubles(&[1.0, 1.0])),
            (name, doubles(values)),
        ]
    }

    #[test]
    fn the_friction_ripple_is_split_per_joint_or_refused_naming_it() {
        let found = model(&with("model_friction_ripple", &[0.1, 0.2, 0.3, 0.4]))
            .unwrap()
            .unwrap();
        assert_eq!(found.friction_ripple, vec![vec![0.1, 0.2], vec![0.3, 0.4]]);
        let e = model(&with("model_friction_ripple", &[0.1, 0.2, 0.3]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("model_friction_ripple"), "{e}");
        let alone = [("model_friction_ripple", doubles(&[0.1, 0.2]))];
        let e = model(&alone).unwrap_err().to_string();
        assert!(e.contains("without model_base_parameters"), "{e}");
    }

    #[test]
    fn the_friction_offset_is_one_per_joint_or_refused_naming_it() {
        let found = model(&with("model_friction_offset", &[0.1, -0.2]))
            .unwrap()
            .unwrap();
        assert_eq!(found.friction_offset, vec![0.1, -0.2]);
        let e = model(&with("model_friction_offset", &[0.1]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("model_friction_offset"), "{e}");
        let alone = [("model_friction_offset", doubles(&[0.1, 0.2]))];
        let e = model(&alone).unwrap_err().to_string();
        assert!(e.contains("model_friction_offset"), "{e}");
    }
}
