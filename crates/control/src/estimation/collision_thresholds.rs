//! Collision thresholds from the contact force the user names and from the external torque
//! estimate's own uncertainty, not from the effort limits.
//!
//! The momentum observer's residual `r` follows the true external torque through a first-order
//! filter of gain `K`. What the model gets wrong enters it through the same filter, and each
//! joint's share is bounded at every step by
//!
//! `u_i = e LPF(d_i) + c_i + b_i (LPF(|qd_i|) + s) + D LPF(|dtau_i|) + K s |M_i|`
//!
//! - `e LPF(d_i)`: a model whose inertial parameters are off by the share `e`
//!   (`model_error`) leaves up to `e` of the dynamics torque `M qdd + C qd + g` in the
//!   residual. `d_i = max(|tau_i|, |g_i| + |tau_i + r_i - g_i|)`: the applied torque, which is
//!   that torque in free motion, or, where a steady push takes part of it, the applied and the
//!   external torque (as the residual has it), gravity and motion each on its own as they may
//!   cancel in the sum;
//! - `c_i + b_i (|qd_i| + s)`: friction the model leaves out (the URDF's, when not
//!   compensated), at a true speed the measured one may understate by the noise `s`;
//!   and, for the Coulomb friction the model has, its level while `LPF(|qd_i|)` is within the
//!   velocity noise: there the sign is unknown, and a joint at rest holds any static friction
//!   up to about that level, which no model can tell from a contact;
//! - `D LPF(|dtau_i|)`: a command applied `D` steps late;
//! - the last term: velocity noise of amplitude `s` on each joint, independent between joints,
//!   through `K M qd`: `K s sqrt(sum_j M_ij^2)`.
//!
//! The tip force that explains the residual, `f = P r` with `P = (Jv Jv^T + l^2)^-1 Jv` (damped
//! near a singularity), is uncertain by `df = sum_j |P_j| u_j`. A force `F` on the tip that
//! starts at once shows in the residual within [`DETECTION_TIME`] as `a F`,
//! `a = 1 - exp(-K DETECTION_TIME)`. So the force threshold is `max(df, a F - df)`: never
//! inside the uncertainty (no false positive while the model is within `e`), and `F` is
//! detected within the time wherever `df <= a F / 2`. Each joint's threshold is
//! `max(u_i, a F max(|Jv_i|, L) - u_i)`: `F` pulling at the joint's full lever is detected
//! there, and a load that twists a joint whose axis passes near the tip (a tool's offset
//! weight on a wrist) is not a contact below `F` at [`SHORTEST_LEVER`].

use armctl_dynamics::{gravity_torques, mass_matrix, DynamicsWorkspace};
use armctl_model::{jacobian, FrameId, KinematicsWorkspace, Robot};
use nalgebra::{DMatrix, Matrix3, Matrix6xX, Vector3};

use crate::estimation::tip_wrench_estimate::{MAX_DAMPING, SINGULAR_VALUE_BAND};
use crate::ControlError;

/// The tip force to detect when none is given, N.
pub const DEFAULT_SENSITIVITY: f64 = 30.0;

/// The share of the applied torque the model may miss when none is given: a URDF's masses
/// within 20 %, or within 10 % with a light tool it lacks (`config/sim_realistic.yaml`'s 0.5 kg
/// adds more than 10 % to the Panda's first joint). An identified model with its tool set
/// earns 0.02 to 0.05.
pub const DEFAULT_MODEL_ERROR: f64 = 0.2;

/// Within this time a contact of the named force is detected, s.
pub const DETECTION_TIME: f64 = 0.02;

/// A bound of the measured velocities' noise, rad/s (m/s): four standard deviations of
/// 1e-3, an encoder velocity's.
pub const VELOCITY_NOISE: f64 = 4e-3;

/// The shortest lever a contact is taken to have about a joint, m: a contact on a tool or a
/// link reaches this far from the axes (a tool 0.2 m long on a wrist whose axis passes the tip).
pub const SHORTEST_LEVER: f64 = 0.2;

/// Steps of command delay allowed for.
pub const DELAY_STEPS: f64 = 2.0;

