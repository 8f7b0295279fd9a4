//! The dynamics by Lagrange's equations in the Uicker/Paul form (docs/theory.md section 10):
//! the reference route, O(n^3) for M and O(n^4) for the coupling coefficients, not the fast
//! one.
//!
//! With `T_p` the 4x4 pose of MDH frame p in frame {0}, `J_p` link p's pseudo-inertia (its
//! frame), `g` gravity in frame {0} and `r_p = [c_p; 1]` its centre of mass:
//!
//! ```text
//! tau_i = sum_j D_ij qdd_j + sum_j sum_k D_ijk qd_j qd_k + D_i
//! D_ij  = sum_{p >= max(i,j)}   Tr(U_pj  J_p U_pi^T)          (= M, plus the armature)
//! D_ijk = sum_{p >= max(i,j,k)} Tr(U_pjk J_p U_pi^T)          (= the Christoffel symbols)
//! D_i   = -sum_{p >= i} m_p g^T U_pi r_p                       (= G)
//! J_p   = [[Sigma, h], [h^T, m]],  Sigma = tr(I_O)/2 I3 - I_O   (I_O, h = m c about O_p)
//! ```
//!
//! In MDH frames joint i turns or slides along z of frame i itself, so
//! `dT_p/dq_i = U_pi = Delta_i T_p` with `Delta_i = T_i Q_i T_i^-1` (`Q_i` the joint's
//! derivative operator: `[[S(e_z), 0], [0, 0]]` revolute, `[[0, e_z], [0, 0]]` prismatic),
//! which is `[[S(z_i), o_i x z_i], [0, 0]]` or `[[0, z_i], [0, 0]]` for the joint's axis `z_i`
//! and origin `o_i` in frame {0}; and `U_pjk = Delta_a Delta_b T_p`, `a = min(j, k)`,
//! `b = max(j, k)`, both at most p. `C_ij = sum_k D_ijk qd_k` is the Christoffel Coriolis
//! matrix (`D_ijk = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i)`).
//!
//! Each trace is evaluated directly (the 4x4 products `U_pj J_p U_pi^T`) or by the
//! inner-product method: a `U` has a zero last row, so
//! `Tr(B J C^T) = sum_r sum_s J_rs <b_r, c_s>` over the first three entries of B's and C's
//! columns; those columns are cross products with the axes (`z_i x x_p`, ..., `z_i x (o_p -
//! o_i)` for a revolute joint, `[0, 0, 0, z_i]` for a prismatic one; `Delta_a` turns each column
//! `c` of a U into `z_a x c`, or zero), so no 4x4 product is formed. Reference: Uicker,
//! "Dynamic force analysis of spatial linkages", 1967; Fu, Gonzalez and Lee, Robotics:
//! Control, Sensing, Vision, and Intelligence, ch. 3.2.

use armctl_model::{check_length, JointKind, Robot};
use nalgebra::{DMatrix, Matrix3, Matrix4, Vector3, Vector4};

use crate::DynamicsError;

/// How each trace `Tr(B J C^T)` is evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceMethod {
    /// The 4x4 products, then the trace.
    Direct,
    /// Weighted inner products of the columns (no 4x4 product).
    InnerProduct,
}

/// The columns of a `U` (their first three entries; the fourth row is zero).
type Columns = [Vector3<f64>; 4];

/// What the inner-product method keeps of `U_pi`: its columns, and for the mass matrix's
/// traces `a = R_p^T z_i`, `Sigma_p a` and `w = z_i x R_p h_p` (revolute joints; zero for
/// prismatic ones).
#[derive(Debug, Clone, Copy)]
struct InnerTerms {
    columns: Columns,
    a: Vector3<f64>,
    sigma_a: Vector3<f64>,
    w: Vector3<f64>,
}

impl Default for InnerTerms {
    fn default() -> Self {
        Self {
            columns: [Vector3::zeros(); 4],
            a: Vector3::zeros(),
            sigma_a: Vector3::zeros(),
            w: Vector3::zeros(),
        }
    }
}

