//! A collision latched until `reset_collision`, through the runtime every runner uses: the
//! Panda swung into a wall retracts and holds; setting `reset_collision` clears it, control
//! resumes where the arm is, and the parameter reads false again. A reset while the estimate
//! is still above its threshold latches again with a new event; a restart keeps the latch.

use armctl_control::ParameterValue;
use armctl_e2e::urdf_dir;
use armctl_model::{urdf_file_to_robot, ChainOptions};
use armctl_runtime::controller_core::Fault;
use armctl_runtime::group_loop::GroupLoop;
use armctl_runtime::simulated_loop::SimulatedLoop;
use armctl_sim::{run_loop, scene_file, SimConfig, Simulator, Wrench};
use nalgebra::Vector3;

const WALL: &str = "obstacles:
  - {name: wall, box: {center: [0.5, 0.45, 0.655], size: [0.4, 0.4, 0.4]}, stiffness: 50000.0, damping: 5.0, friction: 0.3}
points:
  - {link: tip, name: flange}
";

/// The Panda on computed torque with `extra` parameters, its first joint to swing by 1 rad in
/// 2.2 s from the middle of its range, which is returned.
fn swinging(
    robot: &armctl_model::Robot,
    extra: Vec<(String, ParameterValue)>,
) -> (GroupLoop, Vec<f64>) {
    let mut given = vec![(
        "controller".into(),
        ParameterValue::String("computed_torque".into()),
    )];
    given.extend(extra);
    let start = armctl_e2e::controller_node_start(given);
    let mut runtime = GroupLoop::lone_on(&start, robot.clone()).unwrap();
    let q0 = robot.middle_configuration();
    let mut swing = q0.clone();
    swing[0] = 1.0;
    let trajectory = armctl_control::reference::Quintic::new(q0.clone(), swing, 2.2).unwrap();
    runtime
        .core_mut()
        .follow(Box::new(trajectory), 0.0)
        .unwrap();
    (runtime, q0)
}

/// The Panda on computed torque with `reaction`, its first joint swinging into the wall
/// ([`swinging`]), and the simulator.
fn swing_into_the_wall(reaction: &str) -> (GroupLoop, Simulator) {
    let path = urdf_dir().join("panda.urdf");
    let conversion = urdf_file_to_robot(&path, &ChainOptions::default()).unwrap();
    let robot = conversion.robot.clone();
    let scene = serde_yaml::from_str::<scene_file::SceneFile>(WALL)
        .unwrap()
        .resolve(&robot, &conversion.report)
        .unwrap();
    let (runtime, q0) = swinging(
        &robot,
        vec![
            (
                "collision_reaction".into(),
                ParameterValue::String(reaction.into()),
            ),
            ("reset_collision".into(), ParameterValue::Bool(true)),
        ],
    );
    assert_eq!(
        runtime.parameter("reset_collision"),
        Some(&ParameterValue::Bool(false)),
        "a trigger given at start is not kept"
    );
    let config = SimConfig {
        scene,
        ..SimConfig::default()
    };
    let sim = Simulator::new(&robot, &q0, config).unwrap();
    (runtime, sim)
}

#[test]
fn a_latched_collision_holds_until_reset_collision_and_the_parameter_reads_false_again() {
    let (mut runtime, mut sim) = swing_into_the_wall("retract");
    let mut control = SimulatedLoop::new(&mut runtime);
    let mut latched_before_reset = None;
    run_loop(&mut sim, &mut control, 4000, |k, _, control| {
        if k == 2500 {
            let runtime = control.group_mut();
            latched_before_reset = runtime.core().collision().cloned();
            runtime
                .set_parameter("reset_collision", &ParameterValue::Bool(true))
                .unwrap();
        }
    })
    .unwrap();
    let events = control.events.clone();
    let held = control.held;
    let latched = latched_before_reset.expect("latched at the reset");
    assert!(latched.peak_force > 10.0, "{latched:?}");
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(
        events[0].contains("holding") && events[0].contains("collision: "),
        "{events:?}"
    );
    assert!(
        events[1].starts_with("t = 2.500 s: collision reset (largest estimated tip force")
            && events[1].contains("trajectory cancelled"),
        "{events:?}"
    );
    // Held from the detection (1.039 s) to the reset, then controlled to the end.
    assert!((1455..1470).contains(&held), "{held} steps held");
    assert_eq!(runtime.core().fault(), None::<&Fault>);
    assert!(runtime.core().collision().is_none());
    assert_eq!(
        runtime.parameter("reset_collision"),
        Some(&ParameterValue::Bool(false))
    );
}

