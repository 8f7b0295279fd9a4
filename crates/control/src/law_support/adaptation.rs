//! The parameter update shared by the adaptive controllers, robust by construction
//! (docs/theory.md section 6):
//!
//! `p_hat_k += dt (gamma_g sigma_k^2 (Y^T W^2 u)_k / n_l - leakage (p_hat_k - p0_k))`, with
//! `n_l = eps^2 + ||W Y_l Sigma_l||^2 + ||W u||^2` over the columns of parameter k's link l,
//! then projection onto the box
//! `p0_k +- bound sigma_k` (and, for a link's mass, onto `mass >= min_mass`).
//!
//! - `u` is a torque error the law supplies (Slotine-Li: `Kd s`, the torque its feedback adds;
//!   adaptive computed torque: the prediction error), `Y` the regressor it multiplies, `p0` the
//!   initial estimate (the model), `sigma_k` the parameter's scale (the largest initial
//!   magnitude in its group, on its link) and `gamma_g` a rate per group (the six inertia
//!   elements, the first moments, the mass), 1/s.
//! - `W` weighs each joint by the inverse of its stiffness, so `W u` is the position error the
//!   torque error causes, rad (m): a wrist's error counts as much as a shoulder's, though its
//!   torques are a hundred times smaller (with torques a light wrist stays off by 0.2 rad).
//! - **Normalised** per link: in relative units `theta_k = p_k / sigma_k` the update is a
//!   gradient on `||W Y p_tilde||^2` normalised by each link's own sensitivity: an estimate
//!   moves at most at `gamma_g / 2` of its scale per second, whatever the arm, the speed or the
//!   size of the error (a saturated arm cannot drive it away); `eps` (1 mrad) keeps it from
//!   amplifying noise when `Y` is small. One normaliser for all links let the parameter the
//!   arm is most sensitive to (a light wrist's first moment) slow every other link's learning
//!   (on the UR5e a thousandfold: a 50%-wrong model was not learned in 10 s).
//! - **Bounded**: the box keeps every estimate within `bound` scales of the model.
//! - **Leaky** (sigma-modification): directions the motion does not excite drift back to the
//!   model instead of wandering.
//!
//! Parameters are either the full set (10 per link, in order) or base parameters; a base
//! parameter belongs to the link and group of its regressor column (the link parameter it
//! leads with, e.g. `XX2 - YY2` to the inertia elements of link 2).
//!
//! `gamma` gives single parameters a rate of their own by name (`'M7: 5.0'`, or a base
//! parameter's combination, `'XX2 - YY2: 0.5'`): the textbook's full diagonal `Gamma`, in the
//! same normalised units as the class rates it overrides.

use armctl_dynamics::TransposeProducts;
use armctl_model::{Robot, PARAMS_PER_LINK};
use nalgebra::DVector;

use crate::{Array, ControlError, Declaration, ParameterSet, ParameterValue, Scalar};

/// Inertia elements, first moments, mass.
const GROUPS: usize = 3;

/// `eps`: the weighted error below which the update fades, rad (m).
const NOISE_ERROR: f64 = 1e-3;

fn group(column: usize) -> usize {
    match column % PARAMS_PER_LINK {
        0..=5 => 0,
        6..=8 => 1,
        _ => 2,
    }
}

/// The full parameter set's names, `XX1 .. M<n>`.
pub(crate) fn full_names(dof: usize) -> Vec<String> {
    (0..PARAMS_PER_LINK * dof)
        .map(|c| {
            let kind = armctl_dynamics::PARAMETER_NAMES[c % PARAMS_PER_LINK];
            format!("{kind}{}", c / PARAMS_PER_LINK + 1)
        })
        .collect()
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

/// The parameters every adaptive controller declares: three rates, the mask, the bound, the
/// leakage and (for full parameters, where a link's mass is one of them) the mass floor.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Adaptation {
    rates: [Scalar; GROUPS],
    adapt: Array,
    bound: Scalar,
    leakage: Scalar,
    min_mass: Option<Scalar>,
}

