//! The core's rules, step by step on a two-joint arm.

use super::*;
use armctl_control::controller_by_name;
use armctl_model::ChainOptions;

mod trajectories;

/// A core and the law that steps it, as a group holds them.
struct Armed {
    core: ControllerCore,
    law: CheckedLaw,
}

impl std::ops::Deref for Armed {
    type Target = ControllerCore;
    fn deref(&self) -> &ControllerCore {
        &self.core
    }
}

impl std::ops::DerefMut for Armed {
    fn deref_mut(&mut self) -> &mut ControllerCore {
        &mut self.core
    }
}

impl Armed {
    /// A core for `robot` stepped by `law`.
    fn new(
        robot: Robot,
        law: Box<dyn Controller>,
        safe_mode: SafeMode,
        state_timeout: f64,
        rate_limit: Option<f64>,
    ) -> Result<Self, RuntimeError> {
        let mut core = ControllerCore::new(robot, safe_mode, state_timeout, rate_limit)?;
        let law = core.check_law(law);
        Ok(Self { core, law })
    }

    fn step(&mut self, now: f64, dt: f64, effort: &mut [f64]) -> StepReport {
        self.core.step(now, dt, &mut self.law, effort)
    }
}

fn core() -> Armed {
    let robot = Robot::from_urdf_file(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/planar_2link.urdf"),
        &ChainOptions::default(),
    )
    .unwrap();
    let controller = controller_by_name("pd_gravity", &robot).unwrap();
    let mut core = Armed::new(robot, controller, SafeMode::Gravity, 0.05, None).unwrap();
    // The tests hand the core states that do not follow its efforts (an arm that stays put,
    // jumps): to the external torque estimate, an arm pushed by the world. Collision
    // detection, right to react to that, has tests of its own.
    core.set_collision(CollisionSettings {
        detection: CollisionDetection::Off,
        ..CollisionSettings::default()
    });
    core
}

/// `G(q)` of a two-joint robot.
fn gravity_of(robot: &Robot, q: &[f64; 2]) -> [f64; 2] {
    let mut gravity = [0.0; 2];
    gravity_torques(robot, &mut DynamicsWorkspace::new(robot), q, &mut gravity).unwrap();
    gravity
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// Efforts `[NaN, big]` in the direction of gravity: the safety layer after the controller
/// moves the finite one a step towards `big`, then the hold replaces the whole effort.
struct PartlyNan(armctl_control::ParameterSet, f64);

impl Controller for PartlyNan {
    fn name(&self) -> &'static str {
        "partly_nan"
    }
    fn parameters(&self) -> &armctl_control::ParameterSet {
        &self.0
    }
    fn parameters_mut(&mut self) -> &mut armctl_control::ParameterSet {
        &mut self.0
    }
    fn compute(
        &mut self,
        step: armctl_control::Step<'_>,
    ) -> Result<(), armctl_control::ControlError> {
        step.effort.copy_from_slice(&[f64::NAN, self.1]);
        Ok(())
    }
}

#[test]
fn a_hold_after_non_finite_efforts_moves_no_effort_more_than_one_rate_limit_step() {
    let robot = Robot::from_urdf_file(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/planar_2link.urdf"),
        &ChainOptions::default(),
    )
    .unwrap();
    let q = [0.1, 0.2];
    let gravity = gravity_of(&robot, &q);
    let (rate, dt) = (100.0, 1e-3);
    assert!(gravity[1].abs() > 2.0 * rate * dt, "{gravity:?}");
    let controller = PartlyNan(
        armctl_control::ParameterSet::new(2),
        1e3 * gravity[1].signum(),
    );
    let mut core = Armed::new(
        robot,
        Box::new(controller),
        SafeMode::Gravity,
        0.05,
        Some(rate),
    )
    .unwrap();
    core.on_joint_state(&names(&["joint1", "joint2"]), &q, &[0.0, 0.0], 0.0);
    let mut effort = [0.0; 2];
    let r = core.step(0.001, dt, &mut effort);
    assert!(matches!(r.fault, Some(Fault::Controller(_))), "{r:?}");
    // The effort the rate limit starts from at the first state is G (the hand-off), and the
    // hold (G, at rest) replaces the controller's: one step of the rate limit at most from G,
    // not two.
    for (e, g) in effort.iter().zip(&gravity) {
        assert!((e - g).abs() <= rate * dt * (1.0 + 1e-12), "{effort:?}");
    }
}

