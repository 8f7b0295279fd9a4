//! Slotine-Li adaptive control of the base parameters (docs/theory.md sections 5 and 6):
//! `tau = Y_b(q, qd, qd_r, qdd_r) p_b_hat + Kd s`, `d p_b_hat / dt = Gamma^-1 Y_b^T s`, with
//! `qd_r`, `qdd_r`, `s` as in [`crate::SlotineLi`] and `Y_b` the base regressor (the columns
//! of the full regressor that make a base set, `Y p = Y_b p_b`).
//!
//! Why base parameters: the torques depend on the inertials only through `p_b`, so adapting
//! the full `p` moves it along directions no torque can see; with `p_b` the estimate is
//! unique, converges to the true `p_b` under persistent excitation, and is exactly what
//! `armctl identify` produces: start from an identified model (controller_node's `model_*`
//! parameters) and adapt from there. The Lyapunov argument is that of the full controller
//! (`Y p = Y_b p_b` with any positive-definite `Gamma`): e, de -> 0 and `p_b_hat` bounded.
//!
//! `Gamma^-1_k = gamma_group sigma_k` as in [`crate::SlotineLiAdaptive`], each base parameter
//! in the link and group of its leading link parameter. There is no mass projection: a base
//! parameter is a combination (of several links' masses, moments and inertias), not a mass.

use armctl_dynamics::numeric_base_parameters;
use armctl_model::Robot;

use crate::{ControlError, SlotineLiAdaptive};

impl SlotineLiAdaptive {
    /// `slotine_li_adaptive_base`: the controller adapting the base parameters, starting from
    /// those of `robot`'s inertials (an identified model applied to the URDF, or the URDF's own).
    pub fn on_base_parameters(robot: &Robot) -> Result<Self, ControlError> {
        let base = numeric_base_parameters(robot)?;
        Self::adapting(robot, base, "slotine_li_adaptive_base")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Controller, JointReference, JointState};

    fn panda() -> Robot {
        armctl_model::test_support::bundled_robot("panda.urdf")
    }

    #[test]
    fn first_command_equals_the_full_parameter_controller() {
        // Same model, same state: Y_b p_b = Y p, so the first torque is the same.
        let robot = panda();
        let mut base = SlotineLiAdaptive::on_base_parameters(&robot).unwrap();
        let mut full = SlotineLiAdaptive::new(&robot).unwrap();
        let q = [0.1, -0.4, 0.2, -2.0, 0.3, 1.6, 0.5];
        let qd = [0.2, -0.1, 0.3, 0.1, -0.2, 0.4, -0.3];
        let state = JointState { q: &q, qd: &qd };
        let mut reference = JointReference::hold(&[0.0; 7]);
        reference
            .q
            .copy_from_slice(&[0.15, -0.35, 0.1, -1.9, 0.2, 1.7, 0.6]);
        reference.qd.copy_from_slice(&[0.1; 7]);
        reference.qdd.copy_from_slice(&[-0.5; 7]);
        let (mut a, mut b) = ([0.0; 7], [0.0; 7]);
        base.reset(&state);
        full.reset(&state);
        base.update(&state, &reference, 1e-3, &mut a).unwrap();
        full.update(&state, &reference, 1e-3, &mut b).unwrap();
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() < 1e-9 * y.abs().max(1.0), "{a:?} vs {b:?}");
        }
        assert_eq!(base.estimates().len(), 43);
        assert_eq!(base.adapted_parameters().count(), 43);
        assert_eq!(base.name(), "slotine_li_adaptive_base");
    }
}
