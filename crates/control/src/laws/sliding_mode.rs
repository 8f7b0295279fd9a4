//! Sliding mode control with a boundary layer (docs/theory.md section 6):
//! `s = de + Lambda e`,
//! `tau = M_hat (qdd_d + Lambda de + k sat(s / phi)) + C_hat qd + G_hat + Kd s`
//! `= RNEA_hat(q, qd, qdd_d + Lambda de + k sat(s / phi)) + Kd s`, with `sat` clipping to [-1, 1].
//! Claim: with `k` above the model error (in acceleration), s reaches the layer `|s| <= phi`;
//! `phi = 0` is the pure switching law (`sgn(s)`), which chatters; a wider layer trades the
//! chattering for a residual error of order `phi / Lambda`. `Kd s` (torque, not through `M_hat`)
//! bounds the error outside the layer when a joint the switching term cannot move (unmodelled
//! friction) hands its demand to its neighbours through the inertia coupling. `gain_design`
//! places the layer's poles (`lambda`, `k`) or makes them LQR-optimal (see `gain_design`).
//!
//! Which law is which: with `kd: 0` this is exactly the textbook (course) law, the computed-torque
//! form with the switching term and nothing else, whose error grows with the layer `phi`; the
//! default `kd` adds the `Kd s` torque, which also damps inside the layer, so there a thicker
//! layer need not give a larger error. `Kd` is scaled where it would pass the sampled-data
//! margin ([`crate::gain_sizing::damping_bound`]); `kd: 0` is never touched.

use armctl_model::Robot;

use crate::gain_sizing::default_gains::STEP;
use crate::gain_sizing::gain_design::{sliding_layer_dynamics, Form, GainDesign};
use crate::law_support::gains::{errors, joint_gain};
use crate::law_support::model_terms::ModelTerms;
use crate::{
    Array, ControlError, Controller, Declaration, ParameterSet, ParameterValue, Scalar, Step,
};

/// Sliding mode on the model's dynamics.
#[derive(Debug, Clone)]
pub struct SlidingMode {
    model: ModelTerms,
    parameters: ParameterSet,
    lambda: Array,
    k: Array,
    linear: Array,
    phi: Scalar,
    design: GainDesign,
    acceleration: Vec<f64>,
    s: Vec<f64>,
    warnings: Vec<String>,
    bound: crate::gain_sizing::damping_bound::DampingBound,
}

/// Default `(Lambda, k, phi)` per joint from the error-dynamics frequencies `w` of
/// [`crate::gain_sizing::default_gains`] (up to 20 rad/s): `Lambda = w`; `k = w^2 STEP / 2`, so that the
/// reaching term plus `Lambda de` (at most about `w^2 STEP` while sliding) needs no more than a
/// step of the error dynamics; inside the layer the loop is
/// `edd + (Lambda + k/phi) de + Lambda k/phi e = 0`, at least critically damped at `w` when
/// `phi <= k / Lambda`: `phi` is the smallest `k / Lambda` over joints (a joint whose layer is
/// too wide is barely held and drifts under unmodelled friction), but no smaller than lets
/// `k / phi` exceed [`LAYER_GAIN_MAX`].
pub(crate) fn default_gains(robot: &Robot) -> Result<(Vec<f64>, Vec<f64>, f64), ControlError> {
    let w =
        crate::gain_sizing::default_gains::error_dynamics_frequencies(robot, DEFAULT_FREQUENCY)?;
    let k: Vec<f64> = w.iter().map(|w| 0.5 * w * w * STEP).collect();
    let narrowest = w
        .iter()
        .zip(&k)
        .map(|(w, k)| k / w)
        .fold(f64::INFINITY, f64::min);
    let largest_k = k.iter().copied().fold(0.0, f64::max);
    Ok((w, k, narrowest.max(largest_k / LAYER_GAIN_MAX)))
}

/// Largest default gain `k / phi` on s inside the layer, 1/s (0.2 per step at 1 kHz).
const LAYER_GAIN_MAX: f64 = 200.0;

/// Largest default slope of the sliding surface, 1/s.
const DEFAULT_FREQUENCY: f64 = 20.0;

impl SlidingMode {
    /// The defaults of [`default_gains`]: on an arm that allows it `Lambda = 20/s`,
    /// `k = 20 rad/s^2`, `phi = 1 rad/s`.
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let n = robot.dof();
        let (lambda, k, phi) = default_gains(robot)?;
        let (_, damping) = crate::laws::slotine_li::slotine_li_gains(robot)?;
        let mut parameters = ParameterSet::new(n);
        let layer = sliding_layer_dynamics(&lambda, &k, phi);
        let design =
            GainDesign::declare(&mut parameters, &layer, ["lambda", "k"], Form::SlidingLayer)?;
        let lambda = parameters.declare_array(joint_gain(
            "lambda",
            lambda.clone(),
            "Slope of the sliding surface s = de + lambda e per joint, 1/s.",
            1e4,
        ))?;
        let k = parameters.declare_array(joint_gain(
            "k",
            k,
            "Switching gain per joint, rad/s^2: larger than the model error in acceleration.",
            1e5,
        ))?;
        let linear = parameters.declare_array(joint_gain(
            "kd",
            damping,
            "Damping on s per joint, N m s/rad: linear feedback outside the layer.",
            1e5,
        ))?;
        let phi = parameters.declare_scalar(
            Declaration::double(
                "phi",
                phi,
                "Boundary layer width on s, rad/s (0: pure switching).",
            )
            .range(0.0, 1e3),
        )?;
        Ok(Self {
            lambda,
            k,
            linear,
            phi,
            design,
            model: ModelTerms::new(robot),
            acceleration: vec![0.0; n],
            s: vec![0.0; n],
            parameters,
            warnings: Vec::new(),
            bound: crate::gain_sizing::damping_bound::DampingBound::new(n),
        })
    }
}

