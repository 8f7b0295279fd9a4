//! The simulated arm: joint state, one fixed step at a time.
//!
//! Per step the command is checked, saturated at the effort limits, delayed, and the state is
//! integrated with `qdd = M^-1 (tau - F(qd) + tau_limits + J^T w - C qd - G)` (forward dynamics
//! of the plant, which may differ from the controller's model). The stiff passive torques
//! (friction, limit springs) act at the end-of-step velocity, linearised, so the solve is with
//! `M + dt D + dt^2 K` (see `acceleration`): stable for any damping at any step.
//!
//! The integrators and each stage's accelerations are in `integrator.rs`, friction with stiction
//! and the limit springs in `passive_torques.rs`, contacts, the external wrench and the
//! force/torque sensor in `contact_forces.rs`; this file is the state, the step and the checks.

mod contact_forces;
mod integrator;
mod passive_torques;

use contact_forces::{check_contact_stiffness, pose_of};
use passive_torques::{limit_springs, stick_springs};

use armctl_dynamics::{
    cholesky_in_place, cholesky_solve_in_place, friction_torques, gravity_torques, mass_matrix,
    nonlinear_effects, CoulombSign, DynamicsWorkspace, Wrench,
};
use armctl_model::{
    check_length, forward_kinematics, jacobian, point_jacobian, FrameId, FramePoses,
    KinematicsWorkspace, Robot, RobotParts,
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
    /// Per integration stage, the joint torques of the contacts and the external wrench as
    /// they act in that stage (the implicit contact damping included), and the contacts'
    /// implicit slopes `dt J^T D J` of the stage.
    stage_external: [Vec<f64>; 4],
    contact_slopes: DMatrix<f64>,
    /// The same over the last step, weighted as the integrator weights its stages: the truth
    /// an external torque estimate is measured against.
    external_torques: Vec<f64>,
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
    let robot = Robot::new(parts)?;
    Ok(match mismatch.payload {
        Some(p) => robot.with_payload(&p)?,
        None => robot,
    })
}

/// `plant` with the settings' viscous and Coulomb friction in place of its URDF's, where given.
fn with_plant_friction(plant: Robot, config: &SimConfig) -> Result<Robot, SimError> {
    let j = &config.joints;
    if j.viscous.is_empty() && j.coulomb.is_empty() {
        return Ok(plant);
    }
    let n = plant.dof();
    let bad = |name: &'static str, reason: String| SimError::InvalidConfig { name, reason };
    if !config.friction {
        return Err(bad("viscous, coulomb", "need friction on".into()));
    }
    for (name, values) in [("viscous", &j.viscous), ("coulomb", &j.coulomb)] {
        if !values.is_empty() && values.len() != n {
            return Err(bad(name, format!("{} values for {n} joints", values.len())));
        }
    }
    let or_urdf = |given: &[f64], urdf: fn(&armctl_model::Friction) -> f64| -> Vec<f64> {
        if given.is_empty() {
            plant
                .joints()
                .iter()
                .map(|joint| urdf(&joint.friction))
                .collect()
        } else {
            given.to_vec()
        }
    };
    let viscous = or_urdf(&j.viscous, |f| f.viscous);
    let coulomb = or_urdf(&j.coulomb, |f| f.coulomb);
    plant
        .with_friction(&viscous, &coulomb)
        .map_err(|e| bad("viscous, coulomb", e.to_string()))
}

/// `plant` with the settings' friction ripple and offset in place of its own, where given.
fn with_plant_friction_shape(mut plant: Robot, config: &SimConfig) -> Result<Robot, SimError> {
    let j = &config.joints;
    let needs_friction = |name: &'static str| SimError::InvalidConfig {
        name,
        reason: "needs friction on".into(),
    };
    if !j.friction_ripple.is_empty() {
        if !config.friction {
            return Err(needs_friction("friction_ripple"));
        }
        plant = plant.with_friction_ripple(&j.friction_ripple)?;
    }
    if !j.friction_offset.is_empty() {
        if !config.friction {
            return Err(needs_friction("friction_offset"));
        }
        plant = plant
            .with_friction_offset(&j.friction_offset)
            .map_err(|e| SimError::InvalidConfig {
                name: "friction_offset",
                reason: e.to_string(),
            })?;
    }
    Ok(plant)
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
        plant = with_plant_friction_shape(with_plant_friction(plant, &config)?, &config)?;
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
            external_torques: zeros.clone(),
            stage_external: std::array::from_fn(|_| zeros.clone()),
            contact_slopes: DMatrix::zeros(n, n),
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
        self.update_external_torques();
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
