//! `armctl_update` through the C ABI next to the same step in Rust (the node runtime's
//! `on_joint_state` + `step` + command order), Panda, computed torque, following a trajectory.
//! Target: the C ABI under 1.2 times the Rust call. Run: `cargo bench -p armctl_capi --bench update`.
#![allow(missing_docs)] // criterion_group! generates an undocumented function.

use std::ffi::{c_char, CString};
use std::hint::black_box;
use std::ptr::{null, null_mut};

use armctl_capi::*;
use armctl_runtime::group_loop::GroupLoop;
use criterion::{criterion_group, criterion_main, Criterion};

#[path = "../tests/common/mod.rs"]
mod common;
use common::{node_runtime, panda_urdf, trajectory_points, PANDA_JOINTS as JOINTS};

const Q: [f64; 7] = [0.1, -0.4, 0.2, -2.1, 0.1, 1.7, 0.6];
const QD: [f64; 7] = [0.3, -0.2, 0.1, 0.4, -0.3, 0.2, 0.5];

/// A far waypoint 100 s ahead: the reference moves throughout the benchmark.
fn waypoint() -> Vec<f64> {
    Q.iter().map(|q| q + 0.2).collect()
}

fn rust_runtime() -> GroupLoop {
    let mut runtime = node_runtime(&panda_urdf(), "computed_torque", &JOINTS);
    let names: Vec<String> = JOINTS.iter().map(|j| j.to_string()).collect();
    runtime.core_mut().on_joint_state(&names, &Q, &QD, 0.0);
    let points = trajectory_points(&[(100.0, waypoint())]);
    runtime
        .core_mut()
        .set_trajectory(&names, &points, 0.0, 0.0)
        .expect("trajectory accepted");
    runtime
}

fn c_handle() -> *mut ArmctlController {
    let (text, law) = (
        CString::new(panda_urdf()).unwrap(),
        CString::new("computed_torque").unwrap(),
    );
    let names: Vec<CString> = JOINTS.iter().map(|j| CString::new(*j).unwrap()).collect();
    let pointers: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
    let config = ArmctlConfig {
        urdf: text.as_ptr(),
        base_link: null(),
        tip_link: null(),
        joints: pointers.as_ptr(),
        joint_count: 7,
        controller: law.as_ptr(),
        parameters: null(),
        parameter_count: 0,
    };
    let mut handle = null_mut();
    assert_eq!(
        armctl_create(&config, &mut handle, null_mut(), 0),
        ArmctlStatus::Ok
    );
    let mut effort = [0.0; 7];
    armctl_update(
        handle,
        0.0,
        1e-3,
        Q.as_ptr(),
        QD.as_ptr(),
        effort.as_mut_ptr(),
        null_mut(),
    );
    let target = waypoint();
    let point = ArmctlTrajectoryPoint {
        time: 100.0,
        positions: target.as_ptr(),
        velocities: null(),
        accelerations: null(),
    };
    assert_eq!(
        armctl_set_trajectory(handle, &point, 1, 0.0, 0.0),
        ArmctlStatus::Ok
    );
    handle
}

fn update(c: &mut Criterion) {
    let names: Vec<String> = JOINTS.iter().map(|j| j.to_string()).collect();
    let (mut chain, mut effort) = ([0.0; 7], [0.0; 7]);
    let mut runtime = rust_runtime();
    let mut t = 0.0;
    c.bench_function("rust runtime step", |b| {
        b.iter(|| {
            t += 1e-6;
            runtime.record_state(0, &names, black_box(&Q), black_box(&QD), t);
            runtime.step(t, 1e-3);
            chain.copy_from_slice(&runtime.output().arms[0].efforts);
            runtime.to_command_order(black_box(&chain), &mut effort);
        })
    });
    let handle = c_handle();
    let mut status = std::mem::MaybeUninit::<ArmctlUpdateStatus>::uninit();
    let mut t = 0.0;
    c.bench_function("armctl_update (C ABI)", |b| {
        b.iter(|| {
            t += 1e-6;
            let q = black_box(&Q);
            armctl_update(
                handle,
                t,
                1e-3,
                q.as_ptr(),
                QD.as_ptr(),
                effort.as_mut_ptr(),
                status.as_mut_ptr(),
            )
        })
    });
    armctl_free(handle);
}

criterion_group!(benches, update);
criterion_main!(benches);