/// What to detect and how far the model is trusted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DetectionSettings {
    /// The tip force to detect, N.
    pub sensitivity: f64,
    /// The share of the applied torque the model may miss.
    pub model_error: f64,
    /// The observer's gain K, 1/s.
    pub observer_gain: f64,
}

impl DetectionSettings {
    /// The share of a step force the residual shows within [`DETECTION_TIME`].
    pub fn shown_share(&self) -> f64 {
        1.0 - (-self.observer_gain * DETECTION_TIME).exp()
    }
}

/// Per joint, the friction the model leaves out: `(coulomb, viscous)`.
pub type UnmodelledFriction = [f64; 2];

/// What a step applied, what the observer made of it, and the gravity torques.
type Applied<'a> = (&'a [f64], &'a [f64], &'a [f64]);

/// The thresholds in effect, updated each step (buffers allocated once).
#[derive(Debug, Clone)]
pub struct CollisionThresholds {
    settings: DetectionSettings,
    friction: Vec<UnmodelledFriction>,
    /// The model's own Coulomb level per joint (its ripple's peak included), N m (N).
    modelled_coulomb: Vec<f64>,
    /// The noise term per joint, N m (N).
    noise: Vec<f64>,
    /// Filtered `d` (the dynamics torque's bound), `|qd|` and `|tau(k) - tau(k-1)|`.
    effort: Vec<f64>,
    speed: Vec<f64>,
    change: Vec<f64>,
    last_sent: Vec<f64>,
    uncertainty: Vec<f64>,
    joints: Vec<f64>,
    force: f64,
    force_uncertainty: f64,
    force_threshold: f64,
    kin: KinematicsWorkspace,
    jacobian: Matrix6xX<f64>,
}

impl CollisionThresholds {
    /// For `robot` with `friction` left out of its model (one entry per joint).
    pub fn new(
        robot: &Robot,
        friction: &[UnmodelledFriction],
        settings: DetectionSettings,
    ) -> Self {
        let n = robot.dof();
        let zeros = vec![0.0; n];
        let mut thresholds = Self {
            settings,
            friction: friction.to_vec(),
            modelled_coulomb: robot.joints().iter().map(|j| j.friction.peak()).collect(),
            noise: zeros.clone(),
            effort: zeros.clone(),
            speed: zeros.clone(),
            change: zeros.clone(),
            last_sent: zeros.clone(),
            uncertainty: zeros.clone(),
            joints: zeros,
            force: 0.0,
            force_uncertainty: 0.0,
            force_threshold: 0.0,
            kin: KinematicsWorkspace::new(robot),
            jacobian: Matrix6xX::zeros(n),
        };
        thresholds.friction.resize(n, [0.0; 2]);
        thresholds
    }

    /// New settings.
    pub fn set(&mut self, settings: DetectionSettings) {
        self.settings = settings;
    }

    /// The friction the model leaves out, per joint.
    pub fn unmodelled_friction(&self) -> &[UnmodelledFriction] {
        &self.friction
    }

    /// The settings in effect.
    pub fn settings(&self) -> DetectionSettings {
        self.settings
    }

    /// Starts over with the observer (its residual starts from zero too).
    pub fn restart(&mut self) {
        for v in [&mut self.effort, &mut self.speed, &mut self.change] {
            v.fill(0.0);
        }
        self.force = 0.0;
    }

    /// A step `dt` long at `(q, qd)`, mass matrix `mass` and gravity torques `gravity`, in
    /// which `sent` was applied and the observer's residual is `residual`. Allocates nothing.
    pub fn update(
        &mut self,
        robot: &Robot,
        (q, qd): (&[f64], &[f64]),
        (sent, residual): (&[f64], &[f64]),
        (mass, gravity): (&DMatrix<f64>, &[f64]),
        dt: f64,
    ) -> Result<(), ControlError> {
        self.filter(qd, (sent, residual, gravity), dt);
        self.bound_noise(mass);
        self.bound_joints();
        jacobian(robot, &mut self.kin, q, FrameId::Tip, &mut self.jacobian).map_err(|e| {
            ControlError::InvalidReference {
                reason: format!("the collision thresholds: {e}"),
            }
        })?;
        self.bound_force(residual);
        Ok(())
    }

