//! Forces from the world: contacts with the scene, an external wrench at the tip, and the
//! force/torque sensor reading.

use super::*;

/// The pose of `frame` (a scene's frames are on the chain; one past it is a bug, reported).
pub(super) fn pose_of(
    poses: &FramePoses<'_>,
    frame: FrameId,
) -> Result<IsometryMatrix3<f64>, SimError> {
    poses.get(frame).ok_or_else(|| SimError::InvalidConfig {
        name: "scene",
        reason: format!("{frame:?} is past the chain's last frame"),
    })
}

/// `J qd` of a point's linear Jacobian (allocates nothing).
pub(super) fn point_velocity(jacobian: &Matrix3xX<f64>, qd: &[f64]) -> Vector3<f64> {
    jacobian
        .column_iter()
        .zip(qd)
        .fold(Vector3::zeros(), |v, (column, &rate)| v + column * rate)
}

/// Refuses a contact spring the step cannot resolve: `sqrt(k / m) dt` above 1 for a point's
/// lightest effective mass m at `q0` (the spring is integrated explicitly; RK4 loses stability
/// near 2.8, and m changes with the configuration).
pub(super) fn check_contact_stiffness(
    plant: &Robot,
    q0: &[f64],
    config: &SimConfig,
) -> Result<(), SimError> {
    let scene = &config.scene;
    if !scene.is_active() {
        return Ok(());
    }
    let n = plant.dof();
    let mut m = DMatrix::zeros(n, n);
    mass_matrix(plant, &mut DynamicsWorkspace::new(plant), q0, &mut m)?;
    let cholesky = m.cholesky().ok_or(SimError::InvalidConfig {
        name: "scene",
        reason: "the mass matrix at the start is not positive definite".into(),
    })?;
    let mut kin = KinematicsWorkspace::new(plant);
    let poses = forward_kinematics(plant, &mut kin, q0)?;
    let mut jacobian = Matrix3xX::zeros(n);
    let stiffest = scene
        .obstacles
        .iter()
        .max_by(|a, b| a.stiffness.total_cmp(&b.stiffness));
    let Some(stiffest) = stiffest else {
        return Ok(());
    };
    for point in &scene.points {
        point_jacobian(plant, &poses, point.frame, &point.position, &mut jacobian)?;
        let mobility = &jacobian * cholesky.solve(&jacobian.transpose());
        let inverse_mass = mobility.symmetric_eigenvalues().max();
        let omega_dt = (stiffest.stiffness * inverse_mass).sqrt() * config.dt;
        if omega_dt > 1.0 {
            let limit = 1.0 / (inverse_mass * config.dt * config.dt);
            return Err(SimError::InvalidConfig {
                name: "scene",
                reason: format!(
                    "obstacle '{}': stiffness {} N/m is too stiff for contact point '{}' at dt = {} s \
                     (its lightest effective mass at the start is {:.3} kg, and sqrt(k/m) dt = {:.2} must stay below 1): \
                     use at most {:.3e} N/m, or a smaller dt",
                    stiffest.name,
                    stiffest.stiffness,
                    point.name,
                    config.dt,
                    1.0 / inverse_mass,
                    omega_dt,
                    limit
                ),
            });
        }
    }
    Ok(())
}

impl Simulator {
    /// `J^T w` of the external wrench at the stage position into `torque` (and the stage's
    /// external torques).
    pub(super) fn add_wrench(&mut self, stage: usize, w: &Wrench) -> Result<(), SimError> {
        jacobian(
            &self.plant,
            &mut self.kin,
            &self.stage_q,
            FrameId::Tip,
            &mut self.jacobian,
        )?;
        let wrench = Vector6::new(
            w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z,
        );
        for (j, t) in self.torque.iter_mut().enumerate() {
            let share = self.jacobian.column(j).dot(&wrench);
            *t += share;
            self.stage_external[stage][j] += share;
        }
        Ok(())
    }

    /// Every contact force at the stage state: `J_p^T f` into `torque`, and the dissipative
    /// slopes at the end-of-step velocity, `dt J_p^T D J_p`, into `mass` (module `contact`).
    pub(super) fn add_contacts(&mut self, stage: usize) -> Result<(), SimError> {
        let dt = self.config.dt;
        let slip = self.config.scene.slip_velocity;
        let frames = forward_kinematics(&self.plant, &mut self.kin, &self.stage_q)?;
        let qd = &self.stage_qd[stage];
        let obstacles = &self.config.scene.obstacles;
        for point in &self.config.scene.points {
            // Most points touch nothing most of the time: their Jacobian is not needed.
            let at = pose_of(&frames, point.frame)? * Point3::from(point.position);
            if obstacles
                .iter()
                .all(|o| o.shape.penetration(&at.coords).is_none())
            {
                continue;
            }
            let p = point_jacobian(
                &self.plant,
                &frames,
                point.frame,
                &point.position,
                &mut self.point_jacobian,
            )?;
            let j = &self.point_jacobian;
            let v = point_velocity(j, qd);
            for obstacle in &self.config.scene.obstacles {
                let Some(contact) = obstacle.force(&p, &v, slip) else {
                    continue;
                };
                for (a, t) in self.torque.iter_mut().enumerate() {
                    let share = j.column(a).dot(&contact.force);
                    *t += share;
                    self.stage_external[stage][a] += share;
                }
                for a in 0..j.ncols() {
                    let row = contact.damping.transpose() * j.column(a) * dt;
                    for b in 0..j.ncols() {
                        let slope = row.dot(&j.column(b));
                        self.mass[(a, b)] += slope;
                        self.contact_slopes[(a, b)] += slope;
                    }
                }
            }
        }
        Ok(())
    }

