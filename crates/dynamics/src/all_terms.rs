//! One pass for all terms (Pinocchio's `computeAllTerms`): [`DynamicsWorkspace::update`] sets
//! the frames at q once, and the returned [`Terms`] computes M, `C qd + G`, G, inverse
//! dynamics, regressor products, the tip pose, its Jacobian and `Jdot qd` from them without
//! recomputing them. The frame-{0} frames and the composite inertias are made on first use
//! and shared by every later term. A law that needs several terms calls `update` once per step.
//!
//! The view borrows the workspace, so no other algorithm can move the frames while it lives.

use armctl_model::{check_length, JointKind, Robot};
use nalgebra::{DMatrix, IsometryMatrix3, Matrix3, Matrix6xX, Translation3, Vector3, Vector6};

use crate::composite::update_composites;
use crate::crba::mass_from_composites;
use crate::gravity::gravity_from_frames;
use crate::regressor_products::{
    joint_torques, link_wrenches, outward_for, times_after_outward, transpose_after_outward,
    RegressorMotion,
};
use crate::rnea::newton_euler;
use crate::rnea_two_velocity::outward_two_velocity;
use crate::{DynamicsError, DynamicsWorkspace, Gravity, TransposeProducts};

/// One term `Y(q, qd, v, a) p` of a sum: the motion, whether gravity acts, and p.
pub type RegressorTerm<'a> = (RegressorMotion<'a>, Gravity, &'a [f64]);

/// The terms at one state `(q, qd)` (see the module documentation).
#[derive(Debug)]
pub struct Terms<'a> {
    robot: &'a Robot,
    ws: &'a mut DynamicsWorkspace,
    qd: &'a [f64],
    world_frames: bool,
    composites: bool,
}

/// Products with one regressor `Y(q, qd', v, a)` after its outward pass
/// ([`Terms::regressor_pass`]); the pass's velocities and accelerations cannot change while
/// this lives.
#[derive(Debug)]
pub struct RegressorPass<'t, 'a> {
    terms: &'t mut Terms<'a>,
    at_rest: bool,
}

impl RegressorPass<'_, '_> {
    /// `Y p` into `out` (p: 10 per link, see `regressor`).
    pub fn times(&mut self, p: &[f64], out: &mut [f64]) -> Result<(), DynamicsError> {
        let terms = &mut *self.terms;
        times_after_outward(terms.robot, terms.ws, self.at_rest, (p, out))
    }

    /// `Y^T x` and `sum_i w_i Y_ic^2` (see `regressor_transpose_products`).
    pub fn transpose_products(
        &mut self,
        (x, w): (&[f64], &[f64]),
        out: TransposeProducts<'_>,
    ) -> Result<(), DynamicsError> {
        self.terms.world_frames();
        transpose_after_outward(self.terms.ws, (x, w), out)
    }
}

impl DynamicsWorkspace {
    /// Sets the frames at `q` for the terms at `(q, qd)`.
    ///
    /// Errors: [`DynamicsError::Dimension`] when the workspace, q or qd does not fit `robot`.
    pub fn update<'a>(
        &'a mut self,
        robot: &'a Robot,
        q: &[f64],
        qd: &'a [f64],
    ) -> Result<Terms<'a>, DynamicsError> {
        self.set_configuration(robot, q)?;
        check_length("qd", self.n, qd.len())?;
        Ok(Terms {
            robot,
            ws: self,
            qd,
            world_frames: false,
            composites: false,
        })
    }
}

impl<'a> Terms<'a> {
    fn world_frames(&mut self) {
        if !self.world_frames {
            self.ws.update_world_frames(self.robot);
            self.world_frames = true;
        }
    }

    fn composites(&mut self) {
        self.world_frames();
        if !self.composites {
            update_composites(self.robot, self.ws);
            self.composites = true;
        }
    }

    /// `M(q)` (armature on the diagonal) into `out` (n x n).
    pub fn mass_matrix(&mut self, out: &mut DMatrix<f64>) -> Result<(), DynamicsError> {
        check_length("M rows", self.ws.n, out.nrows())?;
        check_length("M columns", self.ws.n, out.ncols())?;
        self.composites();
        mass_from_composites(self.robot, self.ws, out);
        Ok(())
    }

    /// `C(q, qd) qd + G(q)` into `out`.
    pub fn nonlinear_effects(&mut self, out: &mut [f64]) -> Result<(), DynamicsError> {
        check_length("tau", self.ws.n, out.len())?;
        newton_euler(self.robot, self.ws, self.qd, None, None, out);
        Ok(())
    }

    /// `M(q) qdd + C(q, qd) qd + G(q)` plus armature times qdd (RNEA) into `out`.
    pub fn inverse_dynamics(&mut self, qdd: &[f64], out: &mut [f64]) -> Result<(), DynamicsError> {
        check_length("qdd", self.ws.n, qdd.len())?;
        check_length("tau", self.ws.n, out.len())?;
        newton_euler(self.robot, self.ws, self.qd, Some(qdd), None, out);
        Ok(())
    }

    /// `G(q)` into `out`.
    pub fn gravity(&mut self, out: &mut [f64]) -> Result<(), DynamicsError> {
        check_length("G", self.ws.n, out.len())?;
        self.world_frames();
        gravity_from_frames(self.robot, self.ws, out);
        Ok(())
    }

