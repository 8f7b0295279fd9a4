//! Hybrid force/position control (Raibert and Craig, 1981; in task space after Khatib, 1987;
//! docs/theory.md section 6). In the constraint frame C (base axes turned by
//! `constraint_rpy`), the selection `S = diag(selection)` marks the force-controlled task
//! directions and `I - S` the position-controlled ones; with `R_C` the 6x6 rotation of C,
//!
//! `a* = R_C (I - S) R_C^T (xdd_d - Jdot qd + Kd (xd_d - xd) + Kp x_err)` (gains in C),
//! `F* = F_d + Kf (F_d - F_m) + Ki integral(F_d - F_m) - Df v` (per force axis of C),
//! `tau = J^T (Lambda a* + R_C S F*) + C(q, qd) qd + G(q) + N (-d_n qd)`,
//!
//! with `Lambda` the task inertia, `F_d` (`desired_wrench`) the wrench the tool exerts on the
//! environment in C, `F_m` the measured one (minus the external wrench handed in through
//! [`crate::TaskSpace::set_external_wrench`]) low-passed at `force_filter_frequency`, and `N`
//! the dynamically consistent nullspace projector. Claims: in contact the exerted force along
//! each force axis converges to `F_d` (the integral), and the position axes follow the target
//! as resolved acceleration does.
//!
//! Contact loss and re-contact: the integral runs only in contact (the filtered force above
//! `contact_threshold` along the axis), is clamped at `force_integral_limit` (anti-windup) and
//! is cleared when contact is lost; `Df` damps the force axes, so a tool that lost its
//! surface approaches the next one at about `F_d (1 + Kf) / Df` instead of accelerating.
//! `Df` and the nullspace damping are scaled per axis (per joint) where they would pass the
//! sampled-data margin at the measured configuration ([`crate::gain_sizing::damping_bound`]).
//! With a force-controlled direction, a measured wrench older than `wrench_timeout` (or none)
//! is an error: the law does not push blind, and the runners hold the arm.
//! The target comes from the pose target (or the joint reference, `target_source`); the joint
//! reference is otherwise unused.

use armctl_dynamics::DynamicsWorkspace;
use armctl_model::Robot;
use nalgebra::{DVector, Matrix6, Rotation3, Vector6};

use crate::gain_sizing::damping_bound::{gram_scales, PostureDampingBound, RUNTIME_MARGIN};
use crate::law_support::gains::cartesian_gain;
use crate::law_support::tip_target::{declare_target_source, joint_target, TipTarget};
use crate::numerics::task_inertia::TaskInertia;
use crate::{
    Array, ControlError, Controller, Declaration, JointState, ParameterSet, Scalar, Step, TaskSpace,
};

/// Hybrid force/position control in task space.
#[derive(Debug, Clone)]
pub struct HybridForcePosition {
    robot: Robot,
    ws: DynamicsWorkspace,
    task: TaskInertia,
    tip: TipTarget,
    parameters: ParameterSet,
    gains: Gains,
    nonlinear: Vec<f64>,
    posture: DVector<f64>,
    /// The exerted wrench in C, low-passed.
    filtered: Vector6<f64>,
    /// The force error's integral per axis of C.
    integral: Vector6<f64>,
    /// The factors on `force_damping` per axis of C that keep it within the sampled-data
    /// margin on the task's mobility at the measured configuration.
    force_damping_scales: [f64; 6],
    /// The posture damping's bound at the measured configuration.
    posture_bound: PostureDampingBound,
}

/// The handles of the parameters.
#[derive(Debug, Clone, Copy)]
struct Gains {
    selection: Array,
    constraint_rpy: Array,
    desired_wrench: Array,
    kp: Array,
    kd: Array,
    force_kp: Array,
    force_ki: Array,
    force_damping: Array,
    force_filter_frequency: Scalar,
    force_integral_limit: Scalar,
    contact_threshold: Scalar,
    wrench_timeout: Scalar,
    nullspace_damping: Scalar,
}

fn array(
    parameters: &mut ParameterSet,
    name: &str,
    default: [f64; 6],
    description: &str,
    range: (f64, f64),
) -> Result<Array, ControlError> {
    parameters.declare_array(
        cartesian_gain(name, default.to_vec(), description, range.1).range(range.0, range.1),
    )
}

fn scalar(
    parameters: &mut ParameterSet,
    name: &str,
    default: f64,
    description: &str,
    max: f64,
) -> Result<Scalar, ControlError> {
    parameters.declare_scalar(Declaration::double(name, default, description).range(0.0, max))
}

