//! Two arms holding one rigid object: each tool is coupled to a grasp frame on the object by a
//! stiff 6-D spring-damper, so the grasp's internal (squeezing) force and the object's motion
//! are simulated.
//!
//! Per step, with the state at its start: the coupling of arm a is
//!
//! ```text
//! F_a = k (p_g - p_t) + c (v_g - v_t),   M_a = k_r e_R + c_r (w_g - w_t)
//! ```
//!
//! on the tool (world axes, moment about the tool point), with `p_t, v_t, w_t` the tool's
//! position and velocity, `p_g, v_g, w_g` the grasp frame's (fixed on the object where the tool
//! was at the start, so the couplings start relaxed) and `e_R = 1/2 sum r_t,i x r_g,i` the
//! orientation error. The object gets `-F_a` at the tool point and `-M_a`. Each arm steps with
//! its coupling as the wrench on its tip (its own integrator, the wrench held over the step);
//! the object steps with gravity and the couplings by semi-implicit Euler. The couplings are
//! explicit across the bodies: `sqrt(k / m) dt` must stay well below 1 for the object's mass
//! m (checked at start), and each coupling is critically damped on the object's mass and
//! inertia.

use armctl_control::orientation_error;
use armctl_dynamics::Wrench;
use armctl_model::{forward_kinematics, jacobian, FrameId, KinematicsWorkspace};
use nalgebra::{IsometryMatrix3, Matrix3, Matrix6xX, Rotation3, Translation3, Vector3};

use crate::{SimError, Simulator};

/// The held object.
#[derive(Debug, Clone, PartialEq)]
pub struct HeldObject {
    /// Mass, kg.
    pub mass: f64,
    /// Inertia about the centre of mass, object axes, kg m^2.
    pub inertia: Matrix3<f64>,
    /// Pose of its centre-of-mass frame in the world at the start.
    pub pose: IsometryMatrix3<f64>,
}

/// The couplings' stiffness (damping: critical on the object).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GraspStiffness {
    /// N/m.
    pub linear: f64,
    /// N m/rad.
    pub angular: f64,
}

impl Default for GraspStiffness {
    fn default() -> Self {
        Self {
            linear: 2e4,
            angular: 200.0,
        }
    }
}

/// An arm of the pair: its simulator and where its base link is in the world.
#[derive(Debug)]
pub struct PlacedArm {
    /// The arm.
    pub sim: Simulator,
    /// Pose of its base link frame in the world.
    pub base: IsometryMatrix3<f64>,
}

/// A coupling's force and moment on the tool, and the tool point they act at (world).
struct Coupling {
    force: Vector3<f64>,
    moment: Vector3<f64>,
    at: Vector3<f64>,
}

/// A tool's pose and velocity (world).
#[derive(Debug, Clone, Copy)]
struct ToolState {
    pose: IsometryMatrix3<f64>,
    velocity: Vector3<f64>,
    angular: Vector3<f64>,
}

/// Two arms and the object they hold.
#[derive(Debug)]
pub struct CooperativeSimulator {
    arms: [PlacedArm; 2],
    object: HeldObject,
    velocity: Vector3<f64>,
    angular: Vector3<f64>,
    /// Each tool's pose in the object frame (the grasp frames).
    grasps: [IsometryMatrix3<f64>; 2],
    stiffness: GraspStiffness,
    damping: (f64, f64),
    gravity: Vector3<f64>,
    kin: [KinematicsWorkspace; 2],
    jac: [Matrix6xX<f64>; 2],
    /// The couplings' wrenches on the tools at the start of the last step, `(F, M)`, world.
    couplings: [(Vector3<f64>, Vector3<f64>); 2],
}

/// Each tool's mobility `J M^-1 J^T` (6 x 6, base axes: the eigenvalues do not depend on the
/// axes) at the start.
fn mobilities(arms: &[PlacedArm; 2]) -> Result<Vec<nalgebra::Matrix6<f64>>, SimError> {
    arms.iter()
        .map(|arm| {
            let (robot, q) = (arm.sim.plant(), arm.sim.q());
            let n = robot.dof();
            let mut m = nalgebra::DMatrix::zeros(n, n);
            let mut ws = armctl_dynamics::DynamicsWorkspace::new(robot);
            armctl_dynamics::mass_matrix(robot, &mut ws, q, &mut m)?;
            let mut j = Matrix6xX::zeros(n);
            jacobian(
                robot,
                &mut KinematicsWorkspace::new(robot),
                q,
                FrameId::Tip,
                &mut j,
            )?;
            let cholesky = m.cholesky().ok_or(SimError::NonFinite {
                what: "mass matrix",
            })?;
            let mobility = &j * cholesky.solve(&j.transpose());
            Ok(nalgebra::Matrix6::from_fn(|r, c| mobility[(r, c)]))
        })
        .collect()
}

