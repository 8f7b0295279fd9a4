//! A payload's mass and centre of mass from the arm at rest in a few poses: what the arm's
//! model leaves unexplained there (the measured effort minus `G(q)`, or minus the observer's
//! residual: the same torque) is the payload's weight, `G_p(q) = Y(q) [m, m c_x, m c_y, m c_z]`,
//! linear in the mass and first moment (`c` in the tip frame). Least squares over the poses;
//! the uncertainty from the fit's residual. The inertia does not act at rest and is not
//! estimated.
//!
//! The poses ([`payload_poses`]) turn the wrist so that gravity points along different axes of
//! the tip frame: each axis of `c` then has a lever arm in some pose.

use armctl_dynamics::{friction_torques, gravity_torques, CoulombSign, DynamicsWorkspace};
use armctl_model::{Payload, Robot};
use nalgebra::{DMatrix, DVector, Matrix4, Vector3, Vector4};

use crate::{IdentError, JointLog};

/// The torques the model leaves unexplained in one pose at rest.
#[derive(Debug, Clone, PartialEq)]
pub struct RestSample {
    /// The pose, chain order.
    pub q: Vec<f64>,
    /// Measured effort minus the model's `G(q)`, chain order.
    pub unexplained: Vec<f64>,
}

/// What [`estimate_payload`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct PayloadEstimate {
    /// Mass and centre of mass (tip frame); the inertia is left zero.
    pub payload: Payload,
    /// Standard deviation of the mass, kg.
    pub mass_std: f64,
    /// Standard deviation of each coordinate of the centre of mass, m.
    pub com_std: Vector3<f64>,
    /// RMS of the torques the estimate leaves unexplained, N m (N).
    pub residual_rms: f64,
    /// Poses used.
    pub poses: usize,
}

/// Largest velocity of a sample taken as at rest, rad/s (m/s).
pub const REST_VELOCITY: f64 = 5e-4;

/// Samples a velocity is averaged over to tell rest from noise.
pub const VELOCITY_WINDOW: usize = 50;

/// Fewest consecutive samples at rest that make a pose.
pub const MIN_REST_SAMPLES: usize = 200;

/// The estimate from `samples` (at least two poses). Refused with a reason when the poses do
/// not determine the mass and every axis of the centre of mass (their standard deviations
/// above [`MASS_STD_SHARE`] of the mass or [`COM_STD`], the Coulomb friction of `robot`'s
/// joints counted as what a joint at rest may hold), or show no payload.
pub fn estimate_payload(
    robot: &Robot,
    samples: &[RestSample],
) -> Result<PayloadEstimate, IdentError> {
    let n = robot.dof();
    if samples.len() < 2 {
        return Err(refused(format!(
            "{} poses at rest; a payload needs at least 2 (armctl excite --payload gives a set)",
            samples.len()
        )));
    }
    let finite = |v: &[f64]| v.len() == n && v.iter().all(|x| x.is_finite());
    if let Some(k) = samples
        .iter()
        .position(|s| !(finite(&s.q) && finite(&s.unexplained)))
    {
        return Err(refused(format!(
            "pose {} holds a non-finite value or not {n} joints",
            k + 1
        )));
    }
    let mut a = DMatrix::zeros(n * samples.len(), 4);
    let mut b = DVector::zeros(n * samples.len());
    let mut ws = DynamicsWorkspace::new(robot);
    for (k, sample) in samples.iter().enumerate() {
        let columns = weight_columns(robot, &mut ws, &sample.q)?;
        for i in 0..n {
            for (c, column) in columns.iter().enumerate() {
                a[(k * n + i, c)] = column[i];
            }
            b[k * n + i] = sample.unexplained[i];
        }
    }
    let friction: Vec<f64> = robot.joints().iter().map(|j| j.friction.peak()).collect();
    solve(&a, &b, &friction, samples.len())
}