impl Gains {
    fn declare(parameters: &mut ParameterSet) -> Result<Self, ControlError> {
        let p = parameters;
        Ok(Self {
            selection: array(p, "selection", [0.0; 6], "Force-controlled directions of the constraint frame [x y z rx ry rz]: 1 force, 0 position. All 0 (default): position control only.", (0.0, 1.0))?,
            constraint_rpy: p.declare_array(
                Declaration::double_array("constraint_rpy", vec![0.0; 3], "Orientation of the constraint frame in the base link frame, roll-pitch-yaw, rad.")
                    .length(3)
                    .range(-7.0, 7.0),
            )?,
            desired_wrench: array(p, "desired_wrench", [0.0; 6], "Wrench the tool exerts on the environment along the force-controlled directions, constraint frame [fx fy fz mx my mz], N and N m.", (-1e4, 1e4))?,
            kp: array(p, "kp", [400.0; 6], "Stiffness of the position error dynamics per constraint axis, 1/s^2.", (0.0, 1e6))?,
            kd: array(p, "kd", [40.0; 6], "Damping of the position error dynamics per constraint axis, 1/s.", (0.0, 1e4))?,
            force_kp: array(p, "force_kp", [0.2; 6], "Proportional gain on the force error per constraint axis (dimensionless).", (0.0, 10.0))?,
            force_ki: array(p, "force_ki", [10.0; 6], "Integral gain on the force error per constraint axis, 1/s.", (0.0, 1e3))?,
            force_damping: array(p, "force_damping", [150.0, 150.0, 150.0, 5.0, 5.0, 5.0], "Damping along the force-controlled directions, N s/m and N m s/rad: a tool that lost contact approaches at about desired force / damping.", (0.0, 1e5))?,
            force_filter_frequency: p.declare_scalar(
                Declaration::double("force_filter_frequency", 50.0, "Cut-off of the first-order low-pass on the measured wrench, Hz.")
                    .range(0.1, 1e4),
            )?,
            force_integral_limit: scalar(p, "force_integral_limit", 2.0, "Bound on the force error's integral per axis (anti-windup), N s and N m s: the integral adds at most force_ki times this.", 1e4)?,
            contact_threshold: scalar(p, "contact_threshold", 1.0, "Measured force (N, N m) above which a force axis is in contact; below it the integral is cleared.", 1e4)?,
            wrench_timeout: scalar(p, "wrench_timeout", 0.1, "With a force-controlled direction, the longest wait for a measured wrench, s: an older one (or none) is a fault, and the arm holds.", 10.0)?,
            nullspace_damping: scalar(p, "nullspace_damping", 1.0, "Damping of self-motion in the nullspace of a redundant arm, N m s/rad.", 1e3)?,
        })
    }
}

/// The 6x6 rotation `diag(R, R)` of the constraint frame.
fn constraint_rotation(rpy: &[f64]) -> Matrix6<f64> {
    let r = Rotation3::from_euler_angles(rpy[0], rpy[1], rpy[2]);
    let mut block = Matrix6::zeros();
    block.fixed_view_mut::<3, 3>(0, 0).copy_from(r.matrix());
    block.fixed_view_mut::<3, 3>(3, 3).copy_from(r.matrix());
    block
}

impl HybridForcePosition {
    /// The law on `robot`: position control on every axis (no force axis selected), gains
    /// `Kp = 400`, `Kd = 40` per constraint axis, force gains `Kf = 0.2`, `Ki = 10/s`,
    /// force damping 150 N s/m (5 N m s/rad), a 50 Hz filter on the measured wrench.
    pub fn new(robot: &Robot) -> Result<Self, ControlError> {
        let n = robot.dof();
        let mut parameters = ParameterSet::new(n);
        let gains = Gains::declare(&mut parameters)?;
        declare_target_source(&mut parameters)?;
        Ok(Self {
            robot: robot.clone(),
            ws: DynamicsWorkspace::new(robot),
            task: TaskInertia::new(robot),
            tip: TipTarget::new(robot),
            parameters,
            gains,
            nonlinear: vec![0.0; n],
            posture: DVector::zeros(n),
            filtered: Vector6::zeros(),
            integral: Vector6::zeros(),
            force_damping_scales: [1.0; 6],
            posture_bound: PostureDampingBound::new(robot.dof()),
        })
    }

