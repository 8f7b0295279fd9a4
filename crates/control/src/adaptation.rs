//! The parameter update shared by the adaptive controllers: `p_hat += dt Gamma^-1 g` on the
//! adapted links, with `Gamma^-1_k = rate_group sigma_k` (a rate for the six inertia elements,
//! one for the first moments, one for the mass, times the parameter's scale sigma_k: the largest
//! initial magnitude in its group on its link), then the projection that keeps each link's mass
//! at or above `min_mass`.

use armctl_model::PARAMS_PER_LINK;
use nalgebra::DVector;

use crate::{ParamKind, ParamSpec, ParamValue, ParameterSet};

/// `sigma_k`: per link and group (inertia elements, first moments, mass) the largest initial
/// magnitude, at least 1e-6 of the arm's largest in that group.
pub(crate) fn parameter_scales(initial: &[f64]) -> Vec<f64> {
    let groups = [0..6, 6..9, 9..10];
    let largest = |range: &std::ops::Range<usize>, link: &[f64]| {
        link[range.clone()]
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()))
    };
    let arm: Vec<f64> = groups
        .iter()
        .map(|g| {
            initial
                .chunks(PARAMS_PER_LINK)
                .map(|l| largest(g, l))
                .fold(0.0, f64::max)
        })
        .collect();
    initial
        .chunks(PARAMS_PER_LINK)
        .flat_map(|link| {
            groups.iter().zip(&arm).flat_map(move |(g, &top)| {
                let sigma = largest(g, link).max(1e-6 * top).max(f64::MIN_POSITIVE);
                g.clone().map(move |_| sigma)
            })
        })
        .collect()
}

/// The parameters every adaptive controller declares: three rates, the mass floor, the mask.
pub(crate) fn adaptation_parameters(dof: usize, default_rate: f64) -> Vec<(ParamSpec, ParamValue)> {
    let rate = |name, description| {
        (
            ParamSpec {
                name,
                description,
                kind: ParamKind::Scalar,
                min: 0.0,
                max: 1e6,
                live: true,
            },
            ParamValue::Scalar(default_rate),
        )
    };
    vec![
        rate("gamma_inertia", "Adaptation rate of the inertia elements XX..ZZ; Gamma^-1 = rate times each parameter's scale."),
        rate("gamma_first_moment", "Adaptation rate of the first moments MX, MY, MZ; Gamma^-1 = rate times scale."),
        rate("gamma_mass", "Adaptation rate of the masses; Gamma^-1 = rate times scale."),
        (
            ParamSpec { name: "min_mass", description: "Projection: no link mass estimate goes below this, kg.", kind: ParamKind::Scalar, min: 0.0, max: 1e3, live: true },
            ParamValue::Scalar(1e-3),
        ),
        (
            ParamSpec { name: "adapt", description: "Per link: 1 adapts its parameters, 0 keeps the model's.", kind: ParamKind::JointVector, min: 0.0, max: 1.0, live: true },
            ParamValue::Vector(vec![1.0; dof]),
        ),
    ]
}

/// `estimate += dt Gamma^-1 direction` on the adapted links, then the mass projection.
pub(crate) fn adapt(
    parameters: &ParameterSet,
    scale: &[f64],
    direction: &DVector<f64>,
    dt: f64,
    estimate: &mut DVector<f64>,
) {
    let rates = [
        parameters.values("gamma_inertia")[0],
        parameters.values("gamma_first_moment")[0],
        parameters.values("gamma_mass")[0],
    ];
    let min_mass = parameters.values("min_mass")[0];
    for (link, &on) in parameters.values("adapt").iter().enumerate() {
        if on < 0.5 {
            continue;
        }
        for k in 0..PARAMS_PER_LINK {
            let rate = rates[match k {
                0..=5 => 0,
                6..=8 => 1,
                _ => 2,
            }];
            let i = PARAMS_PER_LINK * link + k;
            estimate[i] += dt * rate * scale[i] * direction[i];
        }
        let mass = &mut estimate[PARAMS_PER_LINK * link + 9];
        *mass = mass.max(min_mass);
    }
}
