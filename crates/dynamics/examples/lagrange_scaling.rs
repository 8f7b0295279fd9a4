//! How the Lagrange-Euler mass matrix grows with the number of joints, next to CRBA: ns per
//! call of `M(q)` by direct traces, by the inner-product method and by CRBA on random chains of
//! n = 2..30 revolute and prismatic joints, as a Markdown table (a benchmark, not a test: run
//! it with `cargo run --release -p armctl_dynamics --example lagrange_scaling`).

use std::hint::black_box;
use std::time::Instant;

use armctl_dynamics::{
    lagrange_mass_matrix, mass_matrix, DynamicsWorkspace, LagrangeWorkspace, TraceMethod,
};
use armctl_model::test_support::random_chain::RandomChain;
use armctl_model::{ChainOptions, Robot};
use nalgebra::DMatrix;

/// Nanoseconds per call of `f`: the fastest of 7 batches, each of about 20 ms.
fn ns_per_call(mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    f();
    let once = start.elapsed().as_secs_f64().max(1e-9);
    let calls = ((0.02 / once) as usize).clamp(1, 1_000_000);
    (0..7)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..calls {
                f();
            }
            start.elapsed().as_secs_f64() * 1e9 / calls as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    println!("| n | CRBA ns | Lagrange-Euler, direct traces ns | Lagrange-Euler, inner products ns | direct / inner | direct / CRBA |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for n in [2, 3, 4, 6, 8, 12, 16, 20, 25, 30] {
        let chain = RandomChain::generate(n as u64, n);
        let robot = Robot::from_urdf_str(&chain.urdf, &ChainOptions::default())
            .expect("a random chain converts");
        let n = robot.dof();
        let q: Vec<f64> = (0..n).map(|k| 0.1 * k as f64 - 0.4).collect();
        let mut m = DMatrix::zeros(n, n);
        let mut ws = DynamicsWorkspace::new(&robot);
        let crba = ns_per_call(|| {
            mass_matrix(&robot, &mut ws, black_box(&q), &mut m).expect("sizes fit");
        });
        let mut lws = LagrangeWorkspace::new(&robot);
        let mut by = |method| {
            ns_per_call(|| {
                lagrange_mass_matrix(&robot, &mut lws, black_box(&q), method, &mut m)
                    .expect("sizes fit");
            })
        };
        let (direct, inner) = (by(TraceMethod::Direct), by(TraceMethod::InnerProduct));
        println!(
            "| {n} | {crba:.0} | {direct:.0} | {inner:.0} | {:.2} | {:.1} |",
            direct / inner,
            direct / crba
        );
    }
}
