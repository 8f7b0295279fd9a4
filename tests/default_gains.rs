//! Every controller with its default parameters, run as controller_node runs it (the runtime's
//! controller core: safety layer, hold rules), holds each bundled arm and 50 random arms at
//! 1 kHz on the embedded simulator: from rest at the middle configuration and from 0.1 rad (or
//! m) off it, for 3.5 s, without a single clipped effort and without drifting away. The adaptive
//! laws also converge from a 0.3 rad step with a model 50% off.

use armctl_control::default_gains::STEP;
use armctl_control::reference::SetPoint;
use armctl_control::{controller_by_name, ParameterValue, CONTROLLERS};
use armctl_dynamics::Wrench;
use armctl_e2e::{scaled, urdf_dir};
use armctl_model::test_support::random_arm::RandomArm;
use armctl_model::{ChainOptions, Robot};
use armctl_runtime::controller_core::{
    CollisionDetection, CollisionSettings, ControllerCore, SafeMode,
};
use armctl_runtime::simulated_loop::SimulatedLoop;
use armctl_sim::{run_loop, Integrator, SimConfig, Simulator};
use nalgebra::Vector3;

/// What one run did.
#[derive(Debug)]
struct Outcome {
    clipped: usize,
    held: usize,
    final_error: f64,
    /// The largest joint speed over the joint's velocity limit.
    peak_speed: f64,
    /// The simulation failed (diverged), and how.
    diverged: Option<String>,
}

impl Outcome {
    fn refused(clipped: usize, held: usize, why: String) -> Self {
        Self {
            clipped,
            held,
            final_error: f64::NAN,
            peak_speed: f64::NAN,
            diverged: Some(why),
        }
    }
}

/// One run: a law built on `model` brings the plant `robot` back to `at` from `offset` away
/// (every joint), for `seconds`, at 1 kHz with `integrator`; `rate` replaces the adaptation
/// rates.
struct Case<'a> {
    robot: &'a Robot,
    model: &'a Robot,
    at: Vec<f64>,
    offset: f64,
    seconds: f64,
    rate: Option<f64>,
    integrator: Integrator,
    /// Parameters set on the law before it starts.
    set: Vec<(&'static str, ParameterValue)>,
    /// A constant wrench on the tip (base link axes).
    wrench: Option<Wrench>,
}

impl<'a> Case<'a> {
    /// From the middle configuration, with the true model and the default integrator.
    fn middle(robot: &'a Robot, offset: f64, seconds: f64) -> Self {
        Self::at(robot, robot.middle_configuration(), offset, seconds)
    }

    fn at(robot: &'a Robot, at: Vec<f64>, offset: f64, seconds: f64) -> Self {
        Self {
            robot,
            model: robot,
            at,
            offset,
            seconds,
            rate: None,
            integrator: SimConfig::default().integrator,
            set: Vec::new(),
            wrench: None,
        }
    }
}

fn hold(robot: &Robot, controller: &str, offset: f64, seconds: f64) -> Outcome {
    run(controller, &Case::middle(robot, offset, seconds))
}

