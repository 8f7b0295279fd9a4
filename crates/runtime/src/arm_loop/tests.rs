//! The loop's pacing, command order, watchdog, clock jumps and stop, on a two-joint arm and on
//! a pair of Pandas.

use super::*;
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
fn reversed_arm() -> ArmGroup {
    ArmGroup::lone(&start(&[
        ("urdf_path", text(&workspace("urdf/planar_2link.urdf"))),
        ("controller", text("pd_gravity")),
        (
            "joints",
            ParameterValue::StringArray(vec!["joint2".into(), "joint1".into()]),
        ),
    ]))
    .unwrap()
}

fn pair() -> ArmGroup {
    ArmGroup::pair(&start(&[
        ("urdf_path", text(&workspace("urdf/panda.urdf"))),
        ("controller", text("cooperative")),
        (
            "scene_file",
            text(&workspace("config/scenes/two_pandas_carry.yaml")),
        ),
    ]))
    .unwrap()
}

fn names(group: &ArmGroup) -> Vec<String> {
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
    let mut arm_loop = ArmLoop::new(arm, simulated(0.0));
    assert!(arm_loop.stop().is_empty(), "nothing sent, nothing to stop");
    let stepped = arm_loop.on_joint_state(0, &joints, &[0.3, -0.2], &[0.0, 0.0], 1.5);
    assert_eq!(
        stepped,
        Some(1.5),
        "the stamp is the time on simulated time"
    );
    let chain = arm_loop.efforts(0).to_vec();
    assert!(
        chain.iter().all(|e| e.abs() > 1e-3),
        "gravity held: {chain:?}"
    );
    assert_eq!(arm_loop.sent(0), Some(&[chain[1], chain[0]][..]));
    assert!(!arm_loop.holding());
    assert!(arm_loop.state_due(1.5));
}

#[test]
fn a_timer_steps_on_the_newest_state_only_when_time_moved_on() {
    let arm = reversed_arm();
    let joints = names(&arm);
    let mut arm_loop = ArmLoop::new(arm, simulated(100.0));
    assert!(!arm_loop.on_clock(1.0));
    let ticked = arm_loop.on_tick();
    assert!(ticked.stepped, "a timed step before any state...");
    assert_eq!(arm_loop.sent(0), None, "...commands nothing");
    assert_eq!(
        arm_loop.on_joint_state(0, &joints, &[0.1, 0.1], &[0.0; 2], 1.0),
        None
    );
    assert!(!arm_loop.on_tick().stepped, "time stood still");
    arm_loop.on_clock(1.01);
    assert_eq!(
        arm_loop.on_tick(),
        Ticked {
            now: 1.01,
            stepped: true
        }
    );
    assert!(arm_loop.sent(0).is_some());
}

#[test]
fn the_watchdog_steps_once_states_stop_and_the_arm_holds() {
    let arm = reversed_arm();
    let joints = names(&arm);
    let mut arm_loop = ArmLoop::new(arm, simulated(0.0));
    arm_loop.on_clock(1.0);
    arm_loop.on_joint_state(0, &joints, &[0.1, 0.1], &[0.0; 2], 1.0);
    arm_loop.on_clock(1.05);
    assert!(!arm_loop.on_tick().stepped, "within state_timeout (0.1 s)");
    arm_loop.on_clock(1.2);
    assert!(arm_loop.on_tick().stepped);
    assert!(arm_loop.holding());
    assert!(matches!(arm_loop.reports()[0].fault, Some(Fault::Stale(_))));
}

#[test]
fn a_pair_steps_when_both_arms_states_came() {
    let pair = pair();
    let joints = names(&pair);
    let mut arm_loop = ArmLoop::new(pair, simulated(0.0));
    let zero = [0.0; 7];
    assert_eq!(
        arm_loop.on_joint_state(0, &joints, &PANDA_Q, &zero, 1.0),
        None
    );
    assert_eq!(
        arm_loop.on_joint_state(0, &joints, &PANDA_Q, &zero, 1.001),
        None
    );
    let stepped = arm_loop.on_joint_state(1, &joints, &PANDA_Q, &zero, 1.002);
    assert_eq!(stepped, Some(1.002));
    assert!(arm_loop.sent(0).is_some() && arm_loop.sent(1).is_some());
    assert!(!arm_loop.holding(), "{:?}", arm_loop.reports());
    assert_eq!(
        arm_loop.on_joint_state(1, &joints, &PANDA_Q, &zero, 1.003),
        None
    );
}

#[test]
fn a_stop_brakes_every_arm_commanded_and_a_reset_starts_over() {
    let pair = pair();
    let joints = names(&pair);
    let mut arm_loop = ArmLoop::new(pair, simulated(0.0));
    let zero = [0.0; 7];
    arm_loop.on_clock(2.0);
    arm_loop.on_joint_state(0, &joints, &PANDA_Q, &zero, 2.0);
    arm_loop.on_joint_state(1, &joints, &PANDA_Q, &zero, 2.0);
    let stopped = arm_loop.stop();
    let gravity = "gravity compensation at the last valid configuration";
    assert_eq!(stopped, vec![(0, gravity), (1, gravity)]);
    let mut expected = vec![0.0; 7];
    arm_loop.group_mut().arm_mut(1).safe_command(&mut expected);
    assert!(expected.iter().any(|g| g.abs() > 1.0), "{expected:?}");
    assert_eq!(arm_loop.command(1), expected.as_slice());
    assert!(arm_loop.on_clock(0.5), "simulated time went back");
    assert_eq!(arm_loop.group().core().fault(), Some(&Fault::NoState));
    assert!(
        arm_loop.stop().is_empty(),
        "no configuration of this run to brake at: the last command stays"
    );
}

#[test]
fn a_host_gives_the_times_and_an_arm_without_state_is_not_commanded() {
    let arm = reversed_arm();
    let joints = names(&arm);
    let mut arm_loop = ArmLoop::hosted(arm);
    arm_loop.step(0.0, 1e-3);
    assert_eq!(arm_loop.sent(0), None);
    assert_eq!(arm_loop.reports()[0].fault, Some(Fault::NoState));
    arm_loop.record_state(0, &joints, &[0.1, 0.1], &[0.0; 2], 5.0);
    arm_loop.step(5.0, 1e-3);
    assert!(arm_loop.sent(0).is_some());
    arm_loop.restart();
    arm_loop.step(5.001, 1e-3);
    assert_eq!(arm_loop.sent(0), None, "a restart waits for a state");
    assert_eq!(
        arm_loop.safe_command(0),
        "zero effort",
        "a host asks anyway"
    );
}
