//! The identified model as controllers load it: base parameter values (with their names, which
//! pin the geometry they belong to) and optional friction, applied to a robot's URDF model.
//! Every torque the dynamics computes depends on the inertials only through the base
//! parameters, so the URDF's inertials are replaced by the nearest full parameter vector with
//! the identified base values: RNEA, M, C, G and every controller then use the identified
//! dynamics.

use armctl_dynamics::{numeric_base_parameters, BaseParameters};
use armctl_model::{Robot, PARAMS_PER_LINK};

use crate::log_cholesky::consistency_margin;
use crate::IdentError;

/// Identified base parameters and friction.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct IdentifiedModel {
    /// The base parameters, as combinations of link parameters (as `armctl params --base`).
    pub base_names: Vec<String>,
    /// Their values.
    pub base_values: Vec<f64>,
    /// Bodies that give these base values, 10 per link `[XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M]`
    /// (empty: the URDF's inertials changed least to give them, which need not be bodies).
    pub link_parameters: Vec<f64>,
    /// Viscous friction per joint (empty: keep the URDF's).
    pub viscous: Vec<f64>,
    /// Coulomb friction per joint (empty: keep the URDF's).
    pub coulomb: Vec<f64>,
    /// The Coulomb level's harmonics over each joint's position, per joint `[c_1, s_1, ..]`
    /// (empty: none; see `armctl_model::Robot::with_friction_ripple`).
    pub friction_ripple: Vec<Vec<f64>>,
    /// The Coulomb level's asymmetry per joint (empty: none; see
    /// `armctl_model::Friction::offset`).
    pub friction_offset: Vec<f64>,
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
        let p = if self.link_parameters.is_empty() {
            base.full_parameters(&self.base_values, &robot.parameter_vector())?
        } else {
            self.checked_links(robot, &base)?
        };
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
                .map_err(|e| refuse(format!("model_friction_ripple: {e}")))?;
        }
        if !self.friction_offset.is_empty() {
            model = model
                .with_friction_offset(&self.friction_offset)
                .map_err(|e| refuse(format!("model_friction_offset: {e}")))?;
        }
        Ok(model)
    }

    /// The link parameters, refused unless they are bodies (naming the link) and give the base
    /// values (naming the base parameter).
    fn checked_links(&self, robot: &Robot, base: &BaseParameters) -> Result<Vec<f64>, IdentError> {
        let p = &self.link_parameters;
        if p.len() != PARAMS_PER_LINK * robot.dof() || p.iter().any(|v| !v.is_finite()) {
            return Err(refuse(format!(
                "model_link_parameters: {} values, the robot's {} links need {} finite ones",
                p.len(),
                robot.dof(),
                PARAMS_PER_LINK * robot.dof()
            )));
        }
        for (link, joint) in p.chunks_exact(PARAMS_PER_LINK).zip(robot.joints()) {
            let mut values = [0.0; PARAMS_PER_LINK];
            values.copy_from_slice(link);
            if !(values[9] > 0.0 && consistency_margin(&values) >= -1e-9) {
                return Err(refuse(format!("model_link_parameters: the link moved by joint '{}' is no body that exists (mass {}, or an inertia no body has)", joint.name, values[9])));
            }
        }
        let given = base.values(p)?;
        let scale = given.amax();
        let names = base.names();
        for (k, (&wanted, got)) in self.base_values.iter().zip(given.iter()).enumerate() {
            if (wanted - got).abs() > 1e-6 * wanted.abs().max(1e-6 * scale) {
                return Err(refuse(format!("model_link_parameters give {} = {got}, not model_base_parameters' {wanted}: they are not the same model", names[k])));
            }
        }
        Ok(p.clone())
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
        if !self.link_parameters.is_empty() {
            text += "    # bodies that give them, 10 per link [XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M]\n";
            text += &format!(
                "    model_link_parameters: {}\n",
                list(&self.link_parameters)
            );
        }
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
        if !self.friction_offset.is_empty() {
            text += &format!(
                "    # per joint, sliding positively meets Coulomb + offset, negatively Coulomb - offset\n    model_friction_offset: {}\n",
                list(&self.friction_offset)
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
    fn link_parameters_are_taken_only_as_bodies_that_give_the_base_values() {
        // (The PUMA's URDF has a massless link with an inertia: no body.)
        let robot = armctl_model::test_support::bundled_robot("panda.urdf");
        let base = numeric_base_parameters(&robot).unwrap();
        let p = robot.parameter_vector();
        let model = IdentifiedModel {
            base_names: base.names(),
            base_values: base.values(&p).unwrap().iter().copied().collect(),
            link_parameters: p.clone(),
            ..IdentifiedModel::default()
        };
        let applied = model.apply(&robot).unwrap();
        assert_eq!(applied.parameter_vector(), p);
        let mut negative = model.clone();
        negative.link_parameters[10 * 2 + 9] = -1.0;
        let error = negative.apply(&robot).unwrap_err().to_string();
        assert!(error.contains("the link moved by joint"), "{error}");
        let mut other = model.clone();
        other.base_values[0] *= 1.1;
        let error = other.apply(&robot).unwrap_err().to_string();
        assert!(error.contains("they are not the same model"), "{error}");
        let mut short = model;
        short.link_parameters.truncate(7);
        assert!(short.apply(&robot).is_err());
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