    /// `Y(q, qd', v, a) p` at this q and the given `(qd', v, a)` (see `regressor_times`).
    pub fn regressor_times(
        &mut self,
        motion: RegressorMotion<'_>,
        gravity: Gravity,
        p: &[f64],
        out: &mut [f64],
    ) -> Result<(), DynamicsError> {
        self.regressor_pass(motion, gravity)?.times(p, out)
    }

    /// The outward pass of one motion `(qd', v, a)` at this q, for several products with the
    /// same regressor `Y(q, qd', v, a)` (a law's `Y p` and then `Y^T x`).
    pub fn regressor_pass(
        &mut self,
        motion: RegressorMotion<'_>,
        gravity: Gravity,
    ) -> Result<RegressorPass<'_, 'a>, DynamicsError> {
        let at_rest = outward_for(self.robot, self.ws, motion, gravity)?;
        Ok(RegressorPass {
            terms: self,
            at_rest,
        })
    }

    /// `Y(q, qd_1, v_1, a_1) p_1 + Y(q, qd_2, v_2, a_2) p_2` at this q: one inward pass for
    /// both (see `regressor_times`).
    pub fn regressor_times_sum(
        &mut self,
        [(first, gravity_1, p_1), (second, gravity_2, p_2)]: [RegressorTerm<'_>; 2],
        out: &mut [f64],
    ) -> Result<(), DynamicsError> {
        check_length("out", self.ws.n, out.len())?;
        let at_rest = outward_for(self.robot, self.ws, first, gravity_1)?;
        link_wrenches(self.ws, at_rest, p_1, false)?;
        let at_rest = outward_for(self.robot, self.ws, second, gravity_2)?;
        link_wrenches(self.ws, at_rest, p_2, true)?;
        joint_torques(self.robot, self.ws, out);
        Ok(())
    }

    /// `Y(q, qd', v, a)^T x` and `sum_i w_i Y_ic^2` at this q (see
    /// `regressor_transpose_products`).
    pub fn regressor_transpose_products(
        &mut self,
        motion: RegressorMotion<'_>,
        gravity: Gravity,
        (x, w): (&[f64], &[f64]),
        out: TransposeProducts<'_>,
    ) -> Result<(), DynamicsError> {
        self.regressor_pass(motion, gravity)?
            .transpose_products((x, w), out)
    }

    /// The tool frame's pose in the base link frame.
    pub fn tip_pose(&mut self) -> IsometryMatrix3<f64> {
        let (rotation, origin) = self.last_frame();
        let last = IsometryMatrix3::from_parts(
            Translation3::from(origin),
            nalgebra::Rotation3::from_matrix_unchecked(rotation),
        );
        self.robot.base() * last * self.robot.tool()
    }

    /// Frame-{0} rotation and origin of the last MDH frame (frame {0} for a robot without
    /// joints).
    fn last_frame(&mut self) -> (Matrix3<f64>, Vector3<f64>) {
        self.world_frames();
        match self.ws.n {
            0 => (Matrix3::identity(), Vector3::zeros()),
            n => (self.ws.world_rot[n - 1], self.ws.origin[n - 1]),
        }
    }

    /// The tip's geometric Jacobian `[v; w] = J qd` (base link axes, the tool frame origin's
    /// velocity and the angular velocity) into `out` (6 x n), as `armctl_model::jacobian`.
    pub fn tip_jacobian(&mut self, out: &mut Matrix6xX<f64>) -> Result<(), DynamicsError> {
        check_length("Jacobian columns", self.ws.n, out.ncols())?;
        let (rotation, origin) = self.last_frame();
        let tip = origin + rotation * self.robot.tool().translation.vector;
        let to_base = self.robot.base().rotation.matrix();
        for (j, joint) in self.robot.joints().iter().enumerate() {
            let z = self.ws.world_rot[j].column(2).into_owned();
            let (linear, angular) = match joint.kind {
                JointKind::Revolute => (z.cross(&(tip - self.ws.origin[j])), z),
                JointKind::Prismatic => (z, Vector3::zeros()),
            };
            out.fixed_view_mut::<3, 1>(0, j)
                .copy_from(&(to_base * linear));
            out.fixed_view_mut::<3, 1>(3, j)
                .copy_from(&(to_base * angular));
        }
        Ok(())
    }

    /// `Jdot qd` of the tip (base link axes, `[linear; angular]`): its acceleration at zero
    /// joint acceleration, as `armctl_model::jacobian_dot_qd`.
    pub fn tip_jacobian_dot_qd(&mut self) -> Vector6<f64> {
        let n = self.ws.n;
        if n == 0 {
            return Vector6::zeros();
        }
        // With v = qd the outward pass's `abar` is the origin's classical acceleration.
        outward_two_velocity(
            self.robot,
            self.ws,
            (self.qd, self.qd, None),
            Vector3::zeros(),
        );
        let (w, alpha, a_origin) = (self.ws.w[n - 1], self.ws.dw[n - 1], self.ws.acc[n - 1]);
        let r = self.robot.tool().translation.vector;
        let a_tip = a_origin + alpha.cross(&r) + w.cross(&w.cross(&r));
        let (rotation, _) = self.last_frame();
        let to_base = self.robot.base().rotation.matrix() * rotation;
        let (linear, angular) = (to_base * a_tip, to_base * alpha);
        Vector6::new(
            linear.x, linear.y, linear.z, angular.x, angular.y, angular.z,
        )
    }
}
