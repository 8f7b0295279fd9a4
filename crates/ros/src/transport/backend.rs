//! The one table of what each middleware backend offers: the nodes' start log and
//! `--print-params` say it for the build at hand, and docs/ros2.md's backend table says the same.

/// A capability of a node's ROS interface that not every build has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capability {
    /// What it is, as the user meets it.
    pub name: &'static str,
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

/// What this build offers beyond the topics every build has.
pub fn capabilities() -> [Capability; 4] {
    [
        Capability {
            name: "parameter services (ros2 param, rqt_reconfigure)",
            offered: true,
            note: PARAMETER_NOTE,
        },
        Capability {
            name: "~/reset_collision and ~/estimate_payload (std_srvs/Trigger)",
            offered: TRIGGERS.0,
            note: TRIGGERS.1,
        },
        Capability {
            name: "~/follow_joint_trajectory (control_msgs/FollowJointTrajectory)",
            offered: CONTROL_MSGS.0,
            note: CONTROL_MSGS.1,
        },
        Capability {
            name: "~/controller_state (control_msgs/JointTrajectoryControllerState)",
            offered: CONTROL_MSGS.0,
            note: if CONTROL_MSGS.0 {
                STATE_LAYOUTS
            } else {
                CONTROL_MSGS.1
            },
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
const CONTROL_MSGS: (bool, &str) = (true, "");
#[cfg(all(feature = "r2r", not(ros_control_msgs)))]
const CONTROL_MSGS: (bool, &str) = (
    false,
    "control_msgs was not installed when r2r generated its bindings: send trajectories on ~/reference",
);

#[cfg(not(feature = "r2r"))]
const STATE_LAYOUTS: &str = "Humble's or Jazzy's layout (controller_state_layout)";
#[cfg(feature = "r2r")]
const STATE_LAYOUTS: &str = "the installed control_msgs's layout";

/// The lines the start log and `--print-params` give: the middleware, then each capability
/// with whether this build offers it.
pub fn describe() -> Vec<String> {
    let mut lines = vec![format!("middleware: {MIDDLEWARE}")];
    for c in capabilities() {
        let mark = if c.offered { "yes" } else { "no" };
        let note = if c.note.is_empty() {
            String::new()
        } else {
            format!(" ({})", c.note)
        };
        lines.push(format!("  {}: {mark}{note}", c.name));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_description_names_the_middleware_and_every_capability() {
        let lines = describe();
        assert_eq!(lines.len(), 1 + capabilities().len());
        assert!(lines[0].starts_with("middleware: "));
        #[cfg(not(feature = "r2r"))]
        assert!(lines[0].contains("DDS"), "{lines:?}");
        for line in &lines[1..] {
            assert!(line.contains(": yes") || line.contains(": no"), "{line}");
        }
    }
}