    fn filter(&mut self, qd: &[f64], (sent, residual, gravity): Applied, dt: f64) {
        // The observer's own discrete filter, so that the bounds keep pace with its residual.
        let a = (self.settings.observer_gain * dt.max(0.0)).min(1.0);
        for i in 0..self.effort.len() {
            // The applied torque is the dynamics torque in free motion (the residual lags it
            // when it changes fast); with a steady push the residual's share tells.
            let g = gravity[i];
            let pushed = g.abs() + (sent[i] + residual[i] - g).abs();
            let dynamics = sent[i].abs().max(pushed);
            self.effort[i] += a * (dynamics - self.effort[i]);
            self.speed[i] += a * (qd[i].abs() - self.speed[i]);
            let change = (sent[i] - self.last_sent[i]).abs();
            self.change[i] += a * (change - self.change[i]);
        }
        self.last_sent.copy_from_slice(sent);
    }

    fn bound_noise(&mut self, mass: &DMatrix<f64>) {
        let scale = self.settings.observer_gain * VELOCITY_NOISE;
        for (noise, row) in self.noise.iter_mut().zip(mass.row_iter()) {
            *noise = scale * row.norm();
        }
    }

    fn bound_joints(&mut self) {
        for i in 0..self.uncertainty.len() {
            let [coulomb, viscous] = self.friction[i];
            let sign_unknown = if self.speed[i] < VELOCITY_NOISE {
                self.modelled_coulomb[i]
            } else {
                0.0
            };
            self.uncertainty[i] = self.settings.model_error * self.effort[i]
                + coulomb
                + sign_unknown
                + viscous * (self.speed[i] + VELOCITY_NOISE)
                + DELAY_STEPS * self.change[i]
                + self.noise[i];
        }
    }

    fn bound_force(&mut self, residual: &[f64]) {
        let (force, uncertainty) =
            force_and_uncertainty(&self.jacobian, residual, &self.uncertainty);
        let (share, wanted) = (self.settings.shown_share(), self.settings.sensitivity);
        self.force = force;
        self.force_uncertainty = uncertainty;
        self.force_threshold = uncertainty.max(share * wanted - uncertainty);
        for (j, column) in self.jacobian.column_iter().enumerate() {
            let lever = column.fixed_rows::<3>(0).norm().max(SHORTEST_LEVER);
            let u = self.uncertainty[j];
            self.joints[j] = u.max(share * wanted * lever - u);
        }
    }

    /// Each joint's threshold, N m (N).
    pub fn joints(&self) -> &[f64] {
        &self.joints
    }

    /// Each joint's bound of what the model leaves in the estimate, N m (N).
    pub fn uncertainty(&self) -> &[f64] {
        &self.uncertainty
    }

    /// The tip force that explains the residual, N.
    pub fn force(&self) -> f64 {
        self.force
    }

    /// The threshold of [`Self::force`], N.
    pub fn force_threshold(&self) -> f64 {
        self.force_threshold
    }

    /// The bound of what the model leaves in [`Self::force`], N.
    pub fn force_uncertainty(&self) -> f64 {
        self.force_uncertainty
    }
}

/// `Jv Jv^T` of the Jacobian's linear rows and its eigenvalues (the squared singular values).
fn linear_gram(jacobian: &Matrix6xX<f64>) -> (Matrix3<f64>, Vector3<f64>) {
    let mut jjt = Matrix3::zeros();
    for column in jacobian.column_iter() {
        let v = column.fixed_rows::<3>(0);
        jjt += v * v.transpose();
    }
    (jjt, symmetric_eigenvalues(&jjt))
}

