//! An identified model (`armctl identify --out`) given to controller_node as parameters:
//! `model_base_names`, `model_base_parameters` and optionally `model_viscous`, `model_coulomb`.
//! The controller, and the node's gravity hold, then compute with it instead of the URDF's
//! inertials; the friction replaces the URDF's (computed torque compensates it).

use armctl_ident::IdentifiedModel;

use crate::RuntimeError;

use armctl_control::{Declaration, ParameterValue};

/// The four declarations (read-only).
pub fn model_declarations() -> Vec<Declaration> {
    let doubles =
        |name: &str, what: &str| Declaration::double_array(name, vec![], what).read_only();
    vec![
        Declaration::string_array("model_base_names", vec![], "Identified model: the base parameters' names (armctl params --base), which must be the robot's own.").read_only(),
        doubles("model_base_parameters", "Identified model: base parameter values replacing the URDF's inertials (empty: use the URDF)."),
        doubles("model_viscous", "Identified model: viscous friction per joint (empty: the URDF's)."),
        doubles("model_coulomb", "Identified model: Coulomb friction per joint (empty: the URDF's)."),
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
        for name in ["model_viscous", "model_coulomb"] {
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
    Ok(Some(IdentifiedModel {
        base_names,
        base_values,
        viscous: doubles(value("model_viscous")),
        coulomb: doubles(value("model_coulomb")),
    }))
}
