//! Criterion benchmarks of every dynamics algorithm on the bundled Panda. For ratios against
//! Pinocchio and KDL run `bench/run.sh` at the top of the workspace.
#![allow(missing_docs)] // criterion_group! generates an undocumented function.

use std::hint::black_box;

use armctl_dynamics::{
    coriolis_matrix, forward_dynamics, gravity_torques, mass_matrix, regressor, rnea,
    rnea_two_velocity, DynamicsWorkspace,
};
use armctl_model::{ChainOptions, Robot};
use criterion::{criterion_group, criterion_main, Criterion};
use nalgebra::DMatrix;

fn panda() -> Robot {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/panda.urdf");
    Robot::from_urdf_file(path, &ChainOptions::default()).expect("bundled Panda loads")
}

fn dynamics(c: &mut Criterion) {
    let robot = panda();
    let n = robot.dof();
    let q: Vec<f64> = (0..n).map(|i| 0.3 - 0.2 * i as f64).collect();
    let qd: Vec<f64> = (0..n).map(|i| 0.5 - 0.15 * i as f64).collect();
    let qdd: Vec<f64> = (0..n).map(|i| 0.2 * i as f64 - 0.4).collect();
    let mut ws = DynamicsWorkspace::new(&robot);
    let mut out = vec![0.0; n];
    let mut mat = DMatrix::zeros(n, n);
    let mut y = DMatrix::zeros(n, 10 * n);
    c.bench_function("rnea", |b| {
        b.iter(|| rnea(&robot, &mut ws, black_box(&q), &qd, &qdd, &mut out))
    });
    c.bench_function("rnea_two_velocity", |b| {
        b.iter(|| rnea_two_velocity(&robot, &mut ws, black_box(&q), &qd, &qd, &qdd, &mut out))
    });
    c.bench_function("mass_matrix", |b| {
        b.iter(|| mass_matrix(&robot, &mut ws, black_box(&q), &mut mat))
    });
    c.bench_function("coriolis_matrix", |b| {
        b.iter(|| coriolis_matrix(&robot, &mut ws, black_box(&q), &qd, &mut mat))
    });
    c.bench_function("gravity", |b| {
        b.iter(|| gravity_torques(&robot, &mut ws, black_box(&q), &mut out))
    });
    c.bench_function("forward_dynamics", |b| {
        b.iter(|| forward_dynamics(&robot, &mut ws, black_box(&q), &qd, &qdd, &mut out))
    });
    c.bench_function("regressor", |b| {
        b.iter(|| regressor(&robot, &mut ws, black_box(&q), &qd, &qd, &qdd, &mut y))
    });
}

criterion_group!(benches, dynamics);
criterion_main!(benches);
