//! Whether a log determines the parameters: the condition number of the column-scaled
//! regressor, and what to say when it does not.

use nalgebra::DMatrix;

use crate::IdentError;

/// Above this condition number (of the column-scaled regressor) the log cannot separate the
/// parameters: some estimates would be set by the noise alone.
pub(crate) const MAX_CONDITION: f64 = 1e6;

/// Why the log does not determine the parameters: those it does not excite at all, if any.
pub(crate) fn poorly_excited(w: &DMatrix<f64>, names: &[String], condition: f64) -> IdentError {
    let norms: Vec<f64> = w.column_iter().map(|c| c.norm()).collect();
    let largest = norms.iter().fold(0.0_f64, |m, v| m.max(*v));
    let unexcited: Vec<&str> = norms
        .iter()
        .zip(names)
        .filter(|(norm, _)| **norm <= 1e-12 * largest)
        .map(|(_, name)| name.as_str())
        .collect();
    let reason = if unexcited.is_empty() {
        format!("the log does not excite the parameters independently (condition number {condition:.3e}); record an exciting trajectory (armctl excite)")
    } else {
        format!("the log does not excite {} (a joint that never moves, or with friction never moves faster than the friction threshold); record an exciting trajectory (armctl excite)", unexcited.join(", "))
    };
    IdentError::Identification { reason }
}

pub(crate) fn condition_number(w: &DMatrix<f64>) -> f64 {
    let mut scaled = w.clone();
    for mut c in scaled.column_iter_mut() {
        let norm = c.norm();
        if norm > 0.0 {
            c /= norm;
        }
    }
    let s = scaled.svd(false, false).singular_values;
    s.max() / s.min()
}
