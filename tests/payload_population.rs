//! The online payload estimate (`estimate_payload`) on arms it was not built for: the bundled
//! ones, the classes of `tests/data/arms` (a light spherical wrist, URDF friction, a
//! placeholder effort limit) and 20 generated arms. Each carries a 1.5 kg tool with an offset
//! centre of mass that its model lacks, on a plant with its URDF friction (left out of the
//! model), encoder noise and a step of command delay, and visits the poses of `armctl excite
//! --payload` under PD with gravity compensation, each move within half the velocity and
//! acceleration limits. The estimate is within 3 % of the mass and 5 mm of the centre of mass,
//! or it is refused with the reason. (The arm's own model is right here: a wrong arm model is
//! `armctl identify`'s matter, before the tool's.)

#[path = "support/arms.rs"]
mod arms;

use armctl_control::reference::TrajectoryPoint;
use armctl_control::ParameterValue;
use armctl_model::{Payload, Robot};
use armctl_runtime::group_loop::GroupLoop;
use armctl_runtime::simulated_loop::SimulatedLoop;
use armctl_sim::{run_loop, ModelMismatch, SensorNoise, SimConfig, Simulator};
use arms::population;
use nalgebra::{Matrix3, Vector3};

/// Seconds at rest in each pose.
const DWELL: f64 = 4.0;

/// Poses visited.
const POSES: usize = 8;

fn tool() -> Payload {
    Payload {
        mass: 1.5,
        com: Vector3::new(0.03, -0.02, 0.06),
        inertia: Matrix3::from_diagonal(&Vector3::new(4e-3, 4e-3, 3e-3)),
    }
}

/// The tool the model lacks, the URDF's friction, noise and a step of delay.
fn plant() -> SimConfig {
    SimConfig {
        noise: Some(SensorNoise {
            position: 1e-5,
            velocity: 1e-3,
            seed: 11,
        }),
        command_delay_steps: 1,
        mismatch: ModelMismatch {
            payload: Some(tool()),
            mass_scale: None,
        },
        ..SimConfig::default()
    }
}

/// The waypoints through the poses: each reached at rest as the limits allow, held [`DWELL`].
fn through_the_poses(robot: &Robot) -> (Vec<TrajectoryPoint>, f64) {
    let q0 = robot.middle_configuration();
    let poses = armctl_ident::payload_poses(robot, &q0, POSES).unwrap();
    let accelerations = armctl_control::default_gains::acceleration_limits(robot).unwrap();
    let zeros = vec![0.0; robot.dof()];
    let (mut points, mut t, mut from) = (Vec::new(), 0.0, q0);
    for pose in poses {
        let travel = armctl_ident::pose_move_time(robot, &accelerations, (&from, &pose), 3.0);
        for stay in [travel, DWELL] {
            t += stay;
            points.push(TrajectoryPoint {
                time: t,
                positions: pose.clone(),
                velocities: Some(zeros.clone()),
                accelerations: Some(zeros.clone()),
            });
        }
        from = pose;
    }
    (points, t)
}

/// What the estimate came to on one arm.
#[derive(Debug)]
enum Outcome {
    Estimated { mass_error: f64, com_error: f64 },
    Refused(String),
}

fn estimate_on(robot: &Robot) -> (Outcome, Vec<String>) {
    let text = |v: &str| ParameterValue::String(v.into());
    // The tool's weight reads as a contact until it is known: the collision force is raised
    // above it while it is estimated (docs/safety.md).
    let start = armctl_e2e::controller_node_start(vec![
        ("controller".into(), text("pd_gravity")),
        ("collision_force".into(), ParameterValue::Double(100.0)),
    ]);
    let mut runtime = GroupLoop::lone_on(&start, robot.clone()).unwrap();
    let (points, end) = through_the_poses(robot);
    let names: Vec<String> = robot.joint_names().map(str::to_string).collect();
    let q0 = robot.middle_configuration();
    let mut sim = Simulator::new(robot, &q0, plant()).unwrap();
    let mut control = SimulatedLoop::new(&mut runtime);
    let steps = (end * 1000.0) as usize + 10;
    run_loop(&mut sim, &mut control, steps, |k, t, control| {
        if k == 1 {
            let core = control.group_mut().core_mut();
            core.set_trajectory(&names, &points, t, t).unwrap();
        }
    })
    .unwrap();
    let events = control.events.clone();
    let truth = tool();
    let outcome = match armctl_runtime::payload_service::estimate_payload(runtime.core()) {
        Ok(found) => Outcome::Estimated {
            mass_error: (found.payload.mass - truth.mass).abs() / truth.mass,
            com_error: (found.payload.com - truth.com).norm(),
        },
        Err(reason) => Outcome::Refused(reason),
    };
    (outcome, events)
}

#[test]
fn the_payload_is_within_3_percent_and_5_mm_or_refused_with_the_reason_on_every_arm() {
    let population = population();
    let (mut failures, mut estimated, mut refused) = (Vec::new(), 0, 0);
    for (name, robot) in &population {
        let (outcome, events) = estimate_on(robot);
        println!("{name:32} {outcome:?} {events:?}");
        match outcome {
            Outcome::Estimated {
                mass_error,
                com_error,
            } if mass_error < 0.03 && com_error < 5e-3 => estimated += 1,
            Outcome::Refused(reason) if !reason.is_empty() => refused += 1,
            other => failures.push(format!("{name}: {other:?}")),
        }
    }
    println!("{estimated} estimated within 3 % and 5 mm, {refused} refused with the reason");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Measured: 12 of the 27. The refusals are arms whose friction blurs the weight's torques
    // beyond the estimate's 1 % and 2 mm (9), and wrists the default gains do not hold still
    // under a tool they do not know (6: an over-speed at the start cancels the poses, or
    // no rest).
    assert!(estimated >= 12, "{estimated} estimated");
}