/// The largest rate `lambda_max(W^1/2 A W^1/2)` a 6-D coupling of weights `(linear, angular)`
/// gives on a body of mobility `A`: with stiffnesses, the square of its fastest frequency; with
/// dampings, its fastest decay rate.
fn fastest(mobility: &nalgebra::Matrix6<f64>, linear: f64, angular: f64) -> f64 {
    let w =
        nalgebra::Vector6::new(linear, linear, linear, angular, angular, angular).map(f64::sqrt);
    let scaled = nalgebra::Matrix6::from_fn(|r, c| w[r] * mobility[(r, c)] * w[c]);
    scaled.symmetric_eigenvalues().max()
}

/// The object's mobility: `1/m` and the inverse inertia (object axes; only eigenvalues used).
fn object_mobility(object: &HeldObject) -> Result<nalgebra::Matrix6<f64>, SimError> {
    let inverse = object.inertia.try_inverse().ok_or(SimError::NonFinite {
        what: "object inertia",
    })?;
    let mut a = nalgebra::Matrix6::zeros();
    a.fixed_view_mut::<3, 3>(0, 0)
        .copy_from(&(Matrix3::identity() / object.mass));
    a.fixed_view_mut::<3, 3>(3, 3).copy_from(&inverse);
    Ok(a)
}

impl CooperativeSimulator {
    /// The arms as they are, holding `object` where their tools are now; gravity is the first
    /// arm's, turned into the world by its base.
    pub fn new(
        arms: [PlacedArm; 2],
        object: HeldObject,
        stiffness: GraspStiffness,
    ) -> Result<Self, SimError> {
        let valid = object.mass.is_finite()
            && object.mass > 0.0
            && object.inertia.iter().all(|v| v.is_finite())
            && object.inertia.symmetric_eigenvalues().min() > 0.0
            && stiffness.linear.is_finite()
            && stiffness.linear > 0.0
            && stiffness.angular.is_finite()
            && stiffness.angular > 0.0;
        if !valid {
            return Err(SimError::InvalidConfig {
                name: "object",
                reason: "mass and inertia must be positive definite and finite, the couplings' stiffness positive".into(),
            });
        }
        let dt = arms[0].sim.config().dt;
        let mut bodies = mobilities(&arms)?;
        bodies.push(object_mobility(&object)?);
        let (k, k_r) = (stiffness.linear, stiffness.angular);
        let omega_dt = bodies
            .iter()
            .map(|a| fastest(a, k, k_r).sqrt() * dt)
            .fold(0.0, f64::max);
        if omega_dt > 0.5 {
            return Err(SimError::InvalidConfig {
                name: "object",
                reason: format!(
                    "the couplings are too stiff at dt = {dt} s for the bodies they join (the fastest mode at the start has omega dt = {omega_dt:.2}; keep it below 0.5: lower the stiffness or dt)"
                ),
            });
        }
        // Critical damping of the object's own modes, lowered until the fastest decay of any
        // body is what an explicit step damps stably (rate dt at most 0.5).
        let object_mass = object.mass;
        let object_inertia = object.inertia.symmetric_eigenvalues().min();
        let critical = (
            2.0 * (k * object_mass).sqrt(),
            2.0 * (k_r * object_inertia).sqrt(),
        );
        let rate = bodies
            .iter()
            .map(|a| fastest(a, critical.0, critical.1) * dt)
            .fold(0.0, f64::max);
        let scale = (0.5 / rate).min(1.0);
        let damping = (critical.0 * scale, critical.1 * scale);
        let gravity = arms[0].base.rotation * arms[0].sim.plant().gravity();
        let kin = [
            KinematicsWorkspace::new(arms[0].sim.plant()),
            KinematicsWorkspace::new(arms[1].sim.plant()),
        ];
        let jac = [
            Matrix6xX::zeros(arms[0].sim.plant().dof()),
            Matrix6xX::zeros(arms[1].sim.plant().dof()),
        ];
        let mut sim = Self {
            arms,
            velocity: Vector3::zeros(),
            angular: Vector3::zeros(),
            grasps: [IsometryMatrix3::identity(); 2],
            object,
            stiffness,
            damping,
            gravity,
            kin,
            jac,
            couplings: [(Vector3::zeros(), Vector3::zeros()); 2],
        };
        for a in 0..2 {
            let tool = sim.tool(a)?;
            sim.grasps[a] = sim.object.pose.inverse() * tool.pose;
        }
        Ok(sim)
    }

    /// Arm `a` (0 or 1).
    pub fn arm(&self, a: usize) -> &PlacedArm {
        &self.arms[a]
    }

    /// Arm `a`'s joint sensors (with its noise, as [`Simulator::measure`]).
    pub fn measure(&mut self, a: usize, q: &mut [f64], qd: &mut [f64]) -> Result<(), SimError> {
        self.arms[a].sim.measure(q, qd)
    }

    /// Simulated time, s.
    pub fn time(&self) -> f64 {
        self.arms[0].sim.time()
    }

    /// The object's centre-of-mass pose in the world.
    pub fn object_pose(&self) -> IsometryMatrix3<f64> {
        self.object.pose
    }

    /// The object's linear and angular velocity (world).
    pub fn object_velocity(&self) -> (Vector3<f64>, Vector3<f64>) {
        (self.velocity, self.angular)
    }

