//! The simulated arm: joint state, one fixed step at a time.
//!
//! Per step the command is checked, saturated at the effort limits, delayed, and the state is
//! integrated with `qdd = M^-1 (tau - F(qd) + tau_limits + J^T w - C qd - G)` (forward dynamics
//! of the plant, which may differ from the controller's model). The stiff passive torques
//! (friction, limit springs) act at the end-of-step velocity, linearised, so the solve is with
//! `M + dt D + dt^2 K` (see `acceleration`): stable for any damping at any step.

use armctl_dynamics::{
    cholesky_in_place, cholesky_solve_in_place, friction_torques, gravity_torques, mass_matrix,
    nonlinear_effects, CoulombSign, DynamicsWorkspace, Wrench,
};
use armctl_model::{
    check_length, forward_kinematics, jacobian, point_jacobian, FrameId, FramePoses,
    KinematicsWorkspace, RigidInertia, Robot, RobotParts,
};
use nalgebra::{DMatrix, DVector, IsometryMatrix3, Matrix3xX, Matrix6xX, Point3, Vector3, Vector6};
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, Normal};

use crate::backlash::Backlash;
use crate::contact::{body_of, SensedWrench};
use crate::{Integrator, ModelMismatch, SimConfig, SimError};

/// What one step did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StepReport {
    /// Joints whose command was clipped at the effort limit.
    pub saturated: usize,
}

/// A joint faster than this many times its velocity limit has left physics behind.
pub const RUNAWAY_FACTOR: f64 = 100.0;

/// The least speed counted as a runaway, rad/s (m/s), for joints with small or no limits.
pub const RUNAWAY_SPEED: f64 = 100.0;

fn runaway_speed(joint: &armctl_model::Joint) -> f64 {
    (RUNAWAY_FACTOR * joint.limits.velocity).max(RUNAWAY_SPEED)
}

/// The embedded simulator of one arm.
#[derive(Debug)]
pub struct Simulator {
    plant: Robot,
    config: SimConfig,
    ws: DynamicsWorkspace,
    kin: KinematicsWorkspace,
    jacobian: Matrix6xX<f64>,
    q: Vec<f64>,
    qd: Vec<f64>,
    time: f64,
    /// Ring of pending commands (delay + 1 slots) and the slot of the newest.
    pending: Vec<Vec<f64>>,
    newest: usize,
    applied: Vec<f64>,
    /// Runge-Kutta stages: accelerations, stage state, scratch torques.
    stage_qdd: [Vec<f64>; 4],
    stage_qd: [Vec<f64>; 4],
    stage_q: Vec<f64>,
    torque: Vec<f64>,
    friction: Vec<f64>,
    /// G(q) at the stage position, when the robot compensates it.
    gravity: Vec<f64>,
    /// The model the robot compensates gravity with (its own, as a Franka arm's controller
    /// has it): the nominal model, without the mismatch (payload, mass scale), which then
    /// sags as it would on the real arm.
    compensation_model: Option<Robot>,
    /// Per joint `dt D + dt^2 K`: what the implicit passive torques add to M's diagonal.
    implicit: Vec<f64>,
    /// Right-hand side of the implicit solve, then the accelerations.
    rhs: DVector<f64>,
    noise: Option<(StdRng, Normal<f64>, Normal<f64>)>,
    mass: DMatrix<f64>,
    /// Per joint (stiffness, damping) of the limit springs.
    limit_springs: Vec<(f64, f64)>,
    /// The linear Jacobian of one contact point.
    point_jacobian: Matrix3xX<f64>,
    /// Per contact point, the total contact force at the end of the last step (base axes).
    contact_forces: Vec<Vector3<f64>>,
    /// The sensor's reading at the end of the last step, with its noise generator.
    sensed: Option<SensedWrench>,
    /// The same reading about the tip, base link axes.
    sensed_at_tip: Option<[f64; 6]>,
    sensor_noise: Option<(StdRng, Normal<f64>)>,
    /// Per joint with stiction: where it is stuck (`None`: slipping), and the anchor's
    /// (stiffness, damping).
    anchors: Vec<Option<f64>>,
    stick_springs: Vec<(f64, f64)>,
    /// The rotors behind their gears' play, when a joint has backlash.
    backlash: Option<Backlash>,
    /// Velocities at the start of the step (a joint sticks only while slowing).
    previous_qd: Vec<f64>,
}

