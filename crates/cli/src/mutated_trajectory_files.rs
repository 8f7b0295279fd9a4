//! Property test: trajectory files, mutated (a character range deleted or duplicated, a value
//! swapped for garbage or scaled), are read as `armctl sim` and `demo` read them
//! (`--trajectory FILE`, [`trajectory_spec::parse`]) and, when read, followed as `armctl sim`
//! follows them ([`ControllerCore::follow`], which checks them against the arm's limits).
//! Nothing panics, every refusal is a short message, and an accepted trajectory is finite and
//! within the position, velocity and acceleration limits wherever it is sampled.
//!
//! The files: the bundled waypoint file on the Panda, and on the planar arm an excitation and
//! two of its message forms (2 s, and 65 s as `armctl excite --message` writes it by default).
//! The cases come from a fixed seed.

use std::cell::RefCell;
use std::path::PathBuf;

use armctl_control::reference::Trajectory;
use armctl_control::JointReference;
use armctl_ident::{excitation, ExcitationLimits};
use armctl_model::test_support::mutation::{
    check_message, mutate, mutation_with_scaling, YAML_ITEMS,
};
use armctl_model::{ChainOptions, Robot};
use armctl_runtime::group_loop::GroupLoop;
use armctl_runtime::startup::NodeStart;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};

use crate::trajectory_spec;

/// Longest error message accepted, as `armctl` prints it (with the file's path).
const MAX_MESSAGE_CHARS: usize = 300;

/// An arm, its start configuration and the controller core that follows its trajectories.
struct Arm {
    robot: Robot,
    q0: Vec<f64>,
    runtime: RefCell<GroupLoop>,
}

fn arm(urdf: &str) -> Arm {
    let path = format!("{}/../../urdf/{urdf}", env!("CARGO_MANIFEST_DIR"));
    let robot =
        Robot::from_urdf_file(std::path::Path::new(&path), &ChainOptions::default()).unwrap();
    let start = NodeStart {
        name: "controller_node".into(),
        namespace: "/".into(),
        remaps: vec![],
        values: vec![],
    };
    let runtime = GroupLoop::lone_on(&start, robot.clone()).unwrap();
    Arm {
        q0: robot.middle_configuration(),
        robot,
        runtime: RefCell::new(runtime),
    }
}

/// (file text, index of its arm in `[panda, planar]`).
fn files(planar: &Robot) -> Vec<(String, usize)> {
    let found = excitation(planar, 0.1, 3, ExcitationLimits::default(), 1).unwrap();
    let message = |duration, lead_in, step| {
        let message = crate::excite_command::trajectory_message(
            planar,
            &found.trajectory,
            duration,
            lead_in,
            step,
        );
        crate::excite_command::message_yaml(&message)
    };
    vec![
        (
            include_str!("../../../config/trajectories/panda_wave.yaml").to_string(),
            0,
        ),
        (found.to_yaml(planar, 60.0).unwrap(), 1),
        (message(2.0, 1.0, 0.1), 1),
        // `armctl excite --message` with its defaults: 1201 points over 65 s.
        (message(60.0, 5.0, 0.05), 1),
    ]
}

/// A file of this test's own in the temporary directory.
fn scratch(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "armctl-mutated-trajectory-{}-{tag}.yaml",
        std::process::id()
    ))
}

fn garbage() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "",
            "nan",
            ".nan",
            ".inf",
            "-.inf",
            "1e308",
            "-1e308",
            "1e999",
            "-0",
            "-0.0",
            "0",
            "1e-300",
            "3.2",
            "-3.2",
            "100",
            "~",
            "[]",
            "[1, 2]",
            "[.nan, 1]",
            "{a: 1}",
            "{sec: 1}",
            "{sec: -1, nanosec: 0}",
            "{sec: 2147483647, nanosec: 4294967295}",
            "{sec: 0, nanosec: 1}",
            "'x'",
            "\"\"",
            "&a 1",
            "*a",
            "!!binary AAAA",
            "true",
            "9223372036854775807",
            "panda_joint1",
            "joint1",
            "joint2",
            "fourier",
        ])
        .prop_map(str::to_string),
        "\\PC{0,20}",
        // Far longer than any message may be: must not be echoed whole.
        (3000usize..5000).prop_map(|n| "a".repeat(n)),
        (3000usize..5000).prop_map(|n| "9".repeat(n)),
        (3000usize..5000).prop_map(|n| format!("[{}]", vec!["0.1"; n].join(", "))),
        (100usize..300).prop_map(|n| format!("{}{}", "[".repeat(n), "]".repeat(n))),
        (100usize..300).prop_map(|n| format!("{}1{}", "{a: ".repeat(n), "}".repeat(n))),
    ]
}

