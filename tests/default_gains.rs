//! Every controller with its default parameters, run as controller_node runs it (the runtime's
//! controller core: safety layer, hold rules), holds each bundled arm at 1 kHz on the embedded
//! simulator: from rest at the middle configuration and from 0.1 rad (or m) off it, for 3 s,
//! without a single clipped effort and without drifting away.

use armctl_control::reference::SetPoint;
use armctl_control::{controller_by_name, CONTROLLERS};
use armctl_e2e::urdf_dir;
use armctl_model::{ChainOptions, Robot};
use armctl_runtime::controller_core::{ControllerCore, SafeMode};
use armctl_runtime::simulated_loop::SimulatedLoop;
use armctl_sim::{run_loop, SimConfig, Simulator};

/// What one run did.
#[derive(Debug)]
struct Outcome {
    clipped: usize,
    held: usize,
    final_error: f64,
    /// The simulation failed (diverged), and how.
    diverged: Option<String>,
}

fn hold(robot: &Robot, controller: &str, offset: f64) -> Outcome {
    let middle = robot.middle_configuration();
    let start: Vec<f64> = middle.iter().map(|q| q + offset).collect();
    let mut law = match controller_by_name(controller, robot) {
        Ok(law) => law,
        Err(e) => {
            return Outcome {
                clipped: 0,
                held: 0,
                final_error: f64::NAN,
                diverged: Some(format!("refused to start: {e}")),
            }
        }
    };
    // A task-space law holds the tip where it starts (its target is the pose at the start);
    // a joint-space law is brought back to the middle.
    let target = if law.task_space().is_some() {
        start.clone()
    } else {
        middle
    };
    let mut core = ControllerCore::new(robot.clone(), law, SafeMode::Gravity, 0.1, None).unwrap();
    let hold_target = SetPoint::new(target.clone());
    core.follow(Box::new(hold_target), 0.0).unwrap();
    let mut control = SimulatedLoop::new(&mut core);
    let mut sim = Simulator::new(robot, &start, SimConfig::default()).unwrap();
    let log = match run_loop(&mut sim, &mut control, 3000, |_, _, _| {}) {
        Ok(log) => log,
        Err(e) => {
            return Outcome {
                clipped: control.clipped,
                held: control.held,
                final_error: f64::NAN,
                diverged: Some(e.to_string()),
            }
        }
    };
    let final_error = (0..robot.dof())
        .map(|i| (log.q[i].last().unwrap() - target[i]).abs())
        .fold(0.0, f64::max);
    Outcome {
        clipped: control.clipped + log.saturated,
        held: control.held,
        final_error,
        diverged: None,
    }
}

/// Laws whose defaults still clip on the 0.1 rad step or diverge (open work of the safety
/// issue: normalised, bounded adaptation; step-aware Slotine-Li, robust and sliding-mode
/// gains), and Cartesian impedance, whose default stiffness cannot be sized on an arm of fewer
/// than six joints (it refuses the planar arm with an out-of-range default). The test checks
/// that each still fails somewhere, so the list shrinks as they are fixed.
const NOT_YET: [&str; 7] = [
    "cartesian_impedance",
    "slotine_li",
    "slotine_li_adaptive",
    "slotine_li_adaptive_base",
    "adaptive_computed_torque",
    "robust",
    "sliding_mode",
];

/// Whether a run held the arm. Independent PD compensates no gravity, so it settles
/// `G / kp` away by design: it must only stay within its limits and not drift.
fn held(controller: &str, outcome: &Outcome) -> bool {
    let settled = controller == "independent_pd" || outcome.final_error < 0.02;
    outcome.clipped == 0 && outcome.held == 0 && outcome.diverged.is_none() && settled
}

#[test]
fn every_controller_holds_every_bundled_arm_with_its_defaults() {
    let mut failures = Vec::new();
    let mut still_failing = std::collections::BTreeSet::new();
    for file in [
        "panda.urdf",
        "ur5e.urdf",
        "puma560.urdf",
        "planar_2link.urdf",
    ] {
        let robot = Robot::from_urdf_file(urdf_dir().join(file), &ChainOptions::default()).unwrap();
        for controller in CONTROLLERS {
            for offset in [0.0, 0.1] {
                let outcome = hold(&robot, controller, offset);
                println!("{file:20} {controller:26} offset {offset}: {outcome:?}");
                if held(controller, &outcome) {
                    continue;
                }
                if NOT_YET.contains(&controller) {
                    still_failing.insert(controller);
                } else {
                    failures.push(format!("{file} {controller} offset {offset}: {outcome:?}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    for controller in NOT_YET {
        assert!(
            still_failing.contains(controller),
            "{controller} holds every arm now: take it off NOT_YET"
        );
    }
}