/// `(w^2 M_ii, 2 zeta w M_ii)` per joint at mid-range, or zeros without limit springs.
fn limit_springs(plant: &Robot, config: &SimConfig) -> Result<Vec<(f64, f64)>, SimError> {
    let n = plant.dof();
    let Some(spring) = config.limits else {
        return Ok(vec![(0.0, 0.0); n]);
    };
    let mid: Vec<f64> = plant.middle_configuration();
    let mut m = DMatrix::zeros(n, n);
    mass_matrix(plant, &mut DynamicsWorkspace::new(plant), &mid, &mut m)?;
    let w = spring.frequency;
    Ok((0..n)
        .map(|i| {
            (
                w * w * m[(i, i)],
                2.0 * spring.damping_ratio * w * m[(i, i)],
            )
        })
        .collect())
}

/// Refuses a plant whose mass matrix at `q0` is not positive definite, naming a joint that
/// moves nothing (a zero diagonal element), else reporting the singular matrix.
fn check_masses(plant: &Robot, q0: &[f64]) -> Result<(), SimError> {
    let n = plant.dof();
    let mut m = nalgebra::DMatrix::zeros(n, n);
    armctl_dynamics::mass_matrix(plant, &mut DynamicsWorkspace::new(plant), q0, &mut m)?;
    let largest = m.diagonal().amax();
    if let Some(j) = (0..n).find(|&j| m[(j, j)] <= 1e-12 * largest) {
        return Err(SimError::Massless {
            joint: plant.joints()[j].name.clone(),
        });
    }
    armctl_dynamics::cholesky_in_place(&mut m)?;
    Ok(())
}

/// The plant: the model with the configured mismatch and armature (none on a joint with
/// play: its rotor is a body of its own, behind the gear).
fn plant(
    model: &Robot,
    mismatch: &ModelMismatch,
    armature: &[f64],
    backlash: Option<&Backlash>,
) -> Result<Robot, SimError> {
    let mut parts: RobotParts = model.to_parts();
    if !armature.is_empty() {
        check_length("armature", parts.joints.len(), armature.len())?;
        for (joint, &a) in parts.joints.iter_mut().zip(armature) {
            joint.armature = a;
        }
    }
    for (i, joint) in parts.joints.iter_mut().enumerate() {
        if backlash.is_some_and(|b| b.has_play(i)) {
            joint.armature = 0.0;
        }
    }
    if let Some(s) = mismatch.mass_scale {
        for link in &mut parts.links {
            link.mass *= s;
            link.inertia_com *= s;
        }
    }
    if let Some(p) = mismatch.payload {
        let payload = RigidInertia {
            mass: p.mass,
            com: p.com,
            inertia_com: p.inertia,
        }
        .transformed(&parts.tool);
        if let Some(last) = parts.links.last_mut() {
            *last = last.combined(&payload);
        }
    }
    Ok(Robot::new(parts)?)
}

