//! Integrating the plant: semi-implicit Euler, RK4, the accelerations of each stage and the
//! implicit solve for stiff passive torques.

use super::*;

impl Simulator {
    pub(super) fn semi_implicit_euler(&mut self) -> Result<(), SimError> {
        let dt = self.config.dt;
        self.stage_q.copy_from_slice(&self.q);
        self.stage_qd[0].copy_from_slice(&self.qd);
        self.acceleration(0)?;
        for i in 0..self.q.len() {
            self.qd[i] += dt * self.stage_qdd[0][i];
            self.q[i] += dt * self.qd[i];
        }
        Ok(())
    }

    pub(super) fn rk4(&mut self) -> Result<(), SimError> {
        let dt = self.config.dt;
        for stage in 0..4 {
            // Stage state: x + h k_{stage-1} with h = dt/2, dt/2, dt.
            let h = [0.0, 0.5 * dt, 0.5 * dt, dt][stage];
            for i in 0..self.q.len() {
                let (dq, dqd) = if stage == 0 {
                    (0.0, 0.0)
                } else {
                    (self.stage_qd[stage - 1][i], self.stage_qdd[stage - 1][i])
                };
                self.stage_q[i] = self.q[i] + h * dq;
                self.stage_qd[stage][i] = self.qd[i] + h * dqd;
            }
            self.acceleration(stage)?;
        }
        for i in 0..self.q.len() {
            let v = &self.stage_qd;
            let a = &self.stage_qdd;
            self.q[i] += dt / 6.0 * (v[0][i] + 2.0 * v[1][i] + 2.0 * v[2][i] + v[3][i]);
            self.qd[i] += dt / 6.0 * (a[0][i] + 2.0 * a[1][i] + 2.0 * a[2][i] + a[3][i]);
        }
        Ok(())
    }

    /// `stage_qdd[stage]` at `(stage_q, stage_qd[stage])` under the applied command.
    ///
    /// The passive torques (viscous and Coulomb friction, limit springs) are stiff: URDF
    /// damping on a light wrist makes `b dt / I` reach 100 at 1 kHz, where an explicit step
    /// multiplies the velocity by `1 - b dt / I` and diverges. So, as MuJoCo does, they act at
    /// the velocity the step ends at, linearised: `(M + dt D + dt^2 K) qdd = tau_explicit -
    /// dt K qd`, with D and K the (diagonal) velocity and position slopes of the passive
    /// torques. Without them (D = K = 0) this is plain forward dynamics.
    pub(super) fn acceleration(&mut self, stage: usize) -> Result<(), SimError> {
        self.torque.copy_from_slice(&self.applied);
        self.implicit.fill(0.0);
        mass_matrix(&self.plant, &mut self.ws, &self.stage_q, &mut self.mass)?;
        if self.config.friction {
            self.add_friction(stage)?;
        }
        if self.config.limits.is_some() {
            self.add_limit_springs(stage);
        }
        self.stage_external[stage].fill(0.0);
        if let Some(w) = self.config.external_wrench {
            self.add_wrench(stage, &w)?;
        }
        let contacts = self.config.scene.is_active();
        if contacts {
            self.contact_slopes.fill(0.0);
            self.add_contacts(stage)?;
        }
        if let Some(backlash) = &mut self.backlash {
            let state = (&self.stage_q[..], &self.stage_qd[stage][..]);
            let dt = self.config.dt;
            backlash.act_on_links(
                dt,
                &self.applied,
                state,
                &mut self.torque,
                &mut self.implicit,
            );
        }
        self.solve_implicit(stage)?;
        if contacts {
            // The contact damping acted at the velocity the stage's acceleration gives.
            let qdd = &self.stage_qdd[stage];
            for (i, t) in self.stage_external[stage].iter_mut().enumerate() {
                *t -= (0..qdd.len())
                    .map(|j| self.contact_slopes[(i, j)] * qdd[j])
                    .sum::<f64>();
            }
        }
        Ok(())
    }

    /// `stage_qdd[stage] = (M + diag(implicit))^-1 (torque - C qd - G)` in the preallocated
    /// buffers, `mass` holding M. The added diagonal is not negative, so the matrix stays
    /// positive definite.
    pub(super) fn solve_implicit(&mut self, stage: usize) -> Result<(), SimError> {
        let (q, qd) = (&self.stage_q, &self.stage_qd[stage]);
        nonlinear_effects(&self.plant, &mut self.ws, q, qd, self.rhs.as_mut_slice())?;
        if let Some(model) = &self.compensation_model {
            gravity_torques(model, &mut self.ws, q, &mut self.gravity)?;
            for (r, g) in self.rhs.iter_mut().zip(&self.gravity) {
                *r -= g;
            }
        }
        for (i, (r, (t, d))) in self
            .rhs
            .iter_mut()
            .zip(self.torque.iter().zip(&self.implicit))
            .enumerate()
        {
            *r = t - *r;
            self.mass[(i, i)] += d;
        }
        cholesky_in_place(&mut self.mass)?;
        cholesky_solve_in_place(&self.mass, &mut self.rhs)?;
        self.stage_qdd[stage].copy_from_slice(self.rhs.as_slice());
        Ok(())
    }
}