fn run(controller: &str, case: &Case<'_>) -> Outcome {
    let (robot, model, middle) = (case.robot, case.model, case.at.clone());
    let start: Vec<f64> = middle.iter().map(|q| q + case.offset).collect();
    let mut law = match controller_by_name(controller, model) {
        Ok(law) => law,
        Err(e) => return Outcome::refused(0, 0, format!("refused to start: {e}")),
    };
    for (name, value) in &case.set {
        if let Err(e) = law.set_parameter(name, value.clone()) {
            return Outcome::refused(0, 0, format!("{name} refused: {e}"));
        }
    }
    for name in ["gamma_inertia", "gamma_first_moment", "gamma_mass"] {
        if let Some(rate) = case.rate {
            law.set_parameter(name, ParameterValue::Double(rate))
                .unwrap();
        }
    }
    // A task-space law holds the tip where it starts (its target is the pose at the start);
    // a joint-space law is brought back to the middle.
    let target = if law.task_space().is_some() {
        start.clone()
    } else {
        middle
    };
    let mut core = ControllerCore::new(model.clone(), SafeMode::Gravity, 0.1, None).unwrap();
    // These runs test the laws against the arm, a tip wrench and a wrong model, which the
    // external torque estimate rightly sees; collision detection has tests of its own.
    core.set_collision(CollisionSettings {
        detection: CollisionDetection::Off,
        ..CollisionSettings::default()
    });
    let hold_target = SetPoint::new(target.clone());
    core.follow(Box::new(hold_target), 0.0).unwrap();
    let mut group = armctl_runtime::group_loop::GroupLoop::of_core(core, law).unwrap();
    let mut control = SimulatedLoop::new(&mut group);
    let config = SimConfig {
        integrator: case.integrator,
        external_wrench: case.wrench,
        ..SimConfig::default()
    };
    let mut sim = Simulator::new(robot, &start, config).unwrap();
    let steps = (case.seconds * 1000.0) as usize;
    let log = match run_loop(&mut sim, &mut control, steps, |_, _, _| {}) {
        Ok(log) => log,
        Err(e) => return Outcome::refused(control.clipped(), control.held, e.to_string()),
    };
    let final_error = (0..robot.dof())
        .map(|i| (log.q[i].last().unwrap() - target[i]).abs())
        .fold(0.0, f64::max);
    let peak_speed = robot
        .joints()
        .iter()
        .zip(&log.qd)
        .map(|(joint, qd)| qd.iter().fold(0.0, |m: f64, v| m.max(v.abs())) / joint.limits.velocity)
        .fold(0.0, f64::max);
    Outcome {
        clipped: control.clipped() + log.saturated,
        held: control.held,
        final_error,
        peak_speed,
        diverged: None,
    }
}

/// How close every law but independent PD must come to the set point on a frictionless arm
/// within [`HOLD_SECONDS`] of a [`STEP`] (issue 32 item 3), rad.
const SETTLED: f64 = 1e-3;

/// Whether a run held the arm: [`held_within`] [`SETTLED`] on a frictionless arm.
fn held(controller: &str, offset: f64, damped: bool, outcome: &Outcome) -> bool {
    held_within(controller, offset, (!damped).then_some(SETTLED), outcome)
}

/// Whether a run held the arm: no clipped effort, no hold, no divergence, and within
/// `tolerance` of the set point (rad), or for a damped arm (`None`) not drifting away.
/// Independent PD compensates no gravity, so it settles `G / kp` away by design, and no law
/// compensates the URDF friction of a damped arm by default (Coulomb friction holds a joint
/// `coulomb / kp` off; heavy damping slows it): those must only stay within their limits and
/// not drift away. Adaptive computed torque learns that friction into the inertial parameters
/// at first (the prediction error at rest cannot tell friction from gravity): on two damped
/// arms a joint swings up to 0.08 rad beyond the offset before it comes back (0.07 and
/// 0.03 rad off after 10 s); it must stay within twice the offset.
fn held_within(controller: &str, offset: f64, tolerance: Option<f64>, outcome: &Outcome) -> bool {
    let settled = match tolerance {
        _ if controller == "independent_pd" => true,
        Some(tolerance) => outcome.final_error < tolerance,
        None if controller == "adaptive_computed_torque" => {
            outcome.final_error <= 2.0 * offset + 0.02
        }
        None => outcome.final_error <= offset + 0.02,
    };
    outcome.clipped == 0 && outcome.held == 0 && outcome.diverged.is_none() && settled
}

/// How long a hold runs: 3 s after the move by which the runtime joins the set point from the
/// offset (at most half a second on these arms; before that move the set point was a step).
const HOLD_SECONDS: f64 = 3.5;

