//! A 1 kg tool with an offset centre of mass on the simulated arm, which the model does not
//! have: the arm sags under it; given as the `payload_*` parameters (at start, or live with
//! the ramp), the set-point error under gravity drops below 1e-4 rad on every bundled arm, and
//! the ramp keeps the command smooth. The external torque estimate takes it too: at rest the
//! payload no longer shows as an external torque.

use armctl_control::ParameterValue;
use armctl_e2e::urdf_dir;
use armctl_model::{ChainOptions, Payload, Robot};
use armctl_runtime::group_loop::GroupLoop;
use armctl_runtime::simulated_loop::SimulatedLoop;
use armctl_sim::{run_loop, ModelMismatch, RunLog, SensorNoise, SimConfig, Simulator};
use nalgebra::{Matrix3, Vector3};

const ARMS: [&str; 3] = ["panda.urdf", "ur5e.urdf", "puma560.urdf"];

fn tool() -> Payload {
    Payload {
        mass: 1.0,
        com: Vector3::new(0.04, -0.03, 0.08),
        inertia: Matrix3::from_diagonal(&Vector3::new(3e-3, 3e-3, 2e-3)),
    }
}

fn payload_values(p: &Payload) -> Vec<(String, ParameterValue)> {
    let i = &p.inertia;
    vec![
        ("payload_mass".into(), ParameterValue::Double(p.mass)),
        (
            "payload_com".into(),
            ParameterValue::DoubleArray(p.com.iter().copied().collect()),
        ),
        (
            "payload_inertia".into(),
            ParameterValue::DoubleArray(vec![
                i[(0, 0)],
                i[(0, 1)],
                i[(0, 2)],
                i[(1, 1)],
                i[(1, 2)],
                i[(2, 2)],
            ]),
        ),
    ]
}

fn robot(file: &str) -> Robot {
    Robot::from_urdf_file(urdf_dir().join(file), &ChainOptions::default()).unwrap()
}

/// `law` holding the arm where it starts (with the tool on the simulated arm) for `steps`
/// at 1 kHz, with `values` at start and `hook` between steps.
fn hold_with_the_tool(
    robot: &Robot,
    law: &str,
    values: Vec<(String, ParameterValue)>,
    steps: usize,
    hook: impl FnMut(usize, f64, &mut SimulatedLoop<&mut GroupLoop>),
) -> (RunLog, GroupLoop) {
    with_the_tool(robot, law, values, (steps, None), hook)
}

/// [`hold_with_the_tool`] with the encoders' `noise`.
fn with_the_tool(
    robot: &Robot,
    law: &str,
    values: Vec<(String, ParameterValue)>,
    (steps, noise): (usize, Option<SensorNoise>),
    hook: impl FnMut(usize, f64, &mut SimulatedLoop<&mut GroupLoop>),
) -> (RunLog, GroupLoop) {
    // A tool the model lacks reads as a contact (a 1 kg tool twists the Panda's wrist as a
    // 30 N push does): the sensitivity is lowered while the tool is unknown, as
    // docs/safety.md tells.
    let mut all = vec![
        ("controller".into(), ParameterValue::String(law.into())),
        ("collision_force".into(), ParameterValue::Double(100.0)),
    ];
    all.extend(values);
    let start = armctl_e2e::controller_node_start(all);
    let mut runtime = GroupLoop::lone_on(&start, robot.clone()).unwrap();
    let config = SimConfig {
        mismatch: ModelMismatch {
            payload: Some(tool()),
            ..ModelMismatch::default()
        },
        noise,
        ..SimConfig::default()
    };
    let q0 = robot.middle_configuration();
    let mut sim = Simulator::new(robot, &q0, config).unwrap();
    let log = {
        let mut control = SimulatedLoop::new(&mut runtime);
        run_loop(&mut sim, &mut control, steps, hook).unwrap()
    };
    (log, runtime)
}

/// The largest distance from where the arm started over the last 0.5 s, rad.
fn set_point_error(log: &RunLog) -> f64 {
    let last = log.time.len();
    log.q
        .iter()
        .map(|joint| {
            joint[last - 500..]
                .iter()
                .map(|q| (q - joint[0]).abs())
                .fold(0.0, f64::max)
        })
        .fold(0.0, f64::max)
}

