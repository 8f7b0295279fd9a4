//! The signals the regression needs from a log: positions, velocities, accelerations and
//! efforts per sample, what the log lacks differentiated after a zero-phase low-pass.

use crate::{differentiate, low_pass, JointLog};

/// Positions, velocities, accelerations and efforts, chain order, per sample.
pub(crate) struct Signals {
    pub(crate) q: Vec<Vec<f64>>,
    pub(crate) qd: Vec<Vec<f64>>,
    pub(crate) qdd: Vec<Vec<f64>>,
    pub(crate) tau: Vec<Vec<f64>>,
}

fn columns(rows: &[Vec<f64>], j: usize) -> Vec<f64> {
    rows.iter().map(|r| r[j]).collect()
}

fn set_column(rows: &mut [Vec<f64>], j: usize, values: &[f64]) {
    for (r, v) in rows.iter_mut().zip(values) {
        r[j] = *v;
    }
}

/// The average time between samples, s.
pub(crate) fn mean_step(log: &JointLog) -> f64 {
    (log.time[log.len() - 1] - log.time[0]) / (log.len() - 1) as f64
}

/// The signals the regression needs; what the log lacks is differentiated after low-passing.
pub(crate) fn signals(log: &JointLog, cutoff: f64) -> Signals {
    let n = log.joint_names.len();
    let dt = mean_step(log);
    if let (Some(qd), Some(qdd)) = (&log.velocity, &log.acceleration) {
        return Signals {
            q: log.position.clone(),
            qd: qd.clone(),
            qdd: qdd.clone(),
            tau: log.effort.clone(),
        };
    }
    let (mut q, mut qd, mut qdd, mut tau) = (
        log.position.clone(),
        log.position.clone(),
        log.position.clone(),
        log.effort.clone(),
    );
    for j in 0..n {
        let position = low_pass(&columns(&log.position, j), dt, cutoff);
        let velocity = match &log.velocity {
            Some(v) => low_pass(&columns(v, j), dt, cutoff),
            None => differentiate(&position, &log.time),
        };
        let acceleration = match &log.acceleration {
            Some(a) => columns(a, j),
            None => differentiate(&velocity, &log.time),
        };
        set_column(&mut q, j, &position);
        set_column(&mut qd, j, &velocity);
        set_column(&mut qdd, j, &acceleration);
        // Not low-passed: noise averages out in the fit, while a smoothed Coulomb step would
        // no longer match the sign of the velocity.
        set_column(&mut tau, j, &held_effort(&columns(&log.effort, j)));
    }
    Signals { q, qd, qdd, tau }
}

/// Efforts as the differentiated accelerations see them: an effort acts from its sample time
/// until the next (zero-order hold, as commanded efforts and ros2_control's effort interfaces
/// do), and a central difference at sample k spans the efforts of samples k-1 and k, so the
/// two are averaged. (Without this, the half-sample shift biased inertial parameters by ~1%.)
fn held_effort(effort: &[f64]) -> Vec<f64> {
    (0..effort.len())
        .map(|k| 0.5 * (effort[k.saturating_sub(1)] + effort[k]))
        .collect()
}
