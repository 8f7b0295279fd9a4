//! PD with fixed gravity compensation (Takegaki-Arimoto, docs/theory.md section 6):
//! `tau = Kp e + Kd de + G(q_d)`. Claim: the set point is globally asymptotically stable when
//! `Kp + dG/dq > 0` for all q, which `lambda_min(Kp) > sup ||dG/dq||` guarantees. The supremum
//! over the joint limits is estimated once from the model (largest singular value of the
//! central-difference dG/dq at 512 random configurations and the range centre); when the
//! condition does not hold, [`Controller::warnings`] says so.

use armctl_dynamics::{gravity_torques, DynamicsWorkspace};
use armctl_model::Robot;
use nalgebra::DMatrix;

use crate::gains::{Configurations, PdGains};
use crate::model_terms::ModelTerms;
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
    gravity_gradient_bound: f64,
    warnings: Vec<String>,
}

/// Estimated `sup ||dG/dq||_2` over the joint limits (within +-pi for unlimited joints).
pub fn gravity_gradient_bound(robot: &Robot) -> Result<f64, ControlError> {
    let n = robot.dof();
    let mut ws = DynamicsWorkspace::new(robot);
    let (mut plus, mut minus) = (vec![0.0; n], vec![0.0; n]);
    let mut jac = DMatrix::zeros(n, n);
    let mut configurations = Configurations::new(0x9E37_79B9_7F4A_7C15);
    let mut worst = 0.0f64;
    for sample in 0..=SAMPLES {
        let q = if sample == 0 {
            Configurations::middle(robot)
        } else {
            configurations.next(robot)
        };
        let h = 1e-6;
        for k in 0..n {
            let mut qk = q.clone();
            qk[k] += h;
            gravity_torques(robot, &mut ws, &qk, &mut plus)?;
            qk[k] -= 2.0 * h;
            gravity_torques(robot, &mut ws, &qk, &mut minus)?;
            for i in 0..n {
                jac[(i, k)] = (plus[i] - minus[i]) / (2.0 * h);
            }
        }
        worst = worst.max(jac.clone().singular_values().max());
    }
    Ok(worst)
}

impl PdFixedGravity {
    /// The controller for `robot` with default gains and the gain condition checked.
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let (parameters, gains) = PdGains::sized(
            robot,
            "Proportional gain per joint, N m/rad (N/m); stability needs min(kp) > sup ||dG/dq||.",
        )?;
        let mut controller = Self {
            model: ModelTerms::new(robot),
            gravity: vec![0.0; robot.dof()],
            gravity_gradient_bound: gravity_gradient_bound(robot)?,
            parameters,
            gains,
            warnings: Vec::new(),
        };
        controller.parameters_changed();
        Ok(controller)
    }

    /// The estimated `sup ||dG/dq||` the gain condition compares `lambda_min(Kp)` with.
    pub fn gravity_gradient_bound(&self) -> f64 {
        self.gravity_gradient_bound
    }

    /// Whether `lambda_min(Kp) > sup ||dG/dq||` holds for the gains last set.
    pub fn gain_condition_holds(&self) -> bool {
        self.warnings.is_empty()
    }
}

impl Controller for PdFixedGravity {
    law_accessors!("pd_fixed_gravity");
    fn parameters_changed(&mut self) {
        let kp_min = self
            .parameters
            .target(self.gains.kp)
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        self.warnings.clear();
        if kp_min <= self.gravity_gradient_bound {
            self.warnings.push(format!(
                "gain condition of PD with fixed gravity compensation does not hold: min(kp) = {kp_min:.3} <= sup ||dG/dq|| = {:.3} (estimated over the joint limits); the set point may not be stable",
                self.gravity_gradient_bound
            ));
        }
    }
    fn warnings(&self) -> &[String] {
        &self.warnings
    }
    fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError> {
        self.model.gravity(&step.reference.q, &mut self.gravity)?;
        self.gains.pd_plus(&self.parameters, step, &self.gravity);
        Ok(())
    }
}
