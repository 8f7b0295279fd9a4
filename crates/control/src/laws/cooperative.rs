//! Cooperative control of two arms holding one rigid object (docs/theory.md section 9): the
//! object's pose follows a reference, the load is shared between the arms, and the internal
//! (squeezing) force between the grasps is held at a set point.
//!
//! Both arms are copies of one model; arm a's base link sits at `B_a` in the world. The object
//! frame starts midway between the tools, with the world's axes, and the grasps `G_a` (each
//! tool in the object frame) are taken then; the object's centre of mass is assumed there.
//! At each step, with `T_a = B_a FK(q_a)` and the tools' world twists:
//!
//! ```text
//! object estimate   p = mean(p_a),  R = midpoint of R_a  (T_a G_a^-1 = (R_a, p_a)),
//!                   w = mean(w_a),  v = mean(v_a - w x (p_t,a - p))
//! object law        a* = a_d + Kd (V_d - V) + Kp e,   e = [p_d - p; e_o(R, R_d)]
//! object wrench     F = m (a*_v - g),  N = I_w a*_w + w x I_w w     (at the centre, world)
//! load sharing      h = W^T (W W^T)^-1 [F; N] + f_I [u; 0; -u; 0],  W_a = [I 0; [r_a]x I]
//! tool acceleration xdd_a = [a*_v + a*_w x r_a + w x (w x r_a); a*_w]
//! arm a             qdd_a = J_a# (xdd_a - Jdot_a qd_a)  (+ damped self-motion)
//!                   tau_a = RNEA(q_a, qd_a, qdd_a) + J_a^T h_a
//! ```
//!
//! with `r_a = p_t,a - p`, `u` the unit vector from tool 0 to tool 1, and `h_a` the wrench
//! arm a applies to the object (moment about its tool point; turned into the arm's base axes
//! before `J_a^T`). `W^T (W W^T)^-1` is the minimum-norm load share (equal when the grasps are
//! symmetric about the centre) and has no internal part; the internal part `f_I` lies in the
//! null space of `W` (the two pushes cancel, their moments too since `r_1 - r_0` is along
//! `u`). Claim: with an exact model and a rigid grasp, the object's error obeys
//! `edd + Kd ed + Kp e = 0` and the grasps squeeze with `f_I`. Without a wrist sensor the
//! internal force is not measured: it is feed-forward, held by the grasp's own stiffness.

use armctl_model::Robot;
use nalgebra::{
    IsometryMatrix3, Matrix3, Matrix6, Rotation3, Translation3, UnitQuaternion, Vector3, Vector6,
};

use crate::law_support::gains::cartesian_gain;
use crate::law_support::model_terms::ModelTerms;
use crate::law_support::tip_target::{orientation_error, TipTarget};
use crate::reference::{PoseInterpolation, PoseSample};
use crate::{Array, ControlError, Declaration, JointState, ParameterSet, ParameterValue, Scalar};

/// One arm's model, measurement and scratch.
#[derive(Debug, Clone)]
struct ArmTerms {
    model: ModelTerms,
    tip: TipTarget,
    /// Base link pose in the world.
    base: IsometryMatrix3<f64>,
    acceleration: Vec<f64>,
    self_motion: Vec<f64>,
}

/// A tool's world pose and twist, measured.
#[derive(Debug, Clone, Copy)]
struct Tool {
    pose: IsometryMatrix3<f64>,
    velocity: Vector3<f64>,
    angular: Vector3<f64>,
}

/// The object's estimated pose and velocity (world).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ObjectState {
    /// Pose of the object frame.
    pub pose: IsometryMatrix3<f64>,
    /// Linear velocity of its origin.
    pub velocity: Vector3<f64>,
    /// Angular velocity.
    pub angular: Vector3<f64>,
}

