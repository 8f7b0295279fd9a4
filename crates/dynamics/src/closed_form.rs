//! Closed forms of `M(q)`, `C(q, qd)` and `G(q)` for arms of up to three joints, as the course
//! derives them by hand: the Lagrange-Euler route (docs/theory.md section 10) carried out on
//! polynomials in `c_i = cos(theta_i)`, `s_i = sin(theta_i)` (revolute), `q_i` (prismatic),
//! `qd_i`, the arm's non-zero MDH lengths (`a_i`, `d_i`), twists other than multiples of 90
//! degrees (`ca_i`, `sa_i`), the non-zero link parameters about each MDH frame (`XX_i .. ZZ_i`,
//! `MX_i .. MZ_i`, `M_i`, as `armctl params`), the armatures (`Ia_i`) and gravity (`g`, or
//! `gx gy gz`). `s_i^2` is rewritten `1 - c_i^2` (and `sa_i^2` as `1 - ca_i^2`), so equal
//! expressions print alike.

use std::fmt::Write as _;

use crate::DynamicsError;
use armctl_model::{JointKind, Robot};

mod poly;

/// The most joints a closed form is printed for (the expressions grow fast beyond).
pub const MAX_CLOSED_FORM_JOINTS: usize = 3;

pub use poly::Poly;

/// A 4x4 matrix of polynomials.
type PolyMatrix = [[Poly; 4]; 4];

/// M, C and G of an arm as polynomials, and the symbols with their values for the arm.
#[derive(Debug, Clone)]
pub struct ClosedForm {
    /// Symbol names.
    pub names: Vec<String>,
    /// The arm's values of the symbols that are not variables (NaN for `c_i`, `s_i`, `q_i`,
    /// `qd_i`, set by [`ClosedForm::values`]).
    constants: Vec<f64>,
    /// Per joint: the indices of (c, s) or q, and of qd, and the angle offset.
    joints: Vec<(JointSymbols, usize, f64)>,
    /// `M[i][j]`.
    pub m: Vec<Vec<Poly>>,
    /// `C[i][j]`.
    pub c: Vec<Vec<Poly>>,
    /// `G[i]`.
    pub g: Vec<Poly>,
}

#[derive(Debug, Clone, Copy)]
enum JointSymbols {
    Revolute { c: usize, s: usize },
    Prismatic { q: usize },
}

/// Collects the symbols and their values.
#[derive(Default)]
struct Symbols {
    names: Vec<String>,
    values: Vec<f64>,
}

impl Symbols {
    fn add(&mut self, name: String, value: f64) -> usize {
        self.names.push(name);
        self.values.push(value);
        self.names.len() - 1
    }
}

/// A length as a symbol of its value, or none (the exact value is used) when it is zero.
fn length_symbol(value: f64, name: String, symbols: &mut Symbols) -> Option<usize> {
    (value.abs() > 1e-12).then(|| symbols.add(name, value))
}

impl ClosedForm {
    /// The closed forms for `robot` (at most [`MAX_CLOSED_FORM_JOINTS`] joints).
    pub fn new(robot: &Robot) -> Result<Self, DynamicsError> {
        let n = robot.dof();
        if n > MAX_CLOSED_FORM_JOINTS {
            return Err(DynamicsError::Unsupported {
                reason: format!("closed forms are printed for at most {MAX_CLOSED_FORM_JOINTS} joints, the arm has {n}"),
            });
        }
        let mut symbols = Symbols::default();
        let mut joints = Vec::new();
        for (i, joint) in robot.joints().iter().enumerate() {
            let k = i + 1;
            let variable = match joint.kind {
                JointKind::Revolute => JointSymbols::Revolute {
                    c: symbols.add(format!("c{k}"), f64::NAN),
                    s: symbols.add(format!("s{k}"), f64::NAN),
                },
                JointKind::Prismatic => JointSymbols::Prismatic {
                    q: symbols.add(format!("q{k}"), f64::NAN),
                },
            };
            let qd = symbols.add(format!("qd{k}"), f64::NAN);
            joints.push((variable, qd, joint.mdh.theta()));
        }
        let builder = Builder::new(robot, &mut symbols, &joints);
        let form = builder.build(robot, &joints)?;
        Ok(Self {
            names: symbols.names,
            constants: symbols.values,
            joints,
            m: form.0,
            c: form.1,
            g: form.2,
        })
    }

