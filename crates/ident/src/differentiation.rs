//! Derivatives of noisy signals: a zero-phase low-pass (second-order Butterworth run forwards
//! and backwards, so fourth order without delay) and central differences.

use std::f64::consts::{PI, SQRT_2};

/// `x` low-passed at `cutoff` Hz, sampled every `dt` s, without phase lag.
pub fn low_pass(x: &[f64], dt: f64, cutoff: f64) -> Vec<f64> {
    if x.len() < 3 || !(cutoff > 0.0 && cutoff * dt < 0.5) {
        return x.to_vec();
    }
    let k = (PI * cutoff * dt).tan();
    let norm = 1.0 / (1.0 + SQRT_2 * k + k * k);
    let b0 = k * k * norm;
    let (b1, b2) = (2.0 * b0, b0);
    let a1 = 2.0 * (k * k - 1.0) * norm;
    let a2 = (1.0 - SQRT_2 * k + k * k) * norm;
    let pass = |input: &mut dyn Iterator<Item = f64>, first: f64| -> Vec<f64> {
        // Start in the steady state of the first value: no transient at the ends.
        let (mut x1, mut x2, mut y1, mut y2) = (first, first, first, first);
        input
            .map(|x0| {
                let y0 = b0 * x0 + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2;
                (x2, x1, y2, y1) = (x1, x0, y1, y0);
                y0
            })
            .collect()
    };
    let forward = pass(&mut x.iter().copied(), x[0]);
    let last = forward[forward.len() - 1];
    let mut backward = pass(&mut forward.iter().rev().copied(), last);
    backward.reverse();
    backward
}

/// `dx/dt` by central differences (one-sided at the ends); `time` may be unevenly spaced.
pub fn differentiate(x: &[f64], time: &[f64]) -> Vec<f64> {
    let n = x.len();
    if n < 2 {
        return vec![0.0; n];
    }
    (0..n)
        .map(|k| {
            let (a, b) = (k.saturating_sub(1), (k + 1).min(n - 1));
            (x[b] - x[a]) / (time[b] - time[a])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derivatives_of_a_noisy_sine_are_recovered() {
        let dt = 1e-3;
        let time: Vec<f64> = (0..4000).map(|k| k as f64 * dt).collect();
        // A 0.5 Hz sine plus a 200 Hz ripple standing in for noise.
        let x: Vec<f64> = time
            .iter()
            .map(|t| (PI * t).sin() + 1e-4 * (2.0 * PI * 200.0 * t).sin())
            .collect();
        let smooth = low_pass(&x, dt, 10.0);
        let v = differentiate(&smooth, &time);
        for k in 500..3500 {
            assert!(
                (v[k] - PI * (PI * time[k]).cos()).abs() < 2e-3,
                "k {k}: {}",
                v[k]
            );
        }
        assert_eq!(low_pass(&x, dt, 0.0), x);
    }
}
