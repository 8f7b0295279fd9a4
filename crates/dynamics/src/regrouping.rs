//! Base parameters by the regrouping rules for MDH frames (docs/theory.md section 5; Khalil and
//! Bennis), from link n down to link 2, with `C, S = cos, sin alpha_{i-1}`, `a = a_{i-1}`,
//! `d = d_i`:
//! - revolute joint i: link i keeps `XX - YY, XY, XZ, YZ, ZZ, MX, MY`; `YY_i, MZ_i, M_i` move
//!   into link i-1's ten parameters (the formulas in `absorb_revolute`);
//! - prismatic joint i: link i keeps `MX, MY, MZ, M`; its inertia tensor, rotated into frame
//!   i-1, moves into link i-1's;
//! - link 1: about a fixed axis only `ZZ` (and `MX, MY` under gravity across the axis; `M` for a
//!   prismatic joint 1) act; `ZZ` alone when joint 1 is along gravity.
//!
//! These rules cover arms whose joints 2..n are in the general case. Special geometries drop
//! more (a joint parallel to every earlier one, a prismatic joint right after such): then the
//! count exceeds the regressor's rank and [`regrouped_base_parameters`] says so, and the
//! numerical method ([`crate::numeric_base_parameters`]) is the one to use.

use armctl_model::{JointKind, Robot, PARAMS_PER_LINK};
use nalgebra::{DMatrix, DVector, Matrix3};

use crate::{stacked_regressor, BaseParameters, DynamicsError};

const XX: usize = 0;
const XY: usize = 1;
const XZ: usize = 2;
const YY: usize = 3;
const YZ: usize = 4;
const ZZ: usize = 5;
const MX: usize = 6;
const MY: usize = 7;
const MZ: usize = 8;
const M: usize = 9;

/// Rows of regrouped parameters as combinations of the original ones (10n x 10n).
struct Rows {
    rows: DMatrix<f64>,
}

impl Rows {
    fn row(&self, link: usize, k: usize) -> DVector<f64> {
        self.rows.row(PARAMS_PER_LINK * link + k).transpose()
    }

    fn add(&mut self, link: usize, k: usize, weight: f64, v: &DVector<f64>) {
        let mut row = self.rows.row_mut(PARAMS_PER_LINK * link + k);
        row += weight * v.transpose();
    }
}

/// Link i's `YY, MZ, M` into link i-1 (revolute joint i), and `XX_i -= YY_i`.
fn absorb_revolute(rows: &mut Rows, i: usize, a: f64, alpha: f64, d: f64) {
    let (c, s) = (alpha.cos(), alpha.sin());
    let (yy, mz, m) = (rows.row(i, YY), rows.row(i, MZ), rows.row(i, M));
    let p = i - 1;
    let mzd = &mz + d * &m; // MZ + d M
    let yyd = &yy + 2.0 * d * &mz + d * d * &m; // YY + 2 d MZ + d^2 M
    rows.add(i, XX, -1.0, &yy);
    rows.add(p, XX, 1.0, &yyd);
    rows.add(p, XY, a * s, &mzd);
    rows.add(p, XZ, -a * c, &mzd);
    rows.add(p, YY, c * c, &yyd);
    rows.add(p, YY, a * a, &m);
    rows.add(p, YZ, c * s, &yyd);
    rows.add(p, ZZ, s * s, &yyd);
    rows.add(p, ZZ, a * a, &m);
    rows.add(p, MX, a, &m);
    rows.add(p, MY, -s, &mzd);
    rows.add(p, MZ, c, &mzd);
    rows.add(p, M, 1.0, &m);
}

