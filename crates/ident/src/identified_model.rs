//! The identified model as controllers load it: base parameter values (with their names, which
//! pin the geometry they belong to) and optional friction, applied to a robot's URDF model.
//! Every torque the dynamics computes depends on the inertials only through the base
//! parameters, so the URDF's inertials are replaced by the nearest full parameter vector with
//! the identified base values: RNEA, M, C, G and every controller then use the identified
//! dynamics.

use armctl_dynamics::numeric_base_parameters;
use armctl_model::Robot;

use crate::IdentError;

/// Identified base parameters and friction.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct IdentifiedModel {
    /// The base parameters, as combinations of link parameters (as `armctl params --base`).
    pub base_names: Vec<String>,
    /// Their values.
    pub base_values: Vec<f64>,
    /// Viscous friction per joint (empty: keep the URDF's).
    pub viscous: Vec<f64>,
    /// Coulomb friction per joint (empty: keep the URDF's).
    pub coulomb: Vec<f64>,
    /// The Coulomb level's harmonics over each joint's position, per joint `[c_1, s_1, ..]`
    /// (empty: none; see `armctl_model::Robot::with_friction_ripple`).
    pub friction_ripple: Vec<Vec<f64>>,
}

fn refuse(reason: String) -> IdentError {
    IdentError::Model { reason }
}

impl IdentifiedModel {
    /// `robot` with these dynamics. The base parameters must be `robot`'s own (same names, so
    /// the same geometry), friction one value per joint.
    pub fn apply(&self, robot: &Robot) -> Result<Robot, IdentError> {
        let base = numeric_base_parameters(robot)?;
        let names = base.names();
        if self.base_values.len() != names.len() || self.base_names.len() != names.len() {
            return Err(refuse(format!(
                "{} base parameters given, the robot has {}",
                self.base_values.len(),
                names.len()
            )));
        }
        if let Some((given, own)) = self.base_names.iter().zip(&names).find(|(g, o)| g != o) {
            return Err(refuse(format!("base parameter '{given}' is not the robot's '{own}': identified on another geometry")));
        }
        let p = base.full_parameters(&self.base_values, &robot.parameter_vector())?;
        let mut model = robot
            .with_parameter_vector(&p)
            .map_err(|e| refuse(e.to_string()))?;
        if !self.viscous.is_empty() || !self.coulomb.is_empty() {
            // A friction estimate a little below zero is noise about a frictionless joint.
            let clamp = |v: &[f64]| v.iter().map(|x| x.max(0.0)).collect::<Vec<_>>();
            model = model
                .with_friction(&clamp(&self.viscous), &clamp(&self.coulomb))
                .map_err(|e| refuse(e.to_string()))?;
        }
        if !self.friction_ripple.is_empty() {
            model = model
                .with_friction_ripple(&self.friction_ripple)
                .map_err(|e| refuse(e.to_string()))?;
        }
        Ok(model)
    }

    /// As a ROS 2 parameter file for controller_node (`/**:` so any node name matches).
    pub fn to_ros_parameters(&self, comment: &str) -> String {
        let list = |v: &[f64]| {
            format!(
                "[{}]",
                v.iter()
                    .map(|x| format!("{x:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let names = self
            .base_names
            .iter()
            .map(|n| format!("{n:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        let mut text = String::new();
        for line in comment.lines() {
            text += &format!("# {line}\n");
        }
        text += "/**:\n  ros__parameters:\n";
        text += &format!("    model_base_names: [{names}]\n");
        text += &format!("    model_base_parameters: {}\n", list(&self.base_values));
        if !self.viscous.is_empty() {
            text += &format!(
                "    model_viscous: {}\n    model_coulomb: {}\n",
                list(&self.viscous),
                list(&self.coulomb)
            );
        }
        if !self.friction_ripple.is_empty() {
            let flat: Vec<f64> = self.friction_ripple.concat();
            text += &format!(
                "    # per joint, cos and sin of harmonics 1..{} of the Coulomb level over q\n    model_friction_ripple: {}\n",
                self.friction_ripple[0].len() / 2,
                list(&flat)
            );
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use armctl_dynamics::{regressor, rnea, DynamicsWorkspace};
    use armctl_model::ChainOptions;
    use nalgebra::{DMatrix, DVector};
    use rand::rngs::StdRng;
    use rand::{RngExt, SeedableRng};

    fn puma() -> Robot {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/puma560.urdf");
        Robot::from_urdf_file(path, &ChainOptions::default()).unwrap()
    }

    #[test]
    fn the_applied_model_computes_exactly_the_base_regressor_torque() {
        // Computed torque evaluates RNEA on the applied model; it must equal Y_b p_b.
        let robot = puma();
        let base = numeric_base_parameters(&robot).unwrap();
        let mut rng = StdRng::seed_from_u64(4);
        let p_b: Vec<f64> = base
            .values(&robot.parameter_vector())
            .unwrap()
            .iter()
            .map(|v| v * rng.random_range(0.7..1.3) + 0.01 * rng.random_range(-1.0..1.0))
            .collect();
        let identified = IdentifiedModel {
            base_names: base.names(),
            base_values: p_b.clone(),
            ..IdentifiedModel::default()
        };
        let model = identified.apply(&robot).unwrap();
        let n = robot.dof();
        let (mut ws, mut tau) = (DynamicsWorkspace::new(&robot), vec![0.0; n]);
        let mut y = DMatrix::zeros(n, 10 * n);
        let mut y_b = DMatrix::zeros(n, base.count());
        for _ in 0..20 {
            let mut state =
                || -> Vec<f64> { (0..n).map(|_| rng.random_range(-2.0..2.0)).collect() };
            let (q, qd, qdd) = (state(), state(), state());
            rnea(&model, &mut ws, &q, &qd, &qdd, &mut tau).unwrap();
            regressor(&robot, &mut ws, &q, &qd, &qd, &qdd, &mut y).unwrap();
            base.select(&y, &mut y_b).unwrap();
            let expected = &y_b * DVector::from_column_slice(&p_b);
            for (a, b) in tau.iter().zip(expected.iter()) {
                assert!(
                    (a - b).abs() < 1e-9 * b.abs().max(1.0),
                    "{tau:?} vs {expected}"
                );
            }
        }
    }

    #[test]
    fn a_model_of_another_geometry_is_refused() {
        let robot = puma();
        let wrong = IdentifiedModel {
            base_names: vec!["ZZ1".into(); 36],
            base_values: vec![1.0; 36],
            ..IdentifiedModel::default()
        };
        let error = wrong.apply(&robot).unwrap_err().to_string();
        assert!(error.contains("another geometry"), "{error}");
        let short = IdentifiedModel {
            base_values: vec![1.0; 3],
            ..IdentifiedModel::default()
        };
        assert!(short.apply(&robot).is_err());
    }
}
