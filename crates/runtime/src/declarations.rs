//! What each node declares, as [`crate::settings!`] tables: the robot and clock both nodes
//! share, controller_node's own (the controller's gains join from the law's declarations,
//! [`crate::node_parameters::ParameterStore::declare_controller`]) and sim_node's.

use std::sync::Arc;

use armctl_control::{Cooperative, Declaration, CONTROLLERS};

use crate::controller_core::{Plausibility, SafeMode};

/// Every law controller_node runs: the registered ones and the law over two arms.
fn laws() -> Vec<&'static str> {
    let mut laws = CONTROLLERS.to_vec();
    laws.push(Cooperative::NAME);
    laws
}

crate::settings! {
    /// Parameters both nodes share: the robot and the clock.
    pub struct RobotSettings {
        robot_description: String = string("robot_description", "", "URDF text of the robot (takes precedence over urdf_path). Inside ros2_control: used when the controller_manager gives none (always on Humble).").read_only().host_field();
        urdf_path: String = string("urdf_path", "", "Path of a URDF file, when robot_description is empty.").read_only().node_only();
        xacro_args: Vec<String> = string_array("xacro_args", vec![], "When urdf_path is a .xacro file: arguments for the xacro program that expands it, name:=value each.").read_only();
        base_link: String = string("base_link", "", "Base link of the chain (default: the URDF root).").read_only().host_field();
        tip_link: String = string("tip_link", "", "Tip link of the chain (default: the only leaf reached through moving joints).").read_only().host_field();
        use_sim_time: bool = bool("use_sim_time", false, "Take time from /clock (rosgraph_msgs/Clock).").read_only().node_only();
    }
}

