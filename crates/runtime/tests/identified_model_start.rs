//! controller_node started with an identified model (`armctl identify --out`) as a second
//! parameter file: the controller computes with the identified dynamics and friction; a model
//! identified on another arm stops the node at start, naming the parameter.

use armctl_control::JointReference;
use armctl_dynamics::{gravity_torques, numeric_base_parameters, DynamicsWorkspace};
use armctl_ident::IdentifiedModel;
use armctl_model::{ChainOptions, Robot};
use armctl_runtime::configure::controller_node_parameters;
use armctl_runtime::ros_args::parse_ros_args;
use armctl_runtime::startup::NodeStart;
use armctl_runtime::RuntimeError;

fn workspace(relative: &str) -> String {
    format!("{}/../../{relative}", env!("CARGO_MANIFEST_DIR"))
}

fn robot(file: &str) -> Robot {
    Robot::from_urdf_file(workspace(file), &ChainOptions::default()).unwrap()
}

/// The identified-model file of `truth`, as `armctl identify --out` writes it.
fn model_file(truth: &Robot, name: &str, friction: (f64, f64)) -> String {
    let base = numeric_base_parameters(truth).unwrap();
    let n = truth.dof();
    let model = IdentifiedModel {
        base_names: base.names(),
        base_values: base
            .values(&truth.parameter_vector())
            .unwrap()
            .iter()
            .copied()
            .collect(),
        // The bodies themselves, as `armctl identify --out` writes them.
        link_parameters: truth.parameter_vector(),
        viscous: vec![friction.0; n],
        coulomb: vec![friction.1; n],
        friction_ripple: vec![],
        // Sliding positively meets 0.6 of the 0.5 (+0.1), negatively 0.4.
        friction_offset: vec![0.2 * friction.1; n],
    };
    let dir = std::env::temp_dir().join(format!("armctl-identified-start-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, model.to_ros_parameters("test model")).unwrap();
    path.display().to_string()
}

fn start(
    controller: &str,
    model: &str,
) -> Result<(Box<dyn armctl_control::Controller>, Robot), RuntimeError> {
    let args = [
        "--ros-args",
        "-p",
        &format!("urdf_path:={}", workspace("urdf/panda.urdf")),
        "-p",
        &format!("controller:={controller}"),
        "--params-file",
        model,
    ];
    let args = parse_ros_args(args.iter().map(|s| s.to_string()))?;
    let (store, controller, robot) =
        controller_node_parameters(&NodeStart::new(&args, "controller_node")?)?;
    let declaration = store.declaration("model_base_parameters").unwrap();
    assert!(declaration.read_only);
    Ok((controller, robot))
}

#[test]
fn the_identified_model_replaces_the_urdf_inertials_and_friction() {
    let urdf = robot("urdf/panda.urdf");
    // The arm is 20% heavier than its URDF says (same centres of mass).
    let p: Vec<f64> = urdf.parameter_vector().iter().map(|v| 1.2 * v).collect();
    let heavier = urdf.with_parameter_vector(&p).unwrap();
    let file = model_file(&heavier, "heavier.yaml", (0.3, 0.5));
    let (mut controller, model) = start("pd_gravity", &file).unwrap();
    for joint in model.joints() {
        assert_eq!(joint.friction.viscous, 0.3, "{}", joint.name);
        assert_eq!(joint.friction.coulomb, 0.5, "{}", joint.name);
        assert_eq!(joint.friction.offset, 0.1, "{}", joint.name);
    }
    let q = [0.2, -0.4, 0.1, -2.0, 0.3, 1.7, 0.5];
    let mut ws = DynamicsWorkspace::new(&urdf);
    let (mut expected, mut effort) = ([0.0; 7], [0.0; 7]);
    gravity_torques(&heavier, &mut ws, &q, &mut expected).unwrap();
    // At rest on its reference, PD + gravity commands the model's gravity: the heavier arm's.
    let state = armctl_control::JointState {
        q: &q,
        qd: &[0.0; 7],
    };
    controller.reset(&state);
    controller
        .update(&state, &JointReference::hold(&q), 1e-3, &mut effort)
        .unwrap();
    for (e, g) in effort.iter().zip(&expected) {
        assert!(
            (e - g).abs() < 1e-9 * g.abs().max(1.0),
            "{effort:?} vs {expected:?}"
        );
    }
    let mut urdf_gravity = [0.0; 7];
    gravity_torques(&urdf, &mut ws, &q, &mut urdf_gravity).unwrap();
    assert!(
        (effort[1] - urdf_gravity[1]).abs() > 1.0,
        "the URDF's gravity was used"
    );
}

#[test]
fn a_model_identified_on_another_arm_stops_the_node() {
    let file = model_file(&robot("urdf/ur5e.urdf"), "ur5e.yaml", (0.0, 0.0));
    let error = start("computed_torque", &file).err().unwrap().to_string();
    assert!(error.contains("model_base_parameters"), "{error}");
    assert!(error.contains("43"), "{error}");
}

/// An offset above its joint's Coulomb friction would make friction drive the joint: the node
/// does not start, naming the parameter and the joint.
#[test]
fn a_friction_offset_above_the_coulomb_friction_stops_the_node() {
    let file = model_file(&robot("urdf/panda.urdf"), "skewed.yaml", (0.3, 0.5));
    let text = std::fs::read_to_string(&file).unwrap();
    let skewed: String =
        text.lines()
            .map(
                |line| match line.trim_start().starts_with("model_friction_offset:") {
                    true => "    model_friction_offset: [0.1, 0.1, 0.6, 0.1, 0.1, 0.1, 0.1]\n"
                        .to_string(),
                    false => format!("{line}\n"),
                },
            )
            .collect();
    assert_ne!(skewed, text);
    std::fs::write(&file, skewed).unwrap();
    let error = start("computed_torque", &file).err().unwrap().to_string();
    assert!(error.contains("model_friction_offset"), "{error}");
    assert!(error.contains("panda_joint3"), "{error}");
}
