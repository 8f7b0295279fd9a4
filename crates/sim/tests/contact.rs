//! Contact with the environment: a ball resting on a plane, an elastic bounce, friction that
//! holds and slides, boxes, the force/torque sensor, and a spring the step cannot resolve.

use armctl_model::{urdf_to_robot, ChainOptions, Conversion, FrameId, Robot};
use armctl_sim::{
    ContactPoint, ForceSensor, Obstacle, Scene, Shape, SimConfig, SimError, Simulator,
};
use nalgebra::{IsometryMatrix3, Unit, Vector3};

const G: f64 = 9.81;

/// A 1 kg point mass on prismatic joints along `axes` (x, y or z, in order), no limits.
fn puck(axes: &[&str]) -> Conversion {
    let mut links = String::from(r#"<link name="world"/>"#);
    let mut joints = String::new();
    let mut parent = "world".to_string();
    for (k, axis) in axes.iter().enumerate() {
        let child = format!("slide{k}");
        let (mass, inertia) = if k + 1 == axes.len() {
            (1.0, 1e-4)
        } else {
            (0.0, 0.0)
        };
        let xyz = match *axis {
            "x" => "1 0 0",
            "y" => "0 1 0",
            _ => "0 0 1",
        };
        links.push_str(&format!(
            r#"<link name="{child}"><inertial><mass value="{mass}"/><inertia ixx="{inertia}" iyy="{inertia}" izz="{inertia}" ixy="0" ixz="0" iyz="0"/></inertial></link>"#
        ));
        joints.push_str(&format!(
            r#"<joint name="j{k}" type="prismatic"><parent link="{parent}"/><child link="{child}"/><axis xyz="{xyz}"/><limit lower="-10" upper="10" effort="1000" velocity="100"/></joint>"#
        ));
        parent = child;
    }
    let text = format!(r#"<robot name="puck">{links}{joints}</robot>"#);
    urdf_to_robot(&text, &ChainOptions::default()).unwrap()
}

/// The puck's centre as a contact point.
fn centre(conversion: &Conversion) -> ContactPoint {
    let last = format!("slide{}", conversion.robot.dof() - 1);
    let frame = conversion.report.link_frame(&last).unwrap();
    ContactPoint {
        name: "centre".into(),
        frame: FrameId::Mdh(frame.frame),
        position: frame.pose.translation.vector,
    }
}

fn floor(stiffness: f64, damping: f64, friction: f64) -> Obstacle {
    Obstacle {
        name: "floor".into(),
        shape: Shape::Plane {
            point: Vector3::zeros(),
            normal: Unit::new_normalize(Vector3::z()),
        },
        stiffness,
        damping,
        friction,
    }
}

fn config(scene: Scene) -> SimConfig {
    SimConfig {
        scene,
        ..SimConfig::ideal()
    }
}

fn run(sim: &mut Simulator, command: &[f64], seconds: f64) {
    for _ in 0..(seconds / sim.config().dt).round() as usize {
        sim.step(command).unwrap();
    }
}

#[test]
fn a_dropped_ball_comes_to_rest_at_the_penetration_m_g_over_k() {
    let ball = puck(&["z"]);
    let k = 1e4;
    let scene = Scene {
        obstacles: vec![floor(k, 2.0, 0.0)],
        points: vec![centre(&ball)],
        sensor: Some(ForceSensor {
            name: "slide0".into(),
            frame: FrameId::Mdh(1),
            pose: IsometryMatrix3::identity(),
            noise: 0.0,
            bias: [0.0; 6],
        }),
        ..Scene::default()
    };
    let mut sim = Simulator::new(&ball.robot, &[0.1], config(scene)).unwrap();
    run(&mut sim, &[0.0], 3.0);
    let penetration = -sim.q()[0];
    let expected = 1.0 * G / k;
    assert!(
        (penetration - expected).abs() < 1e-3 * expected,
        "rests {penetration} deep, m g / k = {expected}"
    );
    assert!(sim.qd()[0].abs() < 1e-6, "still moving: {}", sim.qd()[0]);
    let force = sim.contact_forces()[0];
    assert!((force.z - G).abs() < 1e-3 * G, "{force:?}");
    let sensed = sim.sensed_wrench().unwrap();
    assert!((sensed.force - force).norm() < 1e-12, "{sensed:?}");
}

#[test]
fn an_elastic_bounce_keeps_its_energy_within_one_percent() {
    let ball = puck(&["z"]);
    let scene = Scene {
        obstacles: vec![floor(1e4, 0.0, 0.0)],
        points: vec![centre(&ball)],
        ..Scene::default()
    };
    let height = 0.1;
    let mut sim = Simulator::new(&ball.robot, &[height], config(scene)).unwrap();
    let start = sim.energy().unwrap();
    let (mut worst, mut touched) = (0.0_f64, 0);
    for _ in 0..2000 {
        sim.step(&[0.0]).unwrap();
        worst = worst.max((sim.energy().unwrap() - start).abs());
        touched += usize::from(sim.contact_forces()[0].z > 0.0);
    }
    assert!(
        touched > 20,
        "the ball bounced ({touched} steps in contact)"
    );
    let relative = worst / (1.0 * G * height);
    assert!(relative < 0.01, "energy changed by {relative:.4} of m g h");
}

#[test]
fn friction_holds_a_puck_below_mu_m_g_and_lets_it_slide_above() {
    let puck = puck(&["x", "z"]);
    let mu = 0.5;
    let scene = Scene {
        obstacles: vec![floor(1e4, 2.0, mu)],
        points: vec![centre(&puck)],
        ..Scene::default()
    };
    let rest = -G / 1e4;
    // Held: a push of 80% of mu m g only creeps, at the speed where the regularised friction
    // `mu f_n v / sqrt(v^2 + eps^2)` balances it: v = eps r / sqrt(1 - r^2), 1.33 mm/s here.
    let mut sim = Simulator::new(&puck.robot, &[0.0, rest], config(scene.clone())).unwrap();
    run(&mut sim, &[0.0, 0.0], 0.5);
    let ratio = 0.8;
    run(&mut sim, &[ratio * mu * G, 0.0], 1.0);
    let creep = scene.slip_velocity * ratio / (1.0 - ratio * ratio).sqrt();
    assert!(
        (sim.qd()[0] - creep).abs() < 0.01 * creep,
        "held: creeps at {} m/s, expected {creep}",
        sim.qd()[0]
    );
    // Sliding: a push of twice mu m g accelerates at (F - mu m g) / m.
    let mut sim = Simulator::new(&puck.robot, &[0.0, rest], config(scene)).unwrap();
    run(&mut sim, &[0.0, 0.0], 0.5);
    let push = 2.0 * mu * G;
    run(&mut sim, &[push, 0.0], 0.1);
    let v0 = sim.qd()[0];
    run(&mut sim, &[push, 0.0], 0.5);
    let acceleration = (sim.qd()[0] - v0) / 0.5;
    let expected = push - mu * G;
    assert!(
        (acceleration - expected).abs() < 0.01 * expected,
        "slides at {acceleration} m/s^2, expected {expected}"
    );
}

#[test]
fn a_point_inside_a_box_is_pushed_out_through_the_nearest_face() {
    let shape = Shape::Box {
        pose: IsometryMatrix3::translation(1.0, 0.0, 0.0),
        half_extents: Vector3::new(0.5, 0.2, 0.1),
    };
    let (depth, normal) = shape.penetration(&Vector3::new(1.1, 0.0, 0.08)).unwrap();
    assert!(
        (depth - 0.02).abs() < 1e-12 && normal == Vector3::z(),
        "{depth} {normal:?}"
    );
    let (depth, normal) = shape.penetration(&Vector3::new(0.55, 0.0, 0.0)).unwrap();
    assert!(
        (depth - 0.05).abs() < 1e-12 && normal == -Vector3::x(),
        "{depth} {normal:?}"
    );
    assert!(shape.penetration(&Vector3::new(1.0, 0.3, 0.0)).is_none());
}

#[test]
fn a_spring_the_step_cannot_resolve_is_refused_naming_it() {
    let ball = puck(&["z"]);
    let scene = Scene {
        obstacles: vec![floor(1e8, 0.0, 0.0)],
        points: vec![centre(&ball)],
        ..Scene::default()
    };
    let e = Simulator::new(&ball.robot, &[0.1], config(scene)).unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, SimError::InvalidConfig { .. }), "{text}");
    assert!(
        text.contains("'floor'") && text.contains("'centre'") && text.contains("at most"),
        "{text}"
    );
    let bad = Scene {
        obstacles: vec![floor(-1.0, 0.0, 0.0)],
        points: vec![centre(&ball)],
        ..Scene::default()
    };
    let text = Simulator::new(&ball.robot, &[0.1], config(bad))
        .unwrap_err()
        .to_string();
    assert!(text.contains("obstacle 'floor'"), "{text}");
}