/// The eigenvalues of a symmetric 3 x 3 matrix in closed form (the trigonometric solution of
/// its characteristic cubic): each step needs them, and an iterative decomposition took a
/// fifth of the thresholds' time.
fn symmetric_eigenvalues(a: &Matrix3<f64>) -> Vector3<f64> {
    let off = a[(0, 1)].powi(2) + a[(0, 2)].powi(2) + a[(1, 2)].powi(2);
    let mean = a.trace() / 3.0;
    let spread = ((0..3).map(|i| (a[(i, i)] - mean).powi(2)).sum::<f64>() + 2.0 * off) / 6.0;
    if spread <= f64::EPSILON * mean.abs().max(f64::MIN_POSITIVE) {
        return Vector3::repeat(mean);
    }
    let p = spread.sqrt();
    let b = (a - Matrix3::identity() * mean) / p;
    let phi = (b.determinant() / 2.0).clamp(-1.0, 1.0).acos() / 3.0;
    let largest = mean + 2.0 * p * phi.cos();
    let smallest = mean + 2.0 * p * (phi + 2.0 * std::f64::consts::FRAC_PI_3).cos();
    Vector3::new(smallest, 3.0 * mean - largest - smallest, largest)
}

/// The damping `l^2` at the smallest eigenvalue of `Jv Jv^T`, as the tip wrench estimate's.
fn damping_at(smallest_eigenvalue: f64) -> f64 {
    let (smallest, band) = (smallest_eigenvalue.max(0.0).sqrt(), SINGULAR_VALUE_BAND);
    if smallest < band {
        MAX_DAMPING * MAX_DAMPING * (1.0 - (smallest / band).powi(2))
    } else {
        0.0
    }
}

/// `P = (Jv Jv^T + l^2)^-1 Jv` (damped as the tip wrench estimate is): `(|P r|, sum |P_j| u_j)`.
fn force_and_uncertainty(jacobian: &Matrix6xX<f64>, residual: &[f64], u: &[f64]) -> (f64, f64) {
    let (jjt, eigenvalues) = linear_gram(jacobian);
    let damping = damping_at(eigenvalues.min());
    // Fully stretched with no damping band left (a prismatic-only arm, say): no force is felt.
    let Some(solver) = (jjt + Matrix3::identity() * damping.max(1e-12)).cholesky() else {
        return (0.0, f64::INFINITY);
    };
    let (mut force, mut uncertainty) = (Vector3::zeros(), 0.0);
    for (j, column) in jacobian.column_iter().enumerate() {
        let p: Vector3<f64> = solver.solve(&column.fixed_rows::<3>(0).into_owned());
        force += p * residual[j];
        uncertainty += p.norm() * u[j];
    }
    (force.norm(), uncertainty)
}

/// What a [`survey`] found: how well the named force is detected at rest over the arm's
/// configurations.
#[derive(Debug, Clone, PartialEq)]
pub struct SensitivitySurvey {
    /// How many configurations were looked at.
    pub configurations: usize,
    /// The share of them at which the named force is detected within [`DETECTION_TIME`] in
    /// every direction.
    pub detected_share: f64,
    /// The smallest force detected in every direction at the median configuration, N.
    pub median_force: f64,
    /// The largest such force over the configurations, N.
    pub worst_force: f64,
    /// Where it is.
    pub worst_configuration: Vec<f64>,
}

/// The smallest tip force detected within [`DETECTION_TIME`] at rest at each of `samples`
/// configurations (the arm at each joint's limits, middle and zero, and spread between), in
/// the worst direction there (infinite where the Jacobian loses a direction).
pub fn survey(
    robot: &Robot,
    friction: &[UnmodelledFriction],
    settings: DetectionSettings,
    samples: usize,
) -> Result<SensitivitySurvey, ControlError> {
    let fail = |e: String| ControlError::InvalidReference { reason: e };
    let mut thresholds = CollisionThresholds::new(robot, friction, settings);
    let mut ws = DynamicsWorkspace::new(robot);
    let mut gravity = vec![0.0; robot.dof()];
    let mut mass = DMatrix::zeros(robot.dof(), robot.dof());
    let zero = vec![0.0; robot.dof()];
    let mut found: Vec<(f64, Vec<f64>)> = Vec::with_capacity(samples);
    for q in spread_configurations(robot, samples) {
        gravity_torques(robot, &mut ws, &q, &mut gravity).map_err(|e| fail(e.to_string()))?;
        mass_matrix(robot, &mut ws, &q, &mut mass).map_err(|e| fail(e.to_string()))?;
        thresholds.bound_noise(&mass);
        // At rest the filters have settled on the gravity torque.
        for (e, g) in thresholds.effort.iter_mut().zip(&gravity) {
            *e = g.abs();
        }
        thresholds.speed.fill(0.0);
        thresholds.change.fill(0.0);
        thresholds.bound_joints();
        jacobian(
            robot,
            &mut thresholds.kin,
            &q,
            FrameId::Tip,
            &mut thresholds.jacobian,
        )
        .map_err(|e| fail(e.to_string()))?;
        thresholds.bound_force(&zero);
        found.push((smallest_detected(&thresholds), q));
    }
    let detected = found
        .iter()
        .filter(|(f, _)| *f <= settings.sensitivity * (1.0 + 1e-9))
        .count();
    found.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (worst_force, worst_configuration) = found.last().cloned().unwrap_or_default();
    Ok(SensitivitySurvey {
        configurations: found.len(),
        detected_share: detected as f64 / found.len().max(1) as f64,
        median_force: found.get(found.len() / 2).map_or(0.0, |f| f.0),
        worst_force,
        worst_configuration,
    })
}

