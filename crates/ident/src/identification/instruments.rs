//! Instrumental variables for closed-loop data (IDIM-IV: Janot, Vandanjon and Gautier, IEEE
//! TCST 2014). On an arm under feedback the efforts answer the measured noise, so the
//! measured regressor is correlated with the equations' error and least squares is biased.
//! The instruments are the regressor of the same closed loop simulated on a previous estimate
//! (same reference, same controller): correlated with the measured regressor, not with its
//! noise. The estimate is two-stage least squares: the measured regressor projected onto the
//! instruments' columns takes its place in the fit.

use nalgebra::DMatrix;

use crate::{IdentError, JointLog};

fn fail(reason: String) -> IdentError {
    IdentError::Identification { reason }
}

/// `instruments` (positions and velocities) at the times of `log`, both timed from their
/// first sample, interpolated linearly. Refused when the joints differ or the instruments end
/// more than a step before the log.
pub(crate) fn on_log_times(instruments: &JointLog, log: &JointLog) -> Result<JointLog, IdentError> {
    if let Some(missing) = log
        .joint_names
        .iter()
        .find(|j| !instruments.joint_names.contains(j))
    {
        return Err(fail(format!("joint '{missing}' is not in the instruments")));
    }
    let instruments = instruments.for_joints(&log.joint_names)?;
    instruments
        .check()
        .map_err(|reason| fail(format!("the instruments: {reason}")))?;
    let velocity = instruments
        .velocity
        .as_ref()
        .ok_or_else(|| fail("the instruments (a simulated run) must have velocities".into()))?;
    let (start, t0) = (instruments.time[0], log.time[0]);
    let span = instruments.time[instruments.len() - 1] - start;
    let needed = log.time[log.len() - 1] - t0;
    let step = super::signals::mean_step(log);
    if needed > span + step {
        return Err(fail(format!(
            "the instruments cover {span:.3} s of the log's {needed:.3} s: simulate the whole run"
        )));
    }
    let mut resampled = JointLog {
        joint_names: log.joint_names.clone(),
        time: log.time.clone(),
        position: Vec::with_capacity(log.len()),
        velocity: Some(Vec::with_capacity(log.len())),
        acceleration: None,
        effort: vec![vec![0.0; log.joint_names.len()]; log.len()],
    };
    let mut k = 0;
    for &t in &log.time {
        let t = (t - t0).min(span) + start;
        while k + 2 < instruments.len() && instruments.time[k + 1] < t {
            k += 1;
        }
        let (ta, tb) = (instruments.time[k], instruments.time[k + 1]);
        let share = ((t - ta) / (tb - ta)).clamp(0.0, 1.0);
        let at = |rows: &[Vec<f64>]| -> Vec<f64> {
            rows[k]
                .iter()
                .zip(&rows[k + 1])
                .map(|(a, b)| a + share * (b - a))
                .collect()
        };
        resampled.position.push(at(&instruments.position));
        if let Some(v) = resampled.velocity.as_mut() {
            v.push(at(velocity));
        }
    }
    check_same_run(&resampled, log)?;
    Ok(resampled)
}

/// Refuses instruments that are not the log's run: a joint whose simulated positions differ
/// from the measured ones by more than [`MOTION_SHARE`] of its motion about its mean (and
/// more than [`SAME_POSITION`]) was driven otherwise. Instruments of another run are nearly
/// uncorrelated with the measured regressor, and the estimate would be noise.
fn check_same_run(instruments: &JointLog, log: &JointLog) -> Result<(), IdentError> {
    let rms = |values: &mut dyn Iterator<Item = f64>| {
        let (sum, count) = values.fold((0.0, 0usize), |(s, c), v| (s + v * v, c + 1));
        (sum / count.max(1) as f64).sqrt()
    };
    for (j, name) in log.joint_names.iter().enumerate() {
        let mean = log.position.iter().map(|q| q[j]).sum::<f64>() / log.len() as f64;
        let motion = rms(&mut log.position.iter().map(|q| q[j] - mean));
        let pairs = log.position.iter().zip(&instruments.position);
        let apart = rms(&mut pairs.map(|(a, b)| a[j] - b[j]));
        let allowed = SAME_POSITION.max(MOTION_SHARE * motion);
        if apart.is_nan() || apart > allowed {
            return Err(fail(format!(
                "the instruments are not the log's run: joint '{name}' is {apart:.3} (RMS) from its logged positions, which move {motion:.3} (RMS) about their mean; simulate the same run (trajectory, controller, start)"
            )));
        }
    }
    Ok(())
}