/// `sat(s / phi)`; `sgn(s)` for `phi = 0`.
pub(crate) fn saturated(s: f64, phi: f64) -> f64 {
    if phi > 0.0 {
        (s / phi).clamp(-1.0, 1.0)
    } else if s == 0.0 {
        0.0
    } else {
        s.signum()
    }
}

impl Controller for SlidingMode {
    law_accessors!("sliding_mode", damping = "kd");
    /// `lambda`, `k` as set, or designed from `poles` or the LQR weights inside the layer
    /// (`gain_design`).
    fn set_parameter(&mut self, name: &str, value: ParameterValue) -> Result<(), ControlError> {
        self.design.set(&mut self.parameters, name, value)?;
        self.parameters_changed();
        Ok(())
    }
    /// A design places the poles of the loop inside the layer without the `kd s` torque,
    /// which adds `M^-1 Kd` to it: warn when both are on.
    fn parameters_changed(&mut self) {
        self.warnings.clear();
        let design = match self.parameters.get("gain_design") {
            Some(ParameterValue::String(design)) if design != "manual" => design.clone(),
            _ => return,
        };
        if self.parameters.target(self.linear).iter().any(|d| *d > 0.0) {
            self.warnings.push(format!(
                "gain_design '{design}' places the poles inside the boundary layer as if kd were 0; with kd > 0 the loop there is faster than designed (set kd to 0 for the designed response)"
            ));
        }
    }
    fn warnings(&self) -> &[String] {
        &self.warnings
    }
    fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError> {
        let p = &self.parameters;
        let (lambda, k, phi) = (&p[self.lambda], &p[self.k], p[self.phi]);
        let linear = &p[self.linear];
        // kd s is torque-valued velocity feedback: within the sampled-data margin (kd = 0,
        // the book's law, is left as it is).
        let c = self.model.damping_scales(&mut self.bound, &step, linear)?;
        for (i, (e, de)) in errors(step.state, step.reference).enumerate() {
            let s = de + lambda[i] * e;
            self.acceleration[i] =
                step.reference.qdd[i] + lambda[i] * de + k[i] * saturated(s, phi);
            self.s[i] = s;
        }
        self.model
            .inverse_dynamics(step.state, &self.acceleration, step.effort)?;
        let feedback = linear.iter().zip(c).zip(&self.s);
        for (effort, ((d, c), s)) in step.effort.iter_mut().zip(feedback) {
            *effort += c * d * s;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use armctl_model::ChainOptions;

    #[test]
    fn a_gain_design_with_kd_on_is_warned_about() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/planar_2link.urdf");
        let robot = Robot::from_urdf_file(path, &ChainOptions::default()).unwrap();
        let mut law = SlidingMode::new(&robot).unwrap();
        assert!(law.warnings().is_empty());
        let poles = ParameterValue::DoubleArray(vec![-8.0, -14.0, -8.0, -14.0]);
        law.set_parameter("poles", poles).unwrap();
        law.set_parameter("gain_design", ParameterValue::String("poles".into()))
            .unwrap();
        assert!(
            law.warnings().iter().any(|w| w.contains("as if kd were 0")),
            "{:?}",
            law.warnings()
        );
        law.set_parameter("kd", ParameterValue::DoubleArray(vec![0.0, 0.0]))
            .unwrap();
        assert!(law.warnings().is_empty(), "{:?}", law.warnings());
    }

    /// `kd: 0` is the textbook law exactly: the effort is `RNEA(q, qd, qdd_d + Lambda de +
    /// k sat(s / phi))`, computed here apart, at states inside and outside the layer.
    #[test]
    fn kd_zero_is_the_textbook_law_exactly() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/puma560.urdf");
        let robot = Robot::from_urdf_file(path, &ChainOptions::default()).unwrap();
        let n = robot.dof();
        let mut law = SlidingMode::new(&robot).unwrap();
        law.set_parameter("kd", ParameterValue::DoubleArray(vec![0.0; n]))
            .unwrap();
        law.set_parameter("phi", ParameterValue::Double(0.05))
            .unwrap();
        // The new values in effect at once (no ramp).
        let rest = vec![0.0; n];
        law.reset(&crate::JointState {
            q: &rest,
            qd: &rest,
        });
        let (lambda, k) = (
            law.parameters().values("lambda").to_vec(),
            law.parameters().values("k").to_vec(),
        );
        let mut ws = armctl_dynamics::DynamicsWorkspace::new(&robot);
        for scale in [1e-3, 0.3] {
            let q: Vec<f64> = (0..n).map(|i| 0.1 * i as f64 - 0.2).collect();
            let qd: Vec<f64> = (0..n).map(|i| scale * (i as f64 - 2.5)).collect();
            let reference = crate::JointReference {
                q: q.iter().map(|v| v + scale).collect(),
                qd: vec![0.1; n],
                qdd: vec![-0.2; n],
            };
            let state = crate::JointState { q: &q, qd: &qd };
            let mut effort = vec![0.0; n];
            law.update(&state, &reference, 1e-3, &mut effort).unwrap();
            let acceleration: Vec<f64> = (0..n)
                .map(|i| {
                    let (e, de) = (reference.q[i] - q[i], reference.qd[i] - qd[i]);
                    let s = de + lambda[i] * e;
                    reference.qdd[i] + lambda[i] * de + k[i] * saturated(s, 0.05)
                })
                .collect();
            let mut book = vec![0.0; n];
            armctl_dynamics::rnea(&robot, &mut ws, &q, &qd, &acceleration, &mut book).unwrap();
            assert_eq!(effort, book, "at speed scale {scale}");
        }
    }
}
