//! Every scratch buffer of the dynamics algorithms, allocated once per robot.

use armctl_model::{check_length, JointKind, Robot};
use nalgebra::{DMatrix, DVector, Matrix3, Vector3, Vector6};

use crate::DynamicsError;

/// Preallocated buffers for every algorithm of this crate. Make one per robot (same number
/// of joints) and reuse it: no algorithm allocates. Results are returned through the
/// caller's output arguments, never left here to be read.
#[derive(Debug, Clone)]
pub struct DynamicsWorkspace {
    pub(crate) n: usize,
    /// `R_{i-1,i}` at the current q.
    pub(crate) rot: Vec<Matrix3<f64>>,
    /// `p_i`: origin of {i} in {i-1} at the current q.
    pub(crate) pos: Vec<Vector3<f64>>,
    /// Two-velocity outward recursion (`rnea_two_velocity::outward_two_velocity`), per link in
    /// its own frame: angular velocity `w` from qd, the reference angular velocity `w_r` from
    /// v, and the angular acceleration `alpha` from a.
    pub(crate) w: Vec<Vector3<f64>>,
    pub(crate) wr: Vec<Vector3<f64>>,
    pub(crate) dw: Vec<Vector3<f64>>,
    /// Per link in its own frame, `abar = a_O + w_r x v_O`: the linear part `a_O` of the
    /// spatial acceleration built from a (base `a_O = -g`, so gravity included) plus the
    /// reference angular velocity crossed with the origin's actual velocity. Not the
    /// acceleration of the frame origin: the term the two-velocity force and moment and the
    /// regressor are linear in.
    pub(crate) acc: Vec<Vector3<f64>>,
    /// Force and moment each link exerts (Newton-Euler), in its own frame.
    pub(crate) force: Vec<Vector3<f64>>,
    pub(crate) moment: Vec<Vector3<f64>>,
    /// Frame-{0} rotation and origin of each MDH frame.
    pub(crate) world_rot: Vec<Matrix3<f64>>,
    pub(crate) origin: Vec<Vector3<f64>>,
    /// Joint motion subspaces `S_i = [z_i; o_i x z_i]` (prismatic `[0; z_i]`) in frame {0}.
    pub(crate) axis: Vec<Vector6<f64>>,
    /// Spatial velocity and acceleration of each link (frame {0}), `Sdot_i = v_i x S_i`, and
    /// scratch columns.
    pub(crate) velocity: Vec<Vector6<f64>>,
    pub(crate) acceleration: Vec<Vector6<f64>>,
    pub(crate) axis_rate: Vec<Vector6<f64>>,
    pub(crate) column: Vec<Vector6<f64>>,
    /// Composite spatial inertias of links i..n in frame {0}: `(I_O, h, m)`.
    pub(crate) c_inertia: Vec<Matrix3<f64>>,
    pub(crate) c_first_moment: Vec<Vector3<f64>>,
    pub(crate) c_mass: Vec<f64>,
    /// Composite time derivatives of the inertia (`I_O` and h parts), composite momentum and
    /// the composite of the links' Newton-Euler forces (`rnea_derivatives`).
    pub(crate) c_inertia_rate: Vec<Matrix3<f64>>,
    pub(crate) c_first_moment_rate: Vec<Vector3<f64>>,
    pub(crate) c_momentum: Vec<Vector6<f64>>,
    pub(crate) c_force: Vec<Vector6<f64>>,
    /// Forward dynamics: mass matrix (factorised in place) and right-hand side.
    pub(crate) mass_matrix: DMatrix<f64>,
    pub(crate) rhs: DVector<f64>,
    /// Per-link 6 x 10 regressor blocks in frame {0}.
    pub(crate) link_regressor: Vec<nalgebra::SMatrix<f64, 6, 10>>,
}

impl DynamicsWorkspace {
    /// Buffers sized for `robot`.
    pub fn new(robot: &Robot) -> Self {
        let n = robot.dof();
        let v3 = vec![Vector3::zeros(); n];
        let v6 = vec![Vector6::zeros(); n];
        Self {
            n,
            rot: vec![Matrix3::identity(); n],
            pos: v3.clone(),
            w: v3.clone(),
            wr: v3.clone(),
            dw: v3.clone(),
            acc: v3.clone(),
            force: v3.clone(),
            moment: v3.clone(),
            world_rot: vec![Matrix3::identity(); n],
            origin: v3.clone(),
            axis: v6.clone(),
            velocity: v6.clone(),
            acceleration: v6.clone(),
            axis_rate: v6.clone(),
            column: v6.clone(),
            c_inertia: vec![Matrix3::zeros(); n],
            c_first_moment: v3.clone(),
            c_mass: vec![0.0; n],
            c_inertia_rate: vec![Matrix3::zeros(); n],
            c_first_moment_rate: v3.clone(),
            c_momentum: v6.clone(),
            c_force: v6,
            mass_matrix: DMatrix::zeros(n, n),
            rhs: DVector::zeros(n),
            link_regressor: vec![nalgebra::SMatrix::zeros(); n],
        }
    }

    /// Checks the workspace and `q` against the robot and computes every `R_{i-1,i}`, `p_i`.
    pub(crate) fn set_configuration(
        &mut self,
        robot: &Robot,
        q: &[f64],
    ) -> Result<(), DynamicsError> {
        check_length("workspace (robot joints)", robot.dof(), self.n)?;
        check_length("q", self.n, q.len())?;
        for (i, (joint, &qi)) in robot.joints().iter().zip(q).enumerate() {
            let (theta, d) = joint.mdh.theta_d(joint.kind, qi);
            let (st, ct) = theta.sin_cos();
            self.rot[i] = joint.mdh.rotation(st, ct);
            self.pos[i] = joint.mdh.origin(d);
        }
        Ok(())
    }

    /// After [`Self::set_configuration`]: frame-{0} rotations, origins and motion subspaces.
    pub(crate) fn update_world_frames(&mut self, robot: &Robot) {
        let mut r = Matrix3::identity();
        let mut o = Vector3::zeros();
        for (i, joint) in robot.joints().iter().enumerate() {
            let local = &self.rot[i];
            let (ct, st) = (local[(0, 0)], -local[(0, 1)]);
            // p = [a, -d sa, d ca], so d = p.z ca - p.y sa.
            let p = &self.pos[i];
            let d = p.z * joint.mdh.cos_alpha() - p.y * joint.mdh.sin_alpha();
            (r, o) = joint.mdh.child_frame((&r, &o), (st, ct), d);
            let z = r.column(2).into_owned();
            self.world_rot[i] = r;
            self.origin[i] = o;
            self.axis[i] = match joint.kind {
                JointKind::Revolute => {
                    let m = o.cross(&z);
                    Vector6::new(z.x, z.y, z.z, m.x, m.y, m.z)
                }
                JointKind::Prismatic => Vector6::new(0.0, 0.0, 0.0, z.x, z.y, z.z),
            };
        }
    }
}
