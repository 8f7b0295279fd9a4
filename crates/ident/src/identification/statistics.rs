//! The noise of each joint's equations and the estimate's standard deviations.

use nalgebra::{DMatrix, DVector};

use crate::IdentError;

/// Each joint's residual standard deviation (its rows are every n-th).
pub(crate) fn joint_noise(
    w: &DMatrix<f64>,
    residual: &DVector<f64>,
    n: usize,
    unknowns: usize,
) -> Vec<f64> {
    let rows = residual.len() / n;
    (0..n)
        .map(|j| {
            let used: Vec<usize> = (0..rows)
                .map(|r| r * n + j)
                .filter(|&r| w.row(r).iter().any(|v| *v != 0.0))
                .collect();
            let dof = (used.len() as f64 - unknowns as f64 / n as f64).max(1.0);
            (used.iter().map(|&r| residual[r].powi(2)).sum::<f64>() / dof).sqrt()
        })
        .collect()
}

/// The estimate's standard deviations: `sigma^2 (W^T W)^-1`, `sigma` from the residual of
/// `residual_of` (the measured regressor; `w` itself without instruments).
pub(crate) fn standard_deviations(
    w: &DMatrix<f64>,
    residual_of: &DMatrix<f64>,
    y: &DVector<f64>,
    estimate: &DVector<f64>,
) -> Result<Vec<f64>, IdentError> {
    let residual = y - residual_of * estimate;
    // Rows left out of the fit (zeroed) are no data.
    let rows = w.row_iter().filter(|r| r.amax() > 0.0).count();
    let dof = (rows as f64 - w.ncols() as f64).max(1.0);
    let sigma2 = residual.norm_squared() / dof;
    let normal = w.transpose() * w;
    let inverse = normal
        .pseudo_inverse(1e-14)
        .map_err(|e| IdentError::Identification {
            reason: e.to_string(),
        })?;
    Ok(inverse
        .diagonal()
        .iter()
        .map(|v| (sigma2 * v.max(0.0)).sqrt())
        .collect())
}