impl Adaptation {
    /// Declares the rates (each `default_rate`, 1/s), the mask, the bound, the leakage and,
    /// with `mass_floor`, `min_mass`.
    pub(crate) fn declare(
        parameters: &mut ParameterSet,
        default_rate: f64,
        mass_floor: bool,
    ) -> Result<Self, ControlError> {
        let dof = parameters.dof();
        let mut scalar = |name, default, description, max| {
            parameters
                .declare_scalar(Declaration::double(name, default, description).range(0.0, max))
        };
        let rates = [
            scalar("gamma_inertia", default_rate, "Adaptation rate of the inertia elements XX..ZZ, 1/s: the fastest relative change of an estimate (normalised update).", 1e3)?,
            scalar("gamma_first_moment", default_rate, "Adaptation rate of the first moments MX, MY, MZ, 1/s (normalised update).", 1e3)?,
            scalar("gamma_mass", default_rate, "Adaptation rate of the masses, 1/s (normalised update).", 1e3)?,
        ];
        let bound = scalar("adaptation_bound", 2.0, "Projection: each estimate stays within its initial value plus or minus this many times its scale (the largest initial value of its group on its link).", 1e3)?;
        let leakage = scalar("leakage", 0.01, "Leakage rate, 1/s: estimates drift back to the model where the motion does not excite them.", 1e3)?;
        let min_mass = if mass_floor {
            Some(scalar(
                "min_mass",
                1e-3,
                "Projection: no link mass estimate goes below this, kg.",
                1e3,
            )?)
        } else {
            None
        };
        parameters.declare(Declaration::string_array(
            "gamma",
            vec![],
            "Per-parameter adaptation rates by name, 'NAME: RATE' (1/s), overriding their class's rate, e.g. ['M7: 5.0', 'MX7: 2.0']; names: XX1..M<n> for the full set, the base parameters' combinations (as listed in ~/state) for the base set.",
        ))?;
        let adapt = parameters.declare_array(
            Declaration::double_array(
                "adapt",
                vec![1.0; dof],
                "Per link: 1 adapts its parameters, 0 keeps the model's.",
            )
            .per_joint()
            .range(0.0, 1.0),
        )?;
        Ok(Self {
            rates,
            adapt,
            bound,
            leakage,
            min_mass,
        })
    }
}

/// An adapted estimate: its model values, scales and the update's buffers.
#[derive(Debug, Clone)]
pub(crate) struct Estimate {
    /// Regressor column of each parameter.
    columns: Vec<usize>,
    /// Each parameter's name (`gamma` refers to them).
    names: Vec<String>,
    /// Per parameter, a rate of its own (`gamma`), else its class's.
    rates: Vec<Option<f64>>,
    initial: Vec<f64>,
    scale: Vec<f64>,
    values: DVector<f64>,
    /// `Y^T W^2 u` of the estimate's columns.
    direction: DVector<f64>,
    /// `W^2 u` and `W^2`.
    weighted: Vec<f64>,
    squared_weights: Vec<f64>,
    /// Over all 10n regressor columns: `Y^T W^2 u`, `sum_i w_i^2 Y_ic^2`, and the estimate
    /// scattered into a full parameter vector.
    full_direction: Vec<f64>,
    full_squares: Vec<f64>,
    full: Vec<f64>,
    /// Per link, the normaliser `n_l`, then its inverse.
    normalisers: Vec<f64>,
    /// Per parameter, the link and the group of its regressor column.
    links: Vec<usize>,
    groups: Vec<usize>,
    /// `eps^2`.
    noise_floor: f64,
}

impl Estimate {
    /// Starts at `initial`, the values of regressor `columns` (named `names`) for `robot`'s
    /// model.
    pub(crate) fn new(
        robot: &Robot,
        initial: Vec<f64>,
        columns: Vec<usize>,
        names: Vec<String>,
    ) -> Self {
        let mut estimate = Self::with_noise_floor(robot.dof(), initial, columns, NOISE_ERROR);
        estimate.names = names;
        estimate
    }

