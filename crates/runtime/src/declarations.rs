//! What each node declares: its own parameters and, for controller_node, the chosen
//! controller's gains (from the controller's typed parameter declarations).

use armctl_control::{Controller, ParamKind, ParamValue, CONTROLLERS};

use crate::node_parameters::{Declaration, RosKind};
use crate::params_file::RosValue;

fn string(name: &str, default: &str, read_only: bool, description: &str) -> Declaration {
    Declaration::new(
        name,
        RosKind::String,
        RosValue::String(default.into()),
        read_only,
        description,
    )
}

fn double(
    name: &str,
    default: f64,
    read_only: bool,
    lo: f64,
    hi: f64,
    description: &str,
) -> Declaration {
    Declaration::new(
        name,
        RosKind::Double,
        RosValue::Double(default),
        read_only,
        description,
    )
    .range(lo, hi)
}

/// Parameters both nodes share: the robot and the clock.
fn robot_parameters() -> Vec<Declaration> {
    vec![
        string(
            "robot_description",
            "",
            true,
            "URDF text of the robot (takes precedence over urdf_path).",
        ),
        string(
            "urdf_path",
            "",
            true,
            "Path of a URDF file, when robot_description is empty.",
        ),
        string(
            "base_link",
            "",
            true,
            "Base link of the chain (default: the URDF root).",
        ),
        string(
            "tip_link",
            "",
            true,
            "Tip link of the chain (default: the only leaf reached through moving joints).",
        ),
        Declaration::new(
            "use_sim_time",
            RosKind::Bool,
            RosValue::Bool(false),
            true,
            "Take time from /clock (rosgraph_msgs/Clock).",
        ),
    ]
}

/// controller_node's own parameters.
pub fn controller_node_declarations() -> Vec<Declaration> {
    let mut out = robot_parameters();
    out.extend([
        Declaration::new("joints", RosKind::StringArray, RosValue::StringArray(vec![]), true, "Controlled joints in command order (default: the chain's joints, base to tip); must be the chain's joints."),
        string("controller", "computed_torque", true, "Control law.").choices(&CONTROLLERS),
        double("update_rate", 0.0, true, 0.0, 10_000.0, "Control rate, Hz; 0 computes one command per /joint_states message."),
        double("state_timeout", 0.1, false, 1e-4, 60.0, "A joint state older than this (s) makes the node hold in safe_mode."),
        string("command_topic", "", true, "Topic of the std_msgs/Float64MultiArray efforts (default /<controller>/commands)."),
        string("safe_mode", "gravity", false, "What to send while holding: 'gravity' (gravity compensation at the last valid configuration) or 'zero'.").choices(&["gravity", "zero"]),
        double("rate_limit", 0.0, false, 0.0, 1e7, "Largest effort change, N m/s per joint; 0 for no limit."),
        double("state_publish_rate", 100.0, false, 0.0, 10_000.0, "Rate of ~/state, Hz; 0 publishes it at every control step."),
    ]);
    out.extend(crate::model_parameters::model_declarations());
    out
}

/// The controller's parameters as node parameters (structural ones read-only).
pub fn controller_declarations(controller: &dyn Controller) -> Vec<Declaration> {
    let parameters = controller.parameters();
    parameters
        .specs()
        .iter()
        .map(|spec| {
            let (kind, default) = match (spec.kind, parameters.get(spec.name)) {
                (ParamKind::Scalar, Some(ParamValue::Scalar(v))) => {
                    (RosKind::Double, RosValue::Double(*v))
                }
                (_, Some(ParamValue::Vector(v))) => {
                    (RosKind::DoubleArray, RosValue::DoubleArray(v.clone()))
                }
                (ParamKind::Scalar, _) => (RosKind::Double, RosValue::Double(0.0)),
                _ => (RosKind::DoubleArray, RosValue::DoubleArray(vec![])),
            };
            Declaration::new(spec.name, kind, default, !spec.live, spec.description)
                .range(spec.min, spec.max)
        })
        .collect()
}

/// A node parameter value as a controller parameter value.
pub fn to_controller_value(value: &RosValue) -> Option<ParamValue> {
    match value {
        RosValue::Double(v) => Some(ParamValue::Scalar(*v)),
        RosValue::Integer(v) => Some(ParamValue::Scalar(*v as f64)),
        RosValue::DoubleArray(v) => Some(ParamValue::Vector(v.clone())),
        _ => None,
    }
}

/// sim_node's parameters.
pub fn sim_node_declarations() -> Vec<Declaration> {
    let mut out = robot_parameters();
    out.extend([
        double(
            "rate",
            1000.0,
            true,
            1.0,
            10_000.0,
            "Rate of /joint_states and of the simulation step, Hz.",
        ),
        Declaration::new(
            "initial_positions",
            RosKind::DoubleArray,
            RosValue::DoubleArray(vec![]),
            true,
            "Start configuration, chain order (default: the middle of each joint's range).",
        ),
        string(
            "command_topic",
            "computed_torque/commands",
            true,
            "Topic of the std_msgs/Float64MultiArray efforts applied, in chain order (relative names resolve in the node's namespace).",
        ),
        string(
            "integrator",
            "rk4",
            true,
            "Integration scheme: rk4 or euler.",
        )
        .choices(&["rk4", "euler"]),
        Declaration::new(
            "hold_until_command",
            RosKind::Bool,
            RosValue::Bool(true),
            true,
            "Hold the arm at initial_positions, time standing still, until the first command arrives (a braked arm waiting for its controller).",
        ),
        Declaration::new(
            "publish_clock",
            RosKind::Bool,
            RosValue::Bool(false),
            true,
            "Publish the simulated time on /clock (rosgraph_msgs/Clock), as Gazebo does, for nodes with use_sim_time.",
        ),
        Declaration::new(
            "friction",
            RosKind::Bool,
            RosValue::Bool(true),
            true,
            "Apply the model's friction.",
        ),
        double(
            "noise_position",
            0.0,
            true,
            0.0,
            1.0,
            "Standard deviation of position noise, rad.",
        ),
        double(
            "noise_velocity",
            0.0,
            true,
            0.0,
            10.0,
            "Standard deviation of velocity noise, rad/s.",
        ),
        Declaration::new(
            "command_delay_steps",
            RosKind::Integer,
            RosValue::Integer(0),
            true,
            "Commands act this many steps late.",
        )
        .range(0.0, 1000.0),
        double(
            "mass_scale",
            1.0,
            true,
            0.01,
            100.0,
            "Scale of every link's mass and inertia in the simulated arm.",
        ),
        double(
            "payload_mass",
            0.0,
            true,
            0.0,
            1000.0,
            "Mass of a payload at the tip, kg.",
        ),
        double(
            "command_timeout",
            0.5,
            true,
            1e-3,
            60.0,
            "Without a command for this long (s) the simulated arm gets zero effort.",
        ),
    ]);
    out
}
