//! `armctl bench`: nanoseconds per call of each algorithm, median over batches on
//! pre-generated random states. For side-by-side ratios against Pinocchio and KDL see
//! `bench/` at the top of the workspace.

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use armctl_dynamics::{
    coriolis_matrix, forward_dynamics, forward_dynamics_derivatives, gravity_derivatives,
    gravity_torques, mass_matrix, regressor, regressor_times, regressor_transpose_products, rnea,
    rnea_derivatives, DynamicsWorkspace, ForwardDerivatives, Gravity, TransposeProducts,
};
use armctl_model::{forward_kinematics, jacobian, FrameId, KinematicsWorkspace, Robot};
use clap::Args;
use nalgebra::{DMatrix, Matrix6xX};
use serde::Serialize;

use armctl_control::joint_limit_guard::{JointLimitGuard, DEFAULT_SOFT_LIMIT_MARGIN};
use armctl_control::{controller_by_name, Cooperative, JointReference, JointState, CONTROLLERS};
use armctl_sim::{SimConfig, Simulator};

use crate::bench_states::{periodic_path, random_states, State};
use crate::model_command::UrdfArgs;

/// `armctl bench` arguments.
#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub(crate) struct BenchArgs {
    #[command(flatten)]
    urdf: UrdfArgs,
    /// Print JSON (`{"robot", "dof", "ns_per_call": {name: ns}}`).
    #[arg(long)]
    json: bool,
    /// Batches per algorithm (the median is reported).
    #[arg(long, default_value_t = 41)]
    batches: usize,
    /// Also write the random states, one per line (q, then qd, then qdd), so that peer
    /// benchmarks (bench/) time the same states.
    #[arg(long, value_name = "FILE")]
    states_out: Option<PathBuf>,
    /// Time only the entries whose name contains this (for profiling one algorithm).
    #[arg(long, value_name = "TEXT")]
    only: Option<String>,
}

#[derive(Debug, Serialize)]
struct Report {
    robot: String,
    dof: usize,
    ns_per_call: Vec<(String, f64)>,
}

const STATES: usize = 256;
const CALLS_PER_BATCH: usize = 2048;
/// Samples of the controllers' path: one period, one batch.
const PATH_STATES: usize = CALLS_PER_BATCH;

