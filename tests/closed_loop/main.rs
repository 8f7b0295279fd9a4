//! Controllers in closed loop on the embedded simulator (Panda and PUMA): the claims of
//! docs/theory.md section 6, with the numbers asserted. One file per law (or family); the
//! helpers they share are here.

use armctl_control::damping_bound::DampingBound;
use armctl_control::reference::{Quintic, SetPoint, Trajectory};
use armctl_control::{
    gravity_gradient_bound, ComputedTorque, Controller, Guarded, IndependentPd, JointImpedance,
    ParameterValue, PdFixedGravity, PdGravity,
};
use armctl_dynamics::{gravity_torques, DynamicsWorkspace, Wrench};
use armctl_e2e::{scaled, urdf_dir};
use armctl_model::{jacobian, ChainOptions, FrameId, KinematicsWorkspace, Robot};
use armctl_sim::{run_closed_loop, ModelMismatch, RunLog, SimConfig, Simulator};
use nalgebra::{DVector, Matrix6xX, Vector3, Vector6};

mod adaptive_computed_torque;
mod cartesian_impedance;
mod computed_torque;
mod gain_design;
mod joint_impedance;
mod pd;
mod resolved_acceleration;
mod robust;
mod sliding_mode;
mod slotine_li;

fn robot(file: &str) -> Robot {
    Robot::from_urdf_file(urdf_dir().join(file), &ChainOptions::default()).unwrap()
}

/// Start and goal configurations well inside the limits.
fn poses(robot: &Robot) -> (Vec<f64>, Vec<f64>) {
    match robot.dof() {
        7 => (
            vec![0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8],
            vec![0.3, -0.5, 0.2, -2.2, 0.4, 1.5, 0.6],
        ),
        _ => (
            vec![0.0, 0.5, -1.2, 0.0, 0.4, 0.0],
            vec![0.3, 0.7, -1.5, 0.3, 0.6, 0.4],
        ),
    }
}

fn run(
    robot: &Robot,
    controller: &mut dyn Controller,
    trajectory: &dyn Trajectory,
    q0: &[f64],
    seconds: f64,
    config: SimConfig,
) -> RunLog {
    let steps = (seconds / config.dt).round() as usize;
    let mut sim = Simulator::new(robot, q0, config).unwrap();
    run_closed_loop(&mut sim, controller, trajectory, steps, |_, _, _| {}).unwrap()
}

/// `M_ii` at `q`.
fn joint_inertias(robot: &Robot, q: &[f64]) -> Vec<f64> {
    let mut m = nalgebra::DMatrix::zeros(robot.dof(), robot.dof());
    armctl_dynamics::mass_matrix(robot, &mut DynamicsWorkspace::new(robot), q, &mut m).unwrap();
    (0..robot.dof()).map(|i| m[(i, i)]).collect()
}

/// The gains the law tests below were designed with (the course's values), not the defaults,
/// which are sized conservatively for arms nobody tuned: `Lambda = 20/s`, `Kd = 100/s` times
/// the effective joint inertia `1/(M^-1)_ii` at mid-range.
fn textbook_slotine_li_gains(robot: &Robot, controller: &mut dyn Controller) {
    let n = robot.dof();
    let mut m = nalgebra::DMatrix::zeros(n, n);
    let q = robot.middle_configuration();
    armctl_dynamics::mass_matrix(robot, &mut DynamicsWorkspace::new(robot), &q, &mut m).unwrap();
    let inverse = m.try_inverse().unwrap();
    set(controller, "lambda", vec![20.0; n]);
    set(
        controller,
        "kd",
        (0..n).map(|i| 100.0 / inverse[(i, i)]).collect(),
    );
    if !controller.estimates().is_empty() {
        for rate in ["gamma_inertia", "gamma_first_moment", "gamma_mass"] {
            controller
                .set_parameter(rate, ParameterValue::Double(TEST_RATE))
                .unwrap();
        }
    }
}

/// Adaptation rate of the learning tests, 1/s: the stiff textbook gains above leave errors
/// small, which the normalised update answers slowly at the default rate.
const TEST_RATE: f64 = 10.0;

fn final_q(log: &RunLog) -> Vec<f64> {
    log.q.iter().map(|c| *c.last().unwrap()).collect()
}

/// The largest `|q - goal|` over joints at the end of `log`.
fn worst_final_error(log: &RunLog, goal: &[f64]) -> f64 {
    final_q(log)
        .iter()
        .zip(goal)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
}

fn set(controller: &mut dyn Controller, name: &str, values: Vec<f64>) {
    controller
        .set_parameter(name, ParameterValue::DoubleArray(values))
        .unwrap();
    controller.parameters_mut().settle();
}

/// A repeating, exciting reference that starts at rest at `start`:
/// `q = start + A (1 - cos(2 pi f t))` with f multiples of 0.2 Hz (period 5 s).
fn exciting(robot: &Robot, start: &[f64]) -> armctl_control::reference::Sinusoid {
    let n = robot.dof();
    let amplitude: Vec<f64> = (0..n).map(|i| if i < 4 { 0.25 } else { 0.3 }).collect();
    let center: Vec<f64> = start.iter().zip(&amplitude).map(|(q, a)| q + a).collect();
    let frequency: Vec<f64> = (0..n).map(|i| 0.2 * (1 + i % 3) as f64).collect();
    armctl_control::reference::Sinusoid::new(
        center,
        amplitude,
        frequency,
        vec![-std::f64::consts::FRAC_PI_2; n],
    )
    .unwrap()
}

fn largest_error(log: &RunLog) -> f64 {
    (0..log.q.len())
        .flat_map(|i| log.error(i))
        .fold(0.0, |m: f64, e| m.max(e.abs()))
}