#[test]
fn a_controller_fault_holds_with_damping_against_the_measured_velocity() {
    let robot = core().robot().clone();
    let (q, qd) = ([0.1, 0.2], [0.5, -0.3]);
    let mut gravity = [0.0; 2];
    let mut ws = DynamicsWorkspace::new(&robot);
    gravity_torques(&robot, &mut ws, &q, &mut gravity).unwrap();
    let (_, damping) = armctl_control::default_gains::hold_gains(&robot).unwrap();
    let controller = PartlyNan(armctl_control::ParameterSet::new(2), 0.0);
    let mut core = Armed::new(robot, Box::new(controller), SafeMode::Gravity, 0.05, None).unwrap();
    core.on_joint_state(&names(&["joint1", "joint2"]), &q, &qd, 0.0);
    let mut effort = [0.0; 2];
    let r = core.step(0.001, 1e-3, &mut effort);
    assert!(matches!(r.fault, Some(Fault::Controller(_))), "{r:?}");
    for i in 0..2 {
        let expected = gravity[i] - damping[i] * qd[i];
        assert!(
            damping[i] > 0.0 && (effort[i] - expected).abs() < 1e-9,
            "{effort:?}"
        );
    }
    // Still failing, the arm moved on: the spring pulls back to where braking began.
    let (moved, rest) = ([0.15, 0.2], [0.0, 0.0]);
    core.on_joint_state(&names(&["joint1", "joint2"]), &moved, &rest, 0.0015);
    core.step(0.0015, 5e-4, &mut effort);
    let g_moved = gravity_of(core.robot(), &moved);
    assert!(
        effort[0] < g_moved[0] - 1e-3,
        "pulled back: {effort:?} vs {g_moved:?}"
    );
    // A state that cannot be believed holds gravity only, at the last valid configuration.
    core.on_joint_state(&names(&["joint1", "joint2"]), &[0.1, f64::NAN], &qd, 0.002);
    core.step(0.002, 1e-3, &mut effort);
    assert_eq!(effort, g_moved);
    // A braking after that undamped hold holds where it begins, not where the first did.
    core.on_joint_state(&names(&["joint1", "joint2"]), &moved, &rest, 0.003);
    core.step(0.003, 1e-3, &mut effort);
    for (e, g) in effort.iter().zip(g_moved) {
        assert!((e - g).abs() < 1e-9, "{effort:?} vs {g_moved:?}");
    }
}