    /// The symbols' values at `q`, `qd`.
    pub fn values(&self, q: &[f64], qd: &[f64]) -> Vec<f64> {
        let mut values = self.constants.clone();
        for ((variable, qd_index, offset), (&qi, &qdi)) in self.joints.iter().zip(q.iter().zip(qd))
        {
            match *variable {
                JointSymbols::Revolute { c, s } => {
                    values[c] = (qi + offset).cos();
                    values[s] = (qi + offset).sin();
                }
                JointSymbols::Prismatic { q } => values[q] = qi,
            }
            values[*qd_index] = qdi;
        }
        values
    }

    /// The closed forms as text, with the arm's values of the constant symbols.
    pub fn render(&self, robot: &Robot) -> String {
        let mut out = String::new();
        for (k, (joint, (_, _, offset))) in robot.joints().iter().zip(&self.joints).enumerate() {
            let what = match joint.kind {
                JointKind::Revolute if offset.abs() > 0.0 => {
                    format!(
                        "c{0} = cos(q{0} + {offset}), s{0} = sin(q{0} + {offset})",
                        k + 1
                    )
                }
                JointKind::Revolute => format!("c{0} = cos(q{0}), s{0} = sin(q{0})", k + 1),
                JointKind::Prismatic => format!("q{} (m)", k + 1),
            };
            let _ = writeln!(out, "joint {} ({}): {what}", k + 1, joint.name);
        }
        let constants: Vec<String> = self
            .names
            .iter()
            .zip(&self.constants)
            .filter(|(_, v)| v.is_finite())
            .map(|(n, v)| format!("{n} = {v}"))
            .collect();
        let _ = writeln!(out, "with {}\n", constants.join(", "));
        let n = self.g.len();
        write_matrix(&mut out, "M", &self.m, &self.names);
        write_matrix(&mut out, "C", &self.c, &self.names);
        for i in 0..n {
            let _ = writeln!(out, "G{} = {}", i + 1, self.g[i].render(&self.names));
        }
        out
    }
}

/// `NAMEij = ..` for every entry of `matrix`, then a blank line.
fn write_matrix(out: &mut String, name: &str, matrix: &[Vec<Poly>], names: &[String]) {
    for (i, row) in matrix.iter().enumerate() {
        for (j, entry) in row.iter().enumerate() {
            let _ = writeln!(out, "{name}{}{} = {}", i + 1, j + 1, entry.render(names));
        }
    }
    out.push('\n');
}

/// The symbolic pieces of the arm.
struct Builder {
    count: usize,
    pairs: Vec<(usize, usize)>,
    /// Pseudo-inertia per link.
    pseudo: Vec<PolyMatrix>,
    /// Link transforms `T_{i-1,i}`.
    links: Vec<PolyMatrix>,
    gravity: [Poly; 3],
    armature: Vec<Poly>,
    /// Each link's `[h; m]`.
    moments: Vec<[Poly; 4]>,
}

fn zero_matrix() -> PolyMatrix {
    std::array::from_fn(|_| std::array::from_fn(|_| Poly::default()))
}

fn mat_mul(a: &PolyMatrix, b: &PolyMatrix, pairs: &[(usize, usize)]) -> PolyMatrix {
    std::array::from_fn(|r| {
        std::array::from_fn(|c| {
            (0..4)
                .fold(Poly::default(), |acc, k| acc.add(&a[r][k].mul(&b[k][c])))
                .reduced(pairs)
        })
    })
}

fn trace_product(a: &PolyMatrix, j: &PolyMatrix, b: &PolyMatrix, pairs: &[(usize, usize)]) -> Poly {
    // Tr(A J B^T) = sum_r sum_s A_rs (J B^T)_sr = sum_{r,s,t} A_rs J_st B_rt.
    let mut sum = Poly::default();
    for r in 0..3 {
        for s in 0..4 {
            if a[r][s].0.is_empty() {
                continue;
            }
            for t in 0..4 {
                if j[s][t].0.is_empty() || b[r][t].0.is_empty() {
                    continue;
                }
                sum = sum.add(&a[r][s].mul(&j[s][t]).mul(&b[r][t]));
            }
        }
    }
    sum.reduced(pairs)
}