    /// Arm `a`'s coupling wrench on its tool at the start of the last step: force and moment
    /// about the tool point, world axes (the object feels the opposite).
    pub fn coupling(&self, a: usize) -> (Vector3<f64>, Vector3<f64>) {
        self.couplings[a]
    }

    /// The squeeze: how hard the tools press the object together along the line between them
    /// (N; negative: pulled apart), from the couplings of the last step.
    pub fn internal_force(&self) -> f64 {
        let p = |a: usize| (self.object.pose * self.grasps[a]).translation.vector;
        let line = p(1) - p(0);
        let Some(u) = line.try_normalize(1e-9) else {
            return 0.0;
        };
        // On the object: -F_a. Arm 0 pushing along u and arm 1 against it is a squeeze.
        let (on_object_0, on_object_1) = (-self.couplings[0].0, -self.couplings[1].0);
        0.5 * (on_object_0.dot(&u) - on_object_1.dot(&u))
    }

    /// Arm `a`'s tool pose and velocity in the world.
    fn tool(&mut self, a: usize) -> Result<ToolState, SimError> {
        let arm = &self.arms[a];
        let (robot, q, qd) = (arm.sim.plant(), arm.sim.q(), arm.sim.qd());
        let tip = forward_kinematics(robot, &mut self.kin[a], q)?.tip();
        jacobian(robot, &mut self.kin[a], q, FrameId::Tip, &mut self.jac[a])?;
        let twist = self.jac[a]
            .column_iter()
            .zip(qd)
            .fold(nalgebra::Vector6::zeros(), |t, (column, &rate)| {
                t + column * rate
            });
        let rotation = arm.base.rotation;
        Ok(ToolState {
            pose: arm.base * tip,
            velocity: rotation * Vector3::new(twist[0], twist[1], twist[2]),
            angular: rotation * Vector3::new(twist[3], twist[4], twist[5]),
        })
    }

    /// Arm `a`'s coupling on its tool, and where it acts.
    fn coupling_at(&mut self, a: usize) -> Result<Coupling, SimError> {
        let tool = self.tool(a)?;
        let grasp = self.object.pose * self.grasps[a];
        let (p_o, p_g, p_t) = (
            self.object.pose.translation.vector,
            grasp.translation.vector,
            tool.pose.translation.vector,
        );
        let v_g = self.velocity + self.angular.cross(&(p_g - p_o));
        let (k, k_r) = (self.stiffness.linear, self.stiffness.angular);
        let (c, c_r) = self.damping;
        let force = (p_g - p_t) * k + (v_g - tool.velocity) * c;
        let moment = orientation_error(tool.pose.rotation.matrix(), grasp.rotation.matrix()) * k_r
            + (self.angular - tool.angular) * c_r;
        Ok(Coupling {
            force,
            moment,
            at: p_t,
        })
    }

    /// One step: `commands[a]` are arm a's joint efforts.
    pub fn step(&mut self, commands: [&[f64]; 2]) -> Result<(), SimError> {
        let dt = self.arms[0].sim.config().dt;
        let (mut force, mut moment) = (self.gravity * self.object.mass, Vector3::zeros());
        for a in 0..2 {
            let Coupling {
                force: f,
                moment: m,
                at,
            } = self.coupling_at(a)?;
            self.couplings[a] = (f, m);
            force -= f;
            moment -= m + (at - self.object.pose.translation.vector).cross(&f);
            let into_base = self.arms[a].base.rotation.inverse();
            self.arms[a].sim.set_external_wrench(Some(Wrench {
                force: into_base * f,
                torque: into_base * m,
            }))?;
        }
        for (arm, command) in self.arms.iter_mut().zip(commands) {
            arm.sim.step(command)?;
        }
        self.step_object(force, moment, dt)
    }

    /// Semi-implicit Euler of the free body under `force` (at the centre of mass) and `moment`.
    fn step_object(
        &mut self,
        force: Vector3<f64>,
        moment: Vector3<f64>,
        dt: f64,
    ) -> Result<(), SimError> {
        let rotation = self.object.pose.rotation;
        let inertia = rotation * self.object.inertia * rotation.transpose();
        let gyroscopic = self.angular.cross(&(inertia * self.angular));
        let angular_acceleration = inertia
            .try_inverse()
            .map(|inv| inv * (moment - gyroscopic))
            .ok_or(SimError::NonFinite {
                what: "object inertia",
            })?;
        self.velocity += force / self.object.mass * dt;
        self.angular += angular_acceleration * dt;
        let position = self.object.pose.translation.vector + self.velocity * dt;
        let turned = Rotation3::new(self.angular * dt) * rotation;
        self.object.pose = IsometryMatrix3::from_parts(Translation3::from(position), turned);
        let finite = position
            .iter()
            .chain(self.velocity.iter())
            .chain(self.angular.iter())
            .all(|v| v.is_finite());
        if !finite {
            return Err(SimError::NonFinite {
                what: "object state",
            });
        }
        Ok(())
    }
}