crate::settings! {
    /// controller_node's parameters that may change while it runs (the C ABI's and `armctl
    /// sim`'s too), as the loop reads them.
    pub struct LiveSettings {
        state_timeout: f64 = double("state_timeout", 0.1, "A joint state older than this (s) makes the node hold in safe_mode.").range(1e-4, 60.0);
        max_reference_points: i64 = integer("max_reference_points", crate::controller_core::DEFAULT_MAX_POINTS as i64, "A trajectory with more points than this is refused (bounds the memory a reference takes).").range(2.0, 1e6);
        acceleration_limits: Arc<[f64]> = double_array("acceleration_limits", vec![], "Largest reference acceleration per controlled joint, rad/s^2 (m/s^2); a trajectory needing more is refused. Empty (default): what half of each effort limit gives with every joint accelerating, in the worst sampled configuration.").per_joint_or_none().range(1e-6, 1e6);
        position_limit_margin: f64 = double("position_limit_margin", 0.1, "A measured position beyond the URDF limits by more than this (rad or m) cannot be true: hold in safe_mode.").range(0.0, 10.0);
        velocity_plausibility: f64 = double("velocity_plausibility", 10.0, "A measured velocity above this many times the URDF velocity limit cannot be true (no drive reaches it): hold in safe_mode at the last believed configuration, undamped.").range(1.0, 1e4);
        over_speed: f64 = double("over_speed", 1.5, "A measured velocity above this many times the URDF velocity limit (and within velocity_plausibility) is an over-speed: brake every joint to rest (safe_mode's gravity compensation with damping), then hold where the arm stopped.").range(1.0, 1e4);
        safe_mode: SafeMode = string("safe_mode", "gravity", "What to send while holding: 'gravity' (gravity compensation at the last valid configuration) or 'zero' (no gravity term). Either way an arm that really moves (a controller failure, an over-speed) is braked to rest where the braking began (docs/safety.md).").choices(&["gravity", "zero"]);
        soft_limit_margin: f64 = double("soft_limit_margin", armctl_control::joint_limit_guard::DEFAULT_SOFT_LIMIT_MARGIN, "Distance of the soft limits inside the URDF limits, rad or m (at most a quarter of a joint's range). Every law's effort toward a limit is bounded so that the joint slows down before its soft limit and rests on it; an effort away from the limit is never changed (docs/safety.md).").range(0.0, 1.0);
        effort_rise_time: f64 = double("effort_rise_time", armctl_control::DEFAULT_EFFORT_RISE_TIME, "Rate limit of every effort, sized from its effort limit: an effort may swing from zero to its limit in this time (s), no faster; 0 for no rate limit. The first command after a start or an activation ramps from the gravity torque (docs/safety.md).").range(0.0, 10.0);
        rate_limit: f64 = double("rate_limit", 0.0, "Largest effort change, N m/s (N/s), the same for every joint, replacing the limits effort_rise_time sizes; 0 (default): effort_rise_time's.").range(0.0, 1e7);
        external_torque_gain: f64 = double("external_torque_gain", crate::controller_core::DEFAULT_OBSERVER_GAIN, "Gain of the external torque estimate (the momentum observer), 1/s: its time constant is the inverse. Higher sees a contact sooner and passes more velocity noise (docs/safety.md).").range(0.1, 1000.0);
        external_wrench_source: String = string("external_wrench_source", "measured", "Where a task-space law (cartesian_impedance, hybrid_force_position) takes the tip wrench from: 'measured' (~/external_wrench, a force/torque sensor) or 'estimated' (the wrench the external torque estimate explains, for an arm without a sensor; blind to contacts on links).").choices(&["measured", "estimated"]);
        collision_detection: String = string("collision_detection", "auto", "Detect collisions on the external torque estimate (model-based: the arm's own motion does not fire it) and react (collision_reaction) until reset_collision: 'on', 'off', or 'auto' (on, but off for the adaptive laws, whose model is uncertain by design, for two arms holding an object, whose load is on them, and for hybrid_force_position, which presses on a surface by design) (docs/safety.md).").choices(&["auto", "on", "off"]);
        collision_force: f64 = double("collision_force", armctl_control::collision_thresholds::DEFAULT_SENSITIVITY, "The contact force at the tip (N) that must be detected within 20 ms. Each step the joints' thresholds and the estimated tip force's threshold follow from it and from what the estimate may carry without a contact (model_error of the applied torque, the friction the model leaves out, a command delay, velocity noise): never below that, so the arm's own motion does not fire them. Where the uncertainty does not allow it, the start log says which force is detected instead (docs/safety.md).").range(1.0, 1e4);
        model_error: f64 = double("model_error", armctl_control::collision_thresholds::DEFAULT_MODEL_ERROR, "The share of the applied torque the model may get wrong (default 0.2: a URDF's masses 20 % off, or 10 % with a light tool it lacks); the collision thresholds never go below what it leaves in the estimate, so the smaller it is the smaller the force detected. Lower it (0.02 to 0.05) after armctl identify with the tool set as the payload; raise it for a rough model.").range(0.0, 2.0);
        collision_thresholds: Arc<[f64]> = double_array("collision_thresholds", vec![], "Fixed external torque thresholds per controlled joint (N m or N) instead of those collision_force gives (the tip force check still follows collision_force); empty (default): from collision_force.").per_joint_or_none().range(1e-3, 1e5);
        collision_reaction: String = string("collision_reaction", "hold", "What a detected collision does, until reset_collision: 'hold' (brake to rest where the braking began), 'compliant' (safe_mode's gravity compensation with a hold a third as fast as 'hold''s, a ninth as stiff: the arm yields to the obstacle and to a push, and comes to rest even where its model's weight is off; with safe_mode 'zero' an arm that does not hold its own weight sags onto that spring) or 'retract' (back to where the tip was collision_retract_distance earlier on its path, peak tip speed 0.1 m/s, then hold). Chosen when a collision latches.").choices(&["hold", "compliant", "retract"]);
        collision_retract_distance: f64 = double("collision_retract_distance", 0.05, "How far 'retract' moves the tip back along the path it came by, m.").range(1e-3, 1.0);
        payload_mass: f64 = double("payload_mass", 0.0, "Mass of the payload at the tip (a tool, a grasped part), kg: its weight, and along a trajectory its inertia, are added to every law's effort, ramping in over payload_ramp_time; the holds and the external torque estimate take it at once. armctl identify --payload estimates it (docs/safety.md).").range(0.0, 1000.0);
        payload_com: Arc<[f64]> = double_array("payload_com", vec![0.0; 3], "The payload's centre of mass in the tip link's frame, [x, y, z], m.").length(3).range(-10.0, 10.0);
        payload_inertia: Arc<[f64]> = double_array("payload_inertia", vec![0.0; 6], "The payload's inertia about its centre of mass, tip-frame axes, [ixx, ixy, ixz, iyy, iyz, izz] as in URDF, kg m^2 (zeros: a point mass). Refused, naming the item, when no real body has it (not positive semi-definite, or breaking the triangle inequality).").length(6).range(-1e3, 1e3);
        payload_ramp_time: f64 = double("payload_ramp_time", armctl_control::payload_compensation::DEFAULT_PAYLOAD_RAMP_TIME, "Time over which a changed payload's torques ramp in smoothly, s (0: at once).").range(0.0, 60.0);
        reset_collision: bool = bool("reset_collision", false, "Set true to clear a latched collision: control resumes where the arm is (an estimate still above its threshold latches again at once, with a new event). Reads false again at once; applied after the other changes of the same set. Inside the ros2_control plugin it keeps reading true (rclcpp's parameter callback cannot change it back): set it true again to do it again.").trigger();
        estimate_payload: bool = bool("estimate_payload", false, "Set true to estimate the payload at the tip from the poses the arm rested in since the payload parameters were last set (the newest 32, each at least 0.2 s at rest after the external torque estimate settled): its mass and centre of mass with their standard deviations go to /rosout, with the payload_mass and payload_com values that apply it (the estimate is not applied by itself). Rest poses that turn the wrist: armctl excite --payload. Reads false again at once (docs/safety.md); inside the ros2_control plugin it keeps reading true (rclcpp's parameter callback cannot change it back): set it true again to estimate again.").trigger();
        state_publish_rate: f64 = double("state_publish_rate", 100.0, "Rate of ~/state, Hz; 0 publishes it at every control step.").range(0.0, 10_000.0).node_only();
        action_monitor_rate: f64 = double("action_monitor_rate", 20.0, "Rate of the follow_joint_trajectory action's feedback, Hz.").range(1.0, 1000.0).node_only();
        goal_time: f64 = double("constraints.goal_time", 0.5, "Seconds after a FollowJointTrajectory goal's end within which the arm must be within the goal tolerances, else the goal is aborted (GOAL_TOLERANCE_VIOLATED, naming the joint); 0: no limit (joint_trajectory_controller's default, which leaves a sagging arm's goal running). A goal's goal_time_tolerance replaces it.").range(0.0, 3600.0).node_only();
        stopped_velocity_tolerance: f64 = double("constraints.stopped_velocity_tolerance", 0.01, "A FollowJointTrajectory goal succeeds only when every joint's velocity error is within this (rad/s or m/s); 0: not checked.").range(0.0, 100.0).node_only();
        path_tolerance: Arc<[f64]> = double_array("constraints.trajectory", vec![], "Path tolerance per controlled joint (position error while a FollowJointTrajectory goal runs, rad or m; 0 or empty: not checked): a goal whose arm strays beyond it is aborted (PATH_TOLERANCE_VIOLATED). A goal's path_tolerance replaces it.").per_joint_or_none().range(0.0, 100.0).node_only();
        goal_tolerance: Arc<[f64]> = double_array("constraints.goal", vec![], "Goal tolerance per controlled joint (position error once a FollowJointTrajectory goal's trajectory has ended, rad or m; 0: not checked). Empty: 0.05 for every joint (joint_trajectory_controller checks none by default, but a torque-controlled arm can sag short of its goal, which must not be reported reached). A goal's goal_tolerance replaces it.").per_joint_or_none().range(0.0, 100.0).node_only();
    }
}

