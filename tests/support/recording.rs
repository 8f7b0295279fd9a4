//! A robot's driver log of a simulated run: what identification reads. Included by the tests
//! that identify (`#[path]`), as it needs the simulator (a dev-dependency).

use armctl_control::reference::Trajectory;
use armctl_control::{Controller, JointReference, JointState};
use armctl_dynamics::{forward_dynamics, DynamicsWorkspace};
use armctl_ident::JointLog;
use armctl_model::Robot;
use armctl_sim::{SimConfig, Simulator};
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, Normal};

/// `seconds` of the plant following `trajectory` under `controller`, logged at every step:
/// measured positions and velocities, the effort applied, and (when `exact`) the
/// acceleration the plant had, else none (it is differentiated).
pub fn record(
    plant: &Robot,
    config: SimConfig,
    controller: &mut dyn Controller,
    trajectory: &dyn Trajectory,
    seconds: f64,
    exact: bool,
    effort_noise: f64,
) -> JointLog {
    let n = plant.dof();
    let mut reference = JointReference::hold(&vec![0.0; n]);
    trajectory.sample(0.0, &mut reference);
    let mut sim = Simulator::new(plant, &reference.q, config).unwrap();
    let dt = sim.config().dt;
    let mut ws = DynamicsWorkspace::new(plant);
    let (mut q, mut qd, mut effort, mut qdd) =
        (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let mut rng = StdRng::seed_from_u64(11);
    let noise = Normal::new(0.0, effort_noise.max(1e-300)).unwrap();
    let mut log = JointLog {
        joint_names: plant.joint_names().map(str::to_string).collect(),
        acceleration: exact.then(Vec::new),
        velocity: Some(vec![]),
        ..JointLog::default()
    };
    sim.measure(&mut q, &mut qd).unwrap();
    controller.reset(&JointState { q: &q, qd: &qd });
    for k in 0..(seconds / dt).round() as usize {
        let t = k as f64 * dt;
        sim.measure(&mut q, &mut qd).unwrap();
        trajectory.sample(t, &mut reference);
        controller
            .update(&JointState { q: &q, qd: &qd }, &reference, dt, &mut effort)
            .unwrap();
        if exact {
            forward_dynamics(plant, &mut ws, sim.q(), sim.qd(), &effort, &mut qdd).unwrap();
            log.acceleration.as_mut().unwrap().push(qdd.clone());
        }
        sim.step(&effort).unwrap();
        log.time.push(t);
        log.position.push(q.clone());
        log.velocity.as_mut().unwrap().push(qd.clone());
        let measured: Vec<f64> = sim
            .applied_effort()
            .iter()
            .map(|e| {
                e + if effort_noise > 0.0 {
                    noise.sample(&mut rng)
                } else {
                    0.0
                }
            })
            .collect();
        log.effort.push(measured);
    }
    log
}
