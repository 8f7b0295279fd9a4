//! A model's check on a log it was not identified from: the effort it predicts from the
//! measured motion (inverse dynamics plus friction) against the measured effort, per joint, as
//! an RMS error and as a share of the joint's effort range, the unit a deployment gate takes.

use armctl_dynamics::{friction_torques, rnea, CoulombSign, DynamicsWorkspace};
use armctl_model::Robot;

use crate::identification::signals::{signals, Signals};
use crate::{HeldOutSeries, IdentError, JointLog};

/// A joint is checked on at least this share of the log's samples.
const MIN_CHECKED_SHARE: f64 = 0.05;

/// How well a model predicts a log's efforts.
#[derive(Debug, Clone, PartialEq)]
pub struct Validation {
    /// RMS effort prediction error per joint, N m or N.
    pub rms: Vec<f64>,
    /// The measured effort's range per joint (largest minus smallest), N m or N.
    pub range: Vec<f64>,
    /// `rms / range` per joint.
    pub share_of_range: Vec<f64>,
    /// The samples checked, measured and predicted (NaN where left out).
    pub series: HeldOutSeries,
}

impl Validation {
    /// The joint whose error is the largest share of its range, and that share; a joint
    /// whose share is not a number is the worst (NaN: its prediction failed).
    pub fn worst(&self) -> (usize, f64) {
        let mut worst = (0, f64::NEG_INFINITY);
        for (j, &share) in self.share_of_range.iter().enumerate() {
            if share.is_nan() {
                return (j, share);
            }
            if share > worst.1 {
                worst = (j, share);
            }
        }
        worst
    }
}

/// Checks `model` (with its friction) on `log`. Positions are low-passed at `cutoff` Hz and
/// differentiated as identification does; 1 % at each end is left out, and with Coulomb
/// friction a joint's samples slower than `min_speed` (its sign is undefined there). A joint
/// checked on fewer than 5 % of the samples is refused, naming it.
pub fn validate(
    model: &Robot,
    log: &JointLog,
    cutoff: f64,
    min_speed: f64,
) -> Result<Validation, IdentError> {
    let names: Vec<String> = model.joint_names().map(str::to_string).collect();
    let log = log.for_joints(&names)?;
    log.check()
        .map_err(|reason| IdentError::Identification { reason })?;
    let s = signals(&log, cutoff);
    let margin = if log.acceleration.is_some() {
        0
    } else {
        log.len() / 100
    };
    let samples: Vec<usize> = (margin..log.len() - margin).collect();
    let predicted = predictions(model, &s, &samples)?;
    let n = model.dof();
    let mut series = HeldOutSeries {
        time: samples.iter().map(|&k| log.time[k]).collect(),
        measured: vec![Vec::with_capacity(samples.len()); n],
        predicted: vec![Vec::with_capacity(samples.len()); n],
    };
    for (&k, prediction) in samples.iter().zip(&predicted) {
        for (j, joint) in model.joints().iter().enumerate() {
            let coulomb = joint.friction.peak() != 0.0;
            let used = !(coulomb && s.qd[k][j].abs() < min_speed);
            let pick = |v: f64| if used { v } else { f64::NAN };
            series.measured[j].push(pick(s.tau[k][j]));
            series.predicted[j].push(pick(prediction[j]));
        }
    }
    summarize(model, series)
}

/// Inverse dynamics plus friction at each sample.
fn predictions(model: &Robot, s: &Signals, samples: &[usize]) -> Result<Vec<Vec<f64>>, IdentError> {
    let n = model.dof();
    let mut ws = DynamicsWorkspace::new(model);
    let (mut tau, mut friction) = (vec![0.0; n], vec![0.0; n]);
    let mut out = Vec::with_capacity(samples.len());
    for &k in samples {
        rnea(model, &mut ws, &s.q[k], &s.qd[k], &s.qdd[k], &mut tau)?;
        friction_torques(model, &s.q[k], &s.qd[k], CoulombSign::Exact, &mut friction)?;
        out.push(tau.iter().zip(&friction).map(|(a, b)| a + b).collect());
    }
    Ok(out)
}

