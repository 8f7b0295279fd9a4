//! What each node declares besides the controller's gains (which controller_node adds from
//! the controller's own declarations, [`crate::node_parameters::ParameterStore::declare_controller`]).

use armctl_control::{Declaration, CONTROLLERS};

/// Parameters both nodes share: the robot and the clock.
fn robot_parameters() -> Vec<Declaration> {
    vec![
        Declaration::string(
            "robot_description",
            "",
            "URDF text of the robot (takes precedence over urdf_path).",
        )
        .read_only(),
        Declaration::string(
            "urdf_path",
            "",
            "Path of a URDF file, when robot_description is empty.",
        )
        .read_only(),
        Declaration::string_array(
            "xacro_args",
            vec![],
            "When urdf_path is a .xacro file: arguments for the xacro program that expands it, name:=value each.",
        )
        .read_only(),
        Declaration::string(
            "base_link",
            "",
            "Base link of the chain (default: the URDF root).",
        )
        .read_only(),
        Declaration::string(
            "tip_link",
            "",
            "Tip link of the chain (default: the only leaf reached through moving joints).",
        )
        .read_only(),
        Declaration::bool(
            "use_sim_time",
            false,
            "Take time from /clock (rosgraph_msgs/Clock).",
        )
        .read_only(),
    ]
}

/// Every law controller_node runs: the registered ones and the law over two arms.
fn laws() -> Vec<&'static str> {
    let mut laws = CONTROLLERS.to_vec();
    laws.push(crate::controller_runtime::COOPERATIVE);
    laws
}

/// controller_node's own parameters.
pub fn controller_node_declarations() -> Vec<Declaration> {
    let mut out = robot_parameters();
    out.extend([
        Declaration::string_array("joints", vec![], "Controlled joints in command order (default: the chain's joints, base to tip); must be the chain's joints.").read_only(),
        Declaration::string("controller", "computed_torque", "Control law ('cooperative': two arms holding one object, with scene_file).").choices(&laws()).read_only(),
        Declaration::string("scene_file", "", "For controller 'cooperative': a scene file with a pair (the arms' names and bases in the world, the held object's mass and size); its q0 are the simulator's only.").read_only(),
        Declaration::double("update_rate", 0.0, "Control rate, Hz; 0 computes one command per /joint_states message.").range(0.0, 10_000.0).read_only(),
        Declaration::double("state_timeout", 0.1, "A joint state older than this (s) makes the node hold in safe_mode.").range(1e-4, 60.0),
        Declaration::bool("gravity_compensation", true, "Include gravity G(q) in the commands (every law and the gravity hold). False for a robot that compensates its own gravity, such as a Franka arm through libfranka: the commands are then the law without G.").read_only(),
        Declaration::bool("friction_compensation", false, "Compensate the friction of the URDF's <dynamics damping friction> (often a simulator's tuning, not a measurement); an identified model's friction is always compensated.").read_only(),
        Declaration::integer("max_reference_points", crate::controller_core::DEFAULT_MAX_POINTS as i64, "A trajectory with more points than this is refused (bounds the memory a reference takes).").range(2.0, 1e6),
        Declaration::double_array("effort_limits", vec![], "Effort limit per controlled joint, N m (N), replacing the URDF's; every command is saturated to it. Needed for a continuous joint without <limit>. Empty (default): the URDF's.").per_joint_or_none().range(1e-6, 1e6).read_only(),
        Declaration::double_array("acceleration_limits", vec![], "Largest reference acceleration per controlled joint, rad/s^2 (m/s^2); a trajectory needing more is refused. Empty (default): what half of each effort limit gives with every joint accelerating, in the worst sampled configuration.").per_joint_or_none().range(1e-6, 1e6),
        Declaration::double("position_limit_margin", 0.1, "A measured position beyond the URDF limits by more than this (rad or m) cannot be true: hold in safe_mode.").range(0.0, 10.0),
        Declaration::double("velocity_plausibility", 10.0, "A measured velocity above this many times the URDF velocity limit cannot be true (no drive reaches it): hold in safe_mode at the last believed configuration, undamped.").range(1.0, 1e4),
        Declaration::double("over_speed", 1.5, "A measured velocity above this many times the URDF velocity limit (and within velocity_plausibility) is an over-speed: brake every joint to rest (safe_mode's gravity compensation with damping), then hold where the arm stopped.").range(1.0, 1e4),
        Declaration::string("command_topic", "", "Topic of the std_msgs/Float64MultiArray efforts (default /<controller>/commands).").read_only(),
        Declaration::string("safe_mode", "gravity", "What to send while holding: 'gravity' (gravity compensation at the last valid configuration) or 'zero' (no gravity term). Either way an arm that really moves (a controller failure, an over-speed) is braked to rest where the braking began (docs/safety.md).").choices(&["gravity", "zero"]),
        Declaration::double("rate_limit", 0.0, "Largest effort change, N m/s per joint; 0 for no limit.").range(0.0, 1e7),
        Declaration::double("state_publish_rate", 100.0, "Rate of ~/state, Hz; 0 publishes it at every control step.").range(0.0, 10_000.0),
        Declaration::integer("realtime_priority", 0, "SCHED_FIFO priority (1 to 99) of the control thread, with the process's memory locked, as ros2_control's controller manager runs its loop; 0: the normal scheduler. Where the system does not allow it (no rtprio or memlock limit), the node refuses to start and says how to allow it.").range(0.0, 99.0).read_only(),
        Declaration::integer("cpu_affinity", -1, "The CPU to pin the control thread to; -1: not pinned.").range(-1.0, 1023.0).read_only(),
        Declaration::string("controller_state_layout", "auto", "Layout of ~/controller_state (control_msgs/JointTrajectoryControllerState), which changed between distributions: 'humble' (with the deprecated desired and actual), 'jazzy' (with speed_scaling_factor), or 'auto': humble when ROS_DISTRO is humble, else jazzy.").choices(&["auto", "humble", "jazzy"]).read_only(),
        Declaration::double("action_monitor_rate", 20.0, "Rate of the follow_joint_trajectory action's feedback, Hz.").range(1.0, 1000.0),
        Declaration::double("constraints.goal_time", 0.5, "Seconds after a FollowJointTrajectory goal's end within which the arm must be within the goal tolerances, else the goal is aborted (GOAL_TOLERANCE_VIOLATED, naming the joint); 0: no limit (joint_trajectory_controller's default, which leaves a sagging arm's goal running). A goal's goal_time_tolerance replaces it.").range(0.0, 3600.0),
        Declaration::double("constraints.stopped_velocity_tolerance", 0.01, "A FollowJointTrajectory goal succeeds only when every joint's velocity error is within this (rad/s or m/s); 0: not checked.").range(0.0, 100.0),
        Declaration::double_array("constraints.trajectory", vec![], "Path tolerance per controlled joint (position error while a FollowJointTrajectory goal runs, rad or m; 0 or empty: not checked): a goal whose arm strays beyond it is aborted (PATH_TOLERANCE_VIOLATED). A goal's path_tolerance replaces it.").per_joint_or_none().range(0.0, 100.0),
        Declaration::double_array("constraints.goal", vec![], "Goal tolerance per controlled joint (position error once a FollowJointTrajectory goal's trajectory has ended, rad or m; 0: not checked). Empty: 0.05 for every joint (joint_trajectory_controller checks none by default, but a torque-controlled arm can sag short of its goal, which must not be reported reached). A goal's goal_tolerance replaces it.").per_joint_or_none().range(0.0, 100.0),
    ]);
    out.extend(crate::model_parameters::model_declarations());
    out
}

