//! Cartesian impedance (docs/theory.md section 6):
//! `F = K_x x_err + D_x (xd_d - xd)`,
//! `tau = J^T F + N (K_n (q_n - q) - D_n qd) + C(q, qd) qd + G(q)`,
//! with J the tip Jacobian (base link axes, `[v; w]`), the position error `p_d - p` and the
//! orientation error `e_o = 1/2 (n x n_d + o x o_d + a x a_d)` (columns of R and R_d), and the
//! nullspace projector `N = I - J^T J#^T`: dynamically consistent
//! `J# = M^-1 J^T (J M^-1 J^T)^-1` (default) or damped `J# = J^T (J J^T + l^2 I)^-1`.
//! Damping is critical from the stiffness and the task-space inertia
//! `Lambda = (J M^-1 J^T)^-1` by double diagonalisation: with `Lambda = Q Q^T` and
//! `K = Q diag(k0) Q^T`, `D = Q diag(2 zeta sqrt(k0)) Q^T` (Albu-Schaeffer et al., 2003): every
//! mode, light or heavy, gets the damping ratio zeta ([`ModalDamping`], which keeps the modes
//! from one step to the next). (A diagonal `2 zeta sqrt(K_i Lambda_ii)`
//! over-damps a light wrist axis until the discrete loop goes unstable.)
//! Claim: the tip behaves as a spring of stiffness K_x: a constant wrench F on the tip deflects
//! it statically by `K_x^-1 F` (with the dynamically consistent projector the posture task does
//! not disturb it).
//!
//! The pose target comes from [`crate::TaskSpace::set_target_pose`] (interpolated with
//! [`PoseInterpolation`]); `reset` holds the current pose; the joint reference handed to
//! `update` is the nullspace posture q_n. Default stiffness per block (translation, rotation):
//! `(20 rad/s)^2` times the lightest effective task inertia of the block (median over
//! configurations), so a light wrist gets a soft rotation (a stiffer one than the control rate
//! can damp oscillates). An arm of fewer than six joints gets a stiffness sized on the
//! directions it can move, and no rotational stiffness: a reduced, position-only task space.
//! An axis whose stiffness is set to zero is out of the task (its row of J is zeroed for the
//! task inertia, the damping and the projector), so the joints it leaves free belong to the
//! posture task; set rotational entries to add orientation axes.
//!
//! Inertia shaping (when every entry of `inertia` is positive): with the measured tip wrench
//! `F_ext` ([`crate::TaskSpace::set_external_wrench`]) the tip follows
//! `M_d (xdd - xdd_d) + D (xd - xd_d) + K (x - x_d) = F_ext` through
//! `F = Lambda (xdd_d - Jdot qd) + Lambda M_d^-1 (K x_err + D (xd_d - xd) + F_ext) - F_ext`
//! (from `M qdd = J^T (F + F_ext)` under `tau = J^T F + C qd + G`), with `D = 2 zeta sqrt(K M_d)`.
//! Without shaping (default) the apparent inertia is the arm's own task-space inertia.
//!
//! Force tracking (explicit force control on top of the impedance, for arms without a model of
//! which directions are constrained): with a `force_tracking` gain on an axis, the target moves
//! along it by `integral force_tracking (force_target - F_exerted) dt` (within
//! `force_offset_limit`), so the impedance presses until the exerted wrench is `force_target`.
//!
//! Limitations: near a singularity the task inertia is regularised by 1e-9.

use armctl_dynamics::DynamicsWorkspace;
use armctl_model::Robot;
use nalgebra::{DVector, IsometryMatrix3, Matrix6, Vector6};

use crate::gain_sizing::damping_bound::{PostureDampingBound, RUNTIME_MARGIN};
use crate::gain_sizing::modal_damping::ModalDamping;
use crate::law_support::gains::cartesian_gain;
use crate::law_support::tip_target::{declare_target_source, joint_target, TipTarget};
use crate::numerics::configuration_samples::Configurations;
use crate::numerics::task_inertia::TaskInertia;
use crate::reference::PoseSample;
use crate::{
    Array, ControlError, Controller, Declaration, JointState, ParameterSet, Scalar, Step, TaskSpace,
};