    /// The contact forces and the sensor's reading at the current state, for reports.
    pub(super) fn update_contact_report(&mut self) -> Result<(), SimError> {
        let scene = &self.config.scene;
        if !scene.is_active() && scene.sensor.is_none() {
            return Ok(());
        }
        let n = self.plant.dof();
        let frames = forward_kinematics(&self.plant, &mut self.kin, &self.q)?;
        let tip = frames.tip().translation.vector;
        let sensor = match &scene.sensor {
            Some(s) => Some((body_of(s.frame, n), pose_of(&frames, s.frame)? * s.pose)),
            None => None,
        };
        let (mut force, mut torque) = (Vector3::zeros(), Vector3::zeros());
        for (point, total) in scene.points.iter().zip(&mut self.contact_forces) {
            let p = point_jacobian(
                &self.plant,
                &frames,
                point.frame,
                &point.position,
                &mut self.point_jacobian,
            )?;
            let v = point_velocity(&self.point_jacobian, &self.qd);
            *total = scene
                .obstacles
                .iter()
                .filter_map(|o| o.force(&p, &v, scene.slip_velocity))
                .map(|c| c.force)
                .sum();
            if let Some((body, pose)) = &sensor {
                if body_of(point.frame, n) >= *body {
                    force += *total;
                    torque += (p - pose.translation.vector).cross(total);
                }
            }
        }
        self.sensed = sensor.map(|(_, pose)| {
            let mut reading = [force.x, force.y, force.z, torque.x, torque.y, torque.z];
            if let Some(s) = &scene.sensor {
                for (r, b) in reading.iter_mut().zip(&s.bias) {
                    let noise = self
                        .sensor_noise
                        .as_mut()
                        .map_or(0.0, |(rng, normal)| normal.sample(rng));
                    *r += b + noise;
                }
            }
            SensedWrench {
                force: Vector3::new(reading[0], reading[1], reading[2]),
                torque: Vector3::new(reading[3], reading[4], reading[5]),
                pose,
            }
        });
        self.sensed_at_tip = self.sensed.map(|s| s.about(&tip));
        Ok(())
    }

    /// The world's joint torques over the step just made: the stages' (see `stage_external`)
    /// weighted as the integrator weights them.
    pub(super) fn update_external_torques(&mut self) {
        let stages = &self.stage_external;
        for (i, t) in self.external_torques.iter_mut().enumerate() {
            *t = match self.config.integrator {
                Integrator::SemiImplicitEuler => stages[0][i],
                Integrator::Rk4 => {
                    (stages[0][i] + 2.0 * stages[1][i] + 2.0 * stages[2][i] + stages[3][i]) / 6.0
                }
            };
        }
    }

    /// The joint torques the world (the scene's contacts, the external wrench) applied to the
    /// arm over the last step, chain order, as the step integrated them (a contact's damping
    /// at the velocity the step ends at): the truth for an estimate.
    pub fn external_torques(&self) -> &[f64] {
        &self.external_torques
    }

    /// Per contact point of the scene, the total contact force on the arm at the end of the
    /// last step, N, base link axes (zero when not touching).
    pub fn contact_forces(&self) -> &[Vector3<f64>] {
        &self.contact_forces
    }

    /// Sets the wrench the environment applies to the tip from the next step on (`[f; m]`,
    /// moment about the tip, base link axes; `None`: none), as `SimConfig::external_wrench`.
    pub fn set_external_wrench(&mut self, wrench: Option<Wrench>) -> Result<(), SimError> {
        if let Some(w) = &wrench {
            if w.force
                .iter()
                .chain(w.torque.iter())
                .any(|v| !v.is_finite())
            {
                return Err(SimError::NonFinite {
                    what: "external wrench",
                });
            }
        }
        self.config.external_wrench = wrench;
        Ok(())
    }

    /// The force/torque sensor's reading at the end of the last step (`None` without one).
    pub fn sensed_wrench(&self) -> Option<SensedWrench> {
        self.sensed
    }

    /// The same reading, `[f; m]` with the moment about the tip, base link axes: the measured
    /// tip wrench of the task-space laws.
    pub fn sensed_wrench_at_tip(&self) -> Option<[f64; 6]> {
        self.sensed_at_tip
    }
}