impl Simulator {
    /// A simulator of `model` (changed by `config.mismatch`) starting at rest at `q0`.
    pub fn new(model: &Robot, q0: &[f64], config: SimConfig) -> Result<Self, SimError> {
        config.validate()?;
        let n = model.dof();
        check_length("q0", n, q0.len())?;
        if q0.iter().any(|v| !v.is_finite()) {
            return Err(SimError::NonFinite {
                what: "initial state",
            });
        }
        let backlash = Backlash::new(&config, model, q0)?;
        let mut plant = plant(
            model,
            &config.mismatch,
            &config.joints.armature,
            backlash.as_ref(),
        )?;
        if !config.joints.friction_ripple.is_empty() {
            if !config.friction {
                return Err(SimError::InvalidConfig {
                    name: "friction_ripple",
                    reason: "needs friction on".into(),
                });
            }
            plant = plant.with_friction_ripple(&config.joints.friction_ripple)?;
        }
        check_masses(&plant, q0)?;
        let noise = match config.noise {
            Some(n) => Some((
                StdRng::seed_from_u64(n.seed),
                Normal::new(0.0, n.position).map_err(|e| SimError::InvalidConfig {
                    name: "noise",
                    reason: e.to_string(),
                })?,
                Normal::new(0.0, n.velocity).map_err(|e| SimError::InvalidConfig {
                    name: "noise",
                    reason: e.to_string(),
                })?,
            )),
            None => None,
        };
        let zeros = vec![0.0; n];
        let limit_springs = limit_springs(&plant, &config)?;
        check_contact_stiffness(&plant, q0, &config)?;
        let stick_springs = stick_springs(&plant, &config)?;
        let anchors = stick_springs
            .iter()
            .zip(q0)
            .map(|(&(k, _), &q)| (k > 0.0).then_some(q))
            .collect();
        let sensor_noise = match &config.scene.sensor {
            Some(sensor) if sensor.noise > 0.0 => Some((
                StdRng::seed_from_u64(config.noise.map_or(0, |n| n.seed) ^ 0x5e75),
                Normal::new(0.0, sensor.noise).map_err(|e| SimError::InvalidConfig {
                    name: "scene",
                    reason: e.to_string(),
                })?,
            )),
            _ => None,
        };
        let mut sim = Self {
            point_jacobian: Matrix3xX::zeros(n),
            contact_forces: vec![Vector3::zeros(); config.scene.points.len()],
            sensed: None,
            sensed_at_tip: None,
            sensor_noise,
            anchors,
            stick_springs,
            backlash,
            previous_qd: zeros.clone(),
            limit_springs,
            ws: DynamicsWorkspace::new(&plant),
            kin: KinematicsWorkspace::new(&plant),
            jacobian: Matrix6xX::zeros(n),
            q: q0.to_vec(),
            qd: zeros.clone(),
            time: 0.0,
            pending: vec![zeros.clone(); config.command_delay_steps + 1],
            newest: 0,
            applied: zeros.clone(),
            stage_qdd: std::array::from_fn(|_| zeros.clone()),
            stage_qd: std::array::from_fn(|_| zeros.clone()),
            stage_q: zeros.clone(),
            torque: zeros.clone(),
            friction: zeros.clone(),
            gravity: zeros.clone(),
            compensation_model: config.robot_compensates_gravity.then(|| model.clone()),
            implicit: zeros,
            rhs: DVector::zeros(n),
            noise,
            mass: DMatrix::zeros(n, n),
            plant,
            config,
        };
        sim.update_contact_report()?;
        Ok(sim)
    }

    /// The simulated robot (the model with the mismatch applied).
    pub fn plant(&self) -> &Robot {
        &self.plant
    }
    /// The settings.
    pub fn config(&self) -> &SimConfig {
        &self.config
    }
    /// Simulated time, s.
    pub fn time(&self) -> f64 {
        self.time
    }
    /// True joint positions.
    pub fn q(&self) -> &[f64] {
        &self.q
    }
    /// True joint velocities.
    pub fn qd(&self) -> &[f64] {
        &self.qd
    }
    /// The torques applied in the last step (after saturation and delay).
    pub fn applied_effort(&self) -> &[f64] {
        &self.applied
    }

    /// Puts the arm at `(q, qd)` (rotors behind a gear with play in the middle of it).
    pub fn set_state(&mut self, q: &[f64], qd: &[f64]) -> Result<(), SimError> {
        check_length("q", self.q.len(), q.len())?;
        check_length("qd", self.q.len(), qd.len())?;
        if q.iter().chain(qd).any(|v| !v.is_finite()) {
            return Err(SimError::NonFinite { what: "state" });
        }
        self.q.copy_from_slice(q);
        self.qd.copy_from_slice(qd);
        if let Some(backlash) = &mut self.backlash {
            backlash.recentre(q, qd);
        }
        Ok(())
    }

    /// The state a sensor reports: the true state plus the configured noise.
    pub fn measure(&mut self, q: &mut [f64], qd: &mut [f64]) -> Result<(), SimError> {
        check_length("q", self.q.len(), q.len())?;
        check_length("qd", self.q.len(), qd.len())?;
        q.copy_from_slice(&self.q);
        qd.copy_from_slice(&self.qd);
        if let Some((rng, position, velocity)) = &mut self.noise {
            for v in q.iter_mut() {
                *v += position.sample(rng);
            }
            for v in qd.iter_mut() {
                *v += velocity.sample(rng);
            }
        }
        Ok(())
    }

