//! The one table of what each middleware backend offers: a node's start log and
//! `--print-params` say it for the build and the node at hand, and docs/ros2.md's backend table
//! says the same.

use super::{NodeSpec, Topic};

/// A capability of a node's ROS interface that not every build or node has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capability {
    /// What it is, as the user meets it.
    pub name: &'static str,
    /// Whether this node has it to serve (sim_node has no action, a task-space law no
    /// controller state).
    pub used: bool,
    /// Whether this build offers it.
    pub offered: bool,
    /// Why not, or what limits it (empty: nothing).
    pub note: &'static str,
}

/// The middleware this build's nodes run on.
#[cfg(feature = "r2r")]
pub const MIDDLEWARE: &str = "rcl (r2r), the ROS 2 installation's RMW";
/// The middleware this build's nodes run on.
#[cfg(not(feature = "r2r"))]
pub const MIDDLEWARE: &str = "DDS (ros2-client on RustDDS), no ROS 2 installation needed";

/// What this build offers `spec`'s node beyond the topics every build has.
pub fn capabilities(spec: &NodeSpec) -> [Capability; 4] {
    let publishes_state = spec
        .publications
        .iter()
        .any(|(t, _)| matches!(t, Topic::ControllerState | Topic::ControllerStateHumble));
    [
        Capability {
            name: "parameter services (ros2 param, rqt_reconfigure)",
            used: true,
            offered: true,
            note: PARAMETER_NOTE,
        },
        Capability {
            name: "~/reset_collision and ~/estimate_payload (std_srvs/Trigger)",
            used: spec.parameters.triggers().next().is_some(),
            offered: TRIGGERS.0,
            note: TRIGGERS.1,
        },
        Capability {
            name: "~/follow_joint_trajectory (control_msgs/FollowJointTrajectory)",
            used: spec.action.is_some(),
            offered: ACTION.0,
            note: ACTION.1,
        },
        Capability {
            name: "~/controller_state (control_msgs/JointTrajectoryControllerState)",
            used: publishes_state,
            offered: CONTROLLER_STATE.0,
            note: CONTROLLER_STATE.1,
        },
    ]
}

#[cfg(feature = "r2r")]
const PARAMETER_NOTE: &str = "";
#[cfg(not(feature = "r2r"))]
const PARAMETER_NOTE: &str = "replies are cut to one datagram (RustDDS 0.15.1 fragments service replies in a form Fast DDS drops): ros2 param dump and describe-all of a large URDF get no answer; docs/ros2.md";

#[cfg(any(not(feature = "r2r"), ros_std_srvs))]
const TRIGGERS: (bool, &str) = (true, "");
#[cfg(all(feature = "r2r", not(ros_std_srvs)))]
const TRIGGERS: (bool, &str) = (
    false,
    "std_srvs was not installed when r2r generated its bindings: set the parameters true instead",
);

#[cfg(any(not(feature = "r2r"), ros_control_msgs))]
const ACTION: (bool, &str) = (true, "");
#[cfg(all(feature = "r2r", not(ros_control_msgs)))]
const ACTION: (bool, &str) = (
    false,
    "control_msgs was not installed when r2r generated its bindings: send trajectories on ~/reference",
);

#[cfg(not(feature = "r2r"))]
const CONTROLLER_STATE: (bool, &str) =
    (true, "Humble's or Jazzy's layout: controller_state_layout");
#[cfg(ros_controller_state_jazzy)]
const CONTROLLER_STATE: (bool, &str) = (true, "Jazzy's layout, the installed control_msgs's");
#[cfg(all(feature = "r2r", ros_control_msgs, not(ros_controller_state_jazzy)))]
const CONTROLLER_STATE: (bool, &str) = (
    false,
    "the installed control_msgs has Humble's layout, which only the DDS build publishes",
);
#[cfg(all(feature = "r2r", not(ros_control_msgs)))]
const CONTROLLER_STATE: (bool, &str) = ACTION;

/// The lines the start log and `--print-params` give: the middleware, then each capability
/// with whether this build offers it to `spec`'s node.
pub fn describe(spec: &NodeSpec) -> Vec<String> {
    let mut lines = vec![format!("middleware: {MIDDLEWARE}")];
    for c in capabilities(spec) {
        let line = match (c.used, c.offered, c.note.is_empty()) {
            (false, _, _) => "not used by this node".to_string(),
            (true, offered, true) => (if offered { "yes" } else { "no" }).to_string(),
            (true, offered, false) => {
                format!("{} ({})", if offered { "yes" } else { "no" }, c.note)
            }
        };
        lines.push(format!("  {}: {line}", c.name));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use armctl_runtime::node_parameters::ParameterStore;

    fn spec(action: bool, state: bool) -> NodeSpec {
        NodeSpec {
            name: "n".into(),
            namespace: "/".into(),
            subscriptions: vec![],
            publications: if state {
                vec![(Topic::ControllerState, "/n/controller_state".into())]
            } else {
                vec![]
            },
            tick_rate: None,
            action: action.then(|| "/n/follow_joint_trajectory".into()),
            parameters: ParameterStore::new(vec![]),
        }
    }

    #[test]
    fn the_description_names_the_middleware_and_what_the_node_uses() {
        let lines = describe(&spec(true, true));
        assert_eq!(lines.len(), 1 + 4);
        assert!(lines[0].starts_with("middleware: "));
        #[cfg(not(feature = "r2r"))]
        assert!(lines[0].contains("DDS"), "{lines:?}");
        assert!(lines[2].ends_with("not used by this node"), "{lines:?}");
        for line in &lines[3..] {
            assert!(line.contains(": yes") || line.contains(": no"), "{line}");
        }
        let sim = describe(&spec(false, false));
        for line in &sim[2..] {
            assert!(line.ends_with("not used by this node"), "{line}");
        }
    }
}
