//! The external joint torques from the measured motion and the applied torques, without
//! accelerations: the generalized-momentum observer (De Luca and Mattone, 2003). With
//! `p = M(q) qd`, the dynamics `M qdd + C qd + G + F(qd) = tau + tau_ext` give
//! `dp/dt = tau + C^T qd - G - F + tau_ext` (since `dM/dt = C + C^T`), and the residual
//!
//! ```text
//! r(t) = K_O (p(t) - p(0) - integral_0^t (tau + C^T qd - G - F + r) ds)
//! ```
//!
//! obeys `dr/dt = K_O (tau_ext - r)`: a first-order filter of the external torque with time
//! constant `1 / K_O` per joint. Discretely, over an interval `h` between two measured states,
//! `r += K (p_new - p_old - integral(tau) - h mean(C^T qd - G - F) - h r)`: the applied
//! torques as held (a drive holds each command), the model terms by the trapezoid rule, so an
//! exact model leaves a residual of order `h^2` in free motion. `K h` is kept at most 1 (an
//! interval longer than the time constant gives the interval's mean external torque), so a
//! slow or irregular state stream cannot make the recursion unstable. Friction is the model's (zero
//! unless identified or asked for): what the model leaves out shows in `r`.

use armctl_dynamics::{
    coriolis_matrix, friction_torques, gravity_torques, mass_matrix, CoulombSign, DynamicsWorkspace,
};
use armctl_model::Robot;
use nalgebra::DMatrix;

use crate::ControlError;

/// The observer's state and buffers (allocated once).
#[derive(Debug, Clone)]
pub struct MomentumObserver {
    /// `K_O`, 1/s per joint.
    gain: Vec<f64>,
    /// `p` at the last update.
    momentum: Vec<f64>,
    /// `r`, the external torque estimate.
    residual: Vec<f64>,
    /// `C^T qd - G - F` at the last update, and at this one.
    drift: Vec<f64>,
    new_drift: Vec<f64>,
    started: bool,
    ws: DynamicsWorkspace,
    mass: DMatrix<f64>,
    coriolis: DMatrix<f64>,
    gravity: Vec<f64>,
    friction: Vec<f64>,
}

impl MomentumObserver {
    /// An observer of `robot` with `gain` (1/s) on every joint; it starts at the first
    /// update.
    pub fn new(robot: &Robot, gain: f64) -> Self {
        let n = robot.dof();
        Self {
            gain: vec![gain; n],
            momentum: vec![0.0; n],
            residual: vec![0.0; n],
            drift: vec![0.0; n],
            new_drift: vec![0.0; n],
            started: false,
            ws: DynamicsWorkspace::new(robot),
            mass: DMatrix::zeros(n, n),
            coriolis: DMatrix::zeros(n, n),
            gravity: vec![0.0; n],
            friction: vec![0.0; n],
        }
    }

    /// A new gain for every joint (1/s); the estimate carries on from where it is.
    pub fn set_gain(&mut self, gain: f64) {
        self.gain.fill(gain);
    }

    /// Starts over at the next update (the states broke off, or time went back): the
    /// estimate is zero until then.
    pub fn reset(&mut self) {
        self.started = false;
        self.residual.fill(0.0);
    }

    /// Whether an estimate is running.
    pub fn is_running(&self) -> bool {
        self.started
    }

    /// The mass matrix at the last update's configuration.
    pub fn mass_matrix(&self) -> &DMatrix<f64> {
        &self.mass
    }

    /// The gravity torques at the last update's configuration.
    pub fn gravity(&self) -> &[f64] {
        &self.gravity
    }

    /// The estimate `r` of the external joint torques, chain order (zero before the first
    /// interval).
    pub fn external_torques(&self) -> &[f64] {
        &self.residual
    }

    /// The state `(q, qd)` measured `interval` seconds after the last, with `impulse` the
    /// integral of the joint torques applied over that interval (the commands, each for as
    /// long as it was held). The first update only starts the estimate. Allocates nothing.
    pub fn update(
        &mut self,
        robot: &Robot,
        (q, qd): (&[f64], &[f64]),
        impulse: &[f64],
        interval: f64,
    ) -> Result<(), ControlError> {
        // A NaN residual would compare false with every threshold: start over instead.
        if !interval.is_finite() || impulse.iter().any(|i| !i.is_finite()) {
            self.reset();
            return Err(ControlError::NonFinite {
                what: "the observed interval or impulse",
            });
        }
        self.update_drift(robot, q, qd)?;
        mass_matrix(robot, &mut self.ws, q, &mut self.mass)?;
        let n = self.momentum.len();
        // Seven per-joint arrays and a matrix row, indexed together.
        #[allow(clippy::needless_range_loop)]
        for i in 0..n {
            let momentum = (0..n).map(|j| self.mass[(i, j)] * qd[j]).sum::<f64>();
            if self.started && interval > 0.0 {
                let drift = 0.5 * (self.drift[i] + self.new_drift[i]);
                let unexplained = momentum - self.momentum[i] - impulse[i] - drift * interval;
                let gain = self.gain[i].min(1.0 / interval);
                self.residual[i] += gain * (unexplained - self.residual[i] * interval);
            }
            self.momentum[i] = momentum;
        }
        self.drift.copy_from_slice(&self.new_drift);
        self.started = true;
        if self.residual.iter().any(|r| !r.is_finite()) {
            self.reset();
            return Err(ControlError::NonFinite {
                what: "the residual",
            });
        }
        Ok(())
    }

