//! The printed closed forms are the dynamics: evaluated with the arm's values, M, C and G equal
//! CRBA, the Christoffel C and the gravity torques on the bundled two-link arm and on random
//! chains of up to three joints (prismatic ones included); more joints are refused.

use armctl_dynamics::{
    coriolis_matrix, gravity_torques, mass_matrix, ClosedForm, DynamicsWorkspace,
};
use armctl_model::test_support::random_chain::{RandomChain, Rng};
use armctl_model::test_support::reference::urdf_dir;
use armctl_model::{ChainOptions, Robot};
use nalgebra::DMatrix;

fn check(what: &str, robot: &Robot, form: &ClosedForm, seed: u64) {
    let n = robot.dof();
    let mut rng = Rng::new(seed);
    let q: Vec<f64> = (0..n).map(|_| rng.range(-1.5, 1.5)).collect();
    let qd: Vec<f64> = (0..n).map(|_| rng.range(-2.0, 2.0)).collect();
    let values = form.values(&q, &qd);
    let mut ws = DynamicsWorkspace::new(robot);
    let (mut m, mut c, mut g) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n), vec![0.0; n]);
    mass_matrix(robot, &mut ws, &q, &mut m).unwrap();
    coriolis_matrix(robot, &mut ws, &q, &qd, &mut c).unwrap();
    gravity_torques(robot, &mut ws, &q, &mut g).unwrap();
    let scale = m.amax().max(c.amax()).max(1.0);
    for i in 0..n {
        for j in 0..n {
            let (got_m, got_c) = (form.m[i][j].eval(&values), form.c[i][j].eval(&values));
            assert!(
                (got_m - m[(i, j)]).abs() < 1e-10 * scale,
                "{what} M{i}{j}: {got_m} vs {}",
                m[(i, j)]
            );
            assert!(
                (got_c - c[(i, j)]).abs() < 1e-10 * scale,
                "{what} C{i}{j}: {got_c} vs {}",
                c[(i, j)]
            );
        }
        let got_g = form.g[i].eval(&values);
        assert!(
            (got_g - g[i]).abs() < 1e-10 * g.iter().fold(1.0_f64, |a, v| a.max(v.abs())),
            "{what} G{i}: {got_g} vs {}",
            g[i]
        );
    }
}

#[test]
fn the_two_link_arm_s_closed_forms_are_its_dynamics() {
    let robot = Robot::from_urdf_file(
        urdf_dir().join("planar_2link.urdf"),
        &ChainOptions::default(),
    )
    .unwrap();
    let form = ClosedForm::new(&robot).unwrap();
    for seed in 0..5 {
        check("planar_2link", &robot, &form, seed);
    }
    let text = form.render(&robot);
    println!("{text}");
    // The hand derivation's shape: M22 is constant, M11 depends on q2 through c2 only.
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with("M22") && l.contains('c')),
        "{text}"
    );
    let m11 = text.lines().find(|l| l.starts_with("M11")).unwrap();
    assert!(
        m11.contains("c2") && !m11.contains("c1") && !m11.contains("s1"),
        "{m11}"
    );
}

#[test]
fn random_chains_of_up_to_three_joints_agree() {
    let mut prismatic = 0;
    for seed in 0..30_u64 {
        let chain = RandomChain::generate(seed, 1 + (seed as usize % 3));
        let robot = Robot::from_urdf_str(&chain.urdf, &ChainOptions::default()).unwrap();
        if robot.dof() > 3 {
            continue;
        }
        prismatic += robot
            .joints()
            .iter()
            .filter(|j| j.kind == armctl_model::JointKind::Prismatic)
            .count();
        let form = ClosedForm::new(&robot).unwrap();
        check(&format!("random chain {seed}"), &robot, &form, seed + 100);
    }
    assert!(prismatic >= 3, "only {prismatic} prismatic joints");
}

#[test]
fn more_than_three_joints_are_refused() {
    let robot =
        Robot::from_urdf_file(urdf_dir().join("panda.urdf"), &ChainOptions::default()).unwrap();
    let e = ClosedForm::new(&robot).unwrap_err().to_string();
    assert!(e.contains("at most 3 joints"), "{e}");
}

/// Gravity a hair off an axis keeps all its components (it used to be taken for the axis and
/// the rest dropped).
#[test]
fn gravity_a_hair_off_an_axis_stays_exact() {
    let robot = Robot::from_urdf_file(
        urdf_dir().join("planar_2link.urdf"),
        &ChainOptions::default(),
    )
    .unwrap()
    .with_gravity(nalgebra::Vector3::new(1e-5, 0.0, -9.81))
    .unwrap();
    let form = ClosedForm::new(&robot).unwrap();
    for seed in 0..3 {
        check("tilted gravity", &robot, &form, seed);
    }
    assert!(form.names.iter().any(|n| n == "gx"), "{:?}", form.names);
}