#[test]
fn holds_on_every_fault_says_so_once_and_resumes() {
    let mut core = core();
    let mut effort = [0.0; 2];
    let joints = names(&["joint1", "joint2"]);
    // No state yet: gravity hold needs a configuration, so zero effort; no log (expected at start).
    let r = core.step(0.0, 1e-3, &mut effort);
    assert_eq!(r.fault, Some(Fault::NoState));
    assert_eq!(effort, [0.0, 0.0]);
    // Valid state: control.
    core.on_joint_state(&joints, &[0.1, 0.2], &[0.0, 0.0], 0.001);
    let r = core.step(0.002, 1e-3, &mut effort);
    assert_eq!(r.fault, None);
    assert!(effort[0].abs() > 1.0, "gravity is compensated: {effort:?}");
    // A missing joint: hold with gravity at the last valid configuration, log once.
    core.on_joint_state(&names(&["joint1"]), &[0.1], &[0.0], 0.003);
    let r = core.step(0.003, 1e-3, &mut effort);
    assert_eq!(r.fault, Some(Fault::MissingJoint("joint2".into())));
    let event = r.event.unwrap();
    assert!(event.is_warning());
    let text = event.to_string();
    assert!(
        text.contains("joint2") && text.contains("gravity"),
        "{text}"
    );
    assert!(
        core.step(0.004, 1e-3, &mut effort).event.is_none(),
        "said once per incident"
    );
    // NaN in a state.
    core.on_joint_state(&joints, &[f64::NAN, 0.2], &[0.0, 0.0], 0.005);
    let r = core.step(0.005, 1e-3, &mut effort);
    assert_eq!(r.fault, Some(Fault::NonFinite("joint1".into())));
    assert!(r.event.is_some());
    assert!(effort.iter().all(|e| e.is_finite()));
    // Valid again: resumes, and says so.
    core.on_joint_state(&joints, &[0.1, 0.2], &[0.0, 0.0], 0.006);
    let r = core.step(0.006, 1e-3, &mut effort);
    assert_eq!(r.fault, None);
    assert!(!r.event.unwrap().is_warning());
    // The publisher stops: stale after state_timeout (0.05 s).
    assert_eq!(core.step(0.05, 1e-3, &mut effort).fault, None);
    let r = core.step(0.0571, 1e-3, &mut effort);
    assert!(matches!(r.fault, Some(Fault::Stale(_))), "{:?}", r.fault);
    // Zero mode holds with zero effort.
    core.set_safety(SafeMode::Zero, 0.05);
    core.step(0.06, 1e-3, &mut effort);
    assert_eq!(effort, [0.0, 0.0]);
}

fn point(t: f64, p: Vec<f64>) -> TrajectoryPoint {
    TrajectoryPoint {
        time: t,
        positions: p,
        velocities: None,
        accelerations: None,
    }
}

#[test]
fn a_hold_cancels_the_trajectory_and_resumes_where_the_arm_is() {
    let mut core = core();
    let joints = names(&["joint1", "joint2"]);
    let mut effort = [0.0; 2];
    core.on_joint_state(&joints, &[0.0, 0.0], &[0.0, 0.0], 0.0);
    core.step(0.0, 1e-3, &mut effort);
    core.set_trajectory(&joints, &[point(1.0, vec![0.5, 0.5])], 0.0, 0.0)
        .unwrap();
    core.on_joint_state(&joints, &[0.1, 0.1], &[0.0, 0.0], 0.5);
    assert_eq!(core.step(0.5, 1e-3, &mut effort).fault, None);
    // States stop; they come back at t = 2 with the arm somewhere else.
    assert!(core.step(0.6, 1e-3, &mut effort).fault.is_some());
    core.on_joint_state(&joints, &[0.2, -0.1], &[0.0, 0.0], 2.0);
    let r = core.step(2.0, 1e-3, &mut effort);
    assert_eq!(r.fault, None);
    assert!(r
        .event
        .unwrap()
        .to_string()
        .contains("trajectory cancelled"));
    assert_eq!(core.reference().q, vec![0.2, -0.1]);
    // An empty JointTrajectory cancels too: hold at the measured position.
    core.set_trajectory(&joints, &[point(1.0, vec![0.5, 0.5])], 2.0, 2.0)
        .unwrap();
    core.cancel_trajectory();
    core.step(2.5, 1e-3, &mut effort);
    assert_eq!(core.reference().q, vec![0.2, -0.1]);
}

#[test]
fn the_safe_command_is_the_hold_itself_without_a_rate_limit() {
    let mut core = core();
    let joints = names(&["joint1", "joint2"]);
    let mut effort = [5.0, -5.0];
    // Before any state: zero.
    assert_eq!(core.safe_command(&mut effort), "zero effort");
    assert_eq!(effort, [0.0, 0.0]);
    core.on_joint_state(&joints, &[0.1, 0.2], &[0.0, 0.0], 0.0);
    core.step(0.0, 1e-3, &mut effort);
    core.layer_mut()
        .safety_mut()
        .set_rate_limit(Some(1e-3))
        .unwrap();
    core.safe_command(&mut effort);
    let gravity = gravity_of(&core.robot, &[0.1, 0.2]);
    assert_eq!(
        effort, gravity,
        "the full gravity hold, not a rate-limited step towards it"
    );
    core.set_safety(SafeMode::Zero, 0.05);
    core.safe_command(&mut effort);
    assert_eq!(effort, [0.0, 0.0]);
}