crate::settings! {
    /// controller_node's own parameters (the C ABI's and `armctl sim`'s too): those set at
    /// start, and the [`LiveSettings`].
    pub struct ControllerNodeSettings {
        #[include] robot: RobotSettings;
        #[include] live: LiveSettings;
        joints: Vec<String> = string_array("joints", vec![], "Controlled joints in command order (default: the chain's joints, base to tip); must be the chain's joints.").read_only().host_field();
        controller: String = string("controller", "computed_torque", "Control law ('cooperative': two arms holding one object, with scene_file).").choices(&laws()).read_only().host_field();
        scene_file: String = string("scene_file", "", "For controller 'cooperative': a scene file with a pair (the arms' names and bases in the world, the held object's mass and size); its q0 are the simulator's only.").read_only();
        update_rate: f64 = double("update_rate", 0.0, "Control rate, Hz; 0 computes one command per /joint_states message.").range(0.0, 10_000.0).read_only().node_only();
        gravity_compensation: bool = bool("gravity_compensation", true, "Include gravity G(q) in the commands (every law and the gravity hold). False for a robot that compensates its own gravity, such as a Franka arm through libfranka: the commands are then the law without G.").read_only();
        friction_compensation: bool = bool("friction_compensation", false, "Compensate the friction of the URDF's <dynamics damping friction> (often a simulator's tuning, not a measurement); an identified model's friction is always compensated.").read_only();
        effort_limits: Vec<f64> = double_array("effort_limits", vec![], "Effort limit per controlled joint, N m (N), replacing the URDF's; every command is saturated to it. Needed for a continuous joint without <limit>. Empty (default): the URDF's.").per_joint_or_none().range(1e-6, 1e6).read_only();
        command_topic: String = string("command_topic", "", "Topic of the std_msgs/Float64MultiArray efforts (default /<controller>/commands).").read_only().node_only();
        realtime_priority: i64 = integer("realtime_priority", 0, "SCHED_FIFO priority (1 to 99) of the control thread, with the process's memory locked, as ros2_control's controller manager runs its loop; 0: the normal scheduler. Where the system does not allow it (no rtprio or memlock limit), the node refuses to start and says how to allow it.").range(0.0, 99.0).read_only().node_only();
        cpu_affinity: i64 = integer("cpu_affinity", -1, "The CPU to pin the control thread to; -1: not pinned.").range(-1.0, 1023.0).read_only().node_only();
        controller_state_layout: String = string("controller_state_layout", "auto", "Layout of ~/controller_state (control_msgs/JointTrajectoryControllerState), which changed between distributions: 'humble' (with the deprecated desired and actual), 'jazzy' (with speed_scaling_factor), or 'auto': humble when ROS_DISTRO is humble, else jazzy.").choices(&["auto", "humble", "jazzy"]).read_only().node_only();
    }
}