/// The Panda without torque falls onto a table just below its tip: the tip carries the contact
/// force, the sensor at the flange reads it, and the steps allocate nothing.
#[test]
fn a_seven_joint_arm_falls_onto_a_table_without_allocating() {
    let urdf = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/panda.urdf");
    let conversion =
        armctl_model::urdf_file_to_robot(std::path::Path::new(urdf), &ChainOptions::default())
            .unwrap();
    let robot: &Robot = &conversion.robot;
    let q0 = [0.0, 0.3, 0.0, -2.0, 0.0, 2.3, 0.8];
    let mut ws = armctl_model::KinematicsWorkspace::new(robot);
    let tip = armctl_model::forward_kinematics(robot, &mut ws, &q0)
        .unwrap()
        .tip();
    let table = Obstacle {
        name: "table".into(),
        shape: Shape::Plane {
            point: tip.translation.vector - Vector3::new(0.0, 0.0, 0.01),
            normal: Unit::new_normalize(Vector3::z()),
        },
        ..floor(2e4, 5.0, 0.5)
    };
    let scene = Scene {
        obstacles: vec![table],
        points: vec![ContactPoint {
            name: "tcp".into(),
            frame: FrameId::Tip,
            position: Vector3::zeros(),
        }],
        ..Scene::default()
    };
    let scene = Scene {
        sensor: Some(ForceSensor {
            name: "panda_link8".into(),
            frame: FrameId::Mdh(7),
            pose: IsometryMatrix3::identity(),
            noise: 0.0,
            bias: [0.0; 6],
        }),
        ..scene
    };
    let mut sim = Simulator::new(robot, &q0, config(scene)).unwrap();
    sim.step(&[0.0; 7]).unwrap();
    let before = allocations();
    run(&mut sim, &[0.0; 7], 0.3);
    assert_eq!(allocations() - before, 0, "steps with contact allocated");
    let force = sim.contact_forces()[0];
    assert!(force.z > 0.0, "{force:?}");
    let sensed = sim.sensed_wrench().unwrap();
    assert!((sensed.force - force).norm() < 1e-9, "{sensed:?}");
}

/// Counts this thread's allocations.
struct Counting;

thread_local! {
    static ALLOCATIONS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

// SAFETY: forwards to the system allocator; only counts.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        // SAFETY: the caller's contract, forwarded.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

fn allocations() -> usize {
    ALLOCATIONS.with(|n| n.get())
}