    /// `C^T qd - G - F` at `(q, qd)` into `new_drift`.
    fn update_drift(&mut self, robot: &Robot, q: &[f64], qd: &[f64]) -> Result<(), ControlError> {
        coriolis_matrix(robot, &mut self.ws, q, qd, &mut self.coriolis)?;
        gravity_torques(robot, &mut self.ws, q, &mut self.gravity)?;
        friction_torques(robot, q, qd, CoulombSign::Exact, &mut self.friction)?;
        for i in 0..self.new_drift.len() {
            let coriolis_t = (0..qd.len())
                .map(|j| self.coriolis[(j, i)] * qd[j])
                .sum::<f64>();
            self.new_drift[i] = coriolis_t - self.gravity[i] - self.friction[i];
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use armctl_dynamics::forward_dynamics;

    fn panda() -> Robot {
        armctl_model::test_support::bundled_robot("panda.urdf")
    }

    /// Integrates the arm (semi-implicit Euler, 20 substeps) under a PD law with gravity
    /// compensation that follows a wave of 0.5 rad at 2 rad/s on every joint from the middle
    /// configuration, plus `tau_ext`; the observer and the law at 1 kHz. Returns the estimate
    /// at the end and the largest speed reached.
    fn observe(robot: &Robot, tau_ext: &[f64], seconds: f64) -> (Vec<f64>, f64) {
        let n = robot.dof();
        let mut ws = DynamicsWorkspace::new(robot);
        let mut observer = MomentumObserver::new(robot, 50.0);
        let middle = robot.middle_configuration();
        let (mut q, mut qd) = (middle.clone(), vec![0.0; n]);
        let (mut qdd, mut gravity) = (vec![0.0; n], vec![0.0; n]);
        let (dt, sub) = (1e-3, 20);
        let mut applied = vec![0.0; n];
        let mut fastest = 0.0_f64;
        for k in 0..(seconds / dt) as usize {
            let t = k as f64 * dt;
            let impulse: Vec<f64> = applied.iter().map(|a| a * dt).collect();
            observer.update(robot, (&q, &qd), &impulse, dt).unwrap();
            gravity_torques(robot, &mut ws, &q, &mut gravity).unwrap();
            for i in 0..n {
                let target = middle[i] + 0.5 * (2.0 * t).sin();
                let (kp, kd) = (
                    robot.joints()[i].limits.effort,
                    robot.joints()[i].limits.effort / 5.0,
                );
                applied[i] = gravity[i] + kp * (target - q[i]) - kd * qd[i];
            }
            let total: Vec<f64> = applied.iter().zip(tau_ext).map(|(a, e)| a + e).collect();
            for _ in 0..sub {
                forward_dynamics(robot, &mut ws, &q, &qd, &total, &mut qdd).unwrap();
                for i in 0..n {
                    qd[i] += qdd[i] * dt / sub as f64;
                    q[i] += qd[i] * dt / sub as f64;
                }
            }
            fastest = qd.iter().fold(fastest, |m, v| m.max(v.abs()));
        }
        (observer.external_torques().to_vec(), fastest)
    }

    #[test]
    fn free_motion_leaves_a_residual_of_the_discretisation_only() {
        let robot = panda();
        let (r, fastest) = observe(&robot, &vec![0.0; robot.dof()], 2.0);
        assert!(fastest > 0.5, "the arm moves: {fastest} rad/s");
        // Within 0.2 % of each joint's effort limit (the claim for a full run is 2 %).
        for (estimate, joint) in r.iter().zip(robot.joints()) {
            assert!(
                estimate.abs() < 2e-3 * joint.limits.effort,
                "free motion: {r:?}"
            );
        }
    }

    #[test]
    fn a_constant_external_torque_is_found_with_the_time_constant_of_the_gain() {
        let robot = panda();
        let tau_ext = [2.0, -1.5, 1.0, 3.0, -0.5, 0.4, 0.2];
        // Pushed while it moves: the estimate must follow the push, not the motion.
        let (r, _) = observe(&robot, &tau_ext, 0.3);
        for (estimate, truth) in r.iter().zip(&tau_ext) {
            // 15 time constants (50 1/s over 0.3 s): nothing of the step is left.
            assert!(
                (estimate - truth).abs() < 0.01 * truth.abs() + 0.01,
                "{r:?}"
            );
        }
    }
}
