//! Gain design for the linearised error dynamics (docs/theory.md section 6). With the model
//! exact, computed torque leaves per joint (resolved acceleration per task axis) the double
//! integrator `edd = u`, `u = -kp e - kd ed`, with state `x = [e, ed]`: its gains can be placed
//! or optimised instead of set.
//!
//! - `gain_design: poles`: two real poles per axis, `p1, p2 < 0` (`poles` lists them pairwise):
//!   `s^2 + kd s + kp = (s - p1)(s - p2)`, so `kp = p1 p2`, `kd = -(p1 + p2)`.
//! - `gain_design: lqr`: the `u` minimising `integral (q_e e^2 + q_v ed^2 + r u^2) dt`
//!   (`q_weights` pairwise `[q_e, q_v]`, `r_weights` one per axis). For the double integrator
//!   (`A = [0 1; 0 0]`, `B = [0; 1]`) the Riccati equation `A^T P + P A - P B B^T P / r + Q = 0`
//!   has the solution `P = [[sqrt(q_e r) kd, sqrt(q_e r)], [sqrt(q_e r), r kd]]` with
//!   `kp = sqrt(q_e / r)`, `kd = sqrt(q_v / r + 2 kp)`, and `u = -B^T P x / r`.
//! - `gain_design: manual` (the default): `kp` and `kd` as set.
//!
//! Sliding mode takes the design inside its boundary layer, where its loop is
//! `edd + (lambda + k/phi) ed + lambda k/phi e = 0`: the slower pole sets the surface
//! (`lambda`), the faster one `k = phi |p|`; complex poles are refused. Its `kd` (a torque on s,
//! not per unit inertia) is left as set: it adds `M^-1 kd` to the layer's rate, so the design is
//! exact with `kd = 0`.
//!
//! A designed `kp`, `kd` is written to those parameters (ramped like any live change, and shown
//! by `ros2 param get`); setting them directly is refused until `gain_design` is `manual` again.
//! The defaults of `poles` and `q_weights` give back the law's default gains.

use crate::{ControlError, Declaration, ParameterSet, ParameterValue};

const MODE: &str = "gain_design";
const POLES: &str = "poles";
const Q_WEIGHTS: &str = "q_weights";
const R_WEIGHTS: &str = "r_weights";

/// The design parameters' names.
const DESIGN: [&str; 4] = [MODE, POLES, Q_WEIGHTS, R_WEIGHTS];

/// The gains of `s^2 + kd s + kp = (s - p1)(s - p2)` for real poles `p1, p2 < 0`.
pub fn place_poles(p1: f64, p2: f64) -> Result<(f64, f64), String> {
    if !(p1 < 0.0 && p2 < 0.0 && p1.is_finite() && p2.is_finite()) {
        return Err(format!(
            "poles {p1}, {p2}: both must be negative and finite"
        ));
    }
    Ok((p1 * p2, -(p1 + p2)))
}

/// The LQR gains `(kp, kd)` of the double integrator for weights `q_e`, `q_v` on the error
/// and its rate and `r` on the acceleration.
pub fn lqr_double_integrator(q_e: f64, q_v: f64, r: f64) -> Result<(f64, f64), String> {
    if !(q_e > 0.0 && q_v >= 0.0 && r > 0.0 && (q_e + q_v + r).is_finite()) {
        return Err(format!(
            "weights q_e {q_e}, q_v {q_v}, r {r}: q_e and r must be positive, q_v not negative"
        ));
    }
    let kp = (q_e / r).sqrt();
    Ok((kp, (q_v / r + 2.0 * kp).sqrt()))
}

/// The two poles of `s^2 + kd s + kp`, when real (`None` for a complex pair).
fn real_poles(kp: f64, kd: f64) -> Option<(f64, f64)> {
    let disc = kd * kd - 4.0 * kp;
    (disc >= 0.0).then(|| {
        let root = disc.sqrt();
        ((-kd + root) / 2.0, (-kd - root) / 2.0)
    })
}

/// Per axis, the two gains (`kp` and `kd`, or `lambda` and `k`).
type AxisGains = (Vec<f64>, Vec<f64>);

/// The error dynamics `(kp, kd)` of sliding mode's `lambda`, `k` inside a layer `phi`.
pub(crate) fn sliding_layer_dynamics(lambda: &[f64], k: &[f64], phi: f64) -> Vec<(f64, f64)> {
    let phi = phi.max(1e-12);
    lambda
        .iter()
        .zip(k)
        .map(|(l, k)| (l * k / phi, l + k / phi))
        .collect()
}