/// Median ns per call of `f` over `batches` batches, cycling through the states.
fn time(states: &[State], batches: usize, mut f: impl FnMut(&State)) -> f64 {
    if batches == 0 {
        return f64::NAN;
    }
    for s in states {
        f(s);
    }
    let mut samples: Vec<f64> = (0..batches.max(1))
        .map(|_| {
            let start = Instant::now();
            for k in 0..CALLS_PER_BATCH {
                f(black_box(&states[k % states.len()]));
            }
            start.elapsed().as_nanos() as f64 / CALLS_PER_BATCH as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

pub(crate) fn run(args: &BenchArgs) -> Result<()> {
    let robot = args.urdf.load_robot()?;
    let states = random_states(&robot, STATES, 7);
    if let Some(path) = &args.states_out {
        write_states(path, &states)?;
    }
    let report = measure(&robot, &states, (args.batches, args.only.as_deref()));
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{} ({} joints), ns per call, median of {} batches of {CALLS_PER_BATCH}:",
            report.robot, report.dof, args.batches
        );
        for (name, ns) in &report.ns_per_call {
            println!("  {name:<36} {ns:9.1}");
        }
        if let Some((_, ns)) = report
            .ns_per_call
            .iter()
            .find(|(name, _)| name == "simulator_step_rk4")
        {
            println!(
                "  simulator real-time factor at 1 kHz (RK4): {:.0}x",
                1e6 / ns
            );
        }
    }
    Ok(())
}

fn write_states(path: &PathBuf, states: &[State]) -> Result<()> {
    let mut text = String::new();
    for s in states {
        let values: Vec<String> =
            s.q.iter()
                .chain(&s.qd)
                .chain(&s.qdd)
                .map(|v| format!("{v:e}"))
                .collect();
        let _ = writeln!(text, "{}", values.join(" "));
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

fn measure(robot: &Robot, states: &[State], (batches, only): (usize, Option<&str>)) -> Report {
    let n = robot.dof();
    let mut ws = DynamicsWorkspace::new(robot);
    let mut kin = KinematicsWorkspace::new(robot);
    let mut out = vec![0.0; n];
    let mut mat = DMatrix::zeros(n, n);
    let mut y = DMatrix::zeros(n, 10 * n);
    let mut jac = Matrix6xX::zeros(n);
    let mut results = Vec::new();
    // Errors cannot happen here: every buffer is sized for the robot.
    let mut record = |name: &str, ns: f64| {
        if !ns.is_nan() {
            results.push((name.to_string(), ns));
        }
    };
    // Batches for an entry: none when `only` leaves it out.
    let pick = |name: &str| match only {
        Some(text) if !name.contains(text) => 0,
        _ => batches,
    };
    record(
        "rnea",
        time(states, pick("rnea"), |s| {
            drop(rnea(robot, &mut ws, &s.q, &s.qd, &s.qdd, &mut out))
        }),
    );
    record(
        "mass_matrix",
        time(states, pick("mass_matrix"), |s| {
            drop(mass_matrix(robot, &mut ws, &s.q, &mut mat))
        }),
    );
    record(
        "coriolis_matrix",
        time(states, pick("coriolis_matrix"), |s| {
            drop(coriolis_matrix(robot, &mut ws, &s.q, &s.qd, &mut mat))
        }),
    );
    record(
        "gravity",
        time(states, pick("gravity"), |s| {
            drop(gravity_torques(robot, &mut ws, &s.q, &mut out))
        }),
    );
    record(
        "forward_dynamics",
        time(states, pick("forward_dynamics"), |s| {
            drop(forward_dynamics(
                robot, &mut ws, &s.q, &s.qd, &s.qdd, &mut out,
            ))
        }),
    );
    record(
        "forward_kinematics",
        time(states, pick("forward_kinematics"), |s| {
            drop(black_box(
                forward_kinematics(robot, &mut kin, &s.q).map(|p| p.tip()),
            ))
        }),
    );
    record(
        "jacobian",
        time(states, pick("jacobian"), |s| {
            drop(jacobian(robot, &mut kin, &s.q, FrameId::Tip, &mut jac))
        }),
    );
    record(
        "regressor",
        time(states, pick("regressor"), |s| {
            drop(regressor(
                robot, &mut ws, &s.q, &s.qd, &s.qd, &s.qdd, &mut y,
            ))
        }),
    );
    // One pass for what a task-space law needs: M, C qd + G, G and the tip's pose, Jacobian and
    // Jdot qd (compare Pinocchio's computeAllTerms).
    let mut jdot_qd = nalgebra::Vector6::zeros();
    record(
        "all_terms",
        time(states, pick("all_terms"), |s| {
            if let Ok(mut terms) = ws.update(robot, &s.q, &s.qd) {
                let _ = terms.mass_matrix(&mut mat);
                let _ = terms.nonlinear_effects(&mut out);
                let _ = terms.gravity(&mut out);
                black_box(terms.tip_pose());
                let _ = terms.tip_jacobian(&mut jac);
                jdot_qd = terms.tip_jacobian_dot_qd();
            }
        }),
    );
    black_box(jdot_qd);
    // What the adaptive laws use instead of forming Y: `Y p` and `Y^T x` with weighted column
    // norms, the robot's own parameters as p.
    let p = robot.parameter_vector();
    record(
        "regressor_times",
        time(states, pick("regressor_times"), |s| {
            let point = (&s.q[..], &s.qd[..], &s.qd[..], &s.qdd[..]);
            drop(regressor_times(
                robot,
                &mut ws,
                point,
                Gravity::Included,
                &p,
                &mut out,
            ))
        }),
    );
    let (mut product, mut squares) = (p.clone(), p.clone());
    record(
        "regressor_transpose_products",
        time(states, pick("regressor_transpose_products"), |s| {
            let point = (&s.q[..], &s.qd[..], &s.qd[..], &s.qdd[..]);
            let products = TransposeProducts {
                transpose_times: &mut product,
                weighted_squares: &mut squares,
            };
            drop(regressor_transpose_products(
                robot,
                &mut ws,
                point,
                Gravity::Included,
                (&s.qd, &s.q),
                products,
            ))
        }),
    );
    let (mut d1, mut d2, mut d3) = (mat.clone(), mat.clone(), mat.clone());
    record(
        "rnea_derivatives",
        time(states, pick("rnea_derivatives"), |s| {
            drop(rnea_derivatives(
                robot,
                &mut ws,
                (&s.q, &s.qd, &s.qdd),
                &mut d1,
                &mut d2,
            ))
        }),
    );
    record(
        "gravity_derivatives",
        time(states, pick("gravity_derivatives"), |s| {
            drop(gravity_derivatives(robot, &mut ws, &s.q, &mut d1))
        }),
    );
    // The sample's qdd as the torque, as for forward_dynamics.
    record(
        "forward_dynamics_derivatives",
        time(states, pick("forward_dynamics_derivatives"), |s| {
            let out = ForwardDerivatives {
                qdd: &mut out,
                dqdd_dq: &mut d1,
                dqdd_dqd: &mut d2,
                dqdd_dtau: &mut d3,
            };
            drop(forward_dynamics_derivatives(
                robot,
                &mut ws,
                (&s.q, &s.qd, &s.qdd),
                out,
            ))
        }),
    );
    // One 1 ms RK4 step of the ideal simulator under the sample's qdd as torque; the real-time
    // factor is 1 ms divided by this.
    if let Ok(mut sim) = Simulator::new(robot, &states[0].q, SimConfig::ideal()) {
        record(
            "simulator_step_rk4",
            time(states, pick("simulator_step_rk4"), |s| {
                if sim.set_state(&s.q, &s.qd).is_ok() {
                    let _ = sim.step(&s.qdd);
                }
            }),
        );
    }
    measure_controllers(robot, states, (&pick, &mut record));
    measure_joint_limit_guard(robot, (&pick, &mut record));
    measure_collision_thresholds(robot, (&pick, &mut record));
    Report {
        robot: robot.name().to_string(),
        dof: n,
        ns_per_call: results,
    }
}

/// Where `measure` keeps a row: name and ns per call (NaN: not timed).
type Recorder<'a> = &'a mut dyn FnMut(&str, f64);

/// The joint-limit protection every law's effort passes (its cost on top of the law's):
/// on the controllers' path, far from the limits (a few comparisons), and with every joint
/// on its upper soft limit moving toward it (the velocity terms, gravity and the inverse mass
/// matrix each call; no rate limit).
fn measure_joint_limit_guard(
    robot: &Robot,
    (pick, record): (&dyn Fn(&str) -> usize, Recorder<'_>),
) {
    let Ok(mut guard) = JointLimitGuard::new(robot, DEFAULT_SOFT_LIMIT_MARGIN) else {
        return;
    };
    let n = robot.dof();
    let far = periodic_path(robot, PATH_STATES, 1e-3);
    let at_limits: Vec<State> = far
        .iter()
        .map(|s| State {
            q: (0..n)
                .map(|i| guard.soft_limits(i).map_or(s.q[i], |(_, upper)| upper))
                .collect(),
            qd: vec![0.5; n],
            qdd: s.qdd.clone(),
        })
        .collect();
    let mut effort: Vec<f64> = robot.joints().iter().map(|j| j.limits.effort).collect();
    let no_rate_limit = vec![f64::INFINITY; n];
    for (row, states) in [
        ("joint_limit_guard_far", &far),
        ("joint_limit_guard_at_soft_limits", &at_limits),
    ] {
        let ns = time(states, pick(row), |s| {
            effort.fill(1.0);
            black_box(guard.apply((&s.q, &s.qd), 1e-3, &no_rate_limit, &mut effort));
        });
        record(row, ns);
    }
}

/// The external torque estimate every core runs each step, alone and with the collision
/// thresholds it feeds (the bound of what the model leaves, the tip force and its threshold),
/// on the controllers' path: the thresholds' cost is the difference.
fn measure_collision_thresholds(
    robot: &Robot,
    (pick, record): (&dyn Fn(&str) -> usize, Recorder<'_>),
) {
    use armctl_control::collision_thresholds::{
        CollisionThresholds, DetectionSettings, DEFAULT_MODEL_ERROR, DEFAULT_SENSITIVITY,
    };
    let n = robot.dof();
    let path = periodic_path(robot, PATH_STATES, 1e-3);
    let settings = DetectionSettings {
        sensitivity: DEFAULT_SENSITIVITY,
        model_error: DEFAULT_MODEL_ERROR,
        observer_gain: 50.0,
    };
    let mut observer = armctl_control::MomentumObserver::new(robot, 50.0);
    let mut thresholds = CollisionThresholds::new(robot, &vec![[0.0; 2]; n], settings);
    let impulse: Vec<f64> = robot
        .joints()
        .iter()
        .map(|j| 1e-4 * j.limits.effort)
        .collect();
    let held: Vec<f64> = impulse.iter().map(|i| 1e3 * i).collect();
    let row = "external_torque_estimate";
    let ns = time(&path, pick(row), |s| {
        black_box(observer.update(robot, (&s.q, &s.qd), &impulse, 1e-3)).ok();
    });
    record(row, ns);
    let row = "external_torque_estimate_with_collision_thresholds";
    let ns = time(&path, pick(row), |s| {
        if observer
            .update(robot, (&s.q, &s.qd), &impulse, 1e-3)
            .is_ok()
        {
            let applied = (held.as_slice(), observer.external_torques());
            let model = (observer.mass_matrix(), observer.gravity());
            black_box(thresholds.update(robot, (&s.q, &s.qd), applied, model, 1e-3)).ok();
        }
    });
    record(row, ns);
}

/// The controllers, each on a smooth periodic path sampled at 1 kHz (what a control loop
/// sees; a law that keeps state from one step to the next, such as the Cartesian impedance's
/// modes, counts on it), and the Cartesian impedance also on the random `states` (every call
/// a jump: its cost from a cold start), with `pick` giving each row's batches.
fn measure_controllers(
    robot: &Robot,
    states: &[State],
    (pick, record): (&dyn Fn(&str) -> usize, Recorder<'_>),
) {
    let n = robot.dof();
    let path = periodic_path(robot, PATH_STATES, 1e-3);
    let mut out = vec![0.0; n];
    let mut time_law = |name: &str, row: &str, states: &[State]| {
        let Ok(mut controller) = controller_by_name(name, robot) else {
            return f64::NAN;
        };
        let mut reference = JointReference::hold(&states[0].q);
        controller.reset(&JointState {
            q: &states[0].q,
            qd: &states[0].qd,
        });
        time(states, pick(row), |s| {
            reference.q.copy_from_slice(&s.q);
            let _ = controller.update(
                &JointState { q: &s.q, qd: &s.qd },
                &reference,
                1e-3,
                &mut out,
            );
        })
    };
    for name in CONTROLLERS {
        let row = format!("controller_{name}");
        record(&row, time_law(name, &row, &path));
    }
    let row = "controller_cartesian_impedance_random_states";
    record(row, time_law("cartesian_impedance", row, states));
    // Two copies of the arm side by side (0.2 m apart) under the cooperative law, both arms
    // per call.
    let beside = nalgebra::IsometryMatrix3::translation(0.0, 0.2, 0.0);
    if let Ok(mut law) = Cooperative::new(robot, [nalgebra::IsometryMatrix3::identity(), beside]) {
        let start = JointState {
            q: &path[0].q,
            qd: &path[0].qd,
        };
        if law.restart([&start, &start]).is_ok() {
            let (mut out, mut other) = (vec![0.0; n], vec![0.0; n]);
            record(
                "controller_cooperative_both_arms",
                time(&path, pick("controller_cooperative_both_arms"), |s| {
                    let state = JointState { q: &s.q, qd: &s.qd };
                    let _ = law.update([&state, &state], 1e-3, [&mut out, &mut other]);
                }),
            );
            // The same during a slow move of the object (5 cm over an hour: longer than the
            // timing), when the law also checks each arm's reach.
            let goal = nalgebra::Translation3::new(0.05, 0.0, 0.0) * law.object().pose;
            if law.restart([&start, &start]).is_ok() && law.set_object_target(goal, 3600.0).is_ok()
            {
                record(
                    "controller_cooperative_both_arms_moving",
                    time(
                        &path,
                        pick("controller_cooperative_both_arms_moving"),
                        |s| {
                            let state = JointState { q: &s.q, qd: &s.qd };
                            let _ = law.update([&state, &state], 1e-3, [&mut out, &mut other]);
                        },
                    ),
                );
            }
        }
    }
}