/// Tip impedance with a posture task in the nullspace.
#[derive(Debug, Clone)]
pub struct CartesianImpedance {
    robot: Robot,
    ws: DynamicsWorkspace,
    parameters: ParameterSet,
    gains: Gains,
    task: TaskInertia,
    damping: ModalDamping,
    nonlinear: Vec<f64>,
    posture: DVector<f64>,
    tip: TipTarget,
    /// Force tracking's move of the target, base link axes.
    force_offset: Vector6<f64>,
    /// The posture damping's bound at the measured configuration.
    posture_bound: PostureDampingBound,
}

/// The handles of the parameters, in declaration order.
#[derive(Debug, Clone, Copy)]
struct Gains {
    stiffness: Array,
    damping_ratio: Scalar,
    nullspace_stiffness: Scalar,
    nullspace_damping: Scalar,
    projector: Scalar,
    pinv_damping: Scalar,
    inertia: Array,
    force_target: Array,
    force_tracking: Array,
    force_offset_limit: Scalar,
}

impl Gains {
    fn declare(parameters: &mut ParameterSet, stiffness: Vec<f64>) -> Result<Self, ControlError> {
        let stiffness_gain = cartesian_gain(
            "stiffness",
            stiffness,
            "Tip stiffness [x y z rx ry rz], N/m and N m/rad, base link axes.",
            1e6,
        );
        let stiffness = parameters.declare_array(stiffness_gain)?;
        let mut scalar = |name, default, description, max| {
            parameters
                .declare_scalar(Declaration::double(name, default, description).range(0.0, max))
        };
        Ok(Self {
            stiffness,
            damping_ratio: scalar("damping_ratio", 1.0, "Damping ratio of each task direction against the task-space inertia.", 10.0)?,
            nullspace_stiffness: scalar("nullspace_stiffness", 10.0, "Posture stiffness K_n in the nullspace, N m/rad.", 1e4)?,
            nullspace_damping: scalar("nullspace_damping", 1.0, "Posture damping D_n in the nullspace, N m s/rad.", 1e3)?,
            projector: parameters.declare_scalar(
                Declaration::double("projector", 0.0, "0: dynamically consistent nullspace projector; 1: damped pseudo-inverse.")
                    .range(0.0, 1.0)
                    .read_only(),
            )?,
            pinv_damping: parameters.declare_scalar(
                Declaration::double("pinv_damping", 0.01, "Damping l of the damped pseudo-inverse, m.").range(0.0, 1.0),
            )?,
            inertia: parameters.declare_array(
                cartesian_gain("inertia", vec![0.0; 6], "Target apparent inertia M_d [x y z rx ry rz] (kg, kg m^2) for inertia shaping with the measured external wrench; all 0 (default) disables shaping.", 1e4)
                    .read_only(),
            )?,
            force_target: parameters.declare_array(
                cartesian_gain("force_target", vec![0.0; 6], "Force tracking: the wrench the tool should exert on the environment [fx fy fz mx my mz], base link axes, N and N m (used along the axes with a force_tracking gain).", 1e4)
                    .range(-1e4, 1e4),
            )?,
            force_tracking: parameters.declare_array(
                cartesian_gain("force_tracking", vec![0.0; 6], "Force tracking gain per axis, m/(N s) and rad/(N m s): the target moves by this times the force error per second (admittance), until the exerted wrench is force_target. 0 (default): plain impedance.", 1.0),
            )?,
            force_offset_limit: parameters.declare_scalar(
                Declaration::double("force_offset_limit", 0.05, "Largest move of the target by force tracking, m (rad): a tool that finds no surface stops there.").range(0.0, 1.0),
            )?,
        })
    }
}