/// Least squares `a theta = b`, `theta = [m, h_x, h_y, h_z]`, with its covariance: each row's
/// variance is the fit's residual variance plus `friction[i]^2 / 3` for its joint (a joint at
/// rest holds any friction within its Coulomb level, in either direction, which the residual
/// of a few poses does not show), through the sandwich `N^-1 A^T S A N^-1`.
fn solve(
    a: &DMatrix<f64>,
    b: &DVector<f64>,
    friction: &[f64],
    poses: usize,
) -> Result<PayloadEstimate, IdentError> {
    let normal: Matrix4<f64> = (a.transpose() * a).fixed_view::<4, 4>(0, 0).into();
    let eigen = normal.symmetric_eigen();
    let (largest, smallest) = (eigen.eigenvalues.max(), eigen.eigenvalues.min());
    // NaN sums (a non-finite log value) fail the test too.
    let determined = smallest > 1e-10 * largest;
    if !determined {
        let weakest = eigen.eigenvalues.imin();
        let direction = eigen.eigenvectors.column(weakest);
        let worst = (0..4).max_by(|i, j| direction[*i].abs().total_cmp(&direction[*j].abs()));
        return Err(refused(format!(
            "the poses do not determine {} ({TURN_THE_WRIST})",
            ITEMS[worst.unwrap_or(0)]
        )));
    }
    let inverse = normal
        .try_inverse()
        .ok_or_else(|| refused("the poses give a singular fit".into()))?;
    let theta = inverse * (a.transpose() * b).fixed_view::<4, 1>(0, 0);
    let residual = b - a * theta;
    let rows = a.nrows();
    let variance = residual.norm_squared() / (rows.saturating_sub(4).max(1)) as f64;
    let n = friction.len().max(1);
    let mut spread = Matrix4::zeros();
    for r in 0..rows {
        let row: Vector4<f64> = a.fixed_view::<1, 4>(r, 0).transpose();
        let held = friction.get(r % n).copied().unwrap_or(0.0);
        spread += row * row.transpose() * (variance + held * held / 3.0);
    }
    let covariance = inverse * spread * inverse;
    let mass = theta[0];
    let mass_std = covariance[(0, 0)].sqrt();
    let found = mass > 3.0 * mass_std && mass > 0.0;
    if !found {
        return Err(refused(format!(
            "no payload found: mass {mass:.4} kg with a standard deviation of {mass_std:.4} kg{}",
            friction_note(friction, variance)
        )));
    }
    let first_moment = Vector3::new(theta[1], theta[2], theta[3]);
    let com = first_moment / mass;
    let com_std = Vector3::from_fn(|k, _| {
        let (h, hh, hm) = (
            first_moment[k],
            covariance[(k + 1, k + 1)],
            covariance[(k + 1, 0)],
        );
        let variance = hh / mass.powi(2) - 2.0 * h * hm / mass.powi(3)
            + h * h * covariance[(0, 0)] / mass.powi(4);
        variance.max(0.0).sqrt()
    });
    let estimate = PayloadEstimate {
        payload: Payload::point(mass, com),
        mass_std,
        com_std,
        residual_rms: (residual.norm_squared() / rows as f64).sqrt(),
        poses,
    };
    check_determined(&estimate, friction_note(friction, variance))?;
    Ok(estimate)
}

/// What the refusals name, in the order of `theta`.
const ITEMS: [&str; 4] = [
    "the mass",
    "x of the centre of mass",
    "y of the centre of mass",
    "z of the centre of mass",
];

/// How to get poses that determine a payload.
const TURN_THE_WRIST: &str =
    "turn the wrist so that gravity points along each axis of the tip frame: armctl excite --payload";

/// The largest standard deviation of the mass reported, a share of the mass: three of them
/// stay within 3 %.
pub const MASS_STD_SHARE: f64 = 0.01;

/// The largest standard deviation of a coordinate of the centre of mass reported, m.
pub const COM_STD: f64 = 0.002;

/// Refuses an estimate whose standard deviations exceed [`MASS_STD_SHARE`] or [`COM_STD`]:
/// the poses do not determine it (an estimate from two nearly equal poses once put a light
/// wrist's tool 1 m off). `note` says when the joints' friction is what blurs it.
fn check_determined(estimate: &PayloadEstimate, note: String) -> Result<(), IdentError> {
    let mass = estimate.payload.mass;
    if estimate.mass_std > MASS_STD_SHARE * mass {
        return Err(refused(format!(
            "the poses do not determine the mass: {mass:.4} kg with a standard deviation of {:.4} kg (more than {:.0} % of it){note} ({TURN_THE_WRIST})",
            estimate.mass_std,
            100.0 * MASS_STD_SHARE
        )));
    }
    if let Some(axis) = (0..3).find(|&k| estimate.com_std[k] > COM_STD) {
        return Err(refused(format!(
            "the poses do not determine {}: its standard deviation is {:.1} mm (more than {:.0} mm){note} ({TURN_THE_WRIST})",
            ITEMS[axis + 1],
            1e3 * estimate.com_std[axis],
            1e3 * COM_STD
        )));
    }
    Ok(())
}

