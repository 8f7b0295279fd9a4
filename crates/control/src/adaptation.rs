//! The parameter update shared by the adaptive controllers: `p_hat += dt Gamma^-1 g` on the
//! adapted links, with `Gamma^-1_k = rate_group sigma_k` (a rate for the six inertia elements,
//! one for the first moments, one for the mass, times the parameter's scale sigma_k: the largest
//! initial magnitude in its group on its link), then the projection that keeps each link's mass
//! at or above `min_mass`.
//!
//! Parameters are either the full set (10 per link, in order) or base parameters; a base
//! parameter belongs to the link and group of its regressor column (the link parameter it
//! leads with, e.g. `XX2 - YY2` to the inertia elements of link 2).

use armctl_model::PARAMS_PER_LINK;
use nalgebra::DVector;

use crate::{Array, ControlError, Declaration, ParameterSet, Scalar};

/// Inertia elements, first moments, mass.
const GROUPS: usize = 3;

fn group(column: usize) -> usize {
    match column % PARAMS_PER_LINK {
        0..=5 => 0,
        6..=8 => 1,
        _ => 2,
    }
}

/// The full parameter set's columns, `0..10n`.
pub(crate) fn full_columns(dof: usize) -> Vec<usize> {
    (0..PARAMS_PER_LINK * dof).collect()
}

/// `sigma_k` for parameters `initial` of regressor `columns`: per link and group the largest
/// initial magnitude, at least 1e-6 of the arm's largest in that group.
pub(crate) fn parameter_scales(initial: &[f64], columns: &[usize]) -> Vec<f64> {
    let links = columns
        .iter()
        .map(|c| c / PARAMS_PER_LINK + 1)
        .max()
        .unwrap_or(0);
    let mut largest = vec![[0.0f64; GROUPS]; links];
    for (&value, &c) in initial.iter().zip(columns) {
        let cell = &mut largest[c / PARAMS_PER_LINK][group(c)];
        *cell = cell.max(value.abs());
    }
    let mut arm = [0.0f64; GROUPS];
    for link in &largest {
        for (top, v) in arm.iter_mut().zip(link) {
            *top = top.max(*v);
        }
    }
    columns
        .iter()
        .map(|&c| {
            let g = group(c);
            largest[c / PARAMS_PER_LINK][g]
                .max(1e-6 * arm[g])
                .max(f64::MIN_POSITIVE)
        })
        .collect()
}

/// The parameters every adaptive controller declares: three rates, the mask, and (for full
/// parameters, where a link's mass is one of them) the mass floor.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Adaptation {
    rates: [Scalar; GROUPS],
    adapt: Array,
    min_mass: Option<Scalar>,
}

impl Adaptation {
    /// Declares the rates (each `default_rate`), the mask and, with `mass_floor`, `min_mass`.
    pub(crate) fn declare(
        parameters: &mut ParameterSet,
        default_rate: f64,
        mass_floor: bool,
    ) -> Result<Self, ControlError> {
        let dof = parameters.dof();
        let mut rate = |name, description| {
            parameters.declare_scalar(
                Declaration::double(name, default_rate, description).range(0.0, 1e6),
            )
        };
        let rates = [
            rate("gamma_inertia", "Adaptation rate of the inertia elements XX..ZZ; Gamma^-1 = rate times each parameter's scale.")?,
            rate("gamma_first_moment", "Adaptation rate of the first moments MX, MY, MZ; Gamma^-1 = rate times scale.")?,
            rate("gamma_mass", "Adaptation rate of the masses; Gamma^-1 = rate times scale.")?,
        ];
        let adapt = parameters.declare_array(
            Declaration::double_array(
                "adapt",
                vec![1.0; dof],
                "Per link: 1 adapts its parameters, 0 keeps the model's.",
            )
            .per_joint()
            .range(0.0, 1.0),
        )?;
        let min_mass = if mass_floor {
            Some(
                parameters.declare_scalar(
                    Declaration::double(
                        "min_mass",
                        1e-3,
                        "Projection: no link mass estimate goes below this, kg.",
                    )
                    .range(0.0, 1e3),
                )?,
            )
        } else {
            None
        };
        Ok(Self {
            rates,
            adapt,
            min_mass,
        })
    }

    /// `estimate += dt Gamma^-1 direction` on the parameters of adapted links, then (when
    /// declared) the mass projection on parameters that are a link's mass.
    pub(crate) fn adapt(
        self,
        parameters: &ParameterSet,
        columns: &[usize],
        scale: &[f64],
        direction: &DVector<f64>,
        dt: f64,
        estimate: &mut DVector<f64>,
    ) {
        let rates = self.rates.map(|rate| parameters[rate]);
        let min_mass = self.min_mass.map(|floor| parameters[floor]);
        let adapted = &parameters[self.adapt];
        for (k, &c) in columns.iter().enumerate() {
            if adapted[c / PARAMS_PER_LINK] < 0.5 {
                continue;
            }
            estimate[k] += dt * rates[group(c)] * scale[k] * direction[k];
            if let (Some(floor), 2) = (min_mass, group(c)) {
                estimate[k] = estimate[k].max(floor);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_are_per_link_and_group_for_full_and_base_sets() {
        // Two links: inertia elements, first moments, mass.
        let mut p = vec![0.0; 20];
        p[0] = 2.0; // XX1
        p[5] = -3.0; // ZZ1
        p[7] = 0.5; // MY1
        p[9] = 4.0; // M1
        p[13] = 1e-12; // YY2: tiny, floored at 1e-6 of the arm's largest inertia
        p[19] = 1.0; // M2
        let full = parameter_scales(&p, &full_columns(2));
        assert_eq!(full[1], 3.0);
        assert_eq!(full[6], 0.5);
        assert_eq!(full[9], 4.0);
        assert_eq!(full[13], 3e-6);
        assert_eq!(full[19], 1.0);
        // A base set of columns 5 (ZZ1), 10 (XX2), 19 (M2): groups by the leading column.
        let base = parameter_scales(&[-3.0, 0.2, 1.0], &[5, 10, 19]);
        assert_eq!(base, vec![3.0, 0.2, 1.0]);
    }
}