/// Scratch of the Lagrange-Euler route for one robot.
#[derive(Debug, Clone)]
pub struct LagrangeWorkspace {
    n: usize,
    /// Each link's pseudo-inertia in its frame.
    pseudo: Vec<Matrix4<f64>>,
    /// `T_p`.
    frames: Vec<Matrix4<f64>>,
    /// `Delta_i`.
    delta: Vec<Matrix4<f64>>,
    revolute: Vec<bool>,
    /// Joint axes `z_i` and origins `o_i` in frame {0}.
    axis: Vec<Vector3<f64>>,
    origin: Vec<Vector3<f64>>,
    /// Direct method: `U_pi` at `p * n + i` (i <= p).
    first: Vec<Matrix4<f64>>,
    /// Inner-product method: what it keeps of `U_pi`, same layout.
    inner: Vec<InnerTerms>,
    /// Each link's `Sigma_p` and its trace.
    sigma: Vec<(Matrix3<f64>, f64)>,
}

/// `[[Sigma, h], [h^T, m]]` from the parameters about the frame origin.
fn pseudo_inertia(inertia_origin: &Matrix3<f64>, h: &Vector3<f64>, m: f64) -> Matrix4<f64> {
    let sigma = Matrix3::identity() * (inertia_origin.trace() / 2.0) - inertia_origin;
    let mut j = Matrix4::zeros();
    j.fixed_view_mut::<3, 3>(0, 0).copy_from(&sigma);
    j.fixed_view_mut::<3, 1>(0, 3).copy_from(h);
    j.fixed_view_mut::<1, 3>(3, 0).copy_from(&h.transpose());
    j[(3, 3)] = m;
    j
}

impl LagrangeWorkspace {
    /// Scratch for `robot` (the pseudo-inertias are computed here, once).
    pub fn new(robot: &Robot) -> Self {
        let n = robot.dof();
        Self {
            n,
            pseudo: robot
                .link_parameters()
                .iter()
                .map(|l| pseudo_inertia(&l.inertia_origin, &l.first_moment, l.mass))
                .collect(),
            frames: vec![Matrix4::identity(); n],
            delta: vec![Matrix4::zeros(); n],
            revolute: robot
                .joints()
                .iter()
                .map(|j| j.kind == JointKind::Revolute)
                .collect(),
            axis: vec![Vector3::zeros(); n],
            origin: vec![Vector3::zeros(); n],
            first: vec![Matrix4::zeros(); n * n],
            inner: vec![InnerTerms::default(); n * n],
            sigma: robot
                .link_parameters()
                .iter()
                .map(|l| {
                    let sigma =
                        Matrix3::identity() * (l.inertia_origin.trace() / 2.0) - l.inertia_origin;
                    (sigma, sigma.trace())
                })
                .collect(),
        }
    }

    /// The frames, the `Delta_i`, and every `U_pi` (the matrix for the direct method, the
    /// inner-product terms for the other) at `q`.
    fn update(
        &mut self,
        robot: &Robot,
        q: &[f64],
        method: TraceMethod,
    ) -> Result<(), DynamicsError> {
        check_length("workspace (robot joints)", robot.dof(), self.n)?;
        check_length("q", self.n, q.len())?;
        let mut t = Matrix4::identity();
        for (i, (joint, &qi)) in robot.joints().iter().zip(q).enumerate() {
            t *= joint.mdh.transform(joint.kind, qi).to_homogeneous();
            self.frames[i] = t;
            let z = Vector3::new(t[(0, 2)], t[(1, 2)], t[(2, 2)]);
            let o = Vector3::new(t[(0, 3)], t[(1, 3)], t[(2, 3)]);
            let mut d = Matrix4::zeros();
            if self.revolute[i] {
                d.fixed_view_mut::<3, 3>(0, 0).copy_from(&z.cross_matrix());
                d.fixed_view_mut::<3, 1>(0, 3).copy_from(&o.cross(&z));
            } else {
                d.fixed_view_mut::<3, 1>(0, 3).copy_from(&z);
            }
            self.delta[i] = d;
            self.axis[i] = z;
            self.origin[i] = o;
        }
        for p in 0..self.n {
            for i in 0..=p {
                match method {
                    TraceMethod::Direct => {
                        self.first[p * self.n + i] = self.delta[i] * self.frames[p];
                    }
                    TraceMethod::InnerProduct => {
                        self.inner[p * self.n + i] = self.inner_terms(robot, p, i);
                    }
                }
            }
        }
        Ok(())
    }