/// Every controller from rest and from a 0.1 rad offset on `robot`; the failures.
fn hold_all(name: &str, robot: &Robot, damped: bool) -> Vec<String> {
    let mut failures = Vec::new();
    for controller in CONTROLLERS {
        for offset in [0.0, STEP] {
            let outcome = hold(robot, controller, offset, HOLD_SECONDS);
            println!("{name:20} {controller:26} offset {offset}: {outcome:?}");
            if !held(controller, offset, damped, &outcome) {
                failures.push(format!("{name} {controller} offset {offset}: {outcome:?}"));
            }
        }
    }
    failures
}

fn bundled(file: &str) -> Robot {
    Robot::from_urdf_file(urdf_dir().join(file), &ChainOptions::default()).unwrap()
}

const BUNDLED: [&str; 4] = [
    "panda.urdf",
    "ur5e.urdf",
    "puma560.urdf",
    "planar_2link.urdf",
];

#[test]
fn every_controller_holds_every_bundled_arm_with_its_defaults() {
    let failures: Vec<String> = BUNDLED
        .iter()
        .flat_map(|file| hold_all(file, &bundled(file), false))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// 50 arms nobody tuned for: 6 and 7 joints, light wrists, URDF damping and friction on half
/// of them (the plant has them; the controllers do not compensate them by default).
fn random_arms(seeds: std::ops::Range<u64>) {
    let failures: Vec<String> = seeds
        .flat_map(|seed| {
            let arm = RandomArm::generate(seed);
            let robot = Robot::from_urdf_str(&arm.urdf, &ChainOptions::default()).unwrap();
            hold_all(&format!("random arm {seed}"), &robot, arm.damped)
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// Two halves, so the test harness runs them on both cores.
#[test]
fn every_controller_holds_random_arms_0_to_24_with_its_defaults() {
    random_arms(0..25);
}

#[test]
fn every_controller_holds_random_arms_25_to_49_with_its_defaults() {
    random_arms(25..50);
}

const ADAPTIVE: [&str; 3] = [
    "slotine_li_adaptive",
    "slotine_li_adaptive_base",
    "adaptive_computed_torque",
];

/// The adaptive laws with default rates converge from a 0.3 rad step on every bundled arm
/// with the true model, and within 10 s with a model 50% off (every mass and inertia halved;
/// they end within 2 mrad).
#[test]
fn adaptive_controllers_converge_from_a_large_step() {
    let mut failures = Vec::new();
    for file in BUNDLED {
        let truth = bundled(file);
        for (model_name, model, seconds, bound) in [
            ("true", truth.clone(), 5.0, 0.02),
            ("halved", scaled(&truth, 0.5), 10.0, 0.01),
        ] {
            for controller in ADAPTIVE {
                let case = Case {
                    model: &model,
                    ..Case::middle(&truth, 0.3, seconds)
                };
                let outcome = run(controller, &case);
                println!("{file:20} {controller:26} {model_name} model, 0.3 rad step: {outcome:?}");
                let converged =
                    outcome.diverged.is_none() && outcome.held == 0 && outcome.final_error < bound;
                if !converged {
                    failures.push(format!("{file} {controller} {model_name}: {outcome:?}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The Jaco2-class arm of `tests/data/arms` (a light spherical wrist; its middle
/// configuration stretches the elbow and aligns joints 4 and 6).
fn jaco2_class() -> Robot {
    let path = armctl_e2e::workspace_dir().join("tests/data/arms/jaco2_class.urdf");
    Robot::from_urdf_file(path, &ChainOptions::default()).unwrap()
}

/// The configurations where M^-1 peaks, which sampling misses, and how close every law but
/// independent PD settles there (the arm is frictionless): the middle (joints 3 and 5 at
/// 3.15 rad: the arm stretched up, joint 1 lined up with joint 4 and the wrist aligned),
/// exactly aligned wrist axes with the elbow stretched (3 and 5 at pi), and aligned wrist
/// axes with a bent elbow. Stretched up, turning joint 1 alone moves almost nothing: the
/// run-time bound cuts its damping to 3% and its stiffness with it, so the PD family is
/// slower there (1.8e-3 rad left after 3 s).
fn jaco2_singular_configurations() -> [(&'static str, Vec<f64>, f64); 3] {
    let pi = std::f64::consts::PI;
    [
        ("middle", jaco2_class().middle_configuration(), 2.5e-3),
        (
            "stretched, aligned",
            vec![0.0, pi, pi, 0.0, pi, 0.0],
            2.5e-3,
        ),
        ("bent, aligned", vec![0.3, 2.5, 1.8, 0.4, pi, -0.2], SETTLED),
    ]
}

/// Every law with its defaults holds the Jaco2-class arm at each of its singular
/// configurations, from rest and from 0.1 rad off, with both integrators: no divergence (the
/// defaults gave `dt lambda_max(M^-1 D)` up to 4.2 there, twice the limit, before the run-time
/// bound), no clipped effort, no hold, and settled within the configuration's tolerance after
/// 3 s. Independent PD compensates no gravity: with the elbow bent the arm may fall faster
/// than `over_speed` allows, and is braked (held) until it is at rest.
#[test]
fn every_controller_holds_a_light_spherical_wrist_at_its_singular_configurations() {
    let robot = jaco2_class();
    let mut failures = Vec::new();
    for (name, at, tolerance) in jaco2_singular_configurations() {
        for integrator in [Integrator::Rk4, Integrator::SemiImplicitEuler] {
            for controller in CONTROLLERS {
                for offset in [0.0, STEP] {
                    let case = Case {
                        integrator,
                        ..Case::at(&robot, at.clone(), offset, 3.0)
                    };
                    let outcome = run(controller, &case);
                    println!("jaco2 {name:18} {integrator:?} {controller:26} offset {offset}: {outcome:?}");
                    let braked = controller == "independent_pd" && outcome.held > 0;
                    let outcome = Outcome {
                        held: if braked { 0 } else { outcome.held },
                        ..outcome
                    };
                    if !held_within(controller, offset, Some(tolerance), &outcome) {
                        failures.push(format!(
                            "{name} {integrator:?} {controller} offset {offset}: {outcome:?}"
                        ));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The laws whose velocity feedback is a torque-valued damping, and its parameter.
const DAMPED_LAWS: [(&str, &str); 9] = [
    ("independent_pd", "kd"),
    ("pd_gravity", "kd"),
    ("pd_fixed_gravity", "kd"),
    ("joint_impedance", "damping"),
    ("slotine_li", "kd"),
    ("slotine_li_adaptive", "kd"),
    ("slotine_li_adaptive_base", "kd"),
    ("slotine_sliding_mode", "kd"),
    ("sliding_mode", "kd"),
];

/// `dt lambda_max(M(q)^-1 diag(damping))` at 1 kHz, by nalgebra's eigensolver.
fn sampled_load(robot: &Robot, q: &[f64], damping: &[f64]) -> f64 {
    let n = robot.dof();
    let mut m = nalgebra::DMatrix::zeros(n, n);
    let mut ws = armctl_dynamics::DynamicsWorkspace::new(robot);
    armctl_dynamics::mass_matrix(robot, &mut ws, q, &mut m).unwrap();
    let inverse = m.cholesky().unwrap().inverse();
    let root: Vec<f64> = damping.iter().map(|d| d.sqrt()).collect();
    let w = nalgebra::DMatrix::from_fn(n, n, |r, c| root[r] * inverse[(r, c)] * root[c]);
    1e-3 * w.symmetric_eigenvalues().max()
}

/// Every damped law's default damping at the Jaco2-class arm's singular configurations: as
/// designed from samples it passes the sampled-data limit (printed), as applied after the
/// run-time bound's per-joint scales it is within the margin, by the exact eigenvalue.
#[test]
fn the_applied_damping_of_every_law_is_within_the_sampled_data_margin_where_axes_align() {
    use armctl_control::damping_bound::{DampingBound, RUNTIME_MARGIN};
    let robot = jaco2_class();
    let mut ws = armctl_dynamics::DynamicsWorkspace::new(&robot);
    let mut bound = DampingBound::new(robot.dof());
    for (law, parameter) in DAMPED_LAWS {
        let damping = controller_by_name(law, &robot)
            .unwrap()
            .parameters()
            .values(parameter)
            .to_vec();
        let (mut designed, mut applied) = (0.0f64, 0.0f64);
        for (_, q, _) in jaco2_singular_configurations() {
            designed = designed.max(sampled_load(&robot, &q, &damping));
            let scales = bound
                .diagonal_scales(&robot, &mut ws, &q, &damping, 1e-3)
                .unwrap();
            let scaled: Vec<f64> = damping.iter().zip(scales).map(|(d, s)| d * s).collect();
            applied = applied.max(sampled_load(&robot, &q, &scaled));
        }
        println!("{law:26} {parameter:8} worst dt lambda_max(M^-1 D): designed {designed:.3}, applied {applied:.3}");
        assert!(
            applied <= RUNTIME_MARGIN * (1.0 + 1e-12),
            "{law}: {applied}"
        );
    }
}

/// Share of a velocity limit a joint may pass it by while a law with its defaults answers a
/// set-point step (the runtime joins the set point by a move at half the limits).
const SPEED_OVERSHOOT: f64 = 0.1;

/// Every law with its defaults answers 0.3 and 0.5 rad set-point steps on every bundled arm and
/// on random arms without a joint passing its velocity limit by more than
/// [`SPEED_OVERSHOOT`]: the step becomes a move within half the velocity limits and within the
/// acceleration limits (before, computed torque reached 1.28 times the Panda's limit on a
/// 0.3 rad step). No clipped effort, no hold, no divergence, and closer than the step after 5 s.
#[test]
fn set_point_steps_stay_within_the_velocity_limits() {
    let mut arms: Vec<(String, Robot)> = BUNDLED
        .iter()
        .map(|file| (file.to_string(), bundled(file)))
        .collect();
    for seed in [0, 2, 4, 6] {
        let arm = RandomArm::generate(seed);
        let robot = Robot::from_urdf_str(&arm.urdf, &ChainOptions::default()).unwrap();
        arms.push((format!("random arm {seed}"), robot));
    }
    let mut failures = Vec::new();
    for (name, robot) in &arms {
        for controller in CONTROLLERS {
            for step in [0.3, 0.5] {
                let outcome = run(controller, &Case::middle(robot, step, 5.0));
                println!("{name:20} {controller:26} step {step}: {outcome:?}");
                let within = outcome.peak_speed <= 1.0 + SPEED_OVERSHOOT;
                let independent = controller == "independent_pd";
                let closer = independent || outcome.final_error < step;
                if !(within && closer && outcome.clipped == 0 && outcome.held == 0)
                    || outcome.diverged.is_some()
                {
                    failures.push(format!("{name} {controller} step {step}: {outcome:?}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The laws that may be braked at these double singularities: their defaults are stable
/// there, but no model term holds the light wrist against the proximal joints' motion, which
/// throws it past `over_speed`; the runtime brakes it (holds) and the arm stays where it
/// stopped. Joint impedance, softer by design (10 rad/s), on three of the four arms with the
/// elbow bent; PD with fixed gravity on one. Safe (bounded, braked, no clipped effort), not
/// settled.
const BRAKED_AT_DOUBLE_SINGULARITIES: [&str; 2] = ["pd_fixed_gravity", "joint_impedance"];

/// Random 6-joint arms with a spherical wrist at their double singularities: the elbow
/// stretched and the wrist aligned, hanging and held out horizontally, and the wrist aligned
/// with the elbow bent; light distal links. Every law with its defaults, from rest and from
/// 0.1 rad off, with both integrators: no divergence and no clipped effort; every law but those
/// of [`BRAKED_AT_DOUBLE_SINGULARITIES`] also without a hold and not drifting away (within the
/// offset and 0.02 rad after 3.5 s; the PD family leaves up to 0.08 rad, the model-based laws
/// settle).
#[test]
fn every_controller_holds_random_spherical_wrists_at_their_singular_configurations() {
    use armctl_model::test_support::spherical_wrist_arm::SphericalWristArm;
    let half_pi = std::f64::consts::FRAC_PI_2;
    let configurations = [
        ("hanging, stretched, aligned", [0.0; 6]),
        (
            "horizontal, stretched, aligned",
            [0.0, half_pi, 0.0, 0.0, 0.0, 0.0],
        ),
        ("bent, aligned", [0.3, 1.0, 1.2, 0.4, 0.0, -0.2]),
    ];
    let mut failures = Vec::new();
    for seed in 0..4 {
        let arm = SphericalWristArm::generate(seed);
        let robot = Robot::from_urdf_str(&arm.urdf, &ChainOptions::default()).unwrap();
        for (name, at) in &configurations {
            for integrator in [Integrator::Rk4, Integrator::SemiImplicitEuler] {
                for controller in CONTROLLERS {
                    for offset in [0.0, STEP] {
                        let case = Case {
                            integrator,
                            ..Case::at(&robot, at.to_vec(), offset, HOLD_SECONDS)
                        };
                        let outcome = run(controller, &case);
                        println!("arm {seed} {name:32} {integrator:?} {controller:26} offset {offset}: {outcome:?}");
                        let safe = outcome.diverged.is_none() && outcome.clipped == 0;
                        let soft = BRAKED_AT_DOUBLE_SINGULARITIES.contains(&controller);
                        if !(safe && (soft || held(controller, offset, true, &outcome))) {
                            failures.push(format!(
                                "arm {seed} {name} {integrator:?} {controller} offset {offset}: {outcome:?}"
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Cartesian impedance with a stiffness far beyond what 1 kHz can damp at the Jaco2-class
/// arm's aligned wrist (1e4 N/m, 1e3 N m/rad: rotational modes of about 600 rad/s there, whose
/// critical damping would be 1.2e3/s, past the sampled-data limit of 1e3/s with one period of
/// delay): each mode's damping rate is capped at the margin, and the posture damping bounded
/// like a joint damping, so the arm holds against a tip wrench, with both integrators, from
/// rest and 0.1 rad off: no divergence, no braking, within the velocity limits (it yields
/// where the task is singular; without the cap it is braked for over-speed within 25 ms).
#[test]
fn a_stiff_cartesian_impedance_is_damped_within_the_sampled_data_limit() {
    let robot = jaco2_class();
    let stiffness = ParameterValue::DoubleArray(vec![1e4, 1e4, 1e4, 1e3, 1e3, 1e3]);
    let mut failures = Vec::new();
    for (name, at, _) in jaco2_singular_configurations() {
        for integrator in [Integrator::Rk4, Integrator::SemiImplicitEuler] {
            for offset in [0.0, STEP] {
                let case = Case {
                    integrator,
                    set: vec![("stiffness", stiffness.clone())],
                    wrench: Some(Wrench {
                        force: Vector3::new(2.0, -1.0, 1.5),
                        torque: Vector3::new(0.05, 0.02, -0.05),
                    }),
                    ..Case::at(&robot, at.clone(), offset, 2.0)
                };
                let outcome = run("cartesian_impedance", &case);
                println!("jaco2 {name:18} {integrator:?} offset {offset}: {outcome:?}");
                if outcome.diverged.is_some() || outcome.held > 0 || outcome.peak_speed > 1.0 {
                    failures.push(format!(
                        "{name} {integrator:?} offset {offset}: {outcome:?}"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