/// The wrenches `[f; m]` the two arms apply to the object (moments about their tool points,
/// world axes) that give the object wrench `wrench` (`[F; N]` about its centre) with the least
/// norm, plus the squeeze `internal` along `u` (unit, tool 0 to tool 1). `r` are the tool
/// points relative to the centre.
pub fn share_load(
    wrench: &Vector6<f64>,
    r: [Vector3<f64>; 2],
    u: &Vector3<f64>,
    internal: f64,
) -> Result<[Vector6<f64>; 2], ControlError> {
    let mut wwt = Matrix6::zeros();
    for r in &r {
        let s = r.cross_matrix();
        let mut block = Matrix6::identity();
        block.fixed_view_mut::<3, 3>(0, 3).copy_from(&(-s));
        block.fixed_view_mut::<3, 3>(3, 0).copy_from(&s);
        block
            .fixed_view_mut::<3, 3>(3, 3)
            .copy_from(&(Matrix3::identity() - s * s));
        wwt += block;
    }
    let lambda = wwt
        .cholesky()
        .ok_or_else(|| ControlError::InvalidReference {
            reason: "the grasp matrix is singular".into(),
        })?
        .solve(wrench);
    let (force, moment) = (lambda.fixed_rows::<3>(0), lambda.fixed_rows::<3>(3));
    let sign = [1.0, -1.0];
    Ok(std::array::from_fn(|a| {
        let f = force + moment.cross(&r[a]) + u * (sign[a] * internal);
        Vector6::new(f.x, f.y, f.z, moment[0], moment[1], moment[2])
    }))
}

/// Two arms moving one held object (see the module doc).
#[derive(Debug, Clone)]
pub struct Cooperative {
    parameters: ParameterSet,
    arms: [ArmTerms; 2],
    /// Gravity in the world (the first arm's, turned by its base).
    gravity: Vector3<f64>,
    /// Each tool in the object frame, taken at the first start.
    grasps: Option<[IsometryMatrix3<f64>; 2]>,
    target: PoseInterpolation,
    elapsed: f64,
    object: ObjectState,
    desired: PoseSample,
    kp: Array,
    kd: Array,
    mass: Scalar,
    inertia: Array,
    internal_force: Scalar,
    pinv_damping: Scalar,
    nullspace_damping: Scalar,
    max_speed: Scalar,
    max_turn_rate: Scalar,
    singularity_margin: Scalar,
    /// Each arm's smallest singular value of J at the last update.
    sigma_min: [f64; 2],
    /// The arm whose reach stopped the last move, and its smallest singular value (once).
    stopped: Option<(usize, f64)>,
}

/// The smallest singular value of J from `gram = J J^T` where it is below `margin`, else
/// `margin` itself: a lower bound, enough to tell a later fall below it. Whether
/// `J J^T - margin^2 I` has a Cholesky factor decides it in a fraction of an eigenvalue
/// problem's time, which is left for the rare steps near the edge of the reach. A J that is
/// not finite counts as singular (0).
fn smallest_singular_value_below(gram: Matrix6<f64>, margin: f64) -> f64 {
    if !gram.iter().all(|x| x.is_finite()) {
        return 0.0;
    }
    let shifted = gram - Matrix6::from_diagonal_element(margin * margin);
    if margin <= 0.0 || shifted.cholesky().is_some() {
        return margin;
    }
    gram.symmetric_eigenvalues().min().max(0.0).sqrt()
}

/// Peak speed of the quintic time law over its mean speed.
const QUINTIC_PEAK: f64 = 1.875;

