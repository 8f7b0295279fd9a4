//! Mass matrix by the composite-rigid-body algorithm, in frame {0} (docs/theory.md section 4):
//! `M_ij = S_i^T I^c_j S_j` for `i <= j`, with `I^c_j` the spatial inertia of links j..n about
//! the frame-{0} origin and `S_i` the joint motion subspaces. Both triangles are filled;
//! armature is added to the diagonal. Cost O(n) composites plus n(n+1)/2 six-vector dots.
//! Reference: Featherstone, Rigid Body Dynamics Algorithms, section 6.2.

use armctl_model::{check_length, Robot};
use nalgebra::DMatrix;

use crate::composite::update_composites;
use crate::spatial::inertia_times;
use crate::{DynamicsError, DynamicsWorkspace};

/// `M(q)` into `out` (n x n).
pub fn mass_matrix(
    robot: &Robot,
    ws: &mut DynamicsWorkspace,
    q: &[f64],
    out: &mut DMatrix<f64>,
) -> Result<(), DynamicsError> {
    ws.set_configuration(robot, q)?;
    check_length("M rows", ws.n, out.nrows())?;
    check_length("M columns", ws.n, out.ncols())?;
    fill_mass_matrix(robot, ws, out);
    Ok(())
}

/// The algorithm; `ws.rot`/`ws.pos` set and `out` sized.
pub(crate) fn fill_mass_matrix(robot: &Robot, ws: &mut DynamicsWorkspace, out: &mut DMatrix<f64>) {
    ws.update_world_frames(robot);
    update_composites(robot, ws);
    mass_from_composites(robot, ws, out);
}

/// `M_ij = S_i^T I^c_j S_j` from the composites and frames already in `ws`; `out` sized.
pub(crate) fn mass_from_composites(robot: &Robot, ws: &DynamicsWorkspace, out: &mut DMatrix<f64>) {
    let n = ws.n;
    let m = out.as_mut_slice();
    for j in 0..n {
        let f = inertia_times(
            &ws.c_inertia[j],
            &ws.c_first_moment[j],
            ws.c_mass[j],
            &ws.axis[j],
        );
        for (i, s) in ws.axis[..=j].iter().enumerate() {
            let mij = s.dot(&f);
            m[i + j * n] = mij;
            m[j + i * n] = mij;
        }
        m[j + j * n] += robot.joints()[j].armature;
    }
}