    /// Starts at `initial` with `eps = floor`, for `dof` joints.
    fn with_noise_floor(dof: usize, initial: Vec<f64>, columns: Vec<usize>, floor: f64) -> Self {
        Self {
            rates: vec![None; initial.len()],
            names: Vec::new(),
            scale: parameter_scales(&initial, &columns),
            direction: DVector::zeros(initial.len()),
            weighted: vec![0.0; dof],
            squared_weights: vec![0.0; dof],
            full_direction: vec![0.0; PARAMS_PER_LINK * dof],
            full_squares: vec![0.0; PARAMS_PER_LINK * dof],
            full: vec![0.0; PARAMS_PER_LINK * dof],
            normalisers: vec![0.0; dof],
            links: columns.iter().map(|c| c / PARAMS_PER_LINK).collect(),
            groups: columns.iter().map(|&c| group(c)).collect(),
            values: DVector::from_column_slice(&initial),
            initial,
            columns,
            noise_floor: floor * floor,
        }
    }

    pub(crate) fn values(&self) -> &DVector<f64> {
        &self.values
    }

    /// Per parameter, the rate `gamma` (`'NAME: RATE'` entries) gives it, or a reason naming
    /// the entry that cannot apply.
    fn parse_rates(&self, entries: &[String]) -> Result<Vec<Option<f64>>, String> {
        let mut rates = vec![None; self.names.len()];
        for entry in entries {
            let (name, rate) = entry
                .rsplit_once(':')
                .ok_or_else(|| format!("'{entry}': write 'NAME: RATE'"))?;
            let name = name.trim();
            let rate: f64 = rate
                .trim()
                .parse()
                .ok()
                .filter(|r: &f64| r.is_finite() && (0.0..=1e3).contains(r))
                .ok_or_else(|| format!("'{entry}': the rate must be a number in [0, 1000]"))?;
            let k = self.names.iter().position(|n| n == name).ok_or_else(|| {
                let shown: Vec<&str> = self.names.iter().take(12).map(String::as_str).collect();
                format!(
                    "'{entry}': no adapted parameter '{name}' (they are {}, ...)",
                    shown.join(", ")
                )
            })?;
            rates[k] = Some(rate);
        }
        Ok(rates)
    }

    /// Sets `name` on `parameters`; `gamma` is checked against the estimate's names and its
    /// rates taken, or refused naming the entry.
    pub(crate) fn set_parameter(
        &mut self,
        parameters: &mut ParameterSet,
        name: &str,
        value: ParameterValue,
    ) -> Result<(), ControlError> {
        if name != "gamma" {
            return parameters.set(name, value);
        }
        let ParameterValue::StringArray(entries) = &value else {
            return parameters.set(name, value);
        };
        let rates = self
            .parse_rates(entries)
            .map_err(|reason| ControlError::InvalidParameter {
                name: name.into(),
                reason,
            })?;
        parameters.set(name, value)?;
        self.rates = rates;
        Ok(())
    }

    pub(crate) fn restart(&mut self) {
        self.values.copy_from_slice(&self.initial);
    }

    /// The full parameter vector (10 per link) with the estimate in its columns and zeros
    /// elsewhere: `Y p` with it is `Y_b p_b` for a base set.
    pub(crate) fn full_values(&mut self) -> &[f64] {
        for (&c, &value) in self.columns.iter().zip(self.values.iter()) {
            self.full[c] = value;
        }
        &self.full
    }

