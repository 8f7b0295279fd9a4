//! armctl's embedded simulator ([`armctl_sim::Simulator`]) against an independent engine,
//! MuJoCo (PyPI `mujoco` 3.3.7, installed in the interop venv by
//! `tests/interop/setup_venv.sh`), both loading the bundled Panda URDF (7 DoF).
//! `tests/mujoco/peer.py` runs MuJoCo: its own URDF parser on a copy of the file (visuals,
//! collisions and `<ros2_control>` dropped, no fusing of fixed links, inertials kept as
//! written), joint limits off, 1 ms steps, driven one step at a time over a pipe. Every law
//! or torque profile below is evaluated in this test, once per step, on each engine's own
//! state (MuJoCo's comes back as JSON, which carries f64 exactly), so both plants get the
//! same law closed around themselves; the law's model terms are armctl's model in both.
//!
//! Scenarios and tolerances (the largest |q_armctl - q_MuJoCo| over every joint and every
//! step of 2 s; in brackets the numbers measured when the tolerances were set):
//! - Model at the start: joint-space inertia within 1e-6 kg m^2 (2.7e-8), gravity torques
//!   within 1e-10 N m (1.8e-14), tool position within 1e-12 m (1.6e-16), the same joints,
//!   damping and armature. MuJoCo's compiler keeps each link's inertia as principal moments
//!   and a quaternion from an iterative eigen-decomposition, which gives back the URDF
//!   tensors only to 6.5e-7 relative at worst (panda_link1): the floor of every comparison.
//! - a. Frictionless, open loop: the inverse dynamics (armctl's model) of a smooth motion of
//!   every joint, up to 1 rad, with the arm hung from a ceiling (gravity +z in the base frame
//!   in both), RK4 both. Hanging, the open-loop motion is stable; standing, the Panda is
//!   unstable without feedback and two correct engines drift apart by chaos, not by
//!   disagreement (the same profile about the ready pose: 1.4e-2 rad; gravity compensation
//!   plus sines: the arm falls over, 40 rad excursions). Tolerance 5e-4 rad (4.5e-5): the
//!   inertia floor above, amplified over 2 s without friction; the test measures that
//!   amplification on armctl alone (every link 1e-8 heavier: 7.4e-6 rad).
//! - b. The same with viscous damping 1 N m s/rad (URDF `<dynamics damping>`, read by both
//!   parsers) and armature 0.1 kg m^2 on every joint:
//!   - semi-implicit Euler both (MuJoCo's Euler with its implicit damping is the scheme of
//!     armctl's `SemiImplicitEuler`): tolerance 1e-6 rad (2.2e-8);
//!   - RK4 both: tolerance 1e-2 rad (4.4e-3). armctl's RK4 takes the passive torques at the
//!     end of each stage, linearised (`Integrator::Rk4`'s docs): each stage solves with
//!     `M + dt D`, which is RK4 on an arm whose armature is larger by `dt b` (here 1e-3
//!     kg m^2, 1% of 0.1), while MuJoCo's RK4 takes damping explicitly. The difference is
//!     first order in dt, and this pairing alone would not catch a 10% mass error on link 1
//!     or 2 (4.4e-3, 4.7e-3 rad). It is checked, not assumed: with MuJoCo's armature raised
//!     by `dt b` the two RK4 runs agree within 1e-6 rad (2.2e-8), and that pairing, like the
//!     Euler one, catches every link.
//! - c. Closed loop: PD plus gravity compensation following sines of 0.3 rad about the
//!   standing Panda's ready pose (gains `w^2 M_ii`, `2 w M_ii` at q0, w = 20 rad/s), RK4
//!   both, frictionless: tolerance 1e-7 rad (9.4e-10; the feedback keeps differences from
//!   growing); with the damping and armature of b, semi-implicit Euler both: 1e-7 (7.5e-10).
//! - Wrong mass: a, b (Euler, and RK4 with the raised armature) and c are run again with
//!   armctl's plant given one link 10% heavier (mass and inertia), every link in turn,
//!   against the same MuJoCo run: each must exceed its tolerance, so a model that wrong
//!   cannot pass (smallest: a 2.3 rad, b 7.4e-4, c 2.5e-5).
//! - d. Static contact: the tool (the flange origin: a point in armctl, a 1 cm sphere centred
//!   on it in MuJoCo) on a horizontal plane through it, pressed in by a constant force
//!   (armctl's `external_wrench`, MuJoCo's `xfrc_applied`), the arm held by gravity
//!   compensation and joint damping alone (so its weight has no share in the contact force
//!   and no position stiffness takes any), 2 s to rest. The contact force must be the
//!   applied force, in both, within 2% of its size: 30 N straight down, frictionless; and
//!   (6, 3, -30) N with friction 0.5, inside the cone, so the tool sticks (armctl's
//!   regularised friction leaves a creep under 1 mm/s; MuJoCo's noslip pass is on, as its
//!   soft friction otherwise creeps under a steady tangential load, about 5 mm/s here,
//!   leaving some 3% of the load to the motion). The contact models differ (armctl:
//!   Hunt-Crossley spring-damper, 1e5 N/m; MuJoCo: soft constraints), so only the static
//!   force is compared. Measured: 30 N to 1e-10 in both; with friction, armctl
//!   (-5.985, -2.997, 29.993) N and MuJoCo (-6.003, -3.001, 29.998) N.
//!
//! The tests print every number; none is timed. The peer's process is in `peer.rs`, the
//! contact scenario in `contact.rs`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use armctl_dynamics::{gravity_torques, mass_matrix, rnea, DynamicsWorkspace, Wrench};
use armctl_e2e::urdf_dir;
use armctl_model::{forward_kinematics, ChainOptions, FrameId, KinematicsWorkspace, Robot};
use armctl_sim::{ContactPoint, Integrator, Obstacle, Scene, Shape, SimConfig, Simulator};
use nalgebra::{DMatrix, Unit, Vector3};
use serde_json::{json, Value};