/// Per joint RMS error and range over the samples used; refused when a joint has too few.
fn summarize(model: &Robot, series: HeldOutSeries) -> Result<Validation, IdentError> {
    let total = series.time.len();
    let enough = (MIN_CHECKED_SHARE * total as f64).ceil().max(1.0) as usize;
    let (mut rms, mut range, mut share) = (vec![], vec![], vec![]);
    for (j, joint) in model.joints().iter().enumerate() {
        let pairs: Vec<(f64, f64)> = series.measured[j]
            .iter()
            .zip(&series.predicted[j])
            .filter(|(m, _)| m.is_finite())
            .map(|(m, p)| (*m, *p))
            .collect();
        if pairs.len() < enough {
            return Err(IdentError::Identification {
                reason: format!(
                    "the validation log checks joint '{}' on {} of its {total} samples, fewer than 5 % (with friction, only where the joint moves faster than the friction threshold): the model cannot be validated there",
                    joint.name,
                    pairs.len()
                ),
            });
        }
        let error =
            (pairs.iter().map(|(m, p)| (m - p).powi(2)).sum::<f64>() / pairs.len() as f64).sqrt();
        let (low, high) = pairs
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), (m, _)| {
                (l.min(*m), h.max(*m))
            });
        rms.push(error);
        range.push(high - low);
        share.push(error / (high - low).max(1e-12));
    }
    Ok(Validation {
        rms,
        range,
        share_of_range: share,
        series,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm() -> Robot {
        let urdf = include_str!("../../../urdf/panda.urdf");
        Robot::from_urdf_str(urdf, &Default::default()).unwrap()
    }

    /// A log of a motion with its exact inverse-dynamics efforts, plus `extra` on joint 0.
    fn log_of(robot: &Robot, extra: f64) -> JointLog {
        let n = robot.dof();
        let mut ws = DynamicsWorkspace::new(robot);
        let mut log = JointLog {
            joint_names: robot.joint_names().map(str::to_string).collect(),
            velocity: Some(vec![]),
            acceleration: Some(vec![]),
            ..JointLog::default()
        };
        let mid = robot.middle_configuration();
        for k in 0..2000 {
            let t = k as f64 * 1e-3;
            let q: Vec<f64> = mid.iter().map(|m| m + 0.3 * (2.0 * t).sin()).collect();
            let qd = vec![0.6 * (2.0 * t).cos(); n];
            let qdd = vec![-1.2 * (2.0 * t).sin(); n];
            let mut tau = vec![0.0; n];
            rnea(robot, &mut ws, &q, &qd, &qdd, &mut tau).unwrap();
            tau[0] += extra;
            log.time.push(t);
            log.position.push(q);
            log.velocity.as_mut().unwrap().push(qd);
            log.acceleration.as_mut().unwrap().push(qdd);
            log.effort.push(tau);
        }
        log
    }

    #[test]
    fn the_true_model_predicts_its_own_efforts() {
        let robot = arm();
        let found = validate(&robot, &log_of(&robot, 0.0), 10.0, 0.1).unwrap();
        assert!(found.worst().1 < 1e-9, "{:?}", found.share_of_range);
    }

    #[test]
    fn an_offset_effort_shows_on_its_joint() {
        let robot = arm();
        let found = validate(&robot, &log_of(&robot, 2.0), 10.0, 0.1).unwrap();
        let (joint, share) = found.worst();
        assert_eq!(joint, 0);
        assert!((found.rms[0] - 2.0).abs() < 1e-9, "{}", found.rms[0]);
        assert!(share > 0.0 && found.share_of_range[1] < 1e-9);
    }

    #[test]
    fn a_failed_prediction_is_the_worst() {
        let found = Validation {
            rms: vec![0.1, f64::NAN],
            range: vec![1.0, 1.0],
            share_of_range: vec![0.1, f64::NAN],
            series: HeldOutSeries::default(),
        };
        let (joint, share) = found.worst();
        assert_eq!(joint, 1);
        assert!(share.is_nan());
    }

    #[test]
    fn a_joint_at_rest_with_coulomb_friction_is_refused_by_name() {
        let n = 7;
        let robot = arm().with_friction(&[0.0; 7], &[0.5; 7]).unwrap();
        let mut log = log_of(&robot, 0.0);
        for row in log.velocity.as_mut().unwrap() {
            row[n - 1] = 0.0;
        }
        let error = validate(&robot, &log, 10.0, 0.1).unwrap_err().to_string();
        assert!(error.contains("panda_joint7"), "{error}");
    }
}
