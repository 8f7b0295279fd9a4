//! What the done-when table of the commissioning asks of its outcome, embedded or over ROS 2:
//! every link a body, the held-out error under 3 % of each effort range, computed-torque
//! tracking on the held-out trajectory at least 10x better with the commissioned file than with
//! the URDF's model, measured on the true arm in the embedded simulator.

use std::path::Path;

use armctl_control::ParameterValue;
use armctl_ident::IdentifiedModel;
use armctl_model::{ChainOptions, Robot};
use armctl_runtime::params_file::parameters_for_node;

use super::true_arm::held_out_share;
use super::{armctl, text, workspace};

/// The parameter values of a file as controller_node reads them.
fn file_values(path: &Path) -> Vec<(String, ParameterValue)> {
    let text = std::fs::read_to_string(path).unwrap();
    parameters_for_node(&text, "commissioned.yaml", "/", "controller_node").unwrap()
}

fn doubles(values: &[(String, ParameterValue)], name: &str) -> Vec<f64> {
    match values.iter().find(|(n, _)| n == name) {
        Some((_, ParameterValue::DoubleArray(v))) => v.clone(),
        other => panic!("{name}: {other:?}"),
    }
}

/// The commissioned file's model, every link checked as a body that exists and as giving the
/// base values (what `IdentifiedModel::apply` refuses otherwise).
fn check_every_link_is_a_body(urdf: &Path, file: &Path) {
    let robot = Robot::from_urdf_file(urdf, &ChainOptions::default()).unwrap();
    let values = file_values(file);
    let names = match values.iter().find(|(n, _)| n == "model_base_names") {
        Some((_, ParameterValue::StringArray(v))) => v.clone(),
        other => panic!("model_base_names: {other:?}"),
    };
    let model = IdentifiedModel {
        base_names: names,
        base_values: doubles(&values, "model_base_parameters"),
        link_parameters: doubles(&values, "model_link_parameters"),
        viscous: doubles(&values, "model_viscous"),
        coulomb: doubles(&values, "model_coulomb"),
        friction_ripple: vec![],
        friction_offset: if values.iter().any(|(n, _)| n == "model_friction_offset") {
            doubles(&values, "model_friction_offset")
        } else {
            vec![]
        },
    };
    assert_eq!(model.link_parameters.len(), 10 * robot.dof());
    for (link, joint) in model.link_parameters.chunks(10).zip(robot.joints()) {
        assert!(link[9] > 0.0, "link of {}: mass {}", joint.name, link[9]);
    }
    model
        .apply(&robot)
        .expect("every link a body that gives the base values");
}

/// The URDF's own model as a parameter file, so that computed torque can compute with it on
/// the true arm's simulator (`armctl sim` takes its arm from `--urdf`).
fn urdf_model_file(urdf: &Path, path: &Path) {
    let robot = Robot::from_urdf_file(urdf, &ChainOptions::default()).unwrap();
    let base = armctl_dynamics::numeric_base_parameters(&robot).unwrap();
    let p = robot.parameter_vector();
    let model = IdentifiedModel {
        base_names: base.names(),
        base_values: base.values(&p).unwrap().iter().copied().collect(),
        link_parameters: p,
        viscous: vec![],
        coulomb: vec![],
        friction_ripple: vec![],
        friction_offset: vec![],
    };
    std::fs::write(path, model.to_ros_parameters("the URDF's own model")).unwrap();
}

/// Computed torque following `trajectory` on the true arm (`arm` with `sim_config`), its model
/// the one in `params`: the RMS tracking error over all joints, or None when the protections
/// had to hold the arm (an over-speed: the model cannot follow it at all). Collision detection
/// is off in both runs measured: with the URDF's model it reads the true arm's weight as a
/// contact.
fn computed_torque_rms(
    arm: &Path,
    sim_config: &str,
    trajectory: &Path,
    params: &Path,
    out: &Path,
) -> Option<f64> {
    let trajectory = format!("file:{}", text(trajectory));
    let quiet = out.with_extension("no_collision_detection.yaml");
    std::fs::write(&quiet, "collision_detection: \"off\"\n").unwrap();
    let (ok, stdout, stderr) = armctl(&[
        "sim",
        "--urdf",
        text(arm),
        "--controller",
        "computed_torque",
        "--params",
        text(params),
        "--params",
        text(&quiet),
        "--trajectory",
        &trajectory,
        "--duration",
        "20",
        "--sim-config",
        sim_config,
        "--out",
        text(out),
        "--json",
    ]);
    if !ok && stderr.contains("the arm held in its safe mode") {
        println!("held: {stderr}");
        return None;
    }
    assert!(ok, "{stderr}");
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let joints = summary["joints"].as_array().unwrap();
    let squares: f64 = joints
        .iter()
        .map(|j| j["rms_error"].as_f64().unwrap().powi(2))
        .sum();
    Some((squares / joints.len() as f64).sqrt())
}

/// What the done-when table asks of a commissioning's outcome (its folder, the true arm, what
/// it printed).
pub(crate) fn check_outcome(
    name: &str,
    urdf: &str,
    sim_config: &str,
    (out, arm, stdout): (&Path, &Path, &str),
) {
    let file = out.join("commissioned.yaml");
    check_every_link_is_a_body(&workspace().join(urdf), &file);
    let share = held_out_share(stdout);
    assert!(
        share < 3.0,
        "{name}: held-out error {share} % of the effort range"
    );
    // Step 4 says which estimate it is, and the report too.
    assert!(
        stdout.contains(
            "   estimator: IDIM-IV (2 iterations); largest change from weighted least squares"
        ),
        "{name}: {stdout}"
    );
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains("| estimator | IDIM-IV (2 iterations)"),
        "{name}: {report}"
    );
    for file in [
        "report.md",
        "tracking.png",
        "validation_efforts.png",
        "coverage.png",
        "excite.mcap",
        "excite.csv",
    ] {
        assert!(out.join(file).exists(), "{name}: {file}");
    }
    let validation = out.join("validation.yaml");
    let urdf_model = out.join("urdf_model.yaml");
    urdf_model_file(&workspace().join(urdf), &urdf_model);
    let plain = computed_torque_rms(
        arm,
        sim_config,
        &validation,
        &urdf_model,
        &out.join("urdf_model"),
    );
    let tuned = computed_torque_rms(
        arm,
        sim_config,
        &validation,
        &file,
        &out.join("commissioned"),
    );
    let tuned = tuned.expect("the commissioned controller follows without a hold");
    match plain {
        Some(plain) => {
            println!("{name}: computed torque RMS {plain:.3e} with the URDF's model, {tuned:.3e} commissioned ({:.1}x)", plain / tuned);
            assert!(plain >= 10.0 * tuned, "{name}: {plain} vs {tuned}");
        }
        None => println!("{name}: computed torque with the URDF's model is held by the protections (the model cannot follow); commissioned RMS {tuned:.3e}"),
    }
}
