//! Helpers shared by this crate's property tests.

use proptest::prelude::*;

/// `len` values uniform in `(-scale, scale)`.
pub(crate) fn vec_in(len: usize, scale: f64) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(-scale..scale, len)
}

/// Every entry of `got` within 1e-10 of the largest of `want` (at least 1).
#[allow(dead_code)] // not every test file compares slices
pub(crate) fn assert_close(what: &str, got: &[f64], want: &[f64]) {
    let scale = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= 1e-10 * scale, "{what}[{k}]: {g} vs {w}");
    }
}