/// A joint's non-zero lengths and general twist as symbols (`a`, `d`, `(ca, sa)`).
type Geometry = (Option<usize>, Option<usize>, Option<(usize, usize)>);

/// The symbols of each joint's geometry.
fn geometry_symbols(robot: &Robot, symbols: &mut Symbols) -> Vec<Geometry> {
    robot
        .joints()
        .iter()
        .enumerate()
        .map(|(i, joint)| {
            let (k, mdh) = (i + 1, &joint.mdh);
            let a = length_symbol(mdh.a(), format!("a{k}"), symbols);
            let d = (joint.kind == JointKind::Revolute)
                .then(|| length_symbol(mdh.d(), format!("d{k}"), symbols))
                .flatten();
            let general = mdh.sin_alpha().abs() > 1e-12 && mdh.cos_alpha().abs() > 1e-12;
            let twist = general.then(|| {
                (
                    symbols.add(format!("ca{k}"), mdh.cos_alpha()),
                    symbols.add(format!("sa{k}"), mdh.sin_alpha()),
                )
            });
            (a, d, twist)
        })
        .collect()
}

/// The symbols of each link's non-zero parameters `[XX .. M]` (as `armctl params`).
fn inertial_symbols(robot: &Robot, symbols: &mut Symbols) -> Vec<[Option<usize>; 10]> {
    const NAMES: [&str; 10] = ["XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M"];
    robot
        .link_parameters()
        .iter()
        .enumerate()
        .map(|(i, link)| {
            let p = link.to_vector();
            std::array::from_fn(|k| {
                (p[k].abs() > 1e-15).then(|| symbols.add(format!("{}{}", NAMES[k], i + 1), p[k]))
            })
        })
        .collect()
}

/// Gravity in frame {0}: `g` along the axis it points along (with its sign), else `gx gy gz`.
fn gravity_symbols(robot: &Robot, symbols: &mut Symbols) -> [Option<(usize, f64)>; 3] {
    let g0 = robot.gravity_in_frame0();
    let norm = g0.norm();
    if norm == 0.0 {
        return [None; 3];
    }
    // Along an axis only when the rest is nothing (not merely small: it would be dropped).
    let along = |k: usize| {
        (0..3)
            .filter(|&r| r != k)
            .all(|r| g0[r].abs() <= 1e-12 * norm)
    };
    match (0..3).find(|&k| along(k)) {
        Some(axis) => {
            let g = symbols.add("g".into(), norm);
            std::array::from_fn(|k| (k == axis).then_some((g, g0[k].signum())))
        }
        None => {
            std::array::from_fn(|k| Some((symbols.add(["gx", "gy", "gz"][k].into(), g0[k]), 1.0)))
        }
    }
}

/// `T_{i-1,i}` of a joint (Craig): `[[c, -s, 0, a], [s ca, c ca, -sa, -d sa], [s sa, c sa,
/// ca, d ca]]`.
fn link_transform(
    joint: &armctl_model::Joint,
    variable: JointSymbols,
    (a, d, twist): Geometry,
    count: usize,
) -> PolyMatrix {
    let mdh = &joint.mdh;
    let sym = |i: usize| Poly::symbol(i, count);
    let num = |v: f64| Poly::constant(v, count);
    let (ca, sa) = match twist {
        Some((c, s)) => (sym(c), sym(s)),
        None => (num(mdh.cos_alpha().round()), num(mdh.sin_alpha().round())),
    };
    let (ct, st, dd) = match variable {
        JointSymbols::Revolute { c, s } => (sym(c), sym(s), d.map_or(num(mdh.d()), sym)),
        JointSymbols::Prismatic { q } => {
            let (s, c) = mdh.theta().sin_cos();
            (num(c), num(s), num(mdh.d()).add(&sym(q)))
        }
    };
    let a = a.map_or(num(mdh.a()), sym);
    [
        [ct.clone(), st.scale(-1.0), num(0.0), a],
        [
            st.mul(&ca),
            ct.mul(&ca),
            sa.scale(-1.0),
            dd.mul(&sa).scale(-1.0),
        ],
        [st.mul(&sa), ct.mul(&sa), ca.clone(), dd.mul(&ca)],
        [num(0.0), num(0.0), num(0.0), num(1.0)],
    ]
}