/// Isotropic per block: `(20 rad/s)^2` times the lightest effective task inertia of the block,
/// `1 / lambda_max` of its block of the task mobility `J M^-1 J^T` (the inertia felt pushing
/// the tip along the lightest direction with every other direction free; a light wrist is
/// light about one axis only, and a stiffness set on base-link axes meets that axis in every
/// direction), each the median over 33 fixed pseudo-random configurations within the limits
/// (one configuration may sit on a singularity). Directions the arm cannot move (an arm of
/// fewer than six joints) have no mobility and so no say; a block it cannot move at all gets
/// no stiffness.
fn default_stiffness(robot: &Robot) -> Result<Vec<f64>, ControlError> {
    let mut probe = CartesianImpedance::with_stiffness(robot, vec![0.0; 6])?;
    let mut configurations = Configurations::new(0x2545_F491_4F6C_DD1D);
    let mut samples: Vec<[f64; 2]> = Vec::new();
    let still = vec![0.0; robot.dof()];
    for _ in 0..33 {
        let q = configurations.next(robot);
        let mut terms = probe.ws.update(robot, &q, &still)?;
        probe.tip.update_with(robot, &mut terms, 0.0, None)?;
        let mobility = probe.task.mobility(&mut terms, &probe.tip.jac)?;
        let largest = |k: usize| {
            nalgebra::SymmetricEigen::new(mobility.fixed_view::<3, 3>(k, k).into_owned())
                .eigenvalues
                .max()
        };
        samples.push([largest(0), largest(3)]);
    }
    let per_block: Vec<f64> = (0..2)
        .map(|block| {
            let mut column: Vec<f64> = samples.iter().map(|s| s[block]).collect();
            column.sort_by(f64::total_cmp);
            let mobility = column[column.len() / 2];
            if mobility > MOBILITY_FLOOR {
                DEFAULT_FREQUENCY * DEFAULT_FREQUENCY / mobility
            } else {
                0.0
            }
        })
        .collect();
    // An arm of fewer than six joints cannot hold position and orientation apart: by default
    // it is a position impedance (the static deflection K^-1 F holds for forces), and a
    // rotational stiffness set by the user adds the orientation axes it wants.
    let rotation = if robot.dof() < 6 { 0.0 } else { per_block[1] };
    Ok((0..6)
        .map(|i| if i < 3 { per_block[0] } else { rotation })
        .collect())
}

/// Natural frequency of the default stiffness on the lightest direction, rad/s.
const DEFAULT_FREQUENCY: f64 = 20.0;

/// Mobility (1/kg, 1/(kg m^2)) below which a block counts as immobile.
const MOBILITY_FLOOR: f64 = 1e-9;

impl CartesianImpedance {
    /// The controller with `robot` as its model: stiffness `(20 rad/s)^2` times the lightest
    /// effective task inertia of each block (see [`default_stiffness`]), critical damping,
    /// posture stiffness 10 N m/rad and damping 1 N m s/rad.
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        Self::with_stiffness(robot, default_stiffness(robot)?)
    }

    fn with_stiffness(robot: &Robot, stiffness: Vec<f64>) -> Result<Self, ControlError> {
        let n = robot.dof();
        let mut parameters = ParameterSet::new(n);
        let gains = Gains::declare(&mut parameters, stiffness)?;
        declare_target_source(&mut parameters)?;
        Ok(Self {
            ws: DynamicsWorkspace::new(robot),
            parameters,
            gains,
            task: TaskInertia::new(robot),
            damping: ModalDamping::default(),
            nonlinear: vec![0.0; n],
            posture: DVector::zeros(n),
            tip: TipTarget::new(robot),
            force_offset: Vector6::zeros(),
            posture_bound: PostureDampingBound::new(n),
            robot: robot.clone(),
        })
    }

    /// The tip pose measured at the last update.
    pub fn tip_pose(&self) -> &IsometryMatrix3<f64> {
        &self.tip.pose
    }

    /// The target pose and twist in effect now.
    pub fn target(&self) -> PoseSample {
        self.tip.sample()
    }

    /// Force tracking (admittance on top of the impedance): the target's offset moves at
    /// `force_tracking (force_target - F_exerted)` per axis, within `force_offset_limit`;
    /// `F_exerted` is minus the measured external wrench. Returns the offset.
    fn track_force(&mut self, dt: f64) -> Vector6<f64> {
        let p = &self.parameters;
        let (target, gain) = (&p[self.gains.force_target], &p[self.gains.force_tracking]);
        // On or off as set: the ramped gain only approaches zero.
        let on = p.target(self.gains.force_tracking);
        let limit = p[self.gains.force_offset_limit];
        let release = (dt / p.ramp_time().max(dt)).min(1.0);
        for i in 0..6 {
            let exerted = -self.tip.external_wrench[i];
            self.force_offset[i] = if on[i] > 0.0 {
                let moved = self.force_offset[i] + dt * gain[i] * (target[i] - exerted);
                moved.clamp(-limit, limit)
            } else {
                // Switched off: the target returns over the ramp time, not in a jump.
                self.force_offset[i] * (1.0 - release)
            };
        }
        self.force_offset
    }

    /// `N tau_n = tau_n - J^T (J#^T tau_n)`, added to `effort`.
    fn add_nullspace(
        &mut self,
        lambda: &Matrix6<f64>,
        effort: &mut [f64],
    ) -> Result<(), ControlError> {
        let y: Vector6<f64> = if self.parameters[self.gains.projector] < 0.5 {
            self.task.task_part(lambda, &self.posture)?
        } else {
            let jjt = self
                .tip
                .damped_gram(self.parameters[self.gains.pinv_damping]);
            let jt = self.tip.times(self.posture.as_slice());
            jjt.try_inverse().map_or(Vector6::zeros(), |inv| inv * jt)
        };
        for (k, e) in effort.iter_mut().enumerate() {
            *e += self.posture[k] - self.tip.jac.column(k).dot(&y);
        }
        Ok(())
    }
}