/// `(lambda, k)` per axis for the error dynamics `(kp, kd)` inside a layer `phi`: lambda the
/// slower pole's magnitude (the surface), `k = phi` times the faster one's.
fn sliding_gains(kp: &[f64], kd: &[f64], phi: f64) -> Result<AxisGains, String> {
    if phi.is_nan() || phi <= 0.0 {
        return Err("sliding mode's design needs a boundary layer (phi > 0)".into());
    }
    kp.iter()
        .zip(kd)
        .map(|(&kp, &kd)| match real_poles(kp, kd) {
            Some((slow, fast)) => Ok((-slow, -fast * phi)),
            None => Err(format!(
                "the design's poles are complex (kp {kp:.3}, kd {kd:.3}): sliding mode's lambda and k/phi are real poles"
            )),
        })
        .collect::<Result<Vec<_>, _>>()
        .map(|pairs| pairs.into_iter().unzip())
}

/// How a law's gains make the error dynamics `edd + kd ed + kp e = 0`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Form {
    /// The gains are `kp`, `kd` themselves (computed torque, resolved acceleration).
    Pd,
    /// Sliding mode inside its boundary layer `phi`: `lambda` and `k` give
    /// `edd + (lambda + k/phi) ed + lambda k/phi e = 0`, poles `-lambda` (the surface) and
    /// `-k/phi` (the layer); real poles only.
    SlidingLayer,
}

/// The design parameters of a law: its two gain arrays (`kp`, `kd`, or `lambda`, `k`) and how
/// they make the error dynamics. Declared before the gains, so that start values apply in that
/// order: a gain given by hand with a design on is refused, not silently replaced.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GainDesign {
    axes: usize,
    names: [&'static str; 2],
    form: Form,
}

fn invalid(name: &str, reason: String) -> ControlError {
    ControlError::InvalidParameter {
        name: name.into(),
        reason,
    }
}