mod contact;
mod peer;
use peer::Peer;

/// Step, s, and steps per run (2 s).
const DT: f64 = 1e-3;
const STEPS: usize = 2000;
/// The standing Panda's "ready" pose: elbow up, flange pointing down, far from singularities.
const READY: [f64; 7] = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785];
/// A pose of the Panda hung from a ceiling, near its hanging equilibrium (no joint axes
/// aligned).
const HANGING: [f64; 7] = [0.2, 0.1, -0.1, -0.3, 0.2, 0.2, 0.5];
/// Gravity in the base link frame: standing on a floor, hung from a ceiling.
const FLOOR: [f64; 3] = [0.0, 0.0, -9.81];
const CEILING: [f64; 3] = [0.0, 0.0, 9.81];
/// Damping (N m s/rad) and armature (kg m^2) of every joint in the damped runs.
const DAMPING: f64 = 1.0;
const ARMATURE: f64 = 0.1;
/// The URDF link of the tool (armctl's tip).
const TIP_LINK: &str = "panda_link8";

/// Tolerances on the largest joint difference over 2 s, rad (see the module's text).
const MODEL_INERTIA_TOLERANCE: f64 = 1e-6;
const OPEN_LOOP_FRICTIONLESS_TOLERANCE: f64 = 5e-4;
const SAME_SCHEME_DAMPED_TOLERANCE: f64 = 1e-6;
const RK4_DAMPED_TOLERANCE: f64 = 1e-2;
const CLOSED_LOOP_TOLERANCE: f64 = 1e-7;
/// The static contact force, relative to the applied force's size.
const CONTACT_FORCE_TOLERANCE: f64 = 0.02;

fn scratch_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mujoco_agreement");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The arm as both engines get it: a URDF file, armctl's model of it, the armature given to
/// both (URDF has no element for it), and gravity.
struct Arm {
    urdf: PathBuf,
    robot: Robot,
    armature: Option<Vec<f64>>,
    gravity: [f64; 3],
}

impl Arm {
    /// The bundled Panda URDF as it is.
    fn panda(gravity: [f64; 3]) -> Self {
        let urdf = urdf_dir().join("panda.urdf");
        let robot = Robot::from_urdf_file(&urdf, &ChainOptions::default())
            .unwrap()
            .with_gravity(Vector3::from(gravity))
            .unwrap();
        Self {
            urdf,
            robot,
            armature: None,
            gravity,
        }
    }