/// sim_node's parameters.
pub fn sim_node_declarations() -> Vec<Declaration> {
    let mut out = robot_parameters();
    let fixed = |name: &str, default: f64, lo: f64, hi: f64, description: &str| {
        Declaration::double(name, default, description)
            .range(lo, hi)
            .read_only()
    };
    out.extend([
        fixed(
            "rate",
            1000.0,
            1.0,
            10_000.0,
            "Rate of /joint_states and of the simulation step, Hz.",
        ),
        Declaration::double_array(
            "initial_positions",
            vec![],
            "Start configuration, chain order (default: the middle of each joint's range).",
        )
        .read_only(),
        Declaration::string(
            "command_topic",
            "computed_torque/commands",
            "Topic of the std_msgs/Float64MultiArray efforts applied, in chain order (relative names resolve in the node's namespace).",
        )
        .read_only(),
        Declaration::string("integrator", "rk4", "Integration scheme: rk4 or euler.")
            .choices(&["rk4", "euler"])
            .read_only(),
        Declaration::bool(
            "hold_until_command",
            true,
            "Hold the arm at initial_positions, time standing still, until the first command arrives (a braked arm waiting for its controller).",
        )
        .read_only(),
        Declaration::bool(
            "publish_clock",
            false,
            "Publish the simulated time on /clock (rosgraph_msgs/Clock), as Gazebo does, for nodes with use_sim_time.",
        )
        .read_only(),
        Declaration::bool("friction", true, "Apply the model's friction.").read_only(),
        Declaration::bool(
            "robot_compensates_gravity",
            false,
            "The simulated arm adds its own gravity torque G(q) to every command, as a Franka arm does through libfranka (for a controller with gravity_compensation: false).",
        )
        .read_only(),
        Declaration::string(
            "scene_file",
            "",
            "A scene (YAML, as armctl sim --scene: obstacles, contact points on URDF links, a force/torque sensor published on ~/wrench). Empty: nothing to touch.",
        )
        .read_only(),
        fixed(
            "noise_position",
            0.0,
            0.0,
            1.0,
            "Standard deviation of position noise, rad.",
        ),
        fixed(
            "noise_velocity",
            0.0,
            0.0,
            10.0,
            "Standard deviation of velocity noise, rad/s.",
        ),
        Declaration::integer(
            "command_delay_steps",
            0,
            "Commands act this many steps late.",
        )
        .range(0.0, 1000.0)
        .read_only(),
        fixed(
            "mass_scale",
            1.0,
            0.01,
            100.0,
            "Scale of every link's mass and inertia in the simulated arm.",
        ),
        fixed(
            "payload_mass",
            0.0,
            0.0,
            1000.0,
            "Mass of a payload at the tip, kg.",
        ),
        fixed(
            "command_timeout",
            0.5,
            1e-3,
            60.0,
            "Without a command for this long (s) the simulated arm gets zero effort.",
        ),
    ]);
    out
}