#[test]
fn the_payload_at_start_removes_the_sag_under_gravity_on_every_bundled_arm() {
    for file in ARMS {
        let robot = robot(file);
        for law in ["pd_gravity", "computed_torque"] {
            let (sagging, _) = hold_with_the_tool(&robot, law, vec![], 4000, |_, _, _| {});
            let (carried, runtime) =
                hold_with_the_tool(&robot, law, payload_values(&tool()), 4000, |_, _, _| {});
            let (before, after) = (set_point_error(&sagging), set_point_error(&carried));
            eprintln!("{file} {law}: set-point error {before:.2e} rad without the payload, {after:.2e} with it");
            assert!(
                before > 1e-3,
                "{file} {law}: the tool sags the arm ({before})"
            );
            assert!(
                after < 1e-4,
                "{file} {law}: {after} rad with the payload set"
            );
            // The estimate models the payload: at rest nothing external is left.
            let external = runtime.core().external_torques();
            for (e, joint) in external.iter().zip(robot.joints()) {
                assert!(
                    e.abs() < 1e-3 * joint.limits.effort,
                    "{file} {law}: {external:?}"
                );
            }
        }
    }
}

/// Set while the arm sags: the payload's torque ramps in over `payload_ramp_time` (1 s), the
/// arm comes back within 1e-4 rad, and no command steps by more than the law's own steps do.
#[test]
fn a_payload_set_live_ramps_in_and_the_arm_comes_back_to_its_set_point() {
    let robot = robot("panda.urdf");
    let mut refused = None;
    let (log, runtime) = hold_with_the_tool(&robot, "pd_gravity", vec![], 6000, |k, _, control| {
        if k == 2000 {
            let runtime = control.group_mut();
            let flat = ParameterValue::DoubleArray(vec![1e-3, 0.0, 0.0, 1e-3, 0.0, 3e-3]);
            refused = runtime.set_parameter("payload_inertia", &flat).err();
            for (name, value) in payload_values(&tool()) {
                runtime.set_parameter(&name, &value).unwrap();
            }
        }
    });
    let refused = refused.expect("an inertia no body has is refused");
    assert!(refused.contains("payload_inertia"), "{refused}");
    assert_eq!(
        runtime.parameter("payload_mass"),
        Some(&ParameterValue::Double(1.0))
    );
    let error = set_point_error(&log);
    assert!(error < 1e-4, "{error} rad after the payload came in");
    // The ramp: the largest command step while it ran against the steps once settled.
    let step = |range: std::ops::Range<usize>| {
        log.commanded
            .iter()
            .map(|joint| {
                joint[range.clone()]
                    .windows(2)
                    .map(|w| (w[1] - w[0]).abs())
                    .fold(0.0, f64::max)
            })
            .fold(0.0, f64::max)
    };
    let during = step(2000..3100);
    let weight = {
        let mut g = vec![0.0; 7];
        let only = robot.payload_only(&tool()).unwrap();
        let mut ws = armctl_dynamics::DynamicsWorkspace::new(&robot);
        let q0: Vec<f64> = log.q.iter().map(|j| j[0]).collect();
        armctl_dynamics::gravity_torques(&only, &mut ws, &q0, &mut g).unwrap();
        g.iter().fold(0.0, |m: f64, v| m.max(v.abs()))
    };
    let settled = step(5000..6000);
    eprintln!("largest command step {during:.3e} N m during the ramp, {settled:.3e} settled; the payload's weight {weight:.3} N m; set-point error {error:.2e} rad");
    // A smoothstep over 1000 steps rises at most 1.5 / 1000 of its height per step.
    assert!(
        during < 2e-3 * weight,
        "{during} N m in one step during the ramp (the payload's weight {weight} N m)"
    );
}

