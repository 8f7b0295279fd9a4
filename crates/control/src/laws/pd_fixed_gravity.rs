//! PD with fixed gravity compensation (Takegaki-Arimoto, docs/theory.md section 6):
//! `tau = Kp e + Kd de + G(q_d)`. Claim: the set point is globally asymptotically stable when
//! `Kp + dG/dq > 0` (positive definite) for all q: the textbook's condition, checked on the
//! analytical dG/dq (symmetric: the Hessian of the potential energy) at the range
//! centre and 512 random configurations within the limits, computed once from the model. When
//! it fails at a sample, [`Controller::warnings`] says so. The stricter sufficient condition
//! `lambda_min(Kp) > sup ||dG/dq||` is not required: it warns on gains shaped to each joint's
//! gravity load (light wrists, stiff shoulders) that the textbook's condition calls stable.

use armctl_dynamics::{cholesky_in_place, gravity_derivatives, DynamicsWorkspace};
use armctl_model::Robot;
use nalgebra::DMatrix;

use crate::gain_sizing::damping_bound::DampingBound;
use crate::law_support::gains::PdGains;
use crate::law_support::model_terms::ModelTerms;
use crate::numerics::configuration_samples::Configurations;
use crate::{ControlError, Controller, ParameterSet, Step};

/// Configurations sampled to estimate `sup ||dG/dq||`.
const SAMPLES: usize = 512;

/// PD plus gravity compensation at the set point.
#[derive(Debug, Clone)]
pub struct PdFixedGravity {
    model: ModelTerms,
    parameters: ParameterSet,
    gains: PdGains,
    gravity: Vec<f64>,
    /// dG/dq at the sampled configurations.
    gradients: Vec<DMatrix<f64>>,
    /// `Kp + dG/dq`, factorised in place.
    scratch: DMatrix<f64>,
    gravity_gradient_bound: f64,
    warnings: Vec<String>,
    bound: DampingBound,
}

/// Estimated `sup ||dG/dq||_2` over the joint limits (within +-pi for unlimited joints).
pub fn gravity_gradient_bound(robot: &Robot) -> Result<f64, ControlError> {
    Ok(largest_norm(&gravity_gradients(robot)?))
}

fn largest_norm(gradients: &[DMatrix<f64>]) -> f64 {
    gradients
        .iter()
        .map(|g| g.clone().singular_values().max())
        .fold(0.0, f64::max)
}

/// dG/dq (symmetrised) at the middle of the joint ranges and 512 fixed pseudo-random
/// configurations within the limits (within +-pi for unlimited joints).
pub fn gravity_gradients(robot: &Robot) -> Result<Vec<DMatrix<f64>>, ControlError> {
    let n = robot.dof();
    let mut ws = DynamicsWorkspace::new(robot);
    let mut jac = DMatrix::zeros(n, n);
    let mut configurations = Configurations::new(0x9E37_79B9_7F4A_7C15);
    let mut gradients = Vec::with_capacity(SAMPLES + 1);
    for sample in 0..=SAMPLES {
        let q = if sample == 0 {
            Configurations::middle(robot)
        } else {
            configurations.next(robot)
        };
        gravity_derivatives(robot, &mut ws, &q, &mut jac)?;
        // Symmetric but for rounding.
        gradients.push((&jac + jac.transpose()) * 0.5);
    }
    Ok(gradients)
}

impl PdFixedGravity {
    /// The controller for `robot` with default gains and the gain condition checked.
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let (parameters, gains) = PdGains::sized(
            robot,
            "Proportional gain per joint, N m/rad (N/m); stability needs Kp + dG/dq positive definite over the workspace.",
        )?;
        let gradients = gravity_gradients(robot)?;
        let mut controller = Self {
            model: ModelTerms::new(robot),
            gravity: vec![0.0; robot.dof()],
            gravity_gradient_bound: largest_norm(&gradients),
            gradients,
            scratch: DMatrix::zeros(robot.dof(), robot.dof()),
            bound: DampingBound::new(robot.dof()),
            parameters,
            gains,
            warnings: Vec::new(),
        };
        controller.parameters_changed();
        Ok(controller)
    }

    /// The estimated `sup ||dG/dq||` (the stricter condition's bound on `lambda_min(Kp)`).
    pub fn gravity_gradient_bound(&self) -> f64 {
        self.gravity_gradient_bound
    }

    /// Whether `Kp + dG/dq` is positive definite at every sampled configuration for the gains
    /// last set.
    pub fn gain_condition_holds(&self) -> bool {
        self.warnings.is_empty()
    }
}

impl Controller for PdFixedGravity {
    law_accessors!("pd_fixed_gravity", damping = "kd");
    fn parameters_changed(&mut self) {
        let kp = self.parameters.target(self.gains.kp);
        self.warnings.clear();
        // Positive definite where the Cholesky factorisation exists: 513 small ones in place,
        // without allocating.
        let scratch = &mut self.scratch;
        let failing = self.gradients.iter().find(|g| {
            scratch.copy_from(g);
            for (i, k) in kp.iter().enumerate() {
                scratch[(i, i)] += k;
            }
            cholesky_in_place(scratch).is_err()
        });
        if let Some(g) = failing {
            let with_kp = g + DMatrix::from_diagonal(&nalgebra::DVector::from_column_slice(kp));
            let smallest = with_kp.symmetric_eigenvalues().min();
            self.warnings.push(format!(
                "gain condition of PD with fixed gravity compensation does not hold: Kp + dG/dq is not positive definite at a configuration within the joint limits (smallest eigenvalue {smallest:.3} N m/rad); the set point may not be stable"
            ));
        }
    }
    fn warnings(&self) -> &[String] {
        &self.warnings
    }
    fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError> {
        let (p, gains) = (&self.parameters, self.gains);
        let s = self
            .model
            .damping_scales(&mut self.bound, &step, &p[gains.kd])?;
        self.model.gravity(&step.reference.q, &mut self.gravity)?;
        gains.pd_plus(p, step, &self.gravity, s);
        Ok(())
    }
}
