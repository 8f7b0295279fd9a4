//! Hot paths allocate nothing: a counting global allocator watches each call after a warm-up.

use armctl_runtime::group_loop::GroupLoop;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use armctl_control::Controller;
use armctl_dynamics::{
    coriolis_matrix, forward_dynamics, forward_dynamics_derivatives, friction_torques,
    gravity_derivatives, gravity_torques, mass_matrix, nonlinear_effects, regressor,
    regressor_times, regressor_transpose_products, rnea, rnea_derivatives, rnea_two_velocity,
    rnea_with_wrench, CoulombSign, DynamicsWorkspace, ForwardDerivatives, Gravity,
    TransposeProducts, Wrench,
};
use armctl_e2e::urdf_dir;
use armctl_model::{
    forward_kinematics, jacobian, jacobian_dot_qd, ChainOptions, FrameId, KinematicsWorkspace,
    Robot,
};
use armctl_sim::{SensorNoise, SimConfig, Simulator};
use nalgebra::{DMatrix, Matrix6xX};

struct Counting;

// Per thread: tests run in parallel, each counts only its own allocations.
thread_local! {
    static WATCHING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count_one() {
    if WATCHING.with(Cell::get) {
        ALLOCATIONS.with(|a| a.set(a.get() + 1));
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so this
// allocator upholds `GlobalAlloc`'s contract exactly as `System` does. The counting beside it
// touches only `const`-initialised thread-local `Cell`s, which neither allocate nor unwind.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: the caller guarantees `layout` has a non-zero size (`GlobalAlloc::alloc`).
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller guarantees `ptr` was allocated by this allocator, i.e. by
        // `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        count_one();
        // SAFETY: the caller guarantees `ptr` came from this allocator (`System`) with
        // `layout`, and that `size` is non-zero and does not overflow when rounded to the
        // alignment.
        unsafe { System.realloc(ptr, layout, size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by `f` on this thread.
fn allocations(mut f: impl FnMut()) -> usize {
    f(); // warm-up
    let before = ALLOCATIONS.with(Cell::get);
    WATCHING.with(|w| w.set(true));
    for _ in 0..3 {
        f();
    }
    WATCHING.with(|w| w.set(false));
    ALLOCATIONS.with(Cell::get) - before
}

#[test]
fn kinematics_and_dynamics_allocate_nothing() {
    for file in ["panda.urdf", "puma560.urdf", "ur5e.urdf"] {
        let robot = Robot::from_urdf_file(urdf_dir().join(file), &ChainOptions::default()).unwrap();
        let n = robot.dof();
        let q: Vec<f64> = (0..n).map(|i| 0.1 * i as f64 - 0.3).collect();
        let qd: Vec<f64> = (0..n).map(|i| 0.5 - 0.2 * i as f64).collect();
        let qdd: Vec<f64> = (0..n).map(|i| 0.3 * i as f64).collect();
        let mut kin = KinematicsWorkspace::new(&robot);
        let mut ws = DynamicsWorkspace::new(&robot);
        let mut out = vec![0.0; n];
        let mut mat = DMatrix::zeros(n, n);
        let (mut d1, mut d2, mut d3) = (mat.clone(), mat.clone(), mat.clone());
        let mut y = DMatrix::zeros(n, 10 * n);
        let p = robot.parameter_vector();
        let (mut product, mut squares) = (p.clone(), p.clone());
        let mut jac = Matrix6xX::zeros(n);
        let wrench = Wrench::default();
        let noisy = SimConfig {
            noise: Some(SensorNoise {
                position: 1e-4,
                velocity: 1e-3,
                seed: 1,
            }),
            command_delay_steps: 2,
            external_wrench: Some(Wrench::default()),
            ..SimConfig::default()
        };
        let mut sim = Simulator::new(&robot, &q, noisy).unwrap();
        let (mut q_meas, mut qd_meas) = (vec![0.0; n], vec![0.0; n]);
        let checks: Vec<(&str, usize)> = vec![
            (
                "forward_kinematics",
                allocations(|| {
                    forward_kinematics(&robot, &mut kin, &q).unwrap();
                }),
            ),
            (
                "jacobian",
                allocations(|| jacobian(&robot, &mut kin, &q, FrameId::Tip, &mut jac).unwrap()),
            ),
            (
                "rnea_derivatives",
                allocations(|| {
                    rnea_derivatives(&robot, &mut ws, (&q, &qd, &qdd), &mut d1, &mut d2).unwrap()
                }),
            ),
            (
                "gravity_derivatives",
                allocations(|| gravity_derivatives(&robot, &mut ws, &q, &mut d1).unwrap()),
            ),
            (
                "forward_dynamics_derivatives",
                allocations(|| {
                    let out = ForwardDerivatives {
                        qdd: &mut out,
                        dqdd_dq: &mut d1,
                        dqdd_dqd: &mut d2,
                        dqdd_dtau: &mut d3,
                    };
                    forward_dynamics_derivatives(&robot, &mut ws, (&q, &qd, &qdd), out).unwrap()
                }),
            ),
            (
                "jacobian_dot_qd",
                allocations(|| {
                    jacobian_dot_qd(&robot, &mut kin, &q, &qd, FrameId::Tip).unwrap();
                }),
            ),
            (
                "rnea",
                allocations(|| rnea(&robot, &mut ws, &q, &qd, &qdd, &mut out).unwrap()),
            ),
            (
                "rnea_with_wrench",
                allocations(|| {
                    rnea_with_wrench(&robot, &mut ws, &q, &qd, &qdd, &wrench, &mut out).unwrap()
                }),
            ),
            (
                "rnea_two_velocity",
                allocations(|| {
                    rnea_two_velocity(&robot, &mut ws, &q, &qd, &qdd, &qd, &mut out).unwrap()
                }),
            ),
            (
                "nonlinear_effects",
                allocations(|| nonlinear_effects(&robot, &mut ws, &q, &qd, &mut out).unwrap()),
            ),
            (
                "gravity_torques",
                allocations(|| gravity_torques(&robot, &mut ws, &q, &mut out).unwrap()),
            ),
            (
                "mass_matrix",
                allocations(|| mass_matrix(&robot, &mut ws, &q, &mut mat).unwrap()),
            ),
            (
                "coriolis_matrix",
                allocations(|| coriolis_matrix(&robot, &mut ws, &q, &qd, &mut mat).unwrap()),
            ),
            (
                "forward_dynamics",
                allocations(|| forward_dynamics(&robot, &mut ws, &q, &qd, &qdd, &mut out).unwrap()),
            ),
            (
                "friction_torques",
                allocations(|| {
                    friction_torques(
                        &robot,
                        &q,
                        &qd,
                        CoulombSign::Smooth { width: 0.01 },
                        &mut out,
                    )
                    .unwrap()
                }),
            ),
            (
                "regressor",
                allocations(|| regressor(&robot, &mut ws, &q, &qd, &qdd, &qd, &mut y).unwrap()),
            ),
            (
                "all terms (one pass)",
                allocations(|| {
                    let mut terms = ws.update(&robot, &q, &qd).unwrap();
                    terms.mass_matrix(&mut mat).unwrap();
                    terms.nonlinear_effects(&mut out).unwrap();
                    terms.gravity(&mut out).unwrap();
                    terms.inverse_dynamics(&qdd, &mut out).unwrap();
                    let _ = terms.tip_pose();
                    terms.tip_jacobian(&mut jac).unwrap();
                    let _ = terms.tip_jacobian_dot_qd();
                }),
            ),
            (
                "regressor_times",
                allocations(|| {
                    let point = (&q[..], &qd[..], &qd[..], &qdd[..]);
                    regressor_times(&robot, &mut ws, point, Gravity::Included, &p, &mut out)
                        .unwrap()
                }),
            ),
            (
                "regressor_transpose_products",
                allocations(|| {
                    let point = (&q[..], &qd[..], &qd[..], &qdd[..]);
                    let products = TransposeProducts {
                        transpose_times: &mut product,
                        weighted_squares: &mut squares,
                    };
                    let (x, w) = (&qd[..], &qdd[..]);
                    regressor_transpose_products(
                        &robot,
                        &mut ws,
                        point,
                        Gravity::Excluded,
                        (x, w),
                        products,
                    )
                    .unwrap()
                }),
            ),
            (
                "simulator step",
                allocations(|| {
                    sim.step(&qdd).unwrap();
                }),
            ),
            (
                "simulator measure",
                allocations(|| sim.measure(&mut q_meas, &mut qd_meas).unwrap()),
            ),
        ];
        for (name, count) in checks {
            assert_eq!(
                count, 0,
                "{file}: {name} allocated {count} times in 3 calls"
            );
        }
    }
}

#[test]
fn the_counter_sees_allocations() {
    assert_eq!(
        allocations(|| drop(std::hint::black_box(vec![1.0f64; 16]))),
        3
    );
}

/// Every controller's update, behind the safety layer, with a payload ramping in (two payload
/// models evaluated), allocates nothing.
#[test]
fn controller_updates_allocate_nothing() {
    for file in ["panda.urdf", "puma560.urdf"] {
        let robot = Robot::from_urdf_file(urdf_dir().join(file), &ChainOptions::default()).unwrap();
        let n = robot.dof();
        let q: Vec<f64> = robot
            .joints()
            .iter()
            .map(|j| 0.5 * (j.limits.lower + j.limits.upper) + 0.1)
            .collect();
        let qd: Vec<f64> = (0..n).map(|i| 0.3 - 0.1 * i as f64).collect();
        let mut reference = armctl_control::JointReference::hold(&q);
        reference.qd.iter_mut().for_each(|v| *v = 0.2);
        let mut effort = vec![0.0; n];
        for name in armctl_control::CONTROLLERS {
            let inner = armctl_control::controller_by_name(name, &robot).unwrap();
            let mut controller = armctl_control::Guarded::new(inner, &robot, Some(1000.0)).unwrap();
            let state = armctl_control::JointState { q: &q, qd: &qd };
            controller.reset(&state);
            // A tool ramping in, then a heavier one from part of the way: two payload models.
            let tool =
                |mass| armctl_model::Payload::point(mass, nalgebra::Vector3::new(0.0, 0.02, 0.1));
            controller
                .payload_mut()
                .set(&robot, tool(1.0), 1.0)
                .unwrap();
            for _ in 0..100 {
                controller
                    .update(&state, &reference, 1e-3, &mut effort)
                    .unwrap();
            }
            controller
                .payload_mut()
                .set(&robot, tool(2.0), 1.0)
                .unwrap();
            let count = allocations(|| {
                controller
                    .update(&state, &reference, 1e-3, &mut effort)
                    .unwrap()
            });
            assert_eq!(
                count, 0,
                "{file}: {name} allocated {count} times in 3 updates"
            );
        }
    }
}

/// Every joint on its upper soft limit, moving toward it: the joint-limit protection bounds
/// every effort (its dynamics computed) and allocates nothing.
#[test]
fn a_law_bounded_at_its_joint_limits_allocates_nothing() {
    let robot =
        Robot::from_urdf_file(urdf_dir().join("panda.urdf"), &ChainOptions::default()).unwrap();
    let n = robot.dof();
    let mut effort = vec![0.0; n];
    for name in armctl_control::CONTROLLERS {
        let inner = armctl_control::controller_by_name(name, &robot).unwrap();
        let mut controller = armctl_control::Guarded::new(inner, &robot, None).unwrap();
        let q: Vec<f64> = (0..n)
            .map(|i| controller.limits_mut().soft_limits(i).unwrap().1)
            .collect();
        let qd = vec![0.5; n];
        let target: Vec<f64> = robot.joints().iter().map(|j| j.limits.upper).collect();
        let reference = armctl_control::JointReference::hold(&target);
        let state = armctl_control::JointState { q: &q, qd: &qd };
        controller.reset(&state);
        let count = allocations(|| {
            controller
                .update(&state, &reference, 1e-3, &mut effort)
                .unwrap()
        });
        assert_eq!(count, 0, "{name} allocated {count} times in 3 updates");
        assert!(
            controller.last_report().joint_limited > 0,
            "{name}: nothing bounded"
        );
    }
}

#[test]
fn controller_node_step_allocates_nothing_on_valid_states() {
    use armctl_runtime::controller_core::{ControllerCore, SafeMode};
    use armctl_runtime::loop_timing::LoopTiming;
    use armctl_runtime::node_clock::NodeClock;
    let robot =
        Robot::from_urdf_file(urdf_dir().join("panda.urdf"), &ChainOptions::default()).unwrap();
    // /joint_states as ros2_control sends them: another order, a gripper joint added.
    let mut names: Vec<String> = robot.joint_names().map(str::to_string).collect();
    names.reverse();
    names.push("panda_finger_joint1".into());
    // Mid-range positions (a plausible state), in the message's order.
    let middle = robot.middle_configuration();
    let mut position: Vec<f64> = middle.iter().rev().copied().collect();
    position.push(0.01);
    let velocity = vec![0.05; names.len()];
    for name in armctl_control::CONTROLLERS {
        let controller = armctl_control::controller_by_name(name, &robot).unwrap();
        let mut core =
            ControllerCore::new(robot.clone(), SafeMode::Gravity, 0.1, Some(1e3)).unwrap();
        // Following a trajectory, as after a message on ~/reference.
        let chain: Vec<String> = robot.joint_names().map(str::to_string).collect();
        let middle = robot.middle_configuration();
        let point = |time: f64, offset: f64| armctl_control::reference::TrajectoryPoint {
            time,
            positions: middle.iter().map(|q| q + offset).collect(),
            velocities: None,
            accelerations: None,
        };
        core.on_joint_state(&names, &position, &velocity, 0.0);
        core.set_trajectory(&chain, &[point(1.0, 0.1), point(2.0, 0.3)], 0.0, 0.0)
            .unwrap();
        let mut now = 0.0;
        // A FollowJointTrajectory goal's path tolerances, checked after each step.
        let checked = armctl_runtime::trajectory_goal::StateTolerance {
            position: 10.0,
            velocity: 100.0,
        };
        let goal = armctl_runtime::trajectory_goal::GoalTolerances {
            path: vec![checked; robot.dof()],
            goal: vec![checked; robot.dof()],
            goal_time: 1.0,
        };
        // In the loop a node drives, stepping on each state (stamps are times on sim time).
        let timing = LoopTiming::new(NodeClock::new(true), 0.0, 0.0);
        let mut group = GroupLoop::of_core(core, controller).unwrap().paced(timing);
        let count = allocations(|| {
            now += 1e-3;
            let stepped = group.on_joint_state(0, &names, &position, &velocity, now);
            assert_eq!(stepped, Some(now));
            let report = &group.output().arms[0].report;
            assert!(report.fault.is_none(), "{name}: {:?}", report.fault);
            assert!(group.output().sent(0).is_some() && group.output().state_due);
            let core = group.core();
            let (q, qd) = core.measured();
            let since_end = now - core.trajectory_end().unwrap();
            let progress = goal.check(&chain, since_end, core.reference(), q, qd);
            assert_eq!(progress, armctl_runtime::trajectory_goal::GoalCheck::Moving);
        });
        assert_eq!(
            count, 0,
            "{name}: the node's step allocated {count} times in 3 steps"
        );
    }
}

/// A latched collision's steps, for each reaction: the hold, the damping of `compliant`, and a
/// retract under way (its anchor moving along a quintic), with the estimate and the detector
/// still running.
#[test]
fn a_latched_collision_s_reactions_allocate_nothing() {
    use armctl_runtime::controller_core::{
        CollisionDetection, CollisionReaction, CollisionSettings, ControllerCore, Fault, SafeMode,
    };
    use armctl_runtime::loop_timing::LoopTiming;
    use armctl_runtime::node_clock::NodeClock;
    let robot =
        Robot::from_urdf_file(urdf_dir().join("panda.urdf"), &ChainOptions::default()).unwrap();
    let names: Vec<String> = robot.joint_names().map(str::to_string).collect();
    let reactions = [
        CollisionReaction::Hold,
        CollisionReaction::Compliant,
        CollisionReaction::Retract,
    ];
    for reaction in reactions {
        let controller = armctl_control::controller_by_name("computed_torque", &robot).unwrap();
        let mut core =
            ControllerCore::new(robot.clone(), SafeMode::Gravity, 0.1, Some(1e3)).unwrap();
        // Scripted states that ignore the commands: the estimate soon crosses thresholds this
        // low.
        core.set_collision(CollisionSettings {
            detection: CollisionDetection::On,
            thresholds: vec![1e-3; robot.dof()],
            reaction,
            ..CollisionSettings::default()
        });
        let timing = LoopTiming::new(NodeClock::new(true), 0.0, 0.0);
        let mut group = GroupLoop::of_core(core, controller).unwrap().paced(timing);
        let mut q = robot.middle_configuration();
        let velocity = vec![0.3; robot.dof()];
        let mut now = 0.0;
        let mut step = |group: &mut GroupLoop| {
            now += 1e-3;
            for p in q.iter_mut() {
                *p += 3e-4;
            }
            group.on_joint_state(0, &names, &q, &velocity, now);
        };
        for _ in 0..20 {
            step(&mut group);
        }
        let latched = |group: &GroupLoop| {
            matches!(
                group.output().arms[0].report.fault,
                Some(Fault::Collision(_))
            )
        };
        assert!(latched(&group), "{reaction:?}: not latched");
        let count = allocations(|| {
            for _ in 0..100 {
                step(&mut group);
                assert!(latched(&group));
            }
        });
        assert_eq!(count, 0, "{reaction:?}: {count} allocations in 300 steps");
    }
}

/// The poses at rest collected for the online payload estimate: settling, averaging, a pose
/// kept when motion resumes, and a restart (a stale state) in the middle of a rest.
#[test]
fn collecting_rest_poses_allocates_nothing() {
    use armctl_runtime::controller_core::{ControllerCore, SafeMode};
    use armctl_runtime::loop_timing::LoopTiming;
    use armctl_runtime::node_clock::NodeClock;
    let robot =
        Robot::from_urdf_file(urdf_dir().join("panda.urdf"), &ChainOptions::default()).unwrap();
    let names: Vec<String> = robot.joint_names().map(str::to_string).collect();
    let controller = armctl_control::controller_by_name("pd_gravity", &robot).unwrap();
    let core = ControllerCore::new(robot.clone(), SafeMode::Gravity, 0.1, Some(1e3)).unwrap();
    let timing = LoopTiming::new(NodeClock::new(true), 0.0, 0.0);
    let mut group = GroupLoop::of_core(core, controller).unwrap().paced(timing);
    let mut q = robot.middle_configuration();
    let (still, moving) = (vec![0.0; robot.dof()], vec![0.2; robot.dof()]);
    let mut now = 0.0;
    let mut state = |group: &mut GroupLoop, qd: &[f64], gap: f64| {
        now += gap;
        for (p, v) in q.iter_mut().zip(qd) {
            *p += v * 1e-3;
        }
        group.on_joint_state(0, &names, &q, qd, now);
    };
    state(&mut group, &still, 1e-3);
    let count = allocations(|| {
        for (qd, steps, gap) in [
            (&still, 500, 1e-3),
            (&moving, 50, 1e-3),
            (&still, 300, 1e-3),
            (&still, 1, 0.5),
            (&still, 500, 1e-3),
        ] {
            for _ in 0..steps {
                state(&mut group, qd, gap);
            }
        }
    });
    assert_eq!(count, 0, "{count} allocations");
    // Poses were collected: the scripted arm shows no payload in them.
    let core = group.core();
    let refused = armctl_runtime::payload_service::estimate_payload(core).unwrap_err();
    assert!(refused.contains("no payload found"), "{refused}");
}

/// Both arms of a pair under the cooperative law (the runtime controller_node and `armctl sim`
/// step), while both are controlled.
#[test]
fn the_cooperative_pair_step_allocates_nothing_while_controlling() {
    use armctl_control::ParameterValue;

    use armctl_runtime::loop_timing::LoopTiming;
    use armctl_runtime::node_clock::NodeClock;
    use armctl_runtime::startup::NodeStart;
    let workspace = urdf_dir().join("..");
    let path = |p: &str| ParameterValue::String(workspace.join(p).display().to_string());
    let start = NodeStart {
        name: "controller_node".into(),
        namespace: "/".into(),
        remaps: vec![],
        values: vec![
            (
                "controller".into(),
                ParameterValue::String("cooperative".into()),
            ),
            ("urdf_path".into(), path("urdf/panda.urdf")),
            (
                "scene_file".into(),
                path("config/scenes/two_pandas_carry.yaml"),
            ),
            ("internal_force".into(), ParameterValue::Double(10.0)),
        ],
    };
    let pair = GroupLoop::pair(&start).unwrap();
    let names: Vec<String> = pair.core().joints().to_vec();
    let q = [0.0, 0.3, 0.0, -2.0, 0.0, 2.3, 0.8];
    let qd = [0.05; 7];
    let mut now = 1e-3;
    // In the loop the two-arm node drives: a step once both arms' states came.
    let timing = LoopTiming::new(NodeClock::new(true), 0.0, 0.0);
    let mut group = pair.paced(timing);
    let mut step = |group: &mut GroupLoop| {
        assert_eq!(group.on_joint_state(0, &names, &q, &qd, now), None);
        assert_eq!(group.on_joint_state(1, &names, &q, &qd, now), Some(now));
        assert!(!group.output().holding(), "{:?}", group.output());
        assert!(group.output().sent(0).is_some() && group.output().sent(1).is_some());
        now += 1e-3;
    };
    step(&mut group);
    let count = allocations(|| step(&mut group));
    assert_eq!(
        count, 0,
        "the pair's step allocated {count} times in 3 steps"
    );
}

/// The Lagrange-Euler route (both trace evaluations) after its workspace is made.
#[test]
fn the_lagrange_euler_route_allocates_nothing() {
    use armctl_dynamics::{
        lagrange_coriolis_matrix, lagrange_coupling, lagrange_gravity, lagrange_inverse_dynamics,
        lagrange_mass_matrix, LagrangeWorkspace, TraceMethod,
    };
    let robot =
        Robot::from_urdf_file(urdf_dir().join("panda.urdf"), &ChainOptions::default()).unwrap();
    let n = robot.dof();
    let mut ws = LagrangeWorkspace::new(&robot);
    let (q, qd, qdd) = (vec![0.3; n], vec![0.2; n], vec![0.1; n]);
    let (mut m, mut c) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
    let (mut g, mut tau, mut d) = (vec![0.0; n], vec![0.0; n], vec![0.0; n * n * n]);
    for method in [TraceMethod::Direct, TraceMethod::InnerProduct] {
        let count = allocations(|| {
            lagrange_mass_matrix(&robot, &mut ws, &q, method, &mut m).unwrap();
            lagrange_coriolis_matrix(&robot, &mut ws, &q, &qd, method, &mut c).unwrap();
            lagrange_coupling(&robot, &mut ws, &q, method, &mut d).unwrap();
            lagrange_gravity(&robot, &mut ws, &q, method, &mut g).unwrap();
            lagrange_inverse_dynamics(&robot, &mut ws, (&q, &qd, &qdd), method, &mut tau).unwrap();
        });
        assert_eq!(count, 0, "{method:?}: {count} allocations");
    }
}