/// The largest RMS difference between the log's and the instruments' positions, as a share of
/// the joint's motion, for the instruments to be that run: the closed loop simulated on an
/// estimate tracks as the arm did, within a small part of the motion.
const MOTION_SHARE: f64 = 0.5;

/// Below this RMS difference, rad (m), positions are the same run whatever the motion.
const SAME_POSITION: f64 = 0.01;

/// Why a log projected onto instruments does not determine the parameters.
pub(crate) fn not_instrumented(condition: f64) -> IdentError {
    fail(format!(
        "the measured regressor projected onto the instruments does not determine the parameters (condition number {condition:.3e}): the simulated run does not move as the log's does"
    ))
}

/// `w` projected onto the columns of `z`: `z (z^T z)^+ z^T w`, the part of the measured
/// regressor the instruments explain (rows `z` leaves at zero stay zero).
pub(crate) fn project(z: &DMatrix<f64>, w: &DMatrix<f64>) -> Result<DMatrix<f64>, IdentError> {
    let coefficients = z
        .clone()
        .svd(true, true)
        .solve(w, 1e-12)
        .map_err(|e| fail(format!("the instruments' projection: {e}")))?;
    Ok(z * coefficients)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(times: &[f64], q: impl Fn(f64) -> f64) -> JointLog {
        JointLog {
            joint_names: vec!["a".into()],
            time: times.to_vec(),
            position: times.iter().map(|t| vec![q(*t)]).collect(),
            velocity: Some(times.iter().map(|t| vec![2.0 * q(*t)]).collect()),
            acceleration: None,
            effort: vec![vec![0.0]; times.len()],
        }
    }

    #[test]
    fn instruments_are_read_at_the_logs_times_from_its_start() {
        let sim: Vec<f64> = (0..=100).map(|k| k as f64 * 0.01).collect();
        let measured: Vec<f64> = (0..50).map(|k| 7.005 + k as f64 * 0.015).collect();
        let line = |t: f64| 3.0 * t + 1.0;
        // The same run, logged from 7.005 s (0.015 s apart, between the instruments' samples).
        let logged = log(&measured, |t| line(t - 7.005) + 1e-3);
        let on = on_log_times(&log(&sim, line), &logged).unwrap();
        for (t, q) in measured.iter().zip(&on.position) {
            assert!((q[0] - line(t - 7.005)).abs() < 1e-12, "{t}: {}", q[0]);
        }
        let short: Vec<f64> = (0..=40).map(|k| k as f64 * 0.01).collect();
        let err = on_log_times(&log(&short, line), &logged).unwrap_err();
        assert!(err.to_string().contains("cover 0.400 s"), "{err}");
    }

    #[test]
    fn instruments_of_another_run_or_other_joints_are_refused() {
        let times: Vec<f64> = (0..=100).map(|k| k as f64 * 0.01).collect();
        let logged = log(&times, |t| (6.0 * t).sin());
        let other = log(&times, |t| (6.0 * t).cos());
        let err = on_log_times(&other, &logged).unwrap_err().to_string();
        assert!(err.contains("not the log's run: joint 'a'"), "{err}");
        let mut renamed = log(&times, |t| (6.0 * t).sin());
        renamed.joint_names = vec!["b".into()];
        let err = on_log_times(&renamed, &logged).unwrap_err().to_string();
        assert!(err.contains("joint 'a' is not in the instruments"), "{err}");
    }

    #[test]
    fn a_regressor_the_instruments_span_is_projected_onto_itself() {
        let z = DMatrix::from_fn(20, 3, |r, c| ((r * 3 + c) as f64).sin());
        let w = &z * DMatrix::from_fn(3, 2, |r, c| (r + 2 * c) as f64);
        let projected = project(&z, &w).unwrap();
        assert!((projected - &w).amax() < 1e-10);
        // A column the instruments do not see at all is removed.
        let mut orthogonal = DMatrix::zeros(20, 1);
        let basis = z.clone().qr().q();
        let mut v = DMatrix::from_fn(20, 1, |r, _| (r as f64 * 0.7).cos());
        v -= &basis * (basis.transpose() * &v);
        orthogonal.copy_from(&v);
        assert!(project(&z, &orthogonal).unwrap().amax() < 1e-10);
    }
}
