//! Which part of a host each declared parameter belongs to: the runtime's, `ArmctlConfig`'s
//! fields, or controller_node's own.

/// Which part of a host a declared parameter belongs to.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArmctlParameterScope {
    /// The runtime's: a host declares it (live unless read-only) and passes its start value
    /// in `ArmctlConfig::parameters`.
    Runtime = 0,
    /// Given by the fields of `ArmctlConfig` (URDF, links, joints, law); listed for its
    /// description and value, refused as a start value or a change.
    Config = 1,
    /// controller_node's own (its rate, topics, clock, URDF path): meaningless through the
    /// C ABI, which refuses it.
    NodeOnly = 2,
}

/// Parameters `ArmctlConfig`'s own fields give.
const CONFIG: [&str; 5] = [
    "robot_description",
    "base_link",
    "tip_link",
    "joints",
    "controller",
];

/// controller_node's parameters that mean nothing to a host of the C ABI: the host sets the
/// rate and the clock, and there are no topics.
const NODE_ONLY: [&str; 5] = [
    "urdf_path",
    "use_sim_time",
    "update_rate",
    "command_topic",
    "state_publish_rate",
];

impl ArmctlParameterScope {
    /// The scope of the parameter `name` (for Rust tools that check a host's configuration).
    pub fn of(name: &str) -> Self {
        if CONFIG.contains(&name) {
            Self::Config
        } else if NODE_ONLY.contains(&name) {
            Self::NodeOnly
        } else {
            Self::Runtime
        }
    }

    /// Why a start value or change of `name` through the C ABI is refused, if it is.
    pub fn refusal(name: &str) -> Option<String> {
        match Self::of(name) {
            Self::Runtime => None,
            Self::Config => Some(format!(
                "parameter '{name}': given by the ArmctlConfig field of that name, not as a parameter"
            )),
            Self::NodeOnly => Some(format!(
                "parameter '{name}': controller_node's own, meaningless through the C ABI (the host sets the rate and the clock)"
            )),
        }
    }
}
