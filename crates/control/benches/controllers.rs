//! Criterion benchmarks of every controller's update on the bundled Panda (design targets:
//! computed torque under 1.5 us, Slotine-Li adaptive under 5 us).
#![allow(missing_docs)] // criterion_group! generates an undocumented function.

use std::hint::black_box;

use armctl_control::{
    controller_by_name, Cooperative, JointReference, JointState, ParameterValue, CONTROLLERS,
};
use armctl_model::{ChainOptions, Robot};
use criterion::{criterion_group, criterion_main, Criterion};
use nalgebra::{IsometryMatrix3, Rotation3, Translation3};

fn controllers(c: &mut Criterion) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/panda.urdf");
    let robot = Robot::from_urdf_file(path, &ChainOptions::default()).expect("bundled Panda loads");
    let q = [0.1, -0.4, 0.2, -2.1, 0.1, 1.7, 0.6];
    let qd = [0.3, -0.2, 0.1, 0.4, -0.3, 0.2, 0.5];
    let mut reference = JointReference::hold(&q);
    reference.q[0] += 0.01;
    let mut effort = [0.0; 7];
    for name in CONTROLLERS {
        let mut controller = controller_by_name(name, &robot).expect("controller builds");
        let state = JointState { q: &q, qd: &qd };
        controller.reset(&state);
        c.bench_function(name, |b| {
            b.iter(|| controller.update(black_box(&state), &reference, 1e-3, &mut effort))
        });
    }
}

/// The cooperative law's update of both arms: two Pandas facing each other (the two-Panda
/// scene's bases and start).
fn cooperative(c: &mut Criterion) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/panda.urdf");
    let robot = Robot::from_urdf_file(path, &ChainOptions::default()).expect("bundled Panda loads");
    let facing = IsometryMatrix3::from_parts(
        Translation3::new(1.339, 0.0, 0.0),
        Rotation3::from_euler_angles(0.0, 0.0, std::f64::consts::PI),
    );
    let mut law =
        Cooperative::new(&robot, [IsometryMatrix3::identity(), facing]).expect("law builds");
    law.set_parameter("object_mass", ParameterValue::Double(2.0))
        .expect("mass");
    let q = [0.0, 0.3, 0.0, -2.0, 0.0, 2.3, 0.8];
    let qd = [0.3, -0.2, 0.1, 0.4, -0.3, 0.2, 0.5];
    let state = JointState { q: &q, qd: &qd };
    law.restart([&state, &state]).expect("grasps");
    let (mut first, mut second) = ([0.0; 7], [0.0; 7]);
    c.bench_function("cooperative (both arms)", |b| {
        b.iter(|| law.update([black_box(&state), &state], 1e-3, [&mut first, &mut second]))
    });
}

criterion_group!(benches, controllers, cooperative);
criterion_main!(benches);