/// The smallest step force detected within the time in every direction, from the force
/// check: `a s F - df > threshold`, `s` the smallest share of a tip force that `P Jv^T` shows
/// (1 away from singularities). Infinite where a direction is lost (a singular value of `Jv`
/// under a tenth of the damping band): a force along a stretched arm turns no joint.
fn smallest_detected(t: &CollisionThresholds) -> f64 {
    let (_, eigenvalues) = linear_gram(&t.jacobian);
    if eigenvalues.min().max(0.0).sqrt() < 0.1 * SINGULAR_VALUE_BAND {
        return f64::INFINITY;
    }
    let damping = damping_at(eigenvalues.min());
    // P Jv^T = (JJ^T + d)^-1 JJ^T: along each eigenvector, s^2 / (s^2 + d).
    let shown = eigenvalues
        .iter()
        .map(|s2| s2 / (s2 + damping))
        .fold(f64::INFINITY, f64::min);
    let share = t.settings.shown_share();
    (t.force_threshold + t.force_uncertainty) / (share * shown)
}

/// `samples` configurations: every joint at its lower limit, upper limit, middle and zero
/// (within limits), then a low-discrepancy spread over the ranges (continuous joints over a
/// turn).
pub fn spread_configurations(robot: &Robot, samples: usize) -> Vec<Vec<f64>> {
    let ranges: Vec<(f64, f64)> = robot
        .joints()
        .iter()
        .map(|j| {
            let l = &j.limits;
            if l.is_bounded() {
                (l.lower, l.upper)
            } else {
                (-std::f64::consts::PI, std::f64::consts::PI)
            }
        })
        .collect();
    let at = |share: f64| -> Vec<f64> {
        ranges
            .iter()
            .map(|(lo, hi)| lo + share * (hi - lo))
            .collect()
    };
    let zero: Vec<f64> = ranges
        .iter()
        .map(|(lo, hi)| 0.0_f64.clamp(*lo, *hi))
        .collect();
    let mut configurations = vec![at(0.0), at(1.0), at(0.5), zero];
    const PRIMES: [f64; 12] = [
        2.0, 3.0, 5.0, 7.0, 11.0, 13.0, 17.0, 19.0, 23.0, 29.0, 31.0, 37.0,
    ];
    for k in 1..=samples.saturating_sub(configurations.len()) {
        let q = ranges
            .iter()
            .enumerate()
            .map(|(i, (lo, hi))| lo + radical_inverse(k, PRIMES[i % PRIMES.len()]) * (hi - lo))
            .collect();
        configurations.push(q);
    }
    configurations.truncate(samples.max(4));
    configurations
}

/// The van der Corput radical inverse of `k` in `base` (Halton's sequence), in [0, 1).
fn radical_inverse(mut k: usize, base: f64) -> f64 {
    let (mut value, mut scale) = (0.0, 1.0 / base);
    let b = base as usize;
    while k > 0 {
        value += (k % b) as f64 * scale;
        k /= b;
        scale /= base;
    }
    value
}

#[cfg(test)]
mod tests;