/// A person leaning on the flange with 80 N while the Panda holds its place: the estimate stays
/// above the thresholds collision_force (30 N) gives, whatever the reaction does.
#[test]
fn a_reset_while_still_over_the_threshold_latches_again_with_an_event_and_a_restart_keeps_it() {
    let path = urdf_dir().join("panda.urdf");
    let robot = urdf_file_to_robot(&path, &ChainOptions::default())
        .unwrap()
        .robot;
    let start = armctl_e2e::controller_node_start(vec![(
        "controller".into(),
        ParameterValue::String("computed_torque".into()),
    )]);
    let mut runtime = GroupLoop::lone_on(&start, robot.clone()).unwrap();
    let lean = Wrench {
        force: Vector3::new(0.0, 0.0, -80.0),
        torque: Vector3::zeros(),
    };
    let config = SimConfig {
        external_wrench: Some(lean),
        ..SimConfig::default()
    };
    let mut sim = Simulator::new(&robot, &robot.middle_configuration(), config).unwrap();
    let mut control = SimulatedLoop::new(&mut runtime);
    run_loop(&mut sim, &mut control, 1500, |k, _, control| {
        if k == 1000 {
            let stored = control
                .group_mut()
                .set_parameter("reset_collision", &ParameterValue::Bool(true))
                .unwrap();
            assert_eq!(stored, ParameterValue::Bool(false), "a trigger reads false");
        }
    })
    .unwrap();
    let events = control.events.clone();
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(events[0].contains("collision: panda_joint"), "{events:?}");
    assert!(
        events[1].starts_with("t = 1.000 s: holding") && events[1].contains("collision: "),
        "the new latch is said: {events:?}"
    );
    assert!(runtime.core().collision().is_some());
    runtime.core_mut().restart();
    assert!(
        runtime.core().collision().is_some(),
        "latched until reset_collision, whoever restarts"
    );
}

/// An arm whose joint states never change under the commanded torques, as ros2_control's mock
/// hardware reports them: the first trajectory's torques read as a contact, and the collision
/// says the arm never moved and what to do on such hardware. An arm that moved (the wall
/// above) is not told so.
#[test]
fn a_collision_on_an_arm_that_never_moved_says_so_and_names_mock_hardware() {
    let path = urdf_dir().join("panda.urdf");
    let robot = urdf_file_to_robot(&path, &ChainOptions::default())
        .unwrap()
        .robot;
    let (mut runtime, q0) = swinging(&robot, vec![]);
    let joints: Vec<String> = runtime.core().joints().to_vec();
    let still = vec![0.0; q0.len()];
    for k in 0..2000 {
        let t = k as f64 * 1e-3;
        runtime.record_state(0, &joints, &q0, &still, t);
        runtime.step(t, 1e-3);
        if runtime.core().collision().is_some() {
            break;
        }
    }
    let collision = runtime
        .core()
        .collision()
        .expect("the torques read as a contact");
    let told = collision.to_string();
    assert!(collision.never_moved, "{told}");
    assert!(
        told.contains("have not moved since the first state")
            && told.contains("mock_components/GenericSystem")
            && told.contains("collision_detection: \"off\"")
            && told.contains("on a real arm check its drives and brakes"),
        "{told}"
    );
    let (mut moved, mut sim) = swing_into_the_wall("hold");
    let mut control = SimulatedLoop::new(&mut moved);
    run_loop(&mut sim, &mut control, 1500, |_, _, _| {}).unwrap();
    let latched = moved.core().collision().expect("the wall latches").clone();
    assert!(!latched.never_moved, "{latched}");
    assert!(
        !latched.to_string().contains("mock_components"),
        "{latched}"
    );
}