impl LiveSettings {
    /// The plausibility rules these settings give.
    pub fn plausibility(&self) -> Plausibility {
        Plausibility {
            position_margin: self.position_limit_margin,
            velocity_factor: self.velocity_plausibility,
            over_speed_factor: self.over_speed,
        }
    }

    /// How collisions are detected and met.
    pub fn collision(&self) -> crate::controller_core::CollisionSettings {
        crate::controller_core::CollisionSettings {
            detection: crate::controller_core::CollisionDetection::parse(&self.collision_detection)
                .unwrap_or_default(),
            thresholds: self.collision_thresholds.to_vec(),
            sensitivity: self.collision_force,
            model_error: self.model_error,
            reaction: crate::controller_core::CollisionReaction::parse(&self.collision_reaction)
                .unwrap_or_default(),
            retract_distance: self.collision_retract_distance,
        }
    }

    /// The payload the `payload_*` parameters describe.
    pub fn payload(&self) -> armctl_model::Payload {
        armctl_model::Payload::from_arrays(
            self.payload_mass,
            &self.payload_com,
            &self.payload_inertia,
        )
    }

    /// Whether a task-space law takes the estimated tip wrench (`external_wrench_source`).
    pub fn wrench_from_estimate(&self) -> bool {
        self.external_wrench_source == "estimated"
    }