/// A note for a refusal when the Coulomb friction a resting joint may hold is of the size of
/// the fit's own residual or larger (which it then mostly is): an empty text otherwise.
fn friction_note(friction: &[f64], variance: f64) -> String {
    let largest = friction.iter().copied().fold(0.0, f64::max);
    if largest * largest / 3.0 > 0.5 * variance {
        format!(
            "; the joints' Coulomb friction (up to {largest:.2} N m), which a joint at rest holds in either direction, blurs the payload's torques"
        )
    } else {
        String::new()
    }
}

/// `G_p(q)`'s columns for the mass and the three first moments (tip frame).
fn weight_columns(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    q: &[f64],
) -> Result<[Vec<f64>; 4], IdentError> {
    let n = robot.dof();
    let gravity_of = |ws: &mut DynamicsWorkspace, com: Vector3<f64>| {
        let model = robot
            .payload_only(&Payload::point(1.0, com))
            .map_err(|e| refused(e.to_string()))?;
        let mut g = vec![0.0; n];
        gravity_torques(&model, ws, q, &mut g)?;
        Ok::<_, IdentError>(g)
    };
    let mass = gravity_of(ws, Vector3::zeros())?;
    let moment = |ws: &mut DynamicsWorkspace, axis: usize| -> Result<Vec<f64>, IdentError> {
        let g = gravity_of(ws, Vector3::ith(axis, 1.0))?;
        Ok(g.iter().zip(&mass).map(|(g, m)| g - m).collect())
    };
    let (x, y, z) = (moment(ws, 0)?, moment(ws, 1)?, moment(ws, 2)?);
    Ok([mass, x, y, z])
}

/// The poses of `log` at rest (at least [`MIN_REST_SAMPLES`] consecutive samples with every
/// velocity, averaged over [`VELOCITY_WINDOW`] samples against its noise, under
/// [`REST_VELOCITY`]), each the mean of the second half of its stretch, with the
/// model's gravity and friction taken from the effort.
pub fn rest_samples(robot: &Robot, log: &JointLog) -> Result<Vec<RestSample>, IdentError> {
    let n = robot.dof();
    let velocity = log.velocity.as_ref().ok_or_else(|| {
        refused("the log has no velocities: rest cannot be told from motion".into())
    })?;
    let at_rest = at_rest(velocity, n);
    let mut samples = Vec::new();
    let mut ws = DynamicsWorkspace::new(robot);
    let (mut gravity, mut friction) = (vec![0.0; n], vec![0.0; n]);
    let mut start = 0;
    while start < at_rest.len() {
        let end = (start..at_rest.len())
            .find(|&k| at_rest[k] != at_rest[start])
            .unwrap_or(at_rest.len());
        if at_rest[start] && end - start >= MIN_REST_SAMPLES {
            let kept = (start + end) / 2..end;
            let count = kept.len() as f64;
            let mut q = vec![0.0; n];
            let mut unexplained = vec![0.0; n];
            for k in kept {
                gravity_torques(robot, &mut ws, &log.position[k], &mut gravity)?;
                friction_torques(
                    robot,
                    &log.position[k],
                    &velocity[k],
                    CoulombSign::Exact,
                    &mut friction,
                )?;
                for i in 0..n {
                    q[i] += log.position[k][i] / count;
                    unexplained[i] += (log.effort[k][i] - gravity[i] - friction[i]) / count;
                }
            }
            samples.push(RestSample { q, unexplained });
        }
        start = end;
    }
    Ok(samples)
}

/// Whether each sample is at rest: every joint's velocity, averaged over the
/// [`VELOCITY_WINDOW`] samples about it, under [`REST_VELOCITY`].
fn at_rest(velocity: &[Vec<f64>], n: usize) -> Vec<bool> {
    let mut sums = vec![vec![0.0; n]];
    for v in velocity {
        let last = &sums[sums.len() - 1];
        let next: Vec<f64> = last.iter().zip(v).map(|(s, v)| s + v).collect();
        sums.push(next);
    }
    let half = VELOCITY_WINDOW / 2;
    (0..velocity.len())
        .map(|k| {
            let (from, to) = (k.saturating_sub(half), (k + half).min(velocity.len()));
            let count = (to - from) as f64;
            (0..n).all(|i| ((sums[to][i] - sums[from][i]) / count).abs() < REST_VELOCITY)
        })
        .collect()
}