    /// The exerted wrench in the constraint frame, low-passed (what the force loop sees).
    pub fn filtered_wrench(&self) -> &Vector6<f64> {
        &self.filtered
    }

    /// A force-controlled direction needs a fresh measured wrench: without one the force loop
    /// is blind, and the law refuses to compute (the runners then hold the arm).
    fn check_measurement(&self) -> Result<(), ControlError> {
        let p = &self.parameters;
        let forced = p[self.gains.selection].iter().any(|&s| s >= 0.5);
        let timeout = p[self.gains.wrench_timeout];
        if forced && self.tip.wrench_age > timeout {
            return Err(ControlError::InvalidReference {
                reason: format!(
                    "no measured wrench for more than wrench_timeout ({timeout} s) with a force-controlled direction: connect ~/external_wrench (or a scene's sensor)"
                ),
            });
        }
        Ok(())
    }

    /// `F*` per axis of C: feed-forward, PI on the filtered force error (the integral only in
    /// contact, clamped), damping of the velocity `v_c` (in C); zero on position axes.
    fn force_command(&mut self, v_c: &Vector6<f64>, dt: f64) -> Vector6<f64> {
        let p = &self.parameters;
        let g = &self.gains;
        let (selection, desired) = (&p[g.selection], &p[g.desired_wrench]);
        let (kf, ki, df) = (&p[g.force_kp], &p[g.force_ki], &p[g.force_damping]);
        let (limit, threshold) = (p[g.force_integral_limit], p[g.contact_threshold]);
        Vector6::from_fn(|i, _| {
            if selection[i] < 0.5 {
                self.integral[i] = 0.0;
                return 0.0;
            }
            let error = desired[i] - self.filtered[i];
            self.integral[i] = if self.filtered[i].abs() > threshold {
                (self.integral[i] + error * dt).clamp(-limit, limit)
            } else {
                0.0
            };
            let damping = self.force_damping_scales[i] * df[i];
            desired[i] + kf[i] * error + ki[i] * self.integral[i] - damping * v_c[i]
        })
    }

    /// [`HybridForcePosition::force_damping_scales`] for the constraint frame `rotation`, from
    /// `W = Df^1/2 R^T (J M^-1 J^T) R Df^1/2` on the force axes (`J M^-1 J^T = U U^T`, the
    /// task's mobility factor at its last inertia): the eigenvalues of `M^-1 J^T R Df R^T J`.
    fn bound_force_damping(&mut self, rotation: &Matrix6<f64>, dt: f64) {
        let p = &self.parameters;
        let (selection, df) = (&p[self.gains.selection], &p[self.gains.force_damping]);
        self.force_damping_scales = [1.0; 6];
        if selection.iter().all(|s| *s < 0.5) {
            return; // no force axis: nothing damped
        }
        let root = Vector6::from_fn(|i, _| {
            let on = if selection[i] < 0.5 { 0.0 } else { 1.0 };
            (on * df[i]).max(0.0).sqrt()
        });
        let b = self.task.mobility_factor.tr_mul(rotation);
        let gram = b.tr_mul(&b);
        let w = Matrix6::from_fn(|r, c| root[r] * gram[(r, c)] * root[c]);
        let (mut weights, mut candidate) = ([1.0; 6], [1.0; 6]);
        let margin = (dt.abs(), RUNTIME_MARGIN);
        let buffers = (&mut weights[..], &mut candidate[..]);
        gram_scales(
            w.as_slice(),
            margin,
            buffers,
            &mut self.force_damping_scales,
        );
    }
}