#[test]
fn states_that_cannot_be_true_hold_name_the_joint_and_resume() {
    let mut core = core();
    let joints = names(&["joint1", "joint2"]);
    let mut effort = [0.0; 2];
    core.on_joint_state(&joints, &[0.1, 0.2], &[0.0, 0.0], 0.0);
    assert_eq!(core.step(0.0, 1e-3, &mut effort).fault, None);
    // A finite position 100 rad away: hold, say so once, naming the joint and the value.
    core.on_joint_state(&joints, &[100.0, 0.2], &[0.0, 0.0], 0.001);
    let r = core.step(0.001, 1e-3, &mut effort);
    let text = r.event.expect("said").to_string();
    assert!(
        matches!(r.fault, Some(Fault::Implausible(_))),
        "{:?}",
        r.fault
    );
    assert!(
        text.contains("joint1 at 100") && text.contains("position_limit_margin"),
        "{text}"
    );
    assert_eq!(core.measured().0.len(), 2);
    // Gravity hold at the last plausible configuration.
    let gravity = gravity_of(&core.robot, &[0.1, 0.2]);
    assert_eq!(effort, gravity);
    // A velocity of 1e6 rad/s.
    core.on_joint_state(&joints, &[0.1, 0.2], &[0.0, 1e6], 0.002);
    let r = core.step(0.002, 1e-3, &mut effort);
    assert!(
        matches!(&r.fault, Some(Fault::Implausible(t)) if t.to_string().contains("joint2 moves at 1000000"))
    );
    // Plausible again: resume. A wider margin accepts what was refused.
    core.on_joint_state(&joints, &[0.1, 0.2], &[0.0, 0.0], 0.003);
    assert_eq!(core.step(0.003, 1e-3, &mut effort).fault, None);
    core.set_plausibility(Plausibility {
        position_margin: 200.0,
        ..Plausibility::default()
    });
    core.on_joint_state(&joints, &[100.0, 0.2], &[0.0, 0.0], 0.004);
    assert_eq!(core.step(0.004, 1e-3, &mut effort).fault, None);
}

#[test]
fn an_over_speed_brakes_with_damping_until_the_arm_is_at_rest_then_holds_there() {
    let mut core = core();
    let robot = core.robot().clone();
    let joints = names(&["joint1", "joint2"]);
    let limit = robot.joints()[1].limits.velocity;
    let mut effort = [0.0; 2];
    core.on_joint_state(&joints, &[0.1, 0.2], &[0.0, 0.0], 0.0);
    assert_eq!(core.step(0.0, 1e-3, &mut effort).fault, None);
    // Twice the limit: a true state, braked. The effort opposes the motion beyond G(q).
    let (q, qd) = ([0.1, 0.25], [0.0, 2.0 * limit]);
    core.on_joint_state(&joints, &q, &qd, 0.001);
    let r = core.step(0.001, 1e-3, &mut effort);
    assert!(matches!(r.fault, Some(Fault::OverSpeed(_))), "{r:?}");
    let text = r.event.expect("said once").to_string();
    assert!(
        text.contains("over-speed") && text.contains("joint2"),
        "{text}"
    );
    let gravity = gravity_of(&robot, &q);
    assert!(effort[1] < gravity[1], "{effort:?} vs G {gravity:?}");
    // Slower but still moving (within the limit): still braking, and not said again.
    core.on_joint_state(&joints, &[0.1, 0.26], &[0.0, 0.5 * limit], 0.002);
    let r = core.step(0.002, 1e-3, &mut effort);
    assert!(
        matches!(r.fault, Some(Fault::OverSpeed(_))) && r.event.is_none(),
        "{r:?}"
    );
    // At rest: control resumes, holding where the arm stopped.
    core.on_joint_state(&joints, &[0.1, 0.27], &[0.0, 0.0], 0.003);
    let r = core.step(0.003, 1e-3, &mut effort);
    assert_eq!(r.fault, None);
    assert!(matches!(r.event, Some(CoreEvent::Resumed { .. })), "{r:?}");
    assert_eq!(core.reference().q, vec![0.1, 0.27]);
    // Beyond velocity_plausibility (10 times the limit): not believed, undamped.
    core.on_joint_state(&joints, &[0.1, 0.27], &[0.0, 20.0 * limit], 0.004);
    let r = core.step(0.004, 1e-3, &mut effort);
    assert!(matches!(r.fault, Some(Fault::Implausible(_))), "{r:?}");
}