/// `J = [[Sigma, h], [h^T, m]]`, `Sigma = tr(I)/2 - I`, from a link's parameter symbols.
fn pseudo_inertia(p: &[Option<usize>; 10], count: usize) -> PolyMatrix {
    let s = |k: usize| p[k].map_or(Poly::default(), |i| Poly::symbol(i, count));
    let (xx, xy, xz, yy, yz, zz) = (s(0), s(1), s(2), s(3), s(4), s(5));
    let half = |a: &Poly, b: &Poly, c: &Poly| a.scale(-0.5).add(&b.scale(0.5)).add(&c.scale(0.5));
    let (mxy, mxz, myz) = (xy.scale(-1.0), xz.scale(-1.0), yz.scale(-1.0));
    [
        [half(&xx, &yy, &zz), mxy.clone(), mxz.clone(), s(6)],
        [mxy, half(&yy, &xx, &zz), myz.clone(), s(7)],
        [mxz, myz, half(&zz, &xx, &yy), s(8)],
        [s(6), s(7), s(8), s(9)],
    ]
}

impl Builder {
    fn new(robot: &Robot, symbols: &mut Symbols, joints: &[(JointSymbols, usize, f64)]) -> Self {
        let geometry = geometry_symbols(robot, symbols);
        let inertial = inertial_symbols(robot, symbols);
        let armature: Vec<Option<usize>> = robot
            .joints()
            .iter()
            .enumerate()
            .map(|(i, j)| {
                (j.armature > 0.0).then(|| symbols.add(format!("Ia{}", i + 1), j.armature))
            })
            .collect();
        let gravity = gravity_symbols(robot, symbols);
        let count = symbols.names.len();
        let sym = |i: usize| Poly::symbol(i, count);
        // sin^2 = 1 - cos^2 for the joint angles and the general twists alike.
        let pairs = joints
            .iter()
            .filter_map(|(v, _, _)| match v {
                JointSymbols::Revolute { c, s } => Some((*s, *c)),
                JointSymbols::Prismatic { .. } => None,
            })
            .chain(
                geometry
                    .iter()
                    .filter_map(|(_, _, twist)| twist.map(|(c, s)| (s, c))),
            )
            .collect();
        let links = robot
            .joints()
            .iter()
            .zip(joints)
            .zip(&geometry)
            .map(|((joint, (variable, _, _)), g)| link_transform(joint, *variable, *g, count))
            .collect();
        Self {
            count,
            pairs,
            pseudo: inertial.iter().map(|p| pseudo_inertia(p, count)).collect(),
            links,
            gravity: gravity.map(|g| g.map_or(Poly::default(), |(i, sign)| sym(i).scale(sign))),
            armature: armature
                .into_iter()
                .map(|a| a.map_or(Poly::default(), sym))
                .collect(),
            moments: inertial
                .iter()
                .map(|p| std::array::from_fn(|r| p[6 + r].map_or(Poly::default(), sym)))
                .collect(),
        }
    }

    /// `Delta_i = T_i Q T_i^-1` from the frame `T_i`.
    fn delta(&self, t: &PolyMatrix, revolute: bool) -> PolyMatrix {
        let z: [Poly; 3] = std::array::from_fn(|r| t[r][2].clone());
        let o: [Poly; 3] = std::array::from_fn(|r| t[r][3].clone());
        let mut d = zero_matrix();
        if revolute {
            // [[S(z), o x z], [0, 0]].
            d[0][1] = z[2].scale(-1.0);
            d[0][2] = z[1].clone();
            d[1][0] = z[2].clone();
            d[1][2] = z[0].scale(-1.0);
            d[2][0] = z[1].scale(-1.0);
            d[2][1] = z[0].clone();
            d[0][3] = o[1].mul(&z[2]).add(&o[2].mul(&z[1]).scale(-1.0));
            d[1][3] = o[2].mul(&z[0]).add(&o[0].mul(&z[2]).scale(-1.0));
            d[2][3] = o[0].mul(&z[1]).add(&o[1].mul(&z[0]).scale(-1.0));
        } else {
            for r in 0..3 {
                d[r][3] = z[r].clone();
            }
        }
        d.map(|row| row.map(|p| p.reduced(&self.pairs)))
    }

