//! A continuous joint without `<limit>` is legal URDF: the model loads (its effort and velocity
//! limits unknown), but the controller refuses to command it until `effort_limits` gives one,
//! naming the joint and the parameter.

use armctl_control::ParameterValue;
use armctl_model::{ChainOptions, Robot};
use armctl_runtime::group_loop::GroupLoop;
use armctl_runtime::startup::NodeStart;

const URDF: &str = r#"<robot name="spinner">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="0.2 0 0"/><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="wheel"><inertial><origin xyz="0 0 0"/><mass value="0.5"/>
    <inertia ixx="0.002" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.003"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 0 1"/><limit lower="-2" upper="2" effort="20" velocity="2"/></joint>
  <joint name="spin" type="continuous"><parent link="arm"/><child link="wheel"/>
    <origin xyz="0.4 0 0"/><axis xyz="0 0 1"/></joint>
</robot>"#;

fn start(values: Vec<(&str, ParameterValue)>) -> NodeStart {
    let mut all = vec![(
        "robot_description".to_string(),
        ParameterValue::String(URDF.into()),
    )];
    all.extend(values.into_iter().map(|(n, v)| (n.to_string(), v)));
    NodeStart {
        name: "controller_node".into(),
        namespace: String::new(),
        remaps: vec![],
        values: all,
    }
}

#[test]
fn the_model_loads_with_unknown_limits() {
    let robot = Robot::from_urdf_str(URDF, &ChainOptions::default()).unwrap();
    assert_eq!(robot.dof(), 2);
    let spin = &robot.joints()[1].limits;
    assert!(spin.effort.is_infinite() && spin.velocity.is_infinite() && !spin.is_bounded());
}

#[test]
fn commanding_it_needs_effort_limits_and_the_refusal_names_joint_and_parameter() {
    let e = GroupLoop::lone(&start(vec![])).unwrap_err().to_string();
    assert!(e.contains("'spin'") && e.contains("effort_limits"), "{e}");
    let given = start(vec![(
        "effort_limits",
        ParameterValue::DoubleArray(vec![20.0, 1.0]),
    )]);
    GroupLoop::lone(&given).unwrap();
    let wrong = start(vec![(
        "effort_limits",
        ParameterValue::DoubleArray(vec![20.0]),
    )]);
    let e = GroupLoop::lone(&wrong).unwrap_err().to_string();
    assert!(e.contains("effort_limits"), "{e}");
    // acceleration_limits, per joint, is taken from the start values too.
    let accelerations = start(vec![
        (
            "effort_limits",
            ParameterValue::DoubleArray(vec![20.0, 1.0]),
        ),
        (
            "acceleration_limits",
            ParameterValue::DoubleArray(vec![3.0, 4.0]),
        ),
    ]);
    GroupLoop::lone(&accelerations).unwrap();
}
