//! The loop's pacing, command order, watchdog, clock jumps and stop, on a two-joint arm and on
//! a pair of Pandas.

use super::*;
use crate::controller_core::Fault;
use crate::loop_timing::LoopTiming;
use crate::node_clock::NodeClock;
use crate::startup::NodeStart;
use armctl_control::ParameterValue;

fn workspace(path: &str) -> String {
    format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))
}

fn start(values: &[(&str, ParameterValue)]) -> NodeStart {
    NodeStart {
        name: "controller_node".into(),
        namespace: "/".into(),
        remaps: vec![],
        values: values
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect(),
    }
}

fn text(value: &str) -> ParameterValue {
    ParameterValue::String(value.into())
}

/// The planar arm with its joints commanded in reverse.
fn reversed_arm() -> GroupLoop {
    GroupLoop::lone(&start(&[
        ("urdf_path", text(&workspace("urdf/planar_2link.urdf"))),
        ("controller", text("pd_gravity")),
        (
            "joints",
            ParameterValue::StringArray(vec!["joint2".into(), "joint1".into()]),
        ),
    ]))
    .unwrap()
}

fn pair() -> GroupLoop {
    GroupLoop::pair(&start(&[
        ("urdf_path", text(&workspace("urdf/panda.urdf"))),
        ("controller", text("cooperative")),
        (
            "scene_file",
            text(&workspace("config/scenes/two_pandas_carry.yaml")),
        ),
    ]))
    .unwrap()
}

fn names(group: &GroupLoop) -> Vec<String> {
    group.core().joints().to_vec()
}

/// Timing on simulated time, so a test moves the clock.
fn simulated(update_rate: f64) -> LoopTiming {
    LoopTiming::new(NodeClock::new(true), update_rate, 0.0)
}

const PANDA_Q: [f64; 7] = [0.0, 0.3, 0.0, -2.0, 0.0, 2.3, 0.8];

#[test]
fn a_state_steps_at_once_and_the_command_is_in_command_order() {
    let arm = reversed_arm();
    let joints = names(&arm);
    let mut group = arm.paced(simulated(0.0));
    assert!(group.stop().is_empty(), "nothing sent, nothing to stop");
    let stepped = group.on_joint_state(0, &joints, &[0.3, -0.2], &[0.0, 0.0], 1.5);
    assert_eq!(
        stepped,
        Some(1.5),
        "the stamp is the time on simulated time"
    );
    let chain = group.output().arms[0].efforts.to_vec();
    assert!(
        chain.iter().all(|e| e.abs() > 1e-3),
        "gravity held: {chain:?}"
    );
    assert_eq!(group.output().sent(0), Some(&[chain[1], chain[0]][..]));
    assert!(!group.output().holding());
    assert!(group.output().state_due);
}

#[test]
fn a_timer_steps_on_the_newest_state_only_when_time_moved_on() {
    let arm = reversed_arm();
    let joints = names(&arm);
    let mut group = arm.paced(simulated(100.0));
    assert!(!group.on_clock(1.0));
    let ticked = group.on_tick();
    assert!(ticked.stepped, "a timed step before any state...");
    assert_eq!(group.output().sent(0), None, "...commands nothing");
    assert_eq!(
        group.on_joint_state(0, &joints, &[0.1, 0.1], &[0.0; 2], 1.0),
        None
    );
    assert!(!group.on_tick().stepped, "time stood still");
    group.on_clock(1.01);
    assert_eq!(
        group.on_tick(),
        Ticked {
            now: 1.01,
            stepped: true
        }
    );
    assert!(group.output().sent(0).is_some());
}

#[test]
fn the_watchdog_steps_once_states_stop_and_the_arm_holds() {
    let arm = reversed_arm();
    let joints = names(&arm);
    let mut group = arm.paced(simulated(0.0));
    group.on_clock(1.0);
    group.on_joint_state(0, &joints, &[0.1, 0.1], &[0.0; 2], 1.0);
    group.on_clock(1.05);
    assert!(!group.on_tick().stepped, "within state_timeout (0.1 s)");
    group.on_clock(1.2);
    assert!(group.on_tick().stepped);
    assert!(group.output().holding());
    assert!(matches!(
        group.output().arms[0].report.fault,
        Some(Fault::Stale(_))
    ));
}

#[test]
fn a_pair_steps_when_both_arms_states_came() {
    let pair = pair();
    let joints = names(&pair);
    let mut group = pair.paced(simulated(0.0));
    let zero = [0.0; 7];
    assert_eq!(group.on_joint_state(0, &joints, &PANDA_Q, &zero, 1.0), None);
    assert_eq!(
        group.on_joint_state(0, &joints, &PANDA_Q, &zero, 1.001),
        None
    );
    let stepped = group.on_joint_state(1, &joints, &PANDA_Q, &zero, 1.002);
    assert_eq!(stepped, Some(1.002));
    assert!(group.output().sent(0).is_some() && group.output().sent(1).is_some());
    assert!(!group.output().holding(), "{:?}", group.output());
    assert_eq!(
        group.on_joint_state(1, &joints, &PANDA_Q, &zero, 1.003),
        None
    );
}

#[test]
fn a_stop_brakes_every_arm_commanded_and_a_reset_starts_over() {
    let pair = pair();
    let joints = names(&pair);
    let mut group = pair.paced(simulated(0.0));
    let zero = [0.0; 7];
    group.on_clock(2.0);
    group.on_joint_state(0, &joints, &PANDA_Q, &zero, 2.0);
    group.on_joint_state(1, &joints, &PANDA_Q, &zero, 2.0);
    let stopped = group.stop();
    let gravity = "gravity compensation at the last valid configuration";
    assert_eq!(stopped, vec![(0, gravity), (1, gravity)]);
    let mut expected = vec![0.0; 7];
    group.arm_mut(1).safe_command(&mut expected);
    assert!(expected.iter().any(|g| g.abs() > 1.0), "{expected:?}");
    assert_eq!(group.output().arms[1].command, expected.as_slice());
    assert!(group.on_clock(0.5), "simulated time went back");
    assert_eq!(group.core().fault(), Some(&Fault::NoState));
    assert!(
        group.stop().is_empty(),
        "no configuration of this run to brake at: the last command stays"
    );
}

#[test]
fn a_host_gives_the_times_and_an_arm_without_state_is_not_commanded() {
    let arm = reversed_arm();
    let joints = names(&arm);
    let mut group = arm;
    group.step(0.0, 1e-3);
    assert_eq!(group.output().sent(0), None);
    assert_eq!(group.output().arms[0].report.fault, Some(Fault::NoState));
    group.record_state(0, &joints, &[0.1, 0.1], &[0.0; 2], 5.0);
    group.step(5.0, 1e-3);
    assert!(group.output().sent(0).is_some());
    group.restart();
    group.step(5.001, 1e-3);
    assert_eq!(group.output().sent(0), None, "a restart waits for a state");
    assert_eq!(group.safe_command(0), "zero effort", "a host asks anyway");
}
