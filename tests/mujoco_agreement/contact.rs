//! Scenario d: the static contact force of a pressed tool, armctl's and MuJoCo's, against
//! the applied force.

use super::*;

/// The contact force on the tool at rest, armctl's and MuJoCo's (and MuJoCo's normal force
/// alone), with the tool pressed into a plane by `force` (base axes).
fn static_contact(
    arm: &Arm,
    force: Vector3<f64>,
    friction: f64,
) -> (Vector3<f64>, Vector3<f64>, f64) {
    let robot = &arm.robot;
    let mut kin = KinematicsWorkspace::new(robot);
    let tool = forward_kinematics(robot, &mut kin, &READY)
        .unwrap()
        .tip()
        .translation
        .vector;
    // The plane through the tool at the start: the force presses it in from first touch.
    let config = SimConfig {
        external_wrench: Some(Wrench {
            force,
            torque: Vector3::zeros(),
        }),
        scene: Scene {
            obstacles: vec![Obstacle {
                name: "table".into(),
                shape: Shape::Plane {
                    point: tool,
                    normal: Unit::new_normalize(Vector3::z()),
                },
                stiffness: 1e5,
                damping: 2.0,
                friction,
            }],
            points: vec![ContactPoint {
                name: "tool".into(),
                frame: FrameId::Tip,
                position: Vector3::zeros(),
            }],
            ..Scene::default()
        },
        ..SimConfig::ideal()
    };
    // Held by gravity compensation and joint damping only: no position stiffness, so the
    // contact force is set by the applied force alone, however deep each model sinks in.
    let n = robot.dof();
    let m = mass_at(robot, &READY);
    let kd: Vec<f64> = (0..n).map(|i| 10.0 * m[(i, i)]).collect();
    let model = robot.clone();
    let mut ws = DynamicsWorkspace::new(robot);
    let mut g = vec![0.0; n];
    let mut law = move |q: &[f64], qd: &[f64]| -> Vec<f64> {
        gravity_torques(&model, &mut ws, q, &mut g).unwrap();
        (0..n).map(|i| g[i] - kd[i] * qd[i]).collect()
    };

    let mut sim = Simulator::new(robot, &READY, config).unwrap();
    for _ in 0..STEPS {
        let tau = law(sim.q(), sim.qd());
        sim.step(&tau).unwrap();
    }
    let ours = sim.contact_forces()[0];

    let contact = json!({
        "plane_z": tool.z,
        "radius": 0.01,
        "friction": friction,
        "force": [force.x, force.y, force.z],
    });
    let mut peer = Peer::start(&arm.setup(&READY, Integrator::Rk4, contact));
    let (mut q, mut qd) = (READY.to_vec(), vec![0.0; n]);
    let mut reply = Value::Null;
    for k in 0..STEPS {
        let tau = law(&q, &qd);
        reply = peer.step(&tau, k + 1 == STEPS);
        q = numbers(&reply["q"]);
        qd = numbers(&reply["qd"]);
    }
    assert!(
        reply["ncon"].as_u64().unwrap() >= 1,
        "MuJoCo's tool is not touching"
    );
    let theirs = Vector3::from_vec(numbers(&reply["force"]));
    let normal = reply["normal"].as_f64().unwrap();
    eprintln!(
        "d: applied {:?} N, friction {friction}: contact force at rest, armctl {:?} N \
         (joint speeds up to {:.1e} rad/s), MuJoCo {:?} N, normal {normal:.6} N ({:.1e} rad/s)",
        force.as_slice(),
        ours.as_slice(),
        largest(sim.qd().iter().copied()),
        theirs.as_slice(),
        largest(qd)
    );
    (ours, theirs, normal)
}

#[test]
fn the_static_contact_force_of_a_pressed_tool_matches_mujoco_and_the_applied_force() {
    let arm = Arm::panda(FLOOR);
    for (force, friction) in [
        (Vector3::new(0.0, 0.0, -30.0), 0.0),
        (Vector3::new(6.0, 3.0, -30.0), 0.5),
    ] {
        let (ours, theirs, normal) = static_contact(&arm, force, friction);
        let size = force.norm();
        let off = |f: Vector3<f64>| (f + force).norm() / size;
        assert!(
            off(ours) <= CONTACT_FORCE_TOLERANCE,
            "armctl's contact force {ours:?} does not balance {force:?}"
        );
        assert!(
            off(theirs) <= CONTACT_FORCE_TOLERANCE,
            "MuJoCo's contact force {theirs:?} does not balance {force:?}"
        );
        assert!(
            (ours - theirs).norm() <= CONTACT_FORCE_TOLERANCE * size,
            "armctl {ours:?} and MuJoCo {theirs:?} differ"
        );
        assert!(
            (ours.z - normal).abs() <= CONTACT_FORCE_TOLERANCE * -force.z,
            "normal forces: armctl {}, MuJoCo {normal}",
            ours.z
        );
    }
}
