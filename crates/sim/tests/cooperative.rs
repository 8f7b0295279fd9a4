//! Two Pandas facing each other hold a 1 kg box between their flanges.

use armctl_dynamics::{gravity_torques, mass_matrix, DynamicsWorkspace};
use armctl_model::{forward_kinematics, jacobian, FrameId, KinematicsWorkspace, Robot};
use armctl_sim::{
    CooperativeSimulator, GraspStiffness, HeldObject, PlacedArm, SimConfig, Simulator,
};
use nalgebra::{IsometryMatrix3, Matrix3, Matrix6xX, Rotation3, Translation3, Vector3};

const MASS: f64 = 1.0;

fn panda() -> Robot {
    armctl_model::test_support::bundled_robot("panda.urdf")
}

/// Both arms start here: the flange in front of the base, pointing down, and no two axes in
/// line (the middle of the ranges lines up joints 1 and 3, where the arm is singular).
const Q0: [f64; 7] = [0.0, 0.3, 0.0, -2.0, 0.0, 2.3, 0.8];

/// The second base faces the first along x, its flange 0.136 m from the first's.
fn bases() -> [IsometryMatrix3<f64>; 2] {
    let robot = panda();
    let reach = forward_kinematics(&robot, &mut KinematicsWorkspace::new(&robot), &Q0)
        .unwrap()
        .tip()
        .translation
        .x;
    [
        IsometryMatrix3::identity(),
        IsometryMatrix3::from_parts(
            Translation3::new(2.0 * reach + 0.136, 0.0, 0.0),
            Rotation3::from_axis_angle(&Vector3::z_axis(), std::f64::consts::PI),
        ),
    ]
}

fn pair() -> CooperativeSimulator {
    let robot = panda();
    let q0 = Q0;
    let [b0, b1] = bases();
    let tip = |base: &IsometryMatrix3<f64>| {
        let mut ws = KinematicsWorkspace::new(&robot);
        base * forward_kinematics(&robot, &mut ws, &q0).unwrap().tip()
    };
    let middle = (tip(&b0).translation.vector + tip(&b1).translation.vector) / 2.0;
    let arm = |base| PlacedArm {
        sim: Simulator::new(&robot, &q0, SimConfig::ideal()).unwrap(),
        base,
    };
    let (a, b, c) = (0.136, 0.1, 0.1);
    let object = HeldObject {
        mass: MASS,
        inertia: Matrix3::from_diagonal(&Vector3::new(b * b + c * c, a * a + c * c, a * a + b * b))
            * (MASS / 12.0),
        pose: IsometryMatrix3::from_parts(Translation3::from(middle), Rotation3::identity()),
    };
    CooperativeSimulator::new([arm(b0), arm(b1)], object, GraspStiffness::default()).unwrap()
}

/// Gravity compensation, a soft PD about `q0` (4 rad/s on each joint's own inertia: it holds
/// the arm, and resists the couplings' sub-millimetre give under a squeeze by about 1%), and
/// the wrench the tool must exert on the object (`push`, world axes):
/// `tau = G + Kp (q0 - q) - Kd qd + J^T R^T push`.
fn control(pair: &CooperativeSimulator, a: usize, q0: &[f64], push: Vector3<f64>) -> Vec<f64> {
    let arm = pair.arm(a);
    let (robot, q, qd) = (arm.sim.plant(), arm.sim.q(), arm.sim.qd());
    let mut tau = vec![0.0; robot.dof()];
    let mut ws = DynamicsWorkspace::new(robot);
    gravity_torques(robot, &mut ws, q, &mut tau).unwrap();
    let mut m = nalgebra::DMatrix::zeros(robot.dof(), robot.dof());
    mass_matrix(robot, &mut ws, q0, &mut m).unwrap();
    let mut j = Matrix6xX::zeros(robot.dof());
    jacobian(
        robot,
        &mut KinematicsWorkspace::new(robot),
        q,
        FrameId::Tip,
        &mut j,
    )
    .unwrap();
    let push = arm.base.rotation.inverse() * push;
    for i in 0..robot.dof() {
        let exerted = j.fixed_view::<3, 1>(0, i).dot(&push);
        let (kp, kd) = (16.0 * m[(i, i)], 8.0 * m[(i, i)]);
        tau[i] += kp * (q0[i] - q[i]) - kd * qd[i] + exerted;
    }
    tau
}

/// Runs 2 s with each tool carrying half the weight plus `squeeze` along the line between the
/// tools; returns the object's largest drift and the squeeze seen at the end.
fn hold(squeeze: f64) -> (f64, f64) {
    let mut pair = pair();
    let q0 = Q0;
    let start = pair.object_pose().translation.vector;
    let tool = |pair: &CooperativeSimulator, a: usize| {
        let arm = pair.arm(a);
        let mut ws = KinematicsWorkspace::new(arm.sim.plant());
        (arm.base
            * forward_kinematics(arm.sim.plant(), &mut ws, arm.sim.q())
                .unwrap()
                .tip())
        .translation
        .vector
    };
    let u = (tool(&pair, 1) - tool(&pair, 0)).normalize();
    let share = Vector3::new(0.0, 0.0, 9.81 * MASS / 2.0);
    let mut drift: f64 = 0.0;
    for _ in 0..2000 {
        let c0 = control(&pair, 0, &q0, share + u * squeeze);
        let c1 = control(&pair, 1, &q0, share - u * squeeze);
        pair.step([&c0, &c1]).unwrap();
        drift = drift.max((pair.object_pose().translation.vector - start).norm());
    }
    (drift, pair.internal_force())
}

#[test]
fn the_pair_holds_the_box_still_with_no_internal_force() {
    let (drift, squeeze) = hold(0.0);
    eprintln!("drift {drift:e} m, internal force {squeeze:e} N");
    assert!(drift < 2e-3, "the box moved {drift} m");
    assert!(squeeze.abs() < 0.05, "internal force {squeeze} N");
}

#[test]
fn a_commanded_squeeze_is_the_internal_force_and_the_box_stays() {
    let (drift, squeeze) = hold(10.0);
    eprintln!("drift {drift:e} m, internal force {squeeze} N");
    assert!(drift < 2e-3, "the box moved {drift} m");
    assert!(
        (squeeze - 10.0).abs() < 0.2,
        "internal force {squeeze} N, 10 N commanded"
    );
}

#[test]
fn an_object_too_light_for_stiff_couplings_is_refused() {
    let robot = panda();
    let q0 = Q0;
    let arm = |base| PlacedArm {
        sim: Simulator::new(&robot, &q0, SimConfig::ideal()).unwrap(),
        base,
    };
    let [b0, b1] = bases();
    let object = HeldObject {
        mass: 1e-3,
        inertia: Matrix3::identity() * 1e-6,
        pose: IsometryMatrix3::identity(),
    };
    let e = CooperativeSimulator::new([arm(b0), arm(b1)], object, GraspStiffness::default())
        .unwrap_err();
    assert!(e.to_string().contains("too stiff"), "{e}");
}