impl Cooperative {
    /// Two copies of `robot`, their base links at `bases` in the world. Object-level
    /// `Kp = 400`, `Kd = 40` (1/s^2, 1/s), no object mass or squeeze until set.
    pub fn new(robot: &Robot, bases: [IsometryMatrix3<f64>; 2]) -> Result<Self, ControlError> {
        let n = robot.dof();
        let mut parameters = ParameterSet::new(n);
        let mut cartesian = |name, description, value: f64| {
            parameters.declare_array(cartesian_gain(name, vec![value; 6], description, 1e6))
        };
        let kp = cartesian(
            "kp",
            "Object stiffness of the error dynamics [x y z rx ry rz], 1/s^2.",
            400.0,
        )?;
        let kd = cartesian(
            "kd",
            "Object damping of the error dynamics [x y z rx ry rz], 1/s.",
            40.0,
        )?;
        let mass = parameters.declare_scalar(
            Declaration::double("object_mass", 0.0, "Mass of the held object, kg.").range(0.0, 1e3),
        )?;
        let inertia = parameters.declare_array(
            Declaration::double_array(
                "object_inertia",
                vec![0.0; 3],
                "Principal moments of inertia of the object about its centre, object axes [xx yy zz], kg m^2.",
            )
            .length(3)
            .range(0.0, 1e3),
        )?;
        let internal_force = parameters.declare_scalar(
            Declaration::double(
                "internal_force",
                0.0,
                "Squeeze between the grasps along the line between the tools, N (negative: pull apart).",
            )
            .range(-1e3, 1e3),
        )?;
        let mut scalar = |name, description, value: f64| {
            parameters.declare_scalar(Declaration::double(name, value, description).range(0.0, 1e4))
        };
        let pinv_damping = scalar(
            "pinv_damping",
            "Damping l of each arm's pseudo-inverse (m); small where J is far from singular.",
            1e-3,
        )?;
        let nullspace_damping = scalar(
            "nullspace_damping",
            "Damping of each redundant arm's self-motion k_n, 1/s.",
            10.0,
        )?;
        let mut limit = |name, description, value: f64| {
            parameters
                .declare_scalar(Declaration::double(name, value, description).range(1e-3, 10.0))
        };
        let max_speed = limit(
            "max_object_speed",
            "Fastest the object's reference moves, m/s: a target is reached no sooner than this allows.",
            0.25,
        )?;
        let max_turn_rate = limit(
            "max_object_turn_rate",
            "Fastest the object's reference turns, rad/s: a target is reached no sooner than this allows.",
            0.5,
        )?;
        let singularity_margin = parameters.declare_scalar(
            Declaration::double(
                "singularity_margin",
                0.08,
                "A move stops where either arm's tip Jacobian's smallest singular value falls below this while falling (the arm nears the edge of its reach or a singularity); 0: never.",
            )
            .range(0.0, 1.0),
        )?;
        let arm = |base| ArmTerms {
            model: ModelTerms::new(robot),
            tip: TipTarget::new(robot),
            base,
            acceleration: vec![0.0; n],
            self_motion: vec![0.0; n],
        };
        let hold = PoseInterpolation::hold(IsometryMatrix3::identity());
        Ok(Self {
            parameters,
            gravity: bases[0].rotation * robot.gravity(),
            arms: [arm(bases[0]), arm(bases[1])],
            grasps: None,
            desired: hold.sample(0.0),
            target: hold,
            elapsed: 0.0,
            object: ObjectState {
                pose: IsometryMatrix3::identity(),
                velocity: Vector3::zeros(),
                angular: Vector3::zeros(),
            },
            kp,
            kd,
            mass,
            inertia,
            internal_force,
            pinv_damping,
            nullspace_damping,
            max_speed,
            max_turn_rate,
            singularity_margin,
            sigma_min: [f64::INFINITY; 2],
            stopped: None,
        })
    }

    /// The law's name, as in configuration files.
    pub const NAME: &'static str = "cooperative";

