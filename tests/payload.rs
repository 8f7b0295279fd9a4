//! A 1 kg tool with an offset centre of mass on the simulated arm, which the model does not
//! have: the arm sags under it; given as the `payload_*` parameters (at start, or live with
//! the ramp), the set-point error under gravity drops below 1e-4 rad on every bundled arm, and
//! the ramp keeps the command smooth. The external torque estimate takes it too: at rest the
//! payload no longer shows as an external torque.

use armctl_control::ParameterValue;
use armctl_e2e::urdf_dir;
use armctl_model::{ChainOptions, Payload, Robot};
use armctl_runtime::controller_runtime::ControllerRuntime;
use armctl_runtime::simulated_loop::SimulatedLoop;
use armctl_runtime::startup::NodeStart;
use armctl_sim::{run_loop, ModelMismatch, RunLog, SimConfig, Simulator};
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
    hook: impl FnMut(usize, f64, &mut SimulatedLoop<&mut ControllerRuntime>),
) -> (RunLog, ControllerRuntime) {
    let mut all = vec![("controller".into(), ParameterValue::String(law.into()))];
    all.extend(values);
    let start = NodeStart {
        name: "controller_node".into(),
        namespace: "/".into(),
        remaps: vec![],
        values: all,
    };
    let mut runtime = ControllerRuntime::with_robot(&start, robot.clone()).unwrap();
    let config = SimConfig {
        mismatch: ModelMismatch {
            payload: Some(tool()),
            ..ModelMismatch::default()
        },
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
