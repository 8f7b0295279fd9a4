//! The wrench on the tip that best explains external joint torques `tau_ext = J^T F`: the
//! damped least-squares solution `F = (J J^T + lambda^2 I)^-1 J tau_ext` ([f; m], base link
//! axes, the moment about the tip). The damping is zero while the Jacobian's smallest singular
//! value stays above `SINGULAR_VALUE_BAND` and grows to `MAX_DAMPING^2` as it falls to zero
//! (Nakamura and Hanafusa's variable damping), so near a singularity (a stretched elbow,
//! aligned wrist axes) the estimate stays bounded instead of blowing up along the lost
//! direction. Torques that no tip wrench gives (a contact on a link, the null space of a
//! redundant arm) are left out.

use armctl_model::{jacobian, FrameId, KinematicsWorkspace, Robot};
use nalgebra::{Matrix6, Matrix6xX, SymmetricEigen, Vector6};

use crate::ControlError;

/// Below this smallest singular value of the Jacobian (m/rad) the solution is damped.
pub const SINGULAR_VALUE_BAND: f64 = 0.05;
/// The damping `lambda` at a singularity (m/rad).
pub const MAX_DAMPING: f64 = 0.05;

/// Buffers for the estimate (allocated once).
#[derive(Debug, Clone)]
pub struct TipWrenchEstimate {
    kin: KinematicsWorkspace,
    jacobian: Matrix6xX<f64>,
}

impl TipWrenchEstimate {
    /// For `robot`'s tip.
    pub fn new(robot: &Robot) -> Self {
        Self {
            kin: KinematicsWorkspace::new(robot),
            jacobian: Matrix6xX::zeros(robot.dof()),
        }
    }

    /// The tip wrench explaining `tau_ext` at `q`. Allocates nothing.
    pub fn estimate(
        &mut self,
        robot: &Robot,
        q: &[f64],
        tau_ext: &[f64],
    ) -> Result<[f64; 6], ControlError> {
        jacobian(robot, &mut self.kin, q, FrameId::Tip, &mut self.jacobian).map_err(|e| {
            ControlError::InvalidReference {
                reason: format!("the tip wrench estimate: {e}"),
            }
        })?;
        let j = &self.jacobian;
        let mut jjt = Matrix6::zeros();
        let mut rhs = Vector6::zeros();
        for (k, column) in j.column_iter().enumerate() {
            jjt += column * column.transpose();
            rhs += column * tau_ext[k];
        }
        let smallest = SymmetricEigen::new(jjt).eigenvalues.min().max(0.0).sqrt();
        let band = SINGULAR_VALUE_BAND;
        let damping = if smallest < band {
            MAX_DAMPING * MAX_DAMPING * (1.0 - (smallest / band).powi(2))
        } else {
            0.0
        };
        let damped = jjt + Matrix6::identity() * damping;
        let wrench = damped
            .cholesky()
            .map(|c| c.solve(&rhs))
            .unwrap_or_else(Vector6::zeros);
        Ok(wrench.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use armctl_model::ChainOptions;

    fn robot(name: &str) -> Robot {
        let path = format!("{}/../../urdf/{name}", env!("CARGO_MANIFEST_DIR"));
        Robot::from_urdf_file(path, &ChainOptions::default()).unwrap()
    }

    /// `J^T F` at `q`.
    fn torques_of(robot: &Robot, q: &[f64], wrench: &[f64; 6]) -> Vec<f64> {
        let mut j = Matrix6xX::zeros(robot.dof());
        jacobian(
            robot,
            &mut KinematicsWorkspace::new(robot),
            q,
            FrameId::Tip,
            &mut j,
        )
        .unwrap();
        (j.transpose() * Vector6::from_column_slice(wrench))
            .as_slice()
            .to_vec()
    }

    #[test]
    fn a_tip_wrench_is_recovered_away_from_singularities() {
        let wrench = [10.0, -5.0, 20.0, 0.5, -1.0, 0.3];
        let bent = [
            ("panda.urdf", vec![0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8]),
            ("ur5e.urdf", vec![0.0, -1.2, 1.5, -1.8, -1.57, 0.3]),
        ];
        for (name, q) in bent {
            let robot = robot(name);
            let mut estimate = TipWrenchEstimate::new(&robot);
            let found = estimate
                .estimate(&robot, &q, &torques_of(&robot, &q, &wrench))
                .unwrap();
            for (f, w) in found.iter().zip(&wrench) {
                assert!((f - w).abs() < 1e-6 * 20.0, "{name}: {found:?}");
            }
        }
    }

    #[test]
    fn at_a_stretched_arm_the_estimate_stays_bounded_and_explains_the_torques() {
        let robot = robot("ur5e.urdf");
        // Shoulder, elbow and wrist in line (q = 0 stretches the UR5e out): singular.
        let q = vec![0.0; robot.dof()];
        let mut estimate = TipWrenchEstimate::new(&robot);
        let wrench = [0.0, 0.0, 15.0, 0.0, 0.0, 0.0];
        let tau = torques_of(&robot, &q, &wrench);
        let found = estimate.estimate(&robot, &q, &tau).unwrap();
        assert!(
            found.iter().all(|f| f.is_finite() && f.abs() < 100.0),
            "{found:?}"
        );
        let explained = torques_of(&robot, &q, &found);
        for (e, t) in explained.iter().zip(&tau) {
            assert!((e - t).abs() < 0.05 * 15.0, "{explained:?} vs {tau:?}");
        }
        // Torques no wrench gives (along a lost direction) give no wild wrench.
        let noise = vec![0.01; robot.dof()];
        let found = estimate.estimate(&robot, &q, &noise).unwrap();
        assert!(found.iter().all(|f| f.abs() < 50.0), "{found:?}");
    }
}