    /// Per link l, `1 / n_l` with `n_l = eps^2 + ||W Y_l Sigma_l||^2 + ||W u||^2` over its
    /// columns, and
    /// `Y^T W^2 u` into the direction, with `products` giving `Y^T x` and `sum_i w_i Y_ic^2`
    /// over all 10n columns for `x = W^2 u`, `w = W^2`; false when a normaliser is not finite.
    fn normalise(
        &mut self,
        u: &DVector<f64>,
        weights: &[f64],
        products: impl FnOnce(&[f64], &[f64], TransposeProducts<'_>) -> Result<(), ControlError>,
    ) -> Result<bool, ControlError> {
        let mut error = 0.0;
        let terms = self.weighted.iter_mut().zip(&mut self.squared_weights);
        for (((w2u, w2), u), w) in terms.zip(u.iter()).zip(weights) {
            *w2 = w * w;
            *w2u = *w2 * u;
            error += (w * u) * (w * u);
        }
        products(
            &self.weighted,
            &self.squared_weights,
            TransposeProducts {
                transpose_times: &mut self.full_direction,
                weighted_squares: &mut self.full_squares,
            },
        )?;
        self.normalisers.fill(self.noise_floor + error);
        for (direction, &c) in self.direction.iter_mut().zip(&self.columns) {
            *direction = self.full_direction[c];
        }
        // Summed in a register and stored once per run of one link's parameters: a sum kept
        // in `normalisers[link]` waits for its own store at every parameter.
        let (mut run_link, mut run_sum) = (0, 0.0);
        let columns = self.columns.iter().zip(&self.links);
        for ((&c, &link), s) in columns.zip(&self.scale) {
            if link != run_link {
                self.normalisers[run_link] += run_sum;
                (run_link, run_sum) = (link, 0.0);
            }
            run_sum += s * s * self.full_squares[c];
        }
        if let Some(last) = self.normalisers.get_mut(run_link) {
            *last += run_sum;
        }
        let finite = self.normalisers.iter().all(|n| n.is_finite());
        for n in &mut self.normalisers {
            *n = n.recip();
        }
        Ok(finite)
    }

    /// One normalised, leaky, projected step of `dt` along `Y^T W^2 u`, `W = diag(weights)`
    /// (per joint, the inverse of its stiffness), with `products` as in `normalise`. A
    /// non-finite input leaves the estimate unchanged.
    pub(crate) fn update(
        &mut self,
        rules: Adaptation,
        parameters: &ParameterSet,
        (u, weights, dt): (&DVector<f64>, &[f64], f64),
        products: impl FnOnce(&[f64], &[f64], TransposeProducts<'_>) -> Result<(), ControlError>,
    ) -> Result<(), ControlError> {
        if !self.normalise(u, weights, products)? || dt.is_nan() || dt <= 0.0 {
            return Ok(());
        }
        let rates = rules.rates.map(|rate| parameters[rate]);
        let (bound, leakage) = (parameters[rules.bound], parameters[rules.leakage]);
        let min_mass = rules.min_mass.map(|floor| parameters[floor]);
        let adapted = &parameters[rules.adapt];
        for (k, (&link, &group)) in self.links.iter().zip(&self.groups).enumerate() {
            if adapted[link] < 0.5 {
                continue;
            }
            let (p0, sigma) = (self.initial[k], self.scale[k]);
            let value = &mut self.values[k];
            let rate = self.rates[k].unwrap_or(rates[group]);
            let gradient = rate * sigma * sigma * self.direction[k] * self.normalisers[link];
            *value += dt * (gradient - leakage * (*value - p0));
            *value = value.clamp(p0 - bound * sigma, p0 + bound * sigma);
            if let (Some(floor), 2) = (min_mass, group) {
                *value = value.max(floor);
            }
        }
        Ok(())
    }
}

/// Whether any effort reaches its joint's limit: the law then skips adaptation, since the
/// error reflects the saturation, not the model.
pub(crate) fn saturates(robot: &Robot, effort: &[f64]) -> bool {
    robot
        .joints()
        .iter()
        .zip(effort)
        .any(|(joint, e)| e.abs() >= joint.limits.effort)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;

    /// `Y^T x` and `sum_i w_i Y_ic^2` of a formed regressor.
    fn products_of(
        y: &DMatrix<f64>,
    ) -> impl FnOnce(&[f64], &[f64], TransposeProducts<'_>) -> Result<(), ControlError> + '_ {
        move |x, w, out| {
            for (c, column) in y.column_iter().enumerate() {
                out.transpose_times[c] = column.iter().zip(x).map(|(y, x)| y * x).sum();
                out.weighted_squares[c] = column.iter().zip(w).map(|(y, w)| w * y * y).sum();
            }
            Ok(())
        }
    }

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

    /// One parameter (link 1's mass), one joint: `u = Y (p - p_hat)`.
    fn one_mass(y: f64) -> (ParameterSet, Adaptation, Estimate, DMatrix<f64>) {
        let mut parameters = ParameterSet::new(1);
        let rules = Adaptation::declare(&mut parameters, 1.0, true).unwrap();
        let mut initial = vec![0.0; 10];
        initial[9] = 2.0;
        let estimate = Estimate::with_noise_floor(1, initial, full_columns(1), 1.0);
        let mut regressor = DMatrix::zeros(1, 10);
        regressor[(0, 9)] = y;
        (parameters, rules, estimate, regressor)
    }

    fn run_towards(truth: f64, y: f64, seconds: f64) -> (f64, f64) {
        let (parameters, rules, mut estimate, regressor) = one_mass(y);
        let dt = 1e-3;
        let mut fastest = 0.0f64;
        for _ in 0..(seconds / dt) as usize {
            let before = estimate.values()[9];
            let u = DVector::from_element(1, y * (truth - before));
            estimate
                .update(
                    rules,
                    &parameters,
                    (&u, &[1.0], dt),
                    products_of(&regressor),
                )
                .unwrap();
            fastest = fastest.max((estimate.values()[9] - before).abs() / dt);
        }
        (estimate.values()[9], fastest)
    }

    #[test]
    fn the_update_converges_at_a_bounded_rate_whatever_the_regressor_size() {
        // Scale sigma = 2 kg, rate 1/s: the gradient moves it at most gamma sigma / 2 = 1 kg/s,
        // for a regressor of 1 or of 1e6.
        for y in [1.0, 1e6] {
            let (mass, fastest) = run_towards(3.0, y, 30.0);
            // Leakage 0.01/s against a rate near 1/s leaves about 1% of the difference.
            assert!((mass - 3.0).abs() < 0.03, "y {y}: {mass}");
            // Plus the leakage's 0.01/s of at most 1 kg.
            assert!(fastest <= 1.0 + 0.01 + 1e-9, "y {y}: {fastest} kg/s");
        }
    }

    #[test]
    fn the_estimate_stays_in_its_box_and_above_the_mass_floor() {
        // The truth lies beyond p0 + 2 sigma = 6 kg, and below zero.
        assert!((run_towards(10.0, 10.0, 60.0).0 - 6.0).abs() < 1e-12);
        assert_eq!(run_towards(-5.0, 10.0, 60.0).0, 1e-3);
    }

    #[test]
    fn without_excitation_the_estimate_leaks_back_and_ignores_non_finite_input() {
        let (parameters, rules, mut estimate, regressor) = one_mass(10.0);
        estimate.values[9] = 3.0;
        let zero = DVector::zeros(1);
        for _ in 0..100_000 {
            estimate
                .update(
                    rules,
                    &parameters,
                    (&zero, &[1.0], 1e-3),
                    products_of(&regressor),
                )
                .unwrap();
        }
        // 100 s at 0.01/s: exp(-1) of the 1 kg difference remains.
        assert!((estimate.values()[9] - (2.0 + (-1.0f64).exp())).abs() < 1e-3);
        let nan = DVector::from_element(1, f64::NAN);
        let before = estimate.values()[9];
        estimate
            .update(
                rules,
                &parameters,
                (&nan, &[1.0], 1e-3),
                products_of(&regressor),
            )
            .unwrap();
        assert_eq!(estimate.values()[9], before);
    }
}