    /// Sets the rate limits these settings give: `rate_limit` for every joint when it is
    /// set, else the limits `effort_rise_time` sizes from the effort limits (none for 0).
    pub fn apply_rate_limits(
        &self,
        safety: &mut armctl_control::EffortSafety,
    ) -> Result<(), armctl_control::ControlError> {
        if self.rate_limit > 0.0 {
            return safety.set_rate_limit(Some(self.rate_limit));
        }
        safety.set_rise_time(Some(self.effort_rise_time).filter(|t| *t > 0.0))
    }
}

impl ControllerNodeSettings {
    /// What these settings do that a user may not expect (logged at start and when a change
    /// brings it about).
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        let live = &self.live;
        if live.collision_reaction == "compliant"
            && live.safe_mode == SafeMode::Zero
            && self.gravity_compensation
        {
            warnings.push(
                "collision_reaction 'compliant' with safe_mode 'zero' has no gravity term: after a collision the arm's weight hangs on the yielding hold's soft spring and it sags (safe_mode 'gravity' keeps it up)"
                    .into(),
            );
        }
        warnings
    }

    /// The effort topic: `command_topic`, or `<controller>/commands`.
    pub fn command_topic(&self) -> String {
        match self.command_topic.as_str() {
            "" => format!("{}/commands", self.controller),
            topic => topic.to_string(),
        }
    }
}

/// controller_node's parameters: its settings and the identified model's.
pub fn controller_node_declarations() -> Vec<Declaration> {
    let mut out = ControllerNodeSettings::declarations();
    out.extend(crate::model_parameters::model_declarations());
    out
}

crate::settings! {
    /// sim_node's parameters.
    pub struct SimNodeSettings {
        #[include] robot: RobotSettings;
        rate: f64 = double("rate", 1000.0, "Rate of /joint_states and of the simulation step, Hz.").range(1.0, 10_000.0).read_only();
        initial_positions: Vec<f64> = double_array("initial_positions", vec![], "Start configuration, chain order (default: the middle of each joint's range).").read_only();
        command_topic: String = string("command_topic", "computed_torque/commands", "Topic of the std_msgs/Float64MultiArray efforts applied, in chain order (relative names resolve in the node's namespace).").read_only();
        integrator: String = string("integrator", "rk4", "Integration scheme: rk4 or euler.").choices(&["rk4", "euler"]).read_only();
        hold_until_command: bool = bool("hold_until_command", true, "Hold the arm at initial_positions, time standing still, until the first command arrives (a braked arm waiting for its controller).").read_only();
        publish_clock: bool = bool("publish_clock", false, "Publish the simulated time on /clock (rosgraph_msgs/Clock), as Gazebo does, for nodes with use_sim_time.").read_only();
        lockstep: bool = bool("lockstep", false, "With publish_clock: each step waits (up to 0.1 s) for the commands answering the last joint states, so a busy machine slows the simulated time instead of delaying the commands, as Gazebo steps with the controllers it hosts.").read_only();
        friction: bool = bool("friction", true, "Apply the model's friction.").read_only();
        friction_offset: Vec<f64> = double_array("friction_offset", vec![], "The simulated arm's Coulomb friction asymmetry per joint, N m (N), chain order: sliding positively a joint meets its URDF friction + offset, negatively friction - offset; |offset| at most the URDF's friction (empty: none; needs friction).").read_only();
        robot_compensates_gravity: bool = bool("robot_compensates_gravity", false, "The simulated arm adds its own gravity torque G(q) to every command, as a Franka arm does through libfranka (for a controller with gravity_compensation: false).").read_only();
        scene_file: String = string("scene_file", "", "A scene (YAML, as armctl sim --scene: obstacles, contact points on URDF links, a force/torque sensor published on ~/wrench). Empty: nothing to touch.").read_only();
        noise_position: f64 = double("noise_position", 0.0, "Standard deviation of position noise, rad.").range(0.0, 1.0).read_only();
        noise_velocity: f64 = double("noise_velocity", 0.0, "Standard deviation of velocity noise, rad/s.").range(0.0, 10.0).read_only();
        command_delay_steps: i64 = integer("command_delay_steps", 0, "Commands act this many steps late.").range(0.0, 1000.0).read_only();
        mass_scale: f64 = double("mass_scale", 1.0, "Scale of every link's mass and inertia in the simulated arm.").range(0.01, 100.0).read_only();
        payload_mass: f64 = double("payload_mass", 0.0, "Mass of a payload at the tip, kg (the controller's model does not know it unless told: controller_node's payload_* parameters).").range(0.0, 1000.0).read_only();
        payload_com: Arc<[f64]> = double_array("payload_com", vec![0.0; 3], "The payload's centre of mass in the tip link's frame, [x, y, z], m (a point mass there).").length(3).range(-10.0, 10.0).read_only();
        command_timeout: f64 = double("command_timeout", 0.5, "Without a command for this long (s) the simulated arm gets zero effort.").range(1e-3, 60.0).read_only();
    }
}