impl GainDesign {
    /// Declares `gain_design`, `poles`, `q_weights`, `r_weights` for the gains `names` (making
    /// the error dynamics as `form` says), before the gains; `defaults` are the default error
    /// dynamics `(kp, kd)` per axis, which the design parameters' defaults give back.
    pub(crate) fn declare(
        parameters: &mut ParameterSet,
        defaults: &[(f64, f64)],
        names: [&'static str; 2],
        form: Form,
    ) -> Result<Self, ControlError> {
        let (kp, kd): (Vec<f64>, Vec<f64>) = defaults.iter().copied().unzip();
        let axes = kp.len();
        let design = Self { axes, names, form };
        let poles: Vec<f64> = kp
            .iter()
            .zip(&kd)
            .flat_map(|(&kp, &kd)| {
                let (a, b) = real_poles(kp, kd).unwrap_or((-kd / 2.0, -kd / 2.0));
                [a.min(-1e-6), b.min(-1e-6)]
            })
            .collect();
        let weights: Vec<f64> = kp
            .iter()
            .zip(&kd)
            .flat_map(|(&kp, &kd)| [kp * kp, (kd * kd - 2.0 * kp).max(0.0)])
            .collect();
        parameters.declare(
            Declaration::string(MODE, "manual", "How kp and kd are found: 'manual' (as set), 'poles' (placed at poles), 'lqr' (optimal for q_weights, r_weights).")
                .choices(&["manual", "poles", "lqr"]),
        )?;
        parameters.declare(
            Declaration::double_array(POLES, poles, "With gain_design 'poles': two real negative poles per axis, pairwise [p1, p2, ...], 1/s, of the error dynamics.")
                .length(2 * axes)
                .range(-1e4, 0.0),
        )?;
        parameters.declare(
            Declaration::double_array(Q_WEIGHTS, weights, "With gain_design 'lqr': weights on the error and its rate per axis, pairwise [q_e, q_v, ...].")
                .length(2 * axes)
                .range(0.0, 1e16),
        )?;
        parameters.declare(
            Declaration::double_array(
                R_WEIGHTS,
                vec![1.0; axes],
                "With gain_design 'lqr': weight on the commanded acceleration per axis.",
            )
            .length(axes)
            .range(0.0, 1e6),
        )?;
        Ok(design)
    }

    /// Writes the designed `(kp, kd)` as the law's gains.
    fn write(
        &self,
        parameters: &mut ParameterSet,
        kp: Vec<f64>,
        kd: Vec<f64>,
    ) -> Result<(), String> {
        let (first, second) = match self.form {
            Form::Pd => (kp, kd),
            Form::SlidingLayer => {
                let phi = parameters
                    .get("phi")
                    .and_then(|v| v.numbers().first().copied())
                    .unwrap_or(0.0);
                sliding_gains(&kp, &kd, phi)?
            }
        };
        parameters
            .set(self.names[0], ParameterValue::DoubleArray(first))
            .and_then(|()| parameters.set(self.names[1], ParameterValue::DoubleArray(second)))
            .map_err(|e| e.to_string())
    }

    fn mode(parameters: &ParameterSet) -> &str {
        match parameters.get(MODE) {
            Some(ParameterValue::String(mode)) => mode,
            _ => "manual",
        }
    }

    /// The designed `(kp, kd)` per axis, or `None` with `gain_design: manual`, from the design
    /// parameters as set (not their ramped values).
    fn designed(&self, parameters: &ParameterSet) -> Result<Option<AxisGains>, String> {
        let axes = self.axes;
        let set = |name: &str| {
            parameters
                .get(name)
                .map_or(&[][..], ParameterValue::numbers)
        };
        let each = |design: &dyn Fn(usize) -> Result<(f64, f64), String>| {
            let pairs = (0..axes).map(design).collect::<Result<Vec<_>, _>>()?;
            Ok(Some(pairs.into_iter().unzip()))
        };
        match Self::mode(parameters) {
            "poles" => {
                let p = set(POLES);
                each(&|i| place_poles(p[2 * i], p[2 * i + 1]))
            }
            "lqr" => {
                let (q, r) = (set(Q_WEIGHTS), set(R_WEIGHTS));
                each(&|i| lqr_double_integrator(q[2 * i], q[2 * i + 1], r[i]))
            }
            _ => Ok(None),
        }
    }

    /// Sets `name`: the law's two gains are refused while designed; a design parameter (and
    /// sliding mode's `phi`) re-designs them, and is undone, with the reason, when the design or
    /// the gains it gives are refused.
    pub(crate) fn set(
        &self,
        parameters: &mut ParameterSet,
        name: &str,
        value: ParameterValue,
    ) -> Result<(), ControlError> {
        let mode = Self::mode(parameters);
        if mode != "manual" && self.names.contains(&name) {
            return Err(invalid(
                name,
                format!("designed by gain_design '{mode}': set poles, q_weights or r_weights, or gain_design: manual"),
            ));
        }
        let triggers = matches!(self.form, Form::SlidingLayer) && name == "phi";
        if !DESIGN.contains(&name) && !triggers {
            return parameters.set(name, value);
        }
        let [first, second] = self.names;
        let old = parameters.get(name).cloned();
        let old_gains = (
            parameters.get(first).cloned(),
            parameters.get(second).cloned(),
        );
        parameters.set(name, value)?;
        let applied = match self.designed(parameters) {
            Ok(Some((kp, kd))) => self.write(parameters, kp, kd),
            Ok(None) => Ok(()),
            Err(reason) => Err(reason),
        };
        applied.map_err(|reason| {
            for (n, v) in [(name, old), (first, old_gains.0), (second, old_gains.1)] {
                if let Some(v) = v {
                    let _ = parameters.set(n, v);
                }
            }
            invalid(name, format!("gain design refused: {reason}"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Matrix2, Vector2};

    #[test]
    fn placed_poles_are_the_roots_of_the_closed_loop() {
        let (kp, kd) = place_poles(-8.0, -12.0).unwrap();
        assert_eq!((kp, kd), (96.0, 20.0));
        let (a, b) = real_poles(kp, kd).unwrap();
        assert!((a + 8.0).abs() < 1e-12 && (b + 12.0).abs() < 1e-12);
        assert!(place_poles(-1.0, 0.0).is_err() && place_poles(f64::NAN, -1.0).is_err());
    }

    #[test]
    fn lqr_gains_solve_the_riccati_equation() {
        for (q_e, q_v, r) in [(1e4, 10.0, 1.0), (3.0, 0.0, 0.2), (810_000.0, 1800.0, 1.0)] {
            let (kp, kd) = lqr_double_integrator(q_e, q_v, r).unwrap();
            let c = (q_e * r).sqrt();
            let p = Matrix2::new(c * kd, c, c, r * kd);
            let a = Matrix2::new(0.0, 1.0, 0.0, 0.0);
            let b = Vector2::new(0.0, 1.0);
            let q = Matrix2::new(q_e, 0.0, 0.0, q_v);
            let residual = a.transpose() * p + p * a - p * b * b.transpose() * p / r + q;
            assert!(residual.amax() < 1e-9 * q_e.max(1.0), "{residual}");
            // u = -B^T P x / r is [-kp, -kd] x.
            let k = b.transpose() * p / r;
            assert!((k[0] - kp).abs() < 1e-9 * kp && (k[1] - kd).abs() < 1e-9 * kd);
            // P positive definite: the optimal cost.
            assert!(p.determinant() > 0.0 && p[(0, 0)] > 0.0);
        }
        assert!(lqr_double_integrator(0.0, 1.0, 1.0).is_err());
        assert!(lqr_double_integrator(1.0, 1.0, 0.0).is_err());
    }
}