    /// The frames `T_p`, the `Delta_i` and `U[p][i] = Delta_i T_p` (i <= p).
    fn derivatives(&self, robot: &Robot) -> (Vec<PolyMatrix>, Vec<Vec<PolyMatrix>>) {
        let mut frames = Vec::new();
        let mut t = zero_matrix();
        for (r, row) in t.iter_mut().enumerate() {
            row[r] = Poly::constant(1.0, self.count);
        }
        for link in &self.links {
            t = mat_mul(&t, link, &self.pairs);
            frames.push(t.clone());
        }
        let deltas: Vec<PolyMatrix> = frames
            .iter()
            .zip(robot.joints())
            .map(|(t, j)| self.delta(t, j.kind == JointKind::Revolute))
            .collect();
        let u = frames
            .iter()
            .enumerate()
            .map(|(p, frame)| {
                deltas[..=p]
                    .iter()
                    .map(|delta| mat_mul(delta, frame, &self.pairs))
                    .collect()
            })
            .collect();
        (deltas, u)
    }

    /// `D_ij`, the armature on the diagonal.
    fn mass(&self, u: &[Vec<PolyMatrix>], i: usize, j: usize) -> Poly {
        let sum = (i.max(j)..u.len()).fold(Poly::default(), |acc, p| {
            acc.add(&trace_product(
                &u[p][j],
                &self.pseudo[p],
                &u[p][i],
                &self.pairs,
            ))
        });
        if i == j {
            sum.add(&self.armature[i])
        } else {
            sum
        }
    }

    /// `C_ij = sum_k D_ijk qd_k`.
    fn coriolis(
        &self,
        (deltas, u): (&[PolyMatrix], &[Vec<PolyMatrix>]),
        qd: &[usize],
        (i, j): (usize, usize),
    ) -> Poly {
        qd.iter()
            .enumerate()
            .fold(Poly::default(), |c, (k, &qd_k)| {
                let (a, b) = (j.min(k), j.max(k));
                let d = (i.max(j).max(k)..u.len()).fold(Poly::default(), |acc, p| {
                    let second = mat_mul(&deltas[a], &u[p][b], &self.pairs);
                    acc.add(&trace_product(
                        &second,
                        &self.pseudo[p],
                        &u[p][i],
                        &self.pairs,
                    ))
                });
                c.add(&d.mul(&Poly::symbol(qd_k, self.count)))
            })
    }

    /// `D_i = -sum_p g . (U_pi [h_p; m_p])`.
    fn gravity_term(&self, u: &[Vec<PolyMatrix>], i: usize) -> Poly {
        (i..u.len()).fold(Poly::default(), |acc, p| {
            let term =
                u[p][i]
                    .iter()
                    .take(3)
                    .zip(&self.gravity)
                    .fold(Poly::default(), |sum, (row, g)| {
                        let moved = row
                            .iter()
                            .zip(&self.moments[p])
                            .fold(Poly::default(), |r, (entry, moment)| {
                                r.add(&entry.mul(moment))
                            });
                        sum.add(&g.mul(&moved))
                    });
            acc.add(&term.scale(-1.0).reduced(&self.pairs))
        })
    }

    #[allow(clippy::type_complexity)]
    fn build(
        &self,
        robot: &Robot,
        joints: &[(JointSymbols, usize, f64)],
    ) -> Result<(Vec<Vec<Poly>>, Vec<Vec<Poly>>, Vec<Poly>), DynamicsError> {
        let n = robot.dof();
        let (deltas, u) = self.derivatives(robot);
        let m = (0..n)
            .map(|i| (0..n).map(|j| self.mass(&u, i, j)).collect())
            .collect();
        let qd: Vec<usize> = joints.iter().map(|(_, qd, _)| *qd).collect();
        let c = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| self.coriolis((&deltas, &u), &qd, (i, j)))
                    .collect()
            })
            .collect();
        let g = (0..n).map(|i| self.gravity_term(&u, i)).collect();
        Ok((m, c, g))
    }
}
