//! An identified model (`armctl identify --out`) given to controller_node as parameters:
//! `model_base_names`, `model_base_parameters` and optionally `model_viscous`, `model_coulomb`.
//! The controller, and the node's gravity hold, then compute with it instead of the URDF's
//! inertials; the friction replaces the URDF's (computed torque compensates it).

use armctl_ident::IdentifiedModel;

use crate::node_parameters::{Declaration, RosKind};
use crate::params_file::RosValue;

/// The four declarations (read-only).
pub fn model_declarations() -> Vec<Declaration> {
    let doubles = |name: &str, what: &str| {
        Declaration::new(
            name,
            RosKind::DoubleArray,
            RosValue::DoubleArray(vec![]),
            true,
            what,
        )
    };
    vec![
        Declaration::new("model_base_names", RosKind::StringArray, RosValue::StringArray(vec![]), true, "Identified model: the base parameters' names (armctl params --base), which must be the robot's own."),
        doubles("model_base_parameters", "Identified model: base parameter values replacing the URDF's inertials (empty: use the URDF)."),
        doubles("model_viscous", "Identified model: viscous friction per joint (empty: the URDF's)."),
        doubles("model_coulomb", "Identified model: Coulomb friction per joint (empty: the URDF's)."),
    ]
}

/// The identified model in `values`, if they hold one.
pub fn identified_model<'a>(
    mut value: impl FnMut(&str) -> Option<&'a RosValue>,
) -> Option<IdentifiedModel> {
    let doubles = |v: Option<&RosValue>| match v {
        Some(RosValue::DoubleArray(d)) => d.clone(),
        _ => vec![],
    };
    let base_values = doubles(value("model_base_parameters"));
    if base_values.is_empty() {
        return None;
    }
    let base_names = match value("model_base_names") {
        Some(RosValue::StringArray(n)) => n.clone(),
        _ => vec![],
    };
    Some(IdentifiedModel {
        base_names,
        base_values,
        viscous: doubles(value("model_viscous")),
        coulomb: doubles(value("model_coulomb")),
    })
}