    /// The columns of `U_pi` by cross products (`z_i x` the columns of `T_p`, the last about
    /// `o_i`; `[0, 0, 0, z_i]` for a prismatic joint), and the mass-matrix terms.
    fn inner_terms(&self, robot: &Robot, p: usize, i: usize) -> InnerTerms {
        let (t, z) = (&self.frames[p], &self.axis[i]);
        if !self.revolute[i] {
            let mut terms = InnerTerms::default();
            terms.columns[3] = *z;
            return terms;
        }
        let column = |c: usize| Vector3::new(t[(0, c)], t[(1, c)], t[(2, c)]);
        let rotation = t.fixed_view::<3, 3>(0, 0);
        let a = rotation.transpose() * z;
        let h = rotation * robot.link_parameters()[p].first_moment;
        InnerTerms {
            columns: [
                z.cross(&column(0)),
                z.cross(&column(1)),
                z.cross(&column(2)),
                z.cross(&(column(3) - self.origin[i])),
            ],
            a,
            sigma_a: self.sigma[p].0 * a,
            w: z.cross(&h),
        }
    }

    /// `Tr(B J_p C^T)` by the inner products of the columns.
    fn inner(&self, p: usize, b: &Columns, c: &Columns) -> f64 {
        let j = &self.pseudo[p];
        let mut sum = 0.0;
        for r in 0..4 {
            sum += j[(r, r)] * b[r].dot(&c[r]);
            for s in (r + 1)..4 {
                sum += j[(r, s)] * (b[r].dot(&c[s]) + b[s].dot(&c[r]));
            }
        }
        sum
    }

    /// `Tr(U_pj J_p U_pi^T)`. By inner products, with `b_r = z_i x x_r` and the rotation's
    /// columns orthonormal, `sum_{r,s<3} J_rs <b_r, c_s> = (z_i . z_j) tr(Sigma) - a_j . Sigma
    /// a_i`; the rest is `w_i . c_3 + w_j . b_3 + m <b_3, c_3>`.
    fn mass_term(&self, method: TraceMethod, p: usize, i: usize, j: usize) -> f64 {
        let at = |k: usize| p * self.n + k;
        match method {
            TraceMethod::Direct => {
                (self.first[at(j)] * self.pseudo[p] * self.first[at(i)].transpose()).trace()
            }
            TraceMethod::InnerProduct => {
                let (u, v) = (&self.inner[at(i)], &self.inner[at(j)]);
                let rotational = if self.revolute[i] && self.revolute[j] {
                    self.axis[i].dot(&self.axis[j]) * self.sigma[p].1 - v.a.dot(&u.sigma_a)
                } else {
                    0.0
                };
                let (b3, c3) = (&u.columns[3], &v.columns[3]);
                rotational + u.w.dot(c3) + v.w.dot(b3) + self.pseudo[p][(3, 3)] * b3.dot(c3)
            }
        }
    }

    /// `Tr(U_pjk J_p U_pi^T)` (j, k <= p).
    fn coupling_term(&self, method: TraceMethod, p: usize, i: usize, j: usize, k: usize) -> f64 {
        let (a, b) = (j.min(k), j.max(k));
        let at = |m: usize| p * self.n + m;
        match method {
            TraceMethod::Direct => {
                let second = self.delta[a] * self.first[at(b)];
                (second * self.pseudo[p] * self.first[at(i)].transpose()).trace()
            }
            TraceMethod::InnerProduct => {
                if !self.revolute[a] {
                    return 0.0;
                }
                let z = &self.axis[a];
                let of_b = &self.inner[at(b)].columns;
                let second: Columns = std::array::from_fn(|c| z.cross(&of_b[c]));
                self.inner(p, &second, &self.inner[at(i)].columns)
            }
        }
    }

    /// `D_ij`, the armature included.
    fn d_ij(&self, robot: &Robot, method: TraceMethod, i: usize, j: usize) -> f64 {
        let from = i.max(j);
        let sum: f64 = (from..self.n)
            .map(|p| self.mass_term(method, p, i, j))
            .sum();
        if i == j {
            sum + robot.joints()[i].armature
        } else {
            sum
        }
    }

    /// `D_ijk`.
    fn d_ijk(&self, method: TraceMethod, i: usize, j: usize, k: usize) -> f64 {
        let from = i.max(j).max(k);
        (from..self.n)
            .map(|p| self.coupling_term(method, p, i, j, k))
            .sum()
    }