/// `count` poses about `q0` for [`estimate_payload`]: the last (up to three) joints turned
/// within the middle half of their ranges (room for a sag), chosen from a quasi-random set to make the fit
/// best determined (largest determinant of the normal matrix, greedily); the other joints stay.
pub fn payload_poses(robot: &Robot, q0: &[f64], count: usize) -> Result<Vec<Vec<f64>>, IdentError> {
    let n = robot.dof();
    let turned: Vec<usize> = (n.saturating_sub(3)..n).collect();
    let mut ws = DynamicsWorkspace::new(robot);
    let mut candidates = Vec::new();
    for k in 1..=256 {
        let mut q = q0.to_vec();
        for (d, &j) in turned.iter().enumerate() {
            let fraction = 0.25 + 0.5 * halton(k, [2, 3, 5][d]);
            q[j] = robot.joints()[j].limits.position_at(fraction);
        }
        let rows = weight_columns(robot, &mut ws, &q)?;
        candidates.push((q, rows));
    }
    let mut chosen: Vec<usize> = Vec::new();
    let mut normal = Matrix4::<f64>::identity() * 1e-9;
    for _ in 0..count.min(candidates.len()) {
        let gain = |c: &[Vec<f64>; 4]| (normal + outer(c)).determinant();
        let best = (0..candidates.len())
            .filter(|k| !chosen.contains(k))
            .max_by(|a, b| gain(&candidates[*a].1).total_cmp(&gain(&candidates[*b].1)));
        let Some(best) = best else { break };
        normal += outer(&candidates[best].1);
        chosen.push(best);
    }
    Ok(chosen
        .into_iter()
        .map(|k| candidates[k].0.clone())
        .collect())
}

/// The share of each velocity limit and reference acceleration limit a move between poses uses.
const MOVE_LIMIT_SHARE: f64 = 0.5;

/// A rest-to-rest quintic's peak speed and peak acceleration over `|dq| / T` and `|dq| / T^2`.
const QUINTIC_PEAK_SPEED: f64 = 1.875;
const QUINTIC_PEAK_ACCELERATION: f64 = 5.7735;

/// The duration of a rest-to-rest move from `from` to `to` (a quintic, as a trajectory's
/// waypoints at rest are followed): at least `shortest`, and long enough that every joint
/// stays within half its velocity limit and half of `accelerations` (the reference
/// acceleration limits, `armctl_control::default_gains::acceleration_limits`), so that a light
/// wrist's long turn is not refused, nor an over-speed.
pub fn pose_move_time(
    robot: &Robot,
    accelerations: &[f64],
    (from, to): (&[f64], &[f64]),
    shortest: f64,
) -> f64 {
    let joints = robot.joints().iter().zip(accelerations);
    let moves = joints.zip(from.iter().zip(to)).map(|((joint, a), (f, t))| {
        let distance = (t - f).abs();
        let speed = MOVE_LIMIT_SHARE * joint.limits.velocity;
        let by_speed = QUINTIC_PEAK_SPEED * distance / speed;
        let by_acceleration =
            (QUINTIC_PEAK_ACCELERATION * distance / (MOVE_LIMIT_SHARE * a)).sqrt();
        by_speed.max(by_acceleration)
    });
    moves.filter(|t| t.is_finite()).fold(shortest, f64::max)
}

/// `Y^T Y` of one pose's columns.
fn outer(columns: &[Vec<f64>; 4]) -> Matrix4<f64> {
    Matrix4::from_fn(|r, c| columns[r].iter().zip(&columns[c]).map(|(a, b)| a * b).sum())
}

/// The `index`-th element of the van der Corput sequence in `base` (0 to 1).
fn halton(mut index: usize, base: usize) -> f64 {
    let (mut value, mut scale) = (0.0, 1.0);
    while index > 0 {
        scale /= base as f64;
        value += scale * (index % base) as f64;
        index /= base;
    }
    value
}