/// sim_node's parameters.
pub fn sim_node_declarations() -> Vec<Declaration> {
    SimNodeSettings::declarations()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node_parameters::ParameterStore;
    use armctl_control::{ParameterValue, Scope};

    /// `compliant` with `safe_mode: zero` is warned about, unless the robot carries its own
    /// weight (`gravity_compensation: false`).
    #[test]
    fn a_compliant_reaction_without_gravity_is_warned_about() {
        let mut settings = ControllerNodeSettings::defaults();
        assert!(settings.warnings().is_empty());
        settings.live.collision_reaction = "compliant".into();
        assert!(settings.warnings().is_empty(), "safe_mode gravity");
        settings.live.safe_mode = SafeMode::Zero;
        let warnings = settings.warnings();
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("sags"), "{warnings:?}");
        settings.gravity_compensation = false;
        assert!(settings.warnings().is_empty(), "the robot holds itself");
    }

    /// What may change while running is exactly the live settings: the runtime applies a
    /// change through them, so a settable parameter outside them would be stored and ignored.
    #[test]
    fn the_live_settings_are_exactly_the_parameters_settable_while_running() {
        let live: Vec<String> = LiveSettings::declarations()
            .into_iter()
            .map(|d| d.name)
            .collect();
        for d in controller_node_declarations() {
            let is_live = live.contains(&d.name);
            assert!(
                is_live != d.read_only,
                "{}: read-only {}, live {is_live}",
                d.name,
                d.read_only
            );
        }
        assert!(ControllerNodeSettings::mistyped().is_empty());
        assert!(SimNodeSettings::mistyped().is_empty());
        for declarations in [controller_node_declarations(), sim_node_declarations()] {
            let mut names: Vec<&str> = declarations.iter().map(|d| d.name.as_str()).collect();
            names.sort_unstable();
            let before = names.len();
            names.dedup();
            assert_eq!(names.len(), before, "a name declared twice");
        }
    }

    /// A trigger is a live bool that reads false by default (it acts once when set true); a
    /// parameter a host's own configuration gives is read-only. Each is marked in the tables
    /// only, and the C ABI, the transports and the trigger ordering read the marks.
    #[test]
    fn triggers_are_live_bools_and_host_fields_are_read_only() {
        let store = ParameterStore::new(controller_node_declarations());
        let triggers: Vec<&str> = store.triggers().collect();
        assert_eq!(triggers, ["reset_collision", "estimate_payload"]);
        for d in store.declarations() {
            if d.trigger {
                assert_eq!(d.default, ParameterValue::Bool(false), "{}", d.name);
                assert!(!d.read_only, "{}", d.name);
            }
            if d.scope == Scope::HostField {
                assert!(d.read_only, "{}", d.name);
            }
        }
        assert!(store.is_trigger("estimate_payload") && !store.is_trigger("kp"));
    }
}