    /// Advances one step under `command` (joint efforts). Allocates nothing.
    pub fn step(&mut self, command: &[f64]) -> Result<StepReport, SimError> {
        check_length("command", self.q.len(), command.len())?;
        if command.iter().any(|v| !v.is_finite()) {
            return Err(SimError::NonFinite { what: "command" });
        }
        let mut report = StepReport::default();
        let slots = self.pending.len();
        self.newest = (self.newest + 1) % slots;
        for (slot, (&c, joint)) in self.pending[self.newest]
            .iter_mut()
            .zip(command.iter().zip(self.plant.joints()))
        {
            let limit = joint.limits.effort;
            *slot = if self.config.saturate && c.abs() > limit {
                report.saturated += 1;
                c.clamp(-limit, limit)
            } else {
                c
            };
        }
        // The oldest slot is the command from `delay` steps ago (zeros before any).
        let oldest = (self.newest + 1) % slots;
        self.applied.copy_from_slice(&self.pending[oldest]);
        self.previous_qd.copy_from_slice(&self.qd);
        let integrated = match self.config.integrator {
            Integrator::Rk4 => self.rk4(),
            Integrator::SemiImplicitEuler => self.semi_implicit_euler(),
        };
        self.time += self.config.dt;
        if integrated.is_err() || self.runaway() {
            return Err(self.diverged());
        }
        if let Some(backlash) = &mut self.backlash {
            backlash.step_rotors(self.config.dt, &self.applied, &self.qd);
        }
        self.update_sticking();
        self.update_contact_report()?;
        Ok(report)
    }

    /// Whether the state stopped being physical: a non-finite value, or a joint faster than
    /// [`RUNAWAY_FACTOR`] times its velocity limit (at least [`RUNAWAY_SPEED`]).
    fn runaway(&self) -> bool {
        self.q.iter().any(|v| !v.is_finite())
            || self
                .qd
                .iter()
                .zip(self.plant.joints())
                .any(|(v, joint)| v.is_nan() || v.abs() > runaway_speed(joint))
    }

    /// The divergence, naming the joint moving fastest against its runaway speed.
    fn diverged(&self) -> SimError {
        let share = |(v, joint): (&f64, &armctl_model::Joint)| {
            let s = v.abs() / runaway_speed(joint);
            if s.is_nan() {
                f64::INFINITY
            } else {
                s
            }
        };
        let fastest = (0..self.qd.len())
            .max_by(|&a, &b| {
                let joints = self.plant.joints();
                share((&self.qd[a], &joints[a])).total_cmp(&share((&self.qd[b], &joints[b])))
            })
            .unwrap_or(0);
        SimError::Diverged {
            time: self.time,
            joint: self
                .plant
                .joints()
                .get(fastest)
                .map_or_else(String::new, |j| j.name.clone()),
            position: self.q.get(fastest).copied().unwrap_or(f64::NAN),
            velocity: self.qd.get(fastest).copied().unwrap_or(f64::NAN),
        }
    }