fn refused(reason: String) -> IdentError {
    IdentError::Identification {
        reason: format!("payload: {reason}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panda() -> Robot {
        armctl_model::test_support::bundled_robot("panda.urdf")
    }

    /// Exact unexplained torques give the payload back exactly, from the chosen poses.
    #[test]
    fn exact_weights_in_the_chosen_poses_give_the_payload_back() {
        let robot = panda();
        let truth = Payload::point(1.2, Vector3::new(0.03, -0.05, 0.11));
        let poses = payload_poses(&robot, &robot.middle_configuration(), 6).unwrap();
        assert_eq!(poses.len(), 6);
        let loaded = robot.payload_only(&truth).unwrap();
        let mut ws = DynamicsWorkspace::new(&robot);
        let samples: Vec<RestSample> = poses
            .iter()
            .map(|q| {
                let mut g = vec![0.0; 7];
                gravity_torques(&loaded, &mut ws, q, &mut g).unwrap();
                RestSample {
                    q: q.clone(),
                    unexplained: g,
                }
            })
            .collect();
        let found = estimate_payload(&robot, &samples).unwrap();
        assert!((found.payload.mass - truth.mass).abs() < 1e-9, "{found:?}");
        assert!((found.payload.com - truth.com).norm() < 1e-9, "{found:?}");
    }

    /// One pose, or poses that never turn the tip, cannot tell every axis: refused, naming it.
    #[test]
    fn poses_that_do_not_determine_the_payload_are_refused_with_the_axis() {
        let robot = panda();
        let q = robot.middle_configuration();
        let one = RestSample {
            q: q.clone(),
            unexplained: vec![0.0; 7],
        };
        let error = estimate_payload(&robot, std::slice::from_ref(&one))
            .unwrap_err()
            .to_string();
        assert!(error.contains("at least 2"), "{error}");
        let error = estimate_payload(&robot, &[one.clone(), one])
            .unwrap_err()
            .to_string();
        assert!(error.contains("do not determine"), "{error}");
    }

    /// The torques a 1.2 kg tool gives at rest in `poses`, plus `held(k, i)` for joint `i` of
    /// pose `k` (the friction the joint holds).
    fn resting(
        robot: &Robot,
        poses: &[Vec<f64>],
        held: impl Fn(usize, usize) -> f64,
    ) -> Vec<RestSample> {
        let truth = Payload::point(1.2, Vector3::new(0.03, -0.05, 0.11));
        let loaded = robot.payload_only(&truth).unwrap();
        let mut ws = DynamicsWorkspace::new(robot);
        poses
            .iter()
            .enumerate()
            .map(|(k, q)| {
                let mut g = vec![0.0; robot.dof()];
                gravity_torques(&loaded, &mut ws, q, &mut g).unwrap();
                let unexplained = g.iter().enumerate().map(|(i, g)| g + held(k, i)).collect();
                RestSample {
                    q: q.clone(),
                    unexplained,
                }
            })
            .collect()
    }

    /// Two nearly equal poses pass the conditioning test but do not determine the centre of
    /// mass: refused, naming the axis and its standard deviation.
    #[test]
    fn nearly_equal_poses_are_refused_naming_the_axis() {
        let robot = panda();
        let q = robot.middle_configuration();
        let mut nudged = q.clone();
        nudged[6] += 0.02;
        nudged[4] += 0.02;
        let samples = resting(&robot, &[q, nudged], |k, i| {
            1e-3 * ((k * 7 + i) as f64).sin()
        });
        let error = estimate_payload(&robot, &samples).unwrap_err().to_string();
        assert!(
            error.contains("do not determine") && error.contains("standard deviation"),
            "{error}"
        );
    }

    /// On an arm whose joints hold friction at rest (any sign pattern a resting arm may
    /// show), an estimate is either within three of its standard deviations of the truth or
    /// refused, saying the friction blurs it: 0.02 N m gives estimates, 2 N m refusals.
    #[test]
    fn friction_held_at_rest_is_in_the_uncertainty_or_refused() {
        let truth = Vector3::new(0.03, -0.05, 0.11);
        let poses = payload_poses(&panda(), &panda().middle_configuration(), 8).unwrap();
        let (mut accepted, mut refused_for_friction) = (0, 0);
        for coulomb in [0.02, 2.0] {
            let robot = panda().with_friction(&[0.0; 7], &[coulomb; 7]).unwrap();
            for seed in 0..20u64 {
                let held = |k: usize, i: usize| {
                    let x = ((seed * 97 + (k * 7 + i) as u64 * 31) as f64 * 0.618).fract();
                    coulomb * (2.0 * x - 1.0)
                };
                match estimate_payload(&robot, &resting(&robot, &poses, held)) {
                    Ok(found) => {
                        accepted += 1;
                        assert!(
                            (found.payload.mass - 1.2).abs() < 3.0 * found.mass_std,
                            "{found:?}"
                        );
                        for k in 0..3 {
                            let error = (found.payload.com[k] - truth[k]).abs();
                            assert!(
                                error < 3.0 * found.com_std[k],
                                "{coulomb} {seed}: {found:?}"
                            );
                        }
                    }
                    Err(e) => {
                        assert!(e.to_string().contains("Coulomb friction"), "{e}");
                        refused_for_friction += 1;
                    }
                }
            }
        }
        assert!(
            accepted > 0 && refused_for_friction > 0,
            "{accepted} {refused_for_friction}"
        );
        // Without the friction the same poses determine it.
        let clean = resting(&panda(), &poses, |_, _| 0.0);
        assert!(estimate_payload(&panda(), &clean).is_ok());
    }
}