impl Controller for HybridForcePosition {
    law_accessors!("hybrid_force_position");
    /// Holds the tip where it is and forgets the force loop's state.
    fn restart(&mut self, state: &JointState<'_>) {
        self.tip.hold(&self.robot, state.q);
        self.tip.external_wrench = Vector6::zeros();
        // The first measurement is due within wrench_timeout of the start, as each later one
        // (a sensor's first message may follow the first joint state).
        self.tip.wrench_age = 0.0;
        self.filtered = Vector6::zeros();
        self.integral = Vector6::zeros();
    }
    fn task_space(&mut self) -> Option<&mut dyn TaskSpace> {
        Some(&mut self.tip)
    }
    fn compute(&mut self, step: Step<'_>) -> Result<(), ControlError> {
        let (state, dt, effort) = (step.state, step.dt, step.effort);
        let joint = joint_target(&self.parameters, step.reference);
        // One pass at (q, qd) for the tip, M, C qd + G and Jdot qd.
        let mut terms = self.ws.update(&self.robot, state.q, state.qd)?;
        let desired = self.tip.update_with(&self.robot, &mut terms, dt, joint)?;
        let lambda = self.task.inertia(&mut terms, &self.tip.jac)?;
        // The posture's damping within the sampled-data margin at q.
        let posture_damping = self.parameters[self.gains.nullspace_damping];
        self.posture_bound
            .update(self.task.mass_factor(), posture_damping, dt)?;
        let bias = terms.tip_jacobian_dot_qd();
        terms.nonlinear_effects(&mut self.nonlinear)?;
        self.check_measurement()?;
        let rotation = constraint_rotation(&self.parameters[self.gains.constraint_rpy]);
        let to_c = rotation.transpose();
        let (error, velocity) = (self.tip.error(&desired), self.tip.times(state.qd));
        // The exerted wrench in C, low-passed.
        let exerted = to_c * -self.tip.external_wrench;
        let cutoff = self.parameters[self.gains.force_filter_frequency];
        let alpha = 1.0 - (-2.0 * std::f64::consts::PI * cutoff * dt).exp();
        self.filtered += (exerted - self.filtered) * alpha;
        self.bound_force_damping(&rotation, dt);
        let force = self.force_command(&(to_c * velocity), dt);
        let p = &self.parameters;
        let (kp, kd, selection) = (
            &p[self.gains.kp],
            &p[self.gains.kd],
            &p[self.gains.selection],
        );
        let feedback = to_c * (desired.acceleration - bias);
        let (e_c, de_c) = (to_c * error, to_c * (desired.twist - velocity));
        let a_c = Vector6::from_fn(|i, _| {
            let position = 1.0 - selection[i].round();
            position * (feedback[i] + kd[i] * de_c[i] + kp[i] * e_c[i])
        });
        let task_force = lambda * (rotation * a_c) + rotation * force;
        let d_n = p[self.gains.nullspace_damping];
        let s = self.posture_bound.scales();
        for (i, e) in effort.iter_mut().enumerate() {
            *e = self.tip.jac.column(i).dot(&task_force) + self.nonlinear[i];
            self.posture[i] = -s[i] * d_n * state.qd[i];
        }
        let y = self.task.task_part(&lambda, &self.posture)?;
        for (k, e) in effort.iter_mut().enumerate() {
            *e += self.posture[k] - self.tip.jac.column(k).dot(&y);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{JointReference, ParameterValue};

    /// The force-axis damping is kept as set where it is within the sampled-data margin and
    /// cut where it is not. The default 5 N m s/rad on the tip's rotations is past it already
    /// about the flange's axis at the Panda's middle (`dt lambda` about 1.3 there, beyond the
    /// limit of a delayed loop): cut; 1e4 N m s/rad on every rotation far past it.
    #[test]
    fn force_damping_is_cut_only_past_the_sampled_data_margin() {
        let robot = armctl_model::test_support::bundled_robot("panda.urdf");
        let q = robot.middle_configuration();
        let state = JointState {
            q: &q,
            qd: &[0.0; 7],
        };
        let scales = |damping: [f64; 6]| {
            let mut law = HybridForcePosition::new(&robot).unwrap();
            let set = |law: &mut HybridForcePosition, name: &str, v: Vec<f64>| {
                law.set_parameter(name, ParameterValue::DoubleArray(v))
                    .unwrap()
            };
            set(&mut law, "selection", vec![1.0; 6]);
            set(&mut law, "force_damping", damping.to_vec());
            law.reset(&state);
            law.task_space().unwrap().set_external_wrench(&[0.0; 6]);
            let mut effort = [0.0; 7];
            law.update(&state, &JointReference::hold(&q), 1e-3, &mut effort)
                .unwrap();
            law.force_damping_scales
        };
        assert_eq!(scales([150.0, 150.0, 150.0, 1.0, 1.0, 1.0]), [1.0; 6]);
        let default = scales([150.0, 150.0, 150.0, 5.0, 5.0, 5.0]);
        assert!(default[..3] == [1.0; 3] && default[5] < 0.5, "{default:?}");
        let cut = scales([150.0, 150.0, 150.0, 1e4, 1e4, 1e4]);
        assert!(cut[3..].iter().all(|s| *s < 0.1), "{cut:?}");
        assert!(cut[..3].iter().all(|s| *s > 0.5), "{cut:?}");
    }
}