    /// `D_i`.
    fn d_i(&self, robot: &Robot, method: TraceMethod, i: usize) -> f64 {
        let g = robot.gravity_in_frame0();
        let links = robot.link_parameters();
        (i..self.n)
            .map(|p| {
                let (h, m) = (&links[p].first_moment, links[p].mass);
                let moved = match method {
                    TraceMethod::Direct => {
                        (self.first[p * self.n + i] * Vector4::new(h.x, h.y, h.z, m)).xyz()
                    }
                    // sum_r b_r h_r = z_i x R_p h_p = w.
                    TraceMethod::InnerProduct => {
                        let u = &self.inner[p * self.n + i];
                        u.w + u.columns[3] * m
                    }
                };
                -g.dot(&moved)
            })
            .sum()
    }
}

fn check_square(what: &'static str, n: usize, out: &DMatrix<f64>) -> Result<(), DynamicsError> {
    check_length(what, n, out.nrows())?;
    check_length(what, n, out.ncols())?;
    Ok(())
}

/// `M(q)` (the `D_ij`, armature on the diagonal) into `out` (n x n).
pub fn lagrange_mass_matrix(
    robot: &Robot,
    ws: &mut LagrangeWorkspace,
    q: &[f64],
    method: TraceMethod,
    out: &mut DMatrix<f64>,
) -> Result<(), DynamicsError> {
    ws.update(robot, q, method)?;
    check_square("M", ws.n, out)?;
    for i in 0..ws.n {
        for j in 0..=i {
            let d = ws.d_ij(robot, method, i, j);
            out[(i, j)] = d;
            out[(j, i)] = d;
        }
    }
    Ok(())
}

/// The coupling coefficients `D_ijk` into `out[(i n + j) n + k]` (n^3 entries).
pub fn lagrange_coupling(
    robot: &Robot,
    ws: &mut LagrangeWorkspace,
    q: &[f64],
    method: TraceMethod,
    out: &mut [f64],
) -> Result<(), DynamicsError> {
    ws.update(robot, q, method)?;
    let n = ws.n;
    check_length("D_ijk", n * n * n, out.len())?;
    for i in 0..n {
        for j in 0..n {
            for k in 0..=j {
                let d = ws.d_ijk(method, i, j, k);
                out[(i * n + j) * n + k] = d;
                out[(i * n + k) * n + j] = d;
            }
        }
    }
    Ok(())
}

/// `C(q, qd)` with `C_ij = sum_k D_ijk qd_k` into `out` (n x n).
pub fn lagrange_coriolis_matrix(
    robot: &Robot,
    ws: &mut LagrangeWorkspace,
    q: &[f64],
    qd: &[f64],
    method: TraceMethod,
    out: &mut DMatrix<f64>,
) -> Result<(), DynamicsError> {
    ws.update(robot, q, method)?;
    check_length("qd", ws.n, qd.len())?;
    check_square("C", ws.n, out)?;
    for i in 0..ws.n {
        for j in 0..ws.n {
            out[(i, j)] = (0..ws.n).map(|k| ws.d_ijk(method, i, j, k) * qd[k]).sum();
        }
    }
    Ok(())
}

/// `G(q)` (the `D_i`) into `out`.
pub fn lagrange_gravity(
    robot: &Robot,
    ws: &mut LagrangeWorkspace,
    q: &[f64],
    method: TraceMethod,
    out: &mut [f64],
) -> Result<(), DynamicsError> {
    ws.update(robot, q, method)?;
    check_length("G", ws.n, out.len())?;
    for (i, g) in out.iter_mut().enumerate() {
        *g = ws.d_i(robot, method, i);
    }
    Ok(())
}

/// `tau = sum_j D_ij qdd_j + sum_jk D_ijk qd_j qd_k + D_i` into `tau`.
pub fn lagrange_inverse_dynamics(
    robot: &Robot,
    ws: &mut LagrangeWorkspace,
    (q, qd, qdd): (&[f64], &[f64], &[f64]),
    method: TraceMethod,
    tau: &mut [f64],
) -> Result<(), DynamicsError> {
    ws.update(robot, q, method)?;
    let n = ws.n;
    check_length("qd", n, qd.len())?;
    check_length("qdd", n, qdd.len())?;
    check_length("tau", n, tau.len())?;
    for (i, t) in tau.iter_mut().enumerate() {
        let inertial: f64 = (0..n).map(|j| ws.d_ij(robot, method, i, j) * qdd[j]).sum();
        let mut velocity = 0.0;
        for j in 0..n {
            for k in 0..n {
                velocity += ws.d_ijk(method, i, j, k) * qd[j] * qd[k];
            }
        }
        *t = inertial + velocity + ws.d_i(robot, method, i);
    }
    Ok(())
}