    /// The law's name, as in configuration files.
    pub fn name(&self) -> &'static str {
        Self::NAME
    }

    /// The declared parameters and their values.
    pub fn parameters(&self) -> &ParameterSet {
        &self.parameters
    }

    /// The parameters, to change them or their ramp.
    pub fn parameters_mut(&mut self) -> &mut ParameterSet {
        &mut self.parameters
    }

    /// Changes a parameter (refused with a reason, the old value kept, when invalid).
    pub fn set_parameter(&mut self, name: &str, value: ParameterValue) -> Result<(), ControlError> {
        self.parameters.set(name, value)
    }

    /// The object's estimate at the last update (or start).
    pub fn object(&self) -> &ObjectState {
        &self.object
    }

    /// The object's reference at the last update.
    pub fn desired(&self) -> &PoseSample {
        &self.desired
    }

    /// Arm `a`'s tool pose and twist in the world at `state`.
    fn tool(&mut self, a: usize, state: &JointState<'_>) -> Result<Tool, ControlError> {
        let arm = &mut self.arms[a];
        arm.tip.measure(&arm.model.robot, state.q)?;
        let twist = arm.tip.times(state.qd);
        let turn = arm.base.rotation;
        Ok(Tool {
            pose: arm.base * arm.tip.pose,
            velocity: turn * twist.fixed_rows::<3>(0),
            angular: turn * twist.fixed_rows::<3>(3),
        })
    }

    /// Starts from `states`: at the first start takes the grasps (the object frame midway
    /// between the tools, world axes); holds the object where it is now.
    pub fn restart(&mut self, states: [&JointState<'_>; 2]) -> Result<(), ControlError> {
        self.parameters.settle();
        let tools = [self.tool(0, states[0])?, self.tool(1, states[1])?];
        if self.grasps.is_none() {
            let middle =
                (tools[0].pose.translation.vector + tools[1].pose.translation.vector) / 2.0;
            let object =
                IsometryMatrix3::from_parts(Translation3::from(middle), Rotation3::identity());
            self.grasps = Some(tools.map(|t| object.inverse() * t.pose));
        }
        self.object = self.estimate(&tools)?;
        self.sigma_min = [f64::INFINITY; 2];
        self.target = PoseInterpolation::hold(self.object.pose);
        self.elapsed = 0.0;
        self.desired = self.target.sample(0.0);
        Ok(())
    }

    /// Moves the object to `goal` (world) from the target in effect now, in `duration`
    /// seconds or, when that is faster than `max_object_speed` and `max_object_turn_rate`
    /// allow, in the time they allow; returns the time taken.
    pub fn set_object_target(
        &mut self,
        goal: IsometryMatrix3<f64>,
        duration: f64,
    ) -> Result<f64, ControlError> {
        if self.grasps.is_none() {
            return Err(ControlError::InvalidReference {
                reason: "the object is not grasped yet (no joint states of both arms)".into(),
            });
        }
        let now = self.target.sample(self.elapsed).pose;
        let distance = (goal.translation.vector - now.translation.vector).norm();
        let turn =
            UnitQuaternion::from_rotation_matrix(&(goal.rotation * now.rotation.inverse())).angle();
        let p = &self.parameters;
        let slowest = (QUINTIC_PEAK * distance / p[self.max_speed])
            .max(QUINTIC_PEAK * turn / p[self.max_turn_rate]);
        let duration = if duration.is_finite() {
            duration.max(slowest)
        } else {
            duration
        };
        self.target = PoseInterpolation::new(now, goal, duration)?;
        self.elapsed = 0.0;
        Ok(duration)
    }

    /// The arm (0 or 1) whose reach stopped the last move and its smallest singular value,
    /// once.
    pub fn take_reach_stop(&mut self) -> Option<(usize, f64)> {
        self.stopped.take()
    }

    /// Stops a move where an arm's smallest singular value falls below `singularity_margin`
    /// (after the tools were measured): the reference holds where it is.
    fn guard_reach(&mut self) {
        // Only during a move; the first step of a move only records where it starts.
        if !self.moving() {
            self.sigma_min = [f64::INFINITY; 2];
            return;
        }
        let margin = self.parameters[self.singularity_margin];
        for a in 0..2 {
            let sigma = smallest_singular_value_below(self.arms[a].tip.damped_gram(0.0), margin);
            let falling = self.sigma_min[a].is_finite() && sigma < self.sigma_min[a];
            self.sigma_min[a] = sigma;
            if self.moving() && falling && sigma < margin {
                self.target = PoseInterpolation::hold(self.desired.pose);
                self.elapsed = 0.0;
                self.desired = self.target.sample(0.0);
                self.stopped = Some((a, sigma));
            }
        }
    }

    /// Whether the object's reference is still moving towards a target.
    pub fn moving(&self) -> bool {
        self.elapsed < self.target.duration()
    }

    /// The object's pose and velocity from the tools through the grasps.
    fn estimate(&self, tools: &[Tool; 2]) -> Result<ObjectState, ControlError> {
        let grasps = self.grasps.ok_or_else(|| ControlError::InvalidReference {
            reason: "the object is not grasped yet".into(),
        })?;
        let through = [0, 1].map(|a| tools[a].pose * grasps[a].inverse());
        let position = (through[0].translation.vector + through[1].translation.vector) / 2.0;
        // The midpoint of two rotations: their quaternions' normalised sum, in one hemisphere.
        let [q0, q1] = through.map(|t| UnitQuaternion::from_rotation_matrix(&t.rotation));
        let q1 = if q0.coords.dot(&q1.coords) < 0.0 {
            -q1.into_inner()
        } else {
            q1.into_inner()
        };
        let rotation = UnitQuaternion::new_normalize(q0.into_inner() + q1).to_rotation_matrix();
        let angular = (tools[0].angular + tools[1].angular) / 2.0;
        let velocity = tools
            .iter()
            .map(|t| t.velocity - angular.cross(&(t.pose.translation.vector - position)))
            .sum::<Vector3<f64>>()
            / 2.0;
        Ok(ObjectState {
            pose: IsometryMatrix3::from_parts(Translation3::from(position), rotation),
            velocity,
            angular,
        })
    }

    /// The object's commanded acceleration `[a*_v; a*_w]` (world).
    fn object_acceleration(&self) -> Vector6<f64> {
        let (o, d) = (&self.object, &self.desired);
        let p = d.pose.translation.vector - o.pose.translation.vector;
        let e_o = orientation_error(o.pose.rotation.matrix(), d.pose.rotation.matrix());
        let error = Vector6::new(p.x, p.y, p.z, e_o.x, e_o.y, e_o.z);
        let twist = Vector6::new(
            o.velocity.x,
            o.velocity.y,
            o.velocity.z,
            o.angular.x,
            o.angular.y,
            o.angular.z,
        );
        let (kp, kd) = (&self.parameters[self.kp], &self.parameters[self.kd]);
        Vector6::from_fn(|i, _| {
            d.acceleration[i] + kd[i] * (d.twist[i] - twist[i]) + kp[i] * error[i]
        })
    }

    /// The wrench `[F; N]` (world, about the centre) that gives the object `acceleration`.
    fn object_wrench(&self, acceleration: &Vector6<f64>) -> Vector6<f64> {
        let p = &self.parameters;
        let rotation = self.object.pose.rotation.matrix();
        let inertia = rotation
            * Matrix3::from_diagonal(&Vector3::from_column_slice(&p[self.inertia]))
            * rotation.transpose();
        let w = self.object.angular;
        let force = (acceleration.fixed_rows::<3>(0) - self.gravity) * p[self.mass];
        let moment = inertia * acceleration.fixed_rows::<3>(3) + w.cross(&(inertia * w));
        Vector6::new(force.x, force.y, force.z, moment.x, moment.y, moment.z)
    }

    /// Efforts for both arms at `states`, `dt` seconds after the last update (the object
    /// reference advances by `dt`). The first call restarts when [`Cooperative::restart`] was
    /// not called. Does not allocate.
    pub fn update(
        &mut self,
        states: [&JointState<'_>; 2],
        dt: f64,
        efforts: [&mut [f64]; 2],
    ) -> Result<(), ControlError> {
        if self.grasps.is_none() {
            self.restart(states)?;
        }
        self.parameters.advance(dt);
        self.elapsed += dt;
        self.desired = self.target.sample(self.elapsed);
        let tools = [self.tool(0, states[0])?, self.tool(1, states[1])?];
        self.guard_reach();
        self.object = self.estimate(&tools)?;
        let acceleration = self.object_acceleration();
        let centre = self.object.pose.translation.vector;
        let r = tools.map(|t| t.pose.translation.vector - centre);
        let between = tools[1].pose.translation.vector - tools[0].pose.translation.vector;
        let u = between
            .try_normalize(1e-9)
            .ok_or_else(|| ControlError::InvalidReference {
                reason: "the two tools are at one point".into(),
            })?;
        let internal = self.parameters[self.internal_force];
        let shares = share_load(&self.object_wrench(&acceleration), r, &u, internal)?;
        let (a_v, a_w, w) = (
            acceleration.fixed_rows::<3>(0).into_owned(),
            acceleration.fixed_rows::<3>(3).into_owned(),
            self.object.angular,
        );
        let damping = (
            self.parameters[self.pinv_damping],
            self.parameters[self.nullspace_damping],
        );
        for (a, effort) in efforts.into_iter().enumerate() {
            let tool_acceleration = a_v + a_w.cross(&r[a]) + w.cross(&w.cross(&r[a]));
            self.arm_effort(
                a,
                states[a],
                (&tool_acceleration, &a_w),
                &shares[a],
                damping,
                effort,
            )?;
        }
        Ok(())
    }

    /// Arm `a`'s effort: its tool accelerates as `accelerations` (linear, angular; world) and
    /// applies `share` to the object.
    fn arm_effort(
        &mut self,
        a: usize,
        state: &JointState<'_>,
        accelerations: (&Vector3<f64>, &Vector3<f64>),
        share: &Vector6<f64>,
        damping: (f64, f64),
        effort: &mut [f64],
    ) -> Result<(), ControlError> {
        let arm = &mut self.arms[a];
        let into_base = arm.base.rotation.inverse();
        let (linear, angular) = (into_base * accelerations.0, into_base * accelerations.1);
        let bias = arm.tip.jdot_qd(&arm.model.robot, state.q, state.qd)?;
        // jdot_qd moved the kinematics workspace only; the Jacobian is the one measured.
        let task = Vector6::new(
            linear.x, linear.y, linear.z, angular.x, angular.y, angular.z,
        ) - bias;
        arm.tip.resolve(
            &task,
            state.qd,
            damping,
            &mut arm.self_motion,
            &mut arm.acceleration,
        )?;
        arm.model
            .inverse_dynamics(state, &arm.acceleration, effort)?;
        let force = into_base * share.fixed_rows::<3>(0);
        let moment = into_base * share.fixed_rows::<3>(3);
        let wrench = Vector6::new(force.x, force.y, force.z, moment.x, moment.y, moment.z);
        for (e, column) in effort.iter_mut().zip(arm.tip.jac.column_iter()) {
            *e += column.dot(&wrench);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reach_check_is_exact_below_the_margin_and_a_bound_above() {
        // J J^T with singular values 2, 1, 0.5, 0.2, 0.05, 0.01 in a turned basis.
        let turn = Matrix6::from_fn(|r, c| ((r * 3 + c * 7) as f64 * 0.9).sin())
            .qr()
            .q();
        let sigma = Vector6::new(2.0, 1.0, 0.5, 0.2, 0.05, 0.01);
        let gram = turn * Matrix6::from_diagonal(&sigma.map(|s| s * s)) * turn.transpose();
        assert_eq!(smallest_singular_value_below(gram, 0.005), 0.005);
        assert!((smallest_singular_value_below(gram, 0.08) - 0.01).abs() < 1e-9);
        assert_eq!(smallest_singular_value_below(gram, 0.0), 0.0);
        let mut broken = gram;
        broken[(1, 4)] = f64::NAN;
        assert_eq!(smallest_singular_value_below(broken, 0.08), 0.0);
    }

    /// `W h`: the object wrench of the arms' wrenches.
    fn resultant(h: &[Vector6<f64>; 2], r: [Vector3<f64>; 2]) -> Vector6<f64> {
        let mut total = Vector6::zeros();
        for (h, r) in h.iter().zip(r) {
            let f = h.fixed_rows::<3>(0).into_owned();
            let m = h.fixed_rows::<3>(3) + r.cross(&f);
            total += Vector6::new(f.x, f.y, f.z, m.x, m.y, m.z);
        }
        total
    }

    #[test]
    fn the_load_share_gives_the_wrench_and_the_squeeze_adds_none() {
        let r = [
            Vector3::new(-0.2, 0.01, 0.03),
            Vector3::new(0.2, -0.01, -0.03),
        ];
        let u = (r[1] - r[0]).normalize();
        let wrench = Vector6::new(1.0, -2.0, 19.6, 0.3, -0.1, 0.2);
        let shares = share_load(&wrench, r, &u, 0.0).unwrap();
        assert!((resultant(&shares, r) - wrench).amax() < 1e-12);
        // Symmetric grasps carry a weight equally.
        let force = |h: &Vector6<f64>| h.fixed_rows::<3>(0).into_owned();
        let weight = Vector6::new(0.0, 0.0, 19.6, 0.0, 0.0, 0.0);
        let carried = share_load(&weight, r, &u, 0.0).unwrap();
        assert!((carried[0] - carried[1]).amax() < 1e-12);
        assert!((force(&carried[0]).z - 9.8).abs() < 1e-12);
        let squeezed = share_load(&wrench, r, &u, 10.0).unwrap();
        assert!((resultant(&squeezed, r) - wrench).amax() < 1e-12);
        let pressed = |a: usize| (force(&squeezed[a]) - force(&shares[a])).dot(&u);
        assert!((pressed(0) - 10.0).abs() < 1e-12 && (pressed(1) + 10.0).abs() < 1e-12);
    }
}