    /// A copy of the Panda URDF with `<dynamics damping=..>` ([`DAMPING`]) on every joint,
    /// read by armctl's converter and MuJoCo's parser alike, and [`ARMATURE`] on every joint
    /// (URDF has no element for it: set on both models).
    fn panda_damped(gravity: [f64; 3]) -> Self {
        let text = std::fs::read_to_string(urdf_dir().join("panda.urdf")).unwrap();
        let marker = r#"type="revolute">"#;
        let damped = text.replace(
            marker,
            &format!(r#"{marker}<dynamics damping="{DAMPING:?}" friction="0"/>"#),
        );
        // Tests run in parallel: written under a name of its own, then renamed into place
        // (the same text each time), so no reader sees a half-written file.
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let dir = scratch_dir();
        let part = dir.join(format!(
            "panda_damped.urdf.{}.{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&part, damped).unwrap();
        let urdf = dir.join("panda_damped.urdf");
        std::fs::rename(&part, &urdf).unwrap();
        let mut parts = Robot::from_urdf_file(&urdf, &ChainOptions::default())
            .unwrap()
            .with_gravity(Vector3::from(gravity))
            .unwrap()
            .to_parts();
        for joint in &mut parts.joints {
            assert_eq!(
                joint.friction.viscous, DAMPING,
                "armctl read the URDF damping"
            );
            joint.armature = ARMATURE;
        }
        Self {
            urdf,
            robot: Robot::new(parts).unwrap(),
            armature: Some(vec![ARMATURE; 7]),
            gravity,
        }
    }

    /// The peer's set-up line.
    fn setup(&self, q0: &[f64], integrator: Integrator, contact: Value) -> Value {
        json!({
            "urdf": self.urdf,
            "dt": DT,
            "integrator": match integrator {
                Integrator::Rk4 => "rk4",
                Integrator::SemiImplicitEuler => "euler",
            },
            "q0": q0,
            "gravity": self.gravity,
            "armature": self.armature,
            "tip_body": TIP_LINK,
            "contact": contact,
        })
    }
}

/// Link `link`'s mass and inertia scaled by `factor`, its centre of mass kept: a plant whose
/// mass matrix and gravity are wrong by one link's 10%.
fn wrong_link_mass(robot: &Robot, link: usize, factor: f64) -> Robot {
    let mut parts = robot.to_parts();
    parts.links[link].mass *= factor;
    parts.links[link].inertia_com *= factor;
    Robot::new(parts).unwrap()
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn largest(values: impl IntoIterator<Item = f64>) -> f64 {
    values.into_iter().fold(0.0, |a, b| a.max(b.abs()))
}

/// A control law or a torque profile: joint torques from time, positions and velocities.
type Law<'a> = dyn FnMut(f64, &[f64], &[f64]) -> Vec<f64> + 'a;

/// Positions after every step of armctl's simulator of `plant` under `law`, from rest at `q0`
/// (infinite from a step on that the simulator refused as diverged).
fn run_ours(plant: &Robot, q0: &[f64], config: SimConfig, law: &mut Law) -> Vec<Vec<f64>> {
    let mut sim = Simulator::new(plant, q0, config).unwrap();
    let mut diverged = false;
    (0..STEPS)
        .map(|k| {
            if !diverged {
                let tau = law(k as f64 * DT, sim.q(), sim.qd());
                diverged = sim.step(&tau).is_err();
            }
            if diverged {
                vec![f64::INFINITY; q0.len()]
            } else {
                sim.q().to_vec()
            }
        })
        .collect()
}

/// Positions after every step of MuJoCo under `law`, closed around MuJoCo's own state.
fn run_mujoco(setup: &Value, q0: &[f64], law: &mut Law) -> Vec<Vec<f64>> {
    let mut peer = Peer::start(setup);
    let (mut q, mut qd) = (q0.to_vec(), vec![0.0; q0.len()]);
    (0..STEPS)
        .map(|k| {
            let tau = law(k as f64 * DT, &q, &qd);
            let reply = peer.step(&tau, false);
            q = numbers(&reply["q"]);
            qd = numbers(&reply["qd"]);
            q.clone()
        })
        .collect()
}

fn max_difference(a: &[Vec<f64>], b: &[Vec<f64>]) -> f64 {
    largest(
        a.iter()
            .zip(b)
            .flat_map(|(x, y)| x.iter().zip(y).map(|(u, v)| u - v)),
    )
}

fn max_excursion(a: &[Vec<f64>], q0: &[f64]) -> f64 {
    largest(a.iter().flat_map(|x| x.iter().zip(q0).map(|(u, v)| u - v)))
}

fn mass_at(robot: &Robot, q: &[f64]) -> DMatrix<f64> {
    let n = robot.dof();
    let mut m = DMatrix::zeros(n, n);
    mass_matrix(robot, &mut DynamicsWorkspace::new(robot), q, &mut m).unwrap();
    m
}

fn gravity_at(robot: &Robot, q: &[f64]) -> Vec<f64> {
    let mut g = vec![0.0; robot.dof()];
    gravity_torques(robot, &mut DynamicsWorkspace::new(robot), q, &mut g).unwrap();
    g
}

/// One engine pairing: the largest joint difference, and those of armctl's plant with each
/// link in turn 10% heavier against the same MuJoCo run.
struct Agreement {
    difference: f64,
    wrong_mass: Vec<f64>,
}

/// Runs `law` from rest at `q0` on MuJoCo (`setup`) and on armctl's simulator of `arm`
/// (`config`), then on the wrong plants.
fn compare(
    name: &str,
    arm: &Arm,
    setup: &Value,
    q0: &[f64],
    config: &SimConfig,
    law: &mut Law,
) -> Agreement {
    let theirs = run_mujoco(setup, q0, law);
    let ours = run_ours(&arm.robot, q0, config.clone(), law);
    assert!(
        ours.iter().flatten().all(|v| v.is_finite()),
        "{name}: armctl diverged"
    );
    let difference = max_difference(&ours, &theirs);
    let wrong_mass: Vec<f64> = (0..arm.robot.dof())
        .map(|link| {
            let plant = wrong_link_mass(&arm.robot, link, 1.1);
            max_difference(&run_ours(&plant, q0, config.clone(), law), &theirs)
        })
        .collect();
    let wrong: Vec<String> = wrong_mass.iter().map(|w| format!("{w:.1e}")).collect();
    eprintln!(
        "{name}: max |dq| {difference:.2e} rad over 2 s (largest excursion from q0 {:.2} rad); \
         links 1..7 each 10% heavier in armctl: {}",
        max_excursion(&theirs, q0),
        wrong.join(" ")
    );
    Agreement {
        difference,
        wrong_mass,
    }
}

impl Agreement {
    /// Within `tolerance`, which every wrong plant exceeds.
    fn check(&self, name: &str, tolerance: f64) {
        self.check_difference(name, tolerance);
        for (link, &w) in self.wrong_mass.iter().enumerate() {
            assert!(
                w > tolerance,
                "{name}: link {} 10% heavier would pass ({w:.2e} <= {tolerance:.0e})",
                link + 1
            );
        }
    }

    fn check_difference(&self, name: &str, tolerance: f64) {
        assert!(
            self.difference <= tolerance,
            "{name}: armctl and MuJoCo differ by {:.2e} rad (tolerance {tolerance:.0e})",
            self.difference
        );
    }
}

/// Open loop: the inverse dynamics (armctl's model, with its viscous damping) of
/// `q0 + a_i (1 - cos(w_i t))`, a_i 0.2 to 0.5 rad, w_i of 0.7 to 1.9 Hz: a smooth motion of every
/// joint from rest, taken at the middle of each step and held over it.
fn feedforward(robot: &Robot, q0: &[f64]) -> impl FnMut(f64, &[f64], &[f64]) -> Vec<f64> {
    let model = robot.clone();
    let mut ws = DynamicsWorkspace::new(robot);
    let q0 = q0.to_vec();
    let n = robot.dof();
    let amplitude = [0.3, 0.2, 0.3, 0.3, 0.4, 0.4, 0.5];
    let (mut q, mut qd, mut qdd) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    move |t, _q, _qd| {
        let t = t + 0.5 * DT;
        for i in 0..n {
            let w = 2.0 * std::f64::consts::PI * (0.7 + 0.2 * i as f64);
            q[i] = q0[i] + amplitude[i] * (1.0 - (w * t).cos());
            qd[i] = amplitude[i] * w * (w * t).sin();
            qdd[i] = amplitude[i] * w * w * (w * t).cos();
        }
        let mut tau = vec![0.0; n];
        rnea(&model, &mut ws, &q, &qd, &qdd, &mut tau).unwrap();
        for (t, (joint, v)) in tau.iter_mut().zip(model.joints().iter().zip(&qd)) {
            *t += joint.friction.viscous * v;
        }
        tau
    }
}

/// Closed loop: `G(q) + Kp (r - q) + Kd (r' - qd)` with armctl's model's gravity, gains
/// `w^2 M_ii(q0)` and `2 w M_ii(q0)` (w = 20 rad/s), following `r = q0 + 0.3 sin(w_i t)`.
fn pd_gravity(robot: &Robot, q0: &[f64]) -> impl FnMut(f64, &[f64], &[f64]) -> Vec<f64> {
    let model = robot.clone();
    let mut ws = DynamicsWorkspace::new(robot);
    let n = robot.dof();
    let m = mass_at(robot, q0);
    let w = 20.0;
    let kp: Vec<f64> = (0..n).map(|i| w * w * m[(i, i)]).collect();
    let kd: Vec<f64> = (0..n).map(|i| 2.0 * w * m[(i, i)]).collect();
    let q0 = q0.to_vec();
    let mut g = vec![0.0; n];
    move |t, q, qd| {
        gravity_torques(&model, &mut ws, q, &mut g).unwrap();
        (0..n)
            .map(|i| {
                let f = 2.0 * std::f64::consts::PI * (0.5 + 0.1 * i as f64);
                let (r, rd) = (q0[i] + 0.3 * (f * t).sin(), 0.3 * f * (f * t).cos());
                g[i] + kp[i] * (r - q[i]) + kd[i] * (rd - qd[i])
            })
            .collect()
    }
}

fn damped_config(integrator: Integrator) -> SimConfig {
    SimConfig {
        friction: true, // the URDF damping; no Coulomb friction is given
        integrator,
        ..SimConfig::ideal()
    }
}

#[test]
fn mujoco_builds_the_same_arm_from_the_urdf() {
    for (arm, q0) in [
        (Arm::panda(FLOOR), READY),
        (Arm::panda_damped(CEILING), HANGING),
    ] {
        let peer = Peer::start(&arm.setup(&q0, Integrator::Rk4, Value::Null));
        let hello = &peer.hello;
        let ours: Vec<&str> = arm.robot.joint_names().collect();
        let theirs: Vec<&str> = hello["joints"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(ours, theirs, "joints, base to tip");
        let m = mass_at(&arm.robot, &q0);
        let dm = largest(
            m.transpose()
                .iter()
                .zip(numbers(&hello["mass_matrix"]))
                .map(|(a, b)| a - b),
        );
        let g = gravity_at(&arm.robot, &q0);
        let dg = largest(g.iter().zip(numbers(&hello["bias"])).map(|(a, b)| a - b));
        let mut kin = KinematicsWorkspace::new(&arm.robot);
        let tip = forward_kinematics(&arm.robot, &mut kin, &q0)
            .unwrap()
            .tip()
            .translation
            .vector;
        let dtip = (tip - Vector3::from_vec(numbers(&hello["tip"]))).amax();
        eprintln!(
            "MuJoCo {} from {}: at q0 |dM| {dm:.1e} kg m^2, |dG| {dg:.1e} N m, |d tool| {dtip:.1e} m",
            hello["mujoco"],
            arm.urdf.display()
        );
        assert!(
            dm <= MODEL_INERTIA_TOLERANCE,
            "mass matrices differ by {dm:.2e}"
        );
        assert!(dg <= 1e-10, "gravity torques differ by {dg:.2e} N m");
        assert!(dtip <= 1e-12, "tool positions differ by {dtip:.2e} m");
        let viscous: Vec<f64> = arm
            .robot
            .joints()
            .iter()
            .map(|j| j.friction.viscous)
            .collect();
        assert_eq!(numbers(&hello["damping"]), viscous);
        let armature: Vec<f64> = arm.robot.joints().iter().map(|j| j.armature).collect();
        assert_eq!(numbers(&hello["armature"]), armature);
    }
}

#[test]
fn frictionless_open_loop_torques_move_both_engines_alike() {
    let arm = Arm::panda(CEILING);
    let config = SimConfig::ideal();
    let mut law = feedforward(&arm.robot, &HANGING);
    let setup = arm.setup(&HANGING, Integrator::Rk4, Value::Null);
    let a = compare(
        "a: open loop, frictionless, RK4",
        &arm,
        &setup,
        &HANGING,
        &config,
        &mut law,
    );
    // How much a frictionless 2 s amplifies MuJoCo's inertia rounding: armctl against
    // itself with every link 1e-8 heavier.
    let nominal = run_ours(&arm.robot, &HANGING, config.clone(), &mut law);
    let mut parts = arm.robot.to_parts();
    for link in &mut parts.links {
        link.mass *= 1.0 + 1e-8;
        link.inertia_com *= 1.0 + 1e-8;
    }
    let nudged = run_ours(&Robot::new(parts).unwrap(), &HANGING, config, &mut law);
    eprintln!(
        "a: armctl against itself with every link 1e-8 heavier: max |dq| {:.2e} rad",
        max_difference(&nominal, &nudged)
    );
    a.check("a", OPEN_LOOP_FRICTIONLESS_TOLERANCE);
}

#[test]
fn open_loop_torques_with_damping_and_armature_move_both_engines_alike() {
    let arm = Arm::panda_damped(CEILING);
    let mut law = feedforward(&arm.robot, &HANGING);
    let config = damped_config(Integrator::SemiImplicitEuler);
    let setup = arm.setup(&HANGING, Integrator::SemiImplicitEuler, Value::Null);
    compare(
        "b: open loop, damped, Euler",
        &arm,
        &setup,
        &HANGING,
        &config,
        &mut law,
    )
    .check("b Euler", SAME_SCHEME_DAMPED_TOLERANCE);

    let config = damped_config(Integrator::Rk4);
    let setup = arm.setup(&HANGING, Integrator::Rk4, Value::Null);
    let rk4 = compare(
        "b: open loop, damped, RK4",
        &arm,
        &setup,
        &HANGING,
        &config,
        &mut law,
    );
    rk4.check_difference("b RK4", RK4_DAMPED_TOLERANCE);

    // armctl's RK4 solves each stage with M + dt D: MuJoCo's RK4 with the armature raised
    // by dt b is the same scheme.
    let mut setup = setup;
    setup["armature"] = json!(vec![ARMATURE + DT * DAMPING; 7]);
    compare(
        "b: open loop, damped, RK4, MuJoCo armature + dt b",
        &arm,
        &setup,
        &HANGING,
        &config,
        &mut law,
    )
    .check("b RK4 (armature + dt b)", SAME_SCHEME_DAMPED_TOLERANCE);
}

#[test]
fn a_closed_pd_gravity_loop_moves_both_engines_alike() {
    let arm = Arm::panda(FLOOR);
    let mut law = pd_gravity(&arm.robot, &READY);
    let setup = arm.setup(&READY, Integrator::Rk4, Value::Null);
    compare(
        "c: closed loop, frictionless, RK4",
        &arm,
        &setup,
        &READY,
        &SimConfig::ideal(),
        &mut law,
    )
    .check("c", CLOSED_LOOP_TOLERANCE);

    let arm = Arm::panda_damped(FLOOR);
    let mut law = pd_gravity(&arm.robot, &READY);
    let setup = arm.setup(&READY, Integrator::SemiImplicitEuler, Value::Null);
    let config = damped_config(Integrator::SemiImplicitEuler);
    compare(
        "c: closed loop, damped, Euler",
        &arm,
        &setup,
        &READY,
        &config,
        &mut law,
    )
    .check("c damped", CLOSED_LOOP_TOLERANCE);
}