impl Controller for CartesianImpedance {
    law_accessors!("cartesian_impedance");
    /// Holds the tip where it is.
    fn restart(&mut self, state: &JointState<'_>) {
        self.tip.hold(&self.robot, state.q);
        self.force_offset = Vector6::zeros();
        self.damping = ModalDamping::default();
    }
    fn task_space(&mut self) -> Option<&mut dyn TaskSpace> {
        Some(&mut self.tip)
    }
    fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError> {
        let (state, reference, dt, effort) = (step.state, step.reference, step.dt, step.effort);
        let joint_target = joint_target(&self.parameters, step.reference);
        // The task's modes damped at most this fast (the same margin).
        let rate_cap = RUNTIME_MARGIN / dt.abs().max(f64::MIN_POSITIVE);
        // One pass at (q, qd) for the tip, M, C qd + G and Jdot qd.
        let mut terms = self.ws.update(&self.robot, state.q, state.qd)?;
        let desired = self
            .tip
            .update_with(&self.robot, &mut terms, dt, joint_target)?;
        // An axis of zero stiffness is out of the task (see the module documentation).
        let stiffness = self.parameters.target(self.gains.stiffness);
        self.tip.leave_out_axes(stiffness);
        let lambda = self.task.inertia(&mut terms, &self.tip.jac)?;
        // The posture's damping within the sampled-data margin at q.
        let posture_damping = self.parameters[self.gains.nullspace_damping];
        self.posture_bound
            .update(self.task.mass_factor(), posture_damping, dt)?;
        terms.nonlinear_effects(&mut self.nonlinear)?;
        let inertia = &self.parameters[self.gains.inertia];
        let shaping = inertia.iter().all(|&m| m > 0.0);
        let bias = if shaping {
            terms.tip_jacobian_dot_qd()
        } else {
            Vector6::zeros()
        };
        let error = self.tip.error(&desired) + self.track_force(dt);
        let velocity = self.tip.times(state.qd);
        let p = &self.parameters;
        let (k, zeta) = (&p[self.gains.stiffness], p[self.gains.damping_ratio]);
        let inertia = &p[self.gains.inertia];
        let wrench = self.tip.external_wrench;
        let force = if shaping {
            // Inertia shaping: the target dynamics with M_d, critically damped against it.
            // Per axis `D/M_d` at most the cap: past it damping by c, stiffness by c^2.
            let target = Vector6::from_fn(|i, _| {
                let d = 2.0 * zeta * (k[i] * inertia[i]).sqrt();
                let c = (rate_cap * inertia[i] / d).min(1.0);
                let (k, d) = (c * c * k[i], c * d);
                (k * error[i] + d * (desired.twist[i] - velocity[i]) + wrench[i]) / inertia[i]
            });
            lambda * (desired.acceleration - bias + target) - wrench
        } else {
            let twist_error = desired.twist - velocity;
            self.damping
                .force(&self.task, (k, zeta), rate_cap, &error, &twist_error)?
        };
        let (kn, dn) = (
            p[self.gains.nullspace_stiffness],
            p[self.gains.nullspace_damping],
        );
        let s = self.posture_bound.scales();
        for (i, e) in effort.iter_mut().enumerate() {
            *e = self.tip.jac.column(i).dot(&force) + self.nonlinear[i];
            let (kn, dn) = (s[i] * s[i] * kn, s[i] * dn);
            self.posture[i] = kn * (reference.q[i] - state.q[i]) - dn * state.qd[i];
        }
        self.add_nullspace(&lambda, effort)
    }
}
