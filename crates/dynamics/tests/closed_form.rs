//! The two-link planar arm of docs/theory.md section 7 (urdf/planar_2link.urdf): M, C and G match
//! the closed forms.

use armctl_dynamics::{coriolis_matrix, gravity_torques, mass_matrix, DynamicsWorkspace};
use armctl_model::test_support::reference::urdf_dir;
use armctl_model::{ChainOptions, Robot};
use nalgebra::{DMatrix, Matrix2, Vector2};

const M1: f64 = 2.0;
const M2: f64 = 1.5;
const L1: f64 = 1.0;
const L2: f64 = 0.8;
const G: f64 = 9.81;

#[test]
fn planar_two_link_matches_closed_forms() {
    let robot = Robot::from_urdf_file(
        urdf_dir().join("planar_2link.urdf"),
        &ChainOptions::default(),
    )
    .unwrap();
    let mut ws = DynamicsWorkspace::new(&robot);
    let (mut m, mut c, mut g) = (DMatrix::zeros(2, 2), DMatrix::zeros(2, 2), [0.0; 2]);
    for (q1, q2, qd1, qd2) in [
        (0.0f64, 0.0f64, 0.0, 0.0),
        (0.3, -1.1, 0.7, -0.4),
        (-2.0, 2.5, -1.5, 2.0),
        (1.2, 0.4, 3.0, 1.0),
    ] {
        let (c1, c2, s2, c12) = (q1.cos(), q2.cos(), q2.sin(), (q1 + q2).cos());
        let m12 = M2 * L2 * L2 + M2 * L1 * L2 * c2;
        let m_want = Matrix2::new(
            M2 * L2 * L2 + 2.0 * M2 * L1 * L2 * c2 + (M1 + M2) * L1 * L1,
            m12,
            m12,
            M2 * L2 * L2,
        );
        let h = M2 * L1 * L2 * s2;
        let c_want = Matrix2::new(-h * qd2, -h * (qd1 + qd2), h * qd1, 0.0);
        let g_want = Vector2::new(
            M2 * L2 * G * c12 + (M1 + M2) * L1 * G * c1,
            M2 * L2 * G * c12,
        );
        mass_matrix(&robot, &mut ws, &[q1, q2], &mut m).unwrap();
        coriolis_matrix(&robot, &mut ws, &[q1, q2], &[qd1, qd2], &mut c).unwrap();
        gravity_torques(&robot, &mut ws, &[q1, q2], &mut g).unwrap();
        assert!(
            (m.fixed_view::<2, 2>(0, 0) - m_want).amax() < 1e-12,
            "M at {q1},{q2}: {m} vs {m_want}"
        );
        assert!(
            (c.fixed_view::<2, 2>(0, 0) - c_want).amax() < 1e-12,
            "C: {c} vs {c_want}"
        );
        assert!(
            (Vector2::from(g) - g_want).amax() < 1e-12,
            "G: {g:?} vs {g_want}"
        );
    }
}