    fn semi_implicit_euler(&mut self) -> Result<(), SimError> {
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

    fn rk4(&mut self) -> Result<(), SimError> {
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
    fn acceleration(&mut self, stage: usize) -> Result<(), SimError> {
        self.torque.copy_from_slice(&self.applied);
        self.implicit.fill(0.0);
        mass_matrix(&self.plant, &mut self.ws, &self.stage_q, &mut self.mass)?;
        if self.config.friction {
            self.add_friction(stage)?;
        }
        if self.config.limits.is_some() {
            self.add_limit_springs(stage);
        }
        if let Some(w) = self.config.external_wrench {
            self.add_wrench(&w)?;
        }
        if self.config.scene.is_active() {
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
        self.solve_implicit(stage)
    }

    /// Friction `F(q, qd)` out of `torque`, its velocity slope (times dt) into `implicit`.
    ///
    /// The Coulomb slope is the tangent of the smoothed sign (`c / width` at rest, zero at
    /// speed), raised where needed to a stick clamp: when a step of full Coulomb friction
    /// would reverse the joint (`dt F > M_ii |qd|`), the slope `F / |qd| - M_ii / dt` makes
    /// the friction exactly what stops it in this step (one joint alone), never more. So a
    /// sliding joint decelerates at the Coulomb rate and stops without chattering in sign.
    /// `mass` must hold M at the stage position.
    fn add_friction(&mut self, stage: usize) -> Result<(), SimError> {
        let (dt, width) = (self.config.dt, self.config.coulomb_width);
        let qd = &self.stage_qd[stage];
        let sign = CoulombSign::Smooth { width };
        friction_torques(&self.plant, &self.stage_q, qd, sign, &mut self.friction)?;
        for (i, (joint, &v)) in self.plant.joints().iter().zip(qd).enumerate() {
            let viscous = joint.friction.viscous;
            let coulomb = joint.friction.coulomb_at(self.stage_q[i]);
            if let Some(anchor) = self.anchors[i] {
                // Stuck: the anchor spring replaces the Coulomb friction (limited to the
                // breakaway torque by `update_sticking`), implicit like the limit springs.
                let (k, c) = self.stick_springs[i];
                let past = self.stage_q[i] - anchor;
                self.torque[i] -= viscous * v + k * (past + dt * v) + c * v;
                self.implicit[i] += dt * (viscous + c) + dt * dt * k;
                continue;
            }
            let tangent = coulomb / width / (v / width).cosh().powi(2);
            let clamp = if v == 0.0 {
                0.0
            } else {
                (self.friction[i] - viscous * v) / v - self.mass[(i, i)] / dt
            };
            self.torque[i] -= self.friction[i];
            self.implicit[i] += dt * (viscous + tangent.max(clamp));
        }
        Ok(())
    }

    /// After a step: a stuck joint whose anchor needs more than its breakaway torque slips; a
    /// slipping joint that slowed below `stick_velocity` sticks where it is.
    fn update_sticking(&mut self) {
        let statics = &self.config.joints.static_friction;
        let stick_velocity = self.config.joints.stick_velocity;
        for (i, anchor) in self.anchors.iter_mut().enumerate() {
            let (k, c) = self.stick_springs[i];
            if k == 0.0 {
                continue;
            }
            let (q, qd) = (self.q[i], self.qd[i]);
            match *anchor {
                Some(at) if (k * (q - at) + c * qd).abs() > statics[i] => *anchor = None,
                None if qd.abs() < stick_velocity && qd.abs() <= self.previous_qd[i].abs() => {
                    *anchor = Some(q)
                }
                _ => {}
            }
        }
    }

    /// Per joint, whether it is stuck (static friction holds it; `joints.static_friction`).
    pub fn stuck(&self) -> impl Iterator<Item = bool> + '_ {
        self.anchors.iter().map(Option::is_some)
    }

    /// Past a limit, the spring-damper at the end of the step (`past + dt qd_new`, linearised):
    /// `-k (past + dt qd) - c qd` out of `torque`, `dt c + dt^2 k` into `implicit`.
    fn add_limit_springs(&mut self, stage: usize) {
        let dt = self.config.dt;
        let (q, qd) = (&self.stage_q, &self.stage_qd[stage]);
        let joints = self.plant.joints().iter().zip(&self.limit_springs);
        for ((t, d), ((joint, &(stiffness, damping)), (&qi, &qdi))) in self
            .torque
            .iter_mut()
            .zip(&mut self.implicit)
            .zip(joints.zip(q.iter().zip(qd)))
        {
            let past = if qi > joint.limits.upper {
                qi - joint.limits.upper
            } else if qi < joint.limits.lower {
                qi - joint.limits.lower
            } else {
                continue;
            };
            *t -= stiffness * (past + dt * qdi) + damping * qdi;
            *d += dt * damping + dt * dt * stiffness;
        }
    }

    /// `J^T w` of the external wrench at the stage position into `torque`.
    fn add_wrench(&mut self, w: &Wrench) -> Result<(), SimError> {
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
            *t += self.jacobian.column(j).dot(&wrench);
        }
        Ok(())
    }

    /// Every contact force at the stage state: `J_p^T f` into `torque`, and the dissipative
    /// slopes at the end-of-step velocity, `dt J_p^T D J_p`, into `mass` (module `contact`).
    fn add_contacts(&mut self, stage: usize) -> Result<(), SimError> {
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
                    *t += j.column(a).dot(&contact.force);
                }
                for a in 0..j.ncols() {
                    let row = contact.damping.transpose() * j.column(a) * dt;
                    for b in 0..j.ncols() {
                        self.mass[(a, b)] += row.dot(&j.column(b));
                    }
                }
            }
        }
        Ok(())
    }

    /// The contact forces and the sensor's reading at the current state, for reports.
    fn update_contact_report(&mut self) -> Result<(), SimError> {
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

    /// `stage_qdd[stage] = (M + diag(implicit))^-1 (torque - C qd - G)` in the preallocated
    /// buffers, `mass` holding M. The added diagonal is not negative, so the matrix stays
    /// positive definite.
    fn solve_implicit(&mut self, stage: usize) -> Result<(), SimError> {
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

    /// Kinetic plus potential energy of the plant, J (potential zero at the base link origin),
    /// plus the energy stored in the contact springs.
    pub fn energy(&mut self) -> Result<f64, SimError> {
        mass_matrix(&self.plant, &mut self.ws, &self.q, &mut self.mass)?;
        let qd = DVector::from_column_slice(&self.qd);
        let kinetic = 0.5 * qd.dot(&(&self.mass * &qd));
        let poses = forward_kinematics(&self.plant, &mut self.kin, &self.q)?;
        let g = self.plant.gravity();
        let potential: f64 = poses.mdh_frames()[1..]
            .iter()
            .zip(self.plant.links())
            .map(|(pose, link)| -link.mass * g.dot(&(pose * Point3::from(link.com)).coords))
            .sum();
        let scene = &self.config.scene;
        let mut springs = 0.0;
        for point in &scene.points {
            let p = pose_of(&poses, point.frame)? * Point3::from(point.position);
            springs += scene
                .obstacles
                .iter()
                .filter_map(|o| {
                    let (d, _) = o.shape.penetration(&p.coords)?;
                    Some(0.5 * o.stiffness * d * d)
                })
                .sum::<f64>();
        }
        let rotors = self.backlash.as_ref().map_or(0.0, |b| b.energy(&self.q));
        Ok(kinetic + potential + springs + rotors)
    }

    /// Joint `i`'s rotor angle behind its gear's play (`None` without backlash there).
    pub fn rotor_angle(&self, i: usize) -> Option<f64> {
        self.backlash.as_ref()?.rotor_angle(i)
    }
}

/// The pose of `frame` (a scene's frames are on the chain; one past it is a bug, reported).
fn pose_of(poses: &FramePoses<'_>, frame: FrameId) -> Result<IsometryMatrix3<f64>, SimError> {
    poses.get(frame).ok_or_else(|| SimError::InvalidConfig {
        name: "scene",
        reason: format!("{frame:?} is past the chain's last frame"),
    })
}

/// `J qd` of a point's linear Jacobian (allocates nothing).
fn point_velocity(jacobian: &Matrix3xX<f64>, qd: &[f64]) -> Vector3<f64> {
    jacobian
        .column_iter()
        .zip(qd)
        .fold(Vector3::zeros(), |v, (column, &rate)| v + column * rate)
}

/// Refuses a contact spring the step cannot resolve: `sqrt(k / m) dt` above 1 for a point's
/// lightest effective mass m at `q0` (the spring is integrated explicitly; RK4 loses stability
/// near 2.8, and m changes with the configuration).
fn check_contact_stiffness(plant: &Robot, q0: &[f64], config: &SimConfig) -> Result<(), SimError> {
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

/// How far a stuck joint's anchor gives at its breakaway torque, rad (m): stiff enough to hold
/// the joint still, integrated implicitly so any stiffness is stable.
const STICK_DEFLECTION: f64 = 1e-4;

/// Per joint, the anchor spring of stiction: stiffness `f_s / STICK_DEFLECTION`, critically
/// damped on `M_ii` at the middle of the range; zeros without stiction. Refuses a static
/// friction below the joint's Coulomb friction, naming it.
fn stick_springs(plant: &Robot, config: &SimConfig) -> Result<Vec<(f64, f64)>, SimError> {
    let n = plant.dof();
    let statics = &config.joints.static_friction;
    if statics.is_empty() {
        return Ok(vec![(0.0, 0.0); n]);
    }
    check_length("static_friction", n, statics.len())?;
    if !config.friction && statics.iter().any(|&f| f > 0.0) {
        return Err(SimError::InvalidConfig {
            name: "static_friction",
            reason: "needs friction on".into(),
        });
    }
    let mut m = DMatrix::zeros(n, n);
    mass_matrix(
        plant,
        &mut DynamicsWorkspace::new(plant),
        &plant.middle_configuration(),
        &mut m,
    )?;
    plant
        .joints()
        .iter()
        .zip(statics)
        .enumerate()
        .map(|(i, (joint, &f_s))| {
            let peak = joint.friction.coulomb + joint.friction.ripple_bound();
            if f_s > 0.0 && f_s < peak {
                return Err(SimError::InvalidConfig {
                    name: "static_friction",
                    reason: format!(
                        "joint '{}': {f_s} is below its Coulomb friction {peak} (at its highest over the position; breakaway takes at least the sliding friction)",
                        joint.name
                    ),
                });
            }
            let k = f_s / STICK_DEFLECTION;
            Ok((k, 2.0 * (k * m[(i, i)]).sqrt()))
        })
        .collect()
}