/// Link i's inertia tensor, rotated by `r` (frame i in frame i-1), into link i-1 (prismatic i).
fn absorb_prismatic(rows: &mut Rows, i: usize, r: &Matrix3<f64>) {
    let index = |a: usize, b: usize| match (a.min(b), a.max(b)) {
        (0, 0) => XX,
        (0, 1) => XY,
        (0, 2) => XZ,
        (1, 1) => YY,
        (1, 2) => YZ,
        _ => ZZ,
    };
    let tensor: Vec<Vec<DVector<f64>>> = (0..3)
        .map(|a| (0..3).map(|b| rows.row(i, index(a, b))).collect())
        .collect();
    // (R J R^T)_ab = sum_kl R_ak J_kl R_bl, for the six upper elements.
    for (a, b) in [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)] {
        for k in 0..3 {
            for l in 0..3 {
                rows.add(i - 1, index(a, b), r[(a, k)] * r[(b, l)], &tensor[k][l]);
            }
        }
    }
}

/// What link i keeps.
fn kept(robot: &Robot, i: usize) -> &'static [usize] {
    let joint = &robot.joints()[i];
    match (i, joint.kind) {
        (0, JointKind::Revolute) if along_gravity(robot) => &[ZZ],
        (0, JointKind::Revolute) => &[ZZ, MX, MY],
        (0, JointKind::Prismatic) => &[M],
        (_, JointKind::Revolute) => &[XX, XY, XZ, YZ, ZZ, MX, MY],
        (_, JointKind::Prismatic) => &[MX, MY, MZ, M],
    }
}

/// Whether joint 1's axis (z of frame {0}, which it shares with frame {1}) is along gravity.
fn along_gravity(robot: &Robot) -> bool {
    let g = robot.gravity_in_frame0();
    let z = robot.joints()[0].mdh.alpha();
    // Frame {1}'s z in frame {0}: (0, -sin alpha_0, cos alpha_0).
    let axis = nalgebra::Vector3::new(0.0, -z.sin(), z.cos());
    g.norm() > 0.0 && axis.cross(&g).norm() < 1e-9 * g.norm()
}

/// The base parameters by the regrouping rules, or why they do not cover this robot.
pub fn regrouped_base_parameters(robot: &Robot) -> Result<BaseParameters, String> {
    let n = robot.dof();
    let mut rows = Rows {
        rows: DMatrix::identity(PARAMS_PER_LINK * n, PARAMS_PER_LINK * n),
    };
    for i in (1..n).rev() {
        let mdh = &robot.joints()[i].mdh;
        match robot.joints()[i].kind {
            JointKind::Revolute => absorb_revolute(&mut rows, i, mdh.a(), mdh.alpha(), mdh.d()),
            JointKind::Prismatic => {
                let r =
                    nalgebra::Rotation3::from_axis_angle(&nalgebra::Vector3::x_axis(), mdh.alpha())
                        * nalgebra::Rotation3::from_axis_angle(
                            &nalgebra::Vector3::z_axis(),
                            mdh.theta(),
                        );
                absorb_prismatic(&mut rows, i, r.matrix());
            }
        }
    }
    let columns: Vec<usize> = (0..n)
        .flat_map(|i| kept(robot, i).iter().map(move |k| PARAMS_PER_LINK * i + k))
        .collect();
    let map = rows.rows.select_rows(&columns);
    check_coverage(robot, &columns).map_err(|e| e.to_string())??;
    Ok(BaseParameters::new(columns, map))
}

/// The kept columns must be independent and as many as the regressor's rank.
fn check_coverage(robot: &Robot, columns: &[usize]) -> Result<Result<(), String>, DynamicsError> {
    let w = stacked_regressor(robot, (12 * PARAMS_PER_LINK).max(8 * robot.dof()), 0x7e57)?;
    let rank = |m: &DMatrix<f64>| {
        let s = m.clone().svd(false, false).singular_values;
        let largest = s.max();
        s.iter().filter(|v| **v > 1e-9 * largest).count()
    };
    let (full, kept) = (rank(&w), rank(&w.select_columns(columns)));
    Ok(if kept == columns.len() && kept == full {
        Ok(())
    } else {
        Err(format!(
            "the regrouping rules keep {} parameters ({kept} independent) but the regressor has rank {full}: this geometry needs the numerical method",
            columns.len()
        ))
    })
}