#[test]
fn the_braking_damping_stays_within_the_sampled_data_margin() {
    // A damping far beyond the margin for a step of 1 s is scaled, not applied.
    let robot = core().robot().clone();
    let mut brake = Brake::new(&robot, (vec![0.0; 2], vec![1e4, 1e4]));
    let mut ws = DynamicsWorkspace::new(&robot);
    let (q, qd) = ([0.1, 0.2], [1.0, -1.0]);
    let mut effort = [0.0; 2];
    brake.hold(&robot, &mut ws, (&q, &qd), 1.0, &mut effort);
    let applied: Vec<f64> = effort.iter().zip(&qd).map(|(e, v)| -e / v).collect();
    // lambda_max(M^-1 D) = lambda_max(D^1/2 M^-1 D^1/2), by nalgebra's eigensolver.
    let mut m = nalgebra::DMatrix::zeros(2, 2);
    armctl_dynamics::mass_matrix(&robot, &mut ws, &q, &mut m).unwrap();
    let inverse = m.cholesky().unwrap().inverse();
    let root: Vec<f64> = applied.iter().map(|d| d.sqrt()).collect();
    let w = nalgebra::DMatrix::from_fn(2, 2, |r, c| root[r] * inverse[(r, c)] * root[c]);
    let load = w.symmetric_eigenvalues().max();
    assert!(
        load <= armctl_control::damping_bound::RUNTIME_MARGIN * (1.0 + 1e-9),
        "{load}"
    );
    assert!(applied.iter().all(|d| *d > 0.0), "{applied:?}");
}

/// With the default rate limit the first command after the first state starts from the
/// gravity torque there (the hand-off): a law that asks for `G` sends it at once, a law that
/// asks for more moves one rate-limit step from `G`. After a restart (an activation) the
/// hand-off starts again from the gravity torque of the new state.
#[test]
fn the_first_command_ramps_from_the_gravity_torque() {
    let mut core = core();
    core.layer_mut()
        .safety_mut()
        .set_rise_time(Some(armctl_control::DEFAULT_EFFORT_RISE_TIME))
        .unwrap();
    let joints = names(&["joint1", "joint2"]);
    let mut effort = [0.0; 2];
    core.step(0.0, 1e-3, &mut effort);
    assert_eq!(effort, [0.0, 0.0], "no state yet: the zero hold");
    core.on_joint_state(&joints, &[0.3, 0.2], &[0.0, 0.0], 1e-3);
    core.step(1e-3, 1e-3, &mut effort);
    let gravity = gravity_of(&core.robot, &[0.3, 0.2]);
    for (e, g) in effort.iter().zip(&gravity) {
        assert!((e - g).abs() < 1e-9, "{effort:?} vs G {gravity:?}");
    }
    // Far from the reference now: the effort moves one step of effort / rise time per dt.
    core.restart();
    core.on_joint_state(&joints, &[0.8, -0.4], &[0.0, 0.0], 2e-3);
    core.step(2e-3, 1e-3, &mut effort);
    let limits: Vec<f64> = core
        .robot
        .joints()
        .iter()
        .map(|j| j.limits.effort)
        .collect();
    let gravity = gravity_of(&core.robot, &[0.8, -0.4]);
    for i in 0..2 {
        let step = limits[i] / armctl_control::DEFAULT_EFFORT_RISE_TIME * 1e-3;
        assert!(
            (effort[i] - gravity[i]).abs() <= step + 1e-9,
            "joint {i}: {} is more than {step} from G {}",
            effort[i],
            gravity[i]
        );
    }
}