/// The online estimate (`estimate_payload`): the arm under pd_gravity visits the poses of
/// `armctl excite --payload` (3 s moves, 3 s rests) with the tool the model lacks; the node's
/// estimate from its rests is within 3 % of the mass and 5 mm of the centre of mass and is
/// reported as an event; applied as the payload parameters, the set-point error under gravity
/// drops below 1e-4 rad, and the rests from before the change are forgotten. Also through
/// encoder noise (1e-5 rad, 1e-3 rad/s).
#[test]
fn the_node_estimates_the_payload_from_the_arms_rests() {
    let noise = SensorNoise {
        position: 1e-5,
        velocity: 1e-3,
        seed: 3,
    };
    for (file, noise) in [
        ("panda.urdf", None),
        ("ur5e.urdf", None),
        ("panda.urdf", Some(noise)),
    ] {
        let robot = robot(file);
        let q0 = robot.middle_configuration();
        let poses = armctl_ident::payload_poses(&robot, &q0, 8).unwrap();
        let zeros = vec![0.0; robot.dof()];
        let mut points = vec![];
        for (k, pose) in poses.iter().enumerate() {
            for (at, _) in [(3.0, "move"), (6.0, "rest")] {
                points.push(armctl_control::reference::TrajectoryPoint {
                    time: 6.0 * k as f64 + at,
                    positions: pose.clone(),
                    velocities: Some(zeros.clone()),
                    accelerations: Some(zeros.clone()),
                });
            }
        }
        let names: Vec<String> = robot.joint_names().map(str::to_string).collect();
        let end = 6000 * poses.len();
        let (mut event, mut estimate) = (None, None);
        let run = (end + 8000, noise);
        let (log, runtime) = with_the_tool(&robot, "pd_gravity", vec![], run, |k, t, control| {
            let runtime = control.group_mut();
            if k == 1 {
                let core = runtime.core_mut();
                core.set_trajectory(&names, &points, t, t).unwrap();
            }
            if k == end {
                let found = armctl_runtime::payload_service::estimate_payload(runtime.core());
                estimate = Some(found.clone().unwrap());
                let on = ParameterValue::Bool(true);
                let stored = runtime.set_parameter("estimate_payload", &on).unwrap();
                assert_eq!(stored, ParameterValue::Bool(false), "a trigger");
                let p = found.unwrap().payload;
                for (name, value) in payload_values(&Payload::point(p.mass, p.com)) {
                    runtime.set_parameter(&name, &value).unwrap();
                }
            }
            if k == end + 1 {
                event = control.events.last().cloned();
            }
        });
        let estimate = estimate.unwrap();
        let truth = tool();
        let mass_error = (estimate.payload.mass - truth.mass).abs() / truth.mass;
        let com_error = (estimate.payload.com - truth.com).norm();
        let event = event.expect("the estimate is reported");
        eprintln!("{file}: {event}");
        eprintln!(
            "{file}: mass error {mass_error:.2e} relative, centre of mass {com_error:.2e} m ({} poses)",
            estimate.poses
        );
        assert!(event.contains("payload estimate from"), "{event}");
        // Noise may split a rest in two.
        assert!(
            estimate.poses >= poses.len(),
            "a pose per rest: {}",
            estimate.poses
        );
        assert!(mass_error < 0.03, "{file}: mass {}", estimate.payload.mass);
        assert!(
            com_error < 5e-3,
            "{file}: centre of mass {}",
            estimate.payload.com
        );
        // Held at the last pose: the error over the last 0.5 s, with the estimate applied.
        let last = log.time.len();
        let pose = poses.last().unwrap();
        let error = log
            .q
            .iter()
            .zip(pose)
            .map(|(joint, target)| {
                joint[last - 500..]
                    .iter()
                    .map(|q| (q - target).abs())
                    .fold(0.0, f64::max)
            })
            .fold(0.0, f64::max);
        eprintln!("{file}: set-point error {error:.2e} rad with the estimate applied");
        assert!(
            error < 1e-4,
            "{file}: {error} rad with the estimate applied"
        );
        // Taken against the model without the tool, the rests before the change are forgotten.
        let again = armctl_runtime::payload_service::estimate_payload(runtime.core());
        assert!(again.is_err(), "one pose since the change: {again:?}");
    }
}
