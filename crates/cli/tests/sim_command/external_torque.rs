//! The external torque estimate in `run.csv` against the simulator's truth: the contact
//! torques of a table and a wall, and nothing in free motion.

use super::*;
use armctl_model::{ChainOptions, Robot};

/// `run.csv` of `armctl sim ARGS`: the time, and per joint the estimate and the truth.
struct Torques {
    time: Vec<f64>,
    estimate: Vec<Vec<f64>>,
    truth: Vec<Vec<f64>>,
}

fn run(name: &str, args: &[&str]) -> Torques {
    let dir = out_dir(name);
    let mut all = vec!["sim", "--out", dir.to_str().unwrap()];
    all.extend_from_slice(args);
    let (_, _, _) = armctl_ran(&all);
    let text = std::fs::read_to_string(dir.join("run.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    let columns = |prefix: &str| -> Vec<Vec<f64>> {
        let indices = header
            .iter()
            .enumerate()
            .filter(|(_, h)| h.starts_with(prefix));
        indices
            .map(|(c, _)| rows.iter().map(|r| r[c]).collect())
            .collect()
    };
    Torques {
        time: rows.iter().map(|r| r[0]).collect(),
        estimate: columns("external_torque_"),
        truth: columns("world_torque_"),
    }
}

fn effort_limits(urdf: &str) -> Vec<f64> {
    let robot = Robot::from_urdf_file(workspace().join(urdf), &ChainOptions::default()).unwrap();
    robot.joints().iter().map(|j| j.limits.effort).collect()
}

/// The truth through the observer's own first-order filter (time constant 1/50 s, the
/// default `external_torque_gain`): what a perfect estimate gives. A row's truth is what the
/// world applied over the step from that row's state, which the estimate sees at the next.
fn filtered(time: &[f64], truth: &[f64]) -> Vec<f64> {
    let mut state = 0.0;
    (0..truth.len())
        .map(|k| {
            if k > 0 {
                state += (50.0 * (time[k] - time[k - 1])).min(1.0) * (truth[k - 1] - state);
            }
            state
        })
        .collect()
}

/// Every joint's estimate against the filtered truth within 5 % of the largest contact torque
/// (plus `floor`), and in the last second against the truth itself within 1 %.
fn assert_follows(name: &str, torques: &Torques, floor: f64) {
    let peak = torques
        .truth
        .iter()
        .flatten()
        .fold(0.0_f64, |m, v| m.max(v.abs()));
    assert!(peak > 1.0, "{name}: the contact happens ({peak} N m)");
    let end = torques.time.last().unwrap() - 1.0;
    for (j, (estimate, truth)) in torques.estimate.iter().zip(&torques.truth).enumerate() {
        let reference = filtered(&torques.time, truth);
        let worst = estimate
            .iter()
            .zip(&reference)
            .fold(0.0_f64, |m, (e, r)| m.max((e - r).abs()));
        assert!(
            worst < 0.05 * peak + floor,
            "{name}, joint {j}: {worst} N m off the filtered truth (peak {peak})"
        );
        for ((e, x), t) in estimate.iter().zip(truth).zip(&torques.time) {
            if *t > end {
                assert!(
                    (e - x).abs() < 0.01 * peak + floor,
                    "{name}, joint {j} at {t}: {e} vs {x}"
                );
            }
        }
    }
}

#[test]
fn the_estimate_follows_the_contact_torques_of_a_table_and_a_wall() {
    let table = run(
        "external-table",
        &[
            "--urdf",
            "urdf/panda.urdf",
            "--scene",
            "config/scenes/panda_table.yaml",
            "--controller",
            "cartesian_impedance",
            "--target-pose",
            "0.58,0.0,0.59",
            "--duration",
            "3",
        ],
    );
    assert_follows("Panda pressing on the table", &table, 0.02);
    let wall = run(
        "external-wall",
        &[
            "--urdf",
            "urdf/ur5e.urdf",
            "--scene",
            "config/scenes/ur5e_wall.yaml",
            "--controller",
            "cartesian_impedance",
            "--target-pose=-0.86,-0.233,0.063",
            "--duration",
            "3",
        ],
    );
    assert_follows("UR5e pushing the wall", &wall, 0.02);
}

#[test]
fn in_free_motion_the_estimate_stays_within_two_percent_of_the_effort_limits() {
    let noise = out_dir("external-noise").with_extension("yaml");
    std::fs::write(
        &noise,
        "noise: {position: 1.0e-5, velocity: 1.0e-3, seed: 7}\n",
    )
    .unwrap();
    let cases = [
        (
            "urdf/panda.urdf",
            "file:config/trajectories/panda_wave.yaml",
        ),
        ("urdf/ur5e.urdf", "sine:0.4:0.8"),
    ];
    for (urdf, trajectory) in cases {
        let limits = effort_limits(urdf);
        for sim_config in [None, Some(noise.to_str().unwrap())] {
            let mut args = vec!["--urdf", urdf, "--controller", "computed_torque"];
            args.extend(["--trajectory", trajectory, "--duration", "6"]);
            if let Some(config) = sim_config {
                args.extend(["--sim-config", config]);
            }
            let torques = run("external-free", &args);
            assert!(torques.truth.iter().flatten().all(|x| *x == 0.0));
            for (j, estimate) in torques.estimate.iter().enumerate() {
                let largest = estimate.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
                let bound = if sim_config.is_some() { 0.02 } else { 1e-3 };
                assert!(
                    largest < bound * limits[j],
                    "{urdf} {trajectory} ({sim_config:?}), joint {j}: {largest} N m"
                );
            }
        }
    }
}