/// An accepted trajectory, sampled far more densely than it was checked: finite and within
/// the limits, up to what a check 16 times a segment can miss between its samples (1 mrad,
/// 1% of a velocity or acceleration limit).
fn check_accepted(arm: &Arm, trajectory: &dyn Trajectory) -> Result<(), TestCaseError> {
    let runtime = arm.runtime.borrow();
    let acceleration_limits = runtime.core().acceleration_limits();
    // All of a trajectory that ends, the first minute of a periodic one; every 0.7 ms.
    let duration = trajectory.duration();
    let span = if duration.is_finite() { duration } else { 60.0 };
    let samples = ((span / 7e-4) as usize).clamp(7919, 200_000);
    let mut sample = JointReference::hold(&arm.q0);
    for k in 0..=samples {
        let t = span * k as f64 / samples as f64;
        trajectory.sample(t, &mut sample);
        for (j, joint) in arm.robot.joints().iter().enumerate() {
            let (q, qd, qdd) = (sample.q[j], sample.qd[j], sample.qdd[j]);
            let limits = &joint.limits;
            prop_assert!(q.is_finite() && qd.is_finite() && qdd.is_finite());
            prop_assert!(
                !limits.is_bounded() || (limits.lower - 1e-3..=limits.upper + 1e-3).contains(&q),
                "{} = {q} at t = {t}",
                joint.name
            );
            prop_assert!(
                limits.velocity <= 0.0 || qd.abs() <= limits.velocity * 1.01,
                "{} velocity {qd} at t = {t}",
                joint.name
            );
            prop_assert!(
                qdd.abs() <= acceleration_limits[j] * 1.01,
                "{} acceleration {qdd} at t = {t}",
                joint.name
            );
        }
    }
    Ok(())
}

/// Reads `text` as `armctl sim --trajectory FILE` does, and follows it when it is read.
fn read_and_follow(arm: &Arm, text: &str) -> Result<(), TestCaseError> {
    let path = scratch("case");
    std::fs::write(&path, text).unwrap();
    let spec = format!("file:{}", path.display());
    let read = trajectory_spec::parse(&spec, &arm.robot, &arm.q0);
    let trajectory = match read {
        Ok(trajectory) => trajectory,
        Err(e) => return check_message(&format!("{e:#}"), MAX_MESSAGE_CHARS),
    };
    let followed = arm.runtime.borrow_mut().core_mut().follow(trajectory, 0.0);
    if let Err(e) = followed {
        let e = anyhow::Error::from(e).context(format!("trajectory '{spec}'"));
        return check_message(&format!("{e:#}"), MAX_MESSAGE_CHARS);
    }
    // The accepted trajectory again, to sample it here.
    let again = trajectory_spec::parse(&spec, &arm.robot, &arm.q0).unwrap();
    check_accepted(arm, again.as_ref())
}

fn arms_and_files() -> ([Arm; 2], Vec<(String, usize)>) {
    let arms = [arm("panda.urdf"), arm("planar_2link.urdf")];
    let files = files(&arms[1].robot);
    (arms, files)
}

#[test]
fn the_unmutated_files_are_accepted() {
    let (arms, files) = arms_and_files();
    for (text, a) in &files {
        let path = scratch("original");
        std::fs::write(&path, text).unwrap();
        let spec = format!("file:{}", path.display());
        let arm = &arms[*a];
        let trajectory = trajectory_spec::parse(&spec, &arm.robot, &arm.q0).unwrap();
        arm.runtime
            .borrow_mut()
            .core_mut()
            .follow(trajectory, 0.0)
            .unwrap();
    }
    let _ = std::fs::remove_file(scratch("original"));
}

#[test]
fn mutated_trajectory_files_give_short_errors_or_a_trajectory_within_the_limits() {
    let (arms, files) = arms_and_files();
    let config = Config {
        cases: 400,
        rng_seed: RngSeed::Fixed(0x5452_414a_4d55_5441),
        failure_persistence: None,
        ..Config::default()
    };
    let cases = (
        0..files.len(),
        prop::collection::vec(
            mutation_with_scaling(
                garbage(),
                vec![-1.0, 0.5, 0.999, 1.001, 1.5, 2.0, 10.0, 1e-3],
            ),
            1..4,
        ),
    );
    let result = TestRunner::new(config).run(&cases, |(file, mutations)| {
        let (original, a) = &files[file];
        let mut text = original.clone();
        for m in &mutations {
            mutate(&mut text, m, &YAML_ITEMS);
        }
        read_and_follow(&arms[*a], &text)
    });
    let _ = std::fs::remove_file(scratch("case"));
    result.unwrap();
}
