//! The polynomials the closed forms are written in: products of symbols with real
//! coefficients, and the algebra the Lagrange-Euler route needs on them.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A polynomial in the symbols of a [`ClosedForm`]: exponents per symbol -> coefficient.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Poly(pub(super) BTreeMap<Vec<u8>, f64>);

impl Poly {
    pub(super) fn constant(value: f64, symbols: usize) -> Self {
        let mut terms = BTreeMap::new();
        if value != 0.0 {
            terms.insert(vec![0; symbols], value);
        }
        Poly(terms)
    }

    pub(super) fn symbol(index: usize, symbols: usize) -> Self {
        let mut exponents = vec![0; symbols];
        exponents[index] = 1;
        Poly(BTreeMap::from([(exponents, 1.0)]))
    }

    pub(super) fn add(&self, other: &Poly) -> Poly {
        let mut terms = self.0.clone();
        for (k, v) in &other.0 {
            *terms.entry(k.clone()).or_insert(0.0) += v;
        }
        Poly(terms).pruned()
    }

    pub(super) fn scale(&self, factor: f64) -> Poly {
        Poly(
            self.0
                .iter()
                .map(|(k, v)| (k.clone(), v * factor))
                .collect(),
        )
        .pruned()
    }

    pub(super) fn mul(&self, other: &Poly) -> Poly {
        let mut terms: BTreeMap<Vec<u8>, f64> = BTreeMap::new();
        for (a, x) in &self.0 {
            for (b, y) in &other.0 {
                let k: Vec<u8> = a.iter().zip(b).map(|(i, j)| i + j).collect();
                *terms.entry(k).or_insert(0.0) += x * y;
            }
        }
        Poly(terms).pruned()
    }

    pub(super) fn pruned(mut self) -> Poly {
        self.0.retain(|_, v| v.abs() > 1e-13);
        self
    }

    /// Rewrites every `s^2` as `1 - c^2` for the (sine, cosine) symbol pairs.
    pub(super) fn reduced(&self, pairs: &[(usize, usize)]) -> Poly {
        let mut done = Poly::default();
        let mut work: Vec<(Vec<u8>, f64)> = self.0.iter().map(|(k, v)| (k.clone(), *v)).collect();
        while let Some((k, v)) = work.pop() {
            match pairs.iter().find(|(s, _)| k[*s] >= 2) {
                Some(&(s, c)) => {
                    let mut once = k.clone();
                    once[s] -= 2;
                    let mut with_c = once.clone();
                    with_c[c] += 2;
                    work.push((once, v));
                    work.push((with_c, -v));
                }
                None => *done.0.entry(k).or_insert(0.0) += v,
            }
        }
        done.pruned()
    }

    /// The value at `values` (one per symbol).
    pub fn eval(&self, values: &[f64]) -> f64 {
        self.0
            .iter()
            .map(|(k, v)| {
                k.iter()
                    .zip(values)
                    .fold(*v, |acc, (e, x)| acc * x.powi(i32::from(*e)))
            })
            .sum()
    }

    /// As text with the symbols' names.
    pub fn render(&self, names: &[String]) -> String {
        if self.0.is_empty() {
            return "0".into();
        }
        let mut out = String::new();
        // Highest degree first, as written by hand.
        let mut terms: Vec<(&Vec<u8>, &f64)> = self.0.iter().collect();
        terms.sort_by_key(|(k, _)| std::cmp::Reverse(k.iter().map(|e| u32::from(*e)).sum::<u32>()));
        for (n, (k, v)) in terms.into_iter().enumerate() {
            let factors: Vec<String> = k
                .iter()
                .zip(names)
                .filter(|(e, _)| **e > 0)
                .map(|(e, name)| {
                    if *e == 1 {
                        name.clone()
                    } else {
                        format!("{name}^{e}")
                    }
                })
                .collect();
            let magnitude = v.abs();
            let sign = if *v < 0.0 { "-" } else { "+" };
            if n == 0 {
                if *v < 0.0 {
                    out.push('-');
                }
            } else {
                let _ = write!(out, " {sign} ");
            }
            let unit = (magnitude - 1.0).abs() < 1e-12 && !factors.is_empty();
            if !unit {
                let _ = write!(out, "{magnitude}");
                if !factors.is_empty() {
                    out.push(' ');
                }
            }
            out.push_str(&factors.join(" "));
        }
        out
    }
}
