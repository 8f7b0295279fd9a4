//! Which part of a host each declared parameter belongs to: the runtime's, `ArmctlConfig`'s
//! fields, or controller_node's own: what each declaration's [`Scope`] says.

use std::sync::OnceLock;

use armctl_control::{Declaration, Scope};
use armctl_runtime::declarations::controller_node_declarations;

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
    /// controller_node's own (its rate, topics, clock, FollowJointTrajectory action, control
    /// thread, URDF path): meaningless through the C ABI, which refuses it.
    NodeOnly = 2,
}

impl From<Scope> for ArmctlParameterScope {
    fn from(scope: Scope) -> Self {
        match scope {
            Scope::Any => Self::Runtime,
            Scope::HostField => Self::Config,
            Scope::NodeOnly => Self::NodeOnly,
        }
    }
}

impl ArmctlParameterScope {
    /// The scope of the parameter `name` (for Rust tools that check a host's configuration),
    /// as its declaration gives it; a law's parameter, or a name not declared, is the
    /// runtime's.
    pub fn of(name: &str) -> Self {
        static NODE: OnceLock<Vec<Declaration>> = OnceLock::new();
        NODE.get_or_init(controller_node_declarations)
            .iter()
            .find(|d| d.name == name)
            .map_or(Self::Runtime, |d| d.scope.into())
    }

    /// Why a start value or change of `name` through the C ABI is refused, if it is.
    pub fn refusal(name: &str) -> Option<String> {
        match Self::of(name) {
            Self::Runtime => None,
            Self::Config => Some(format!(
                "parameter '{name}': given by the ArmctlConfig field of that name, not as a parameter"
            )),
            Self::NodeOnly => Some(format!(
                "parameter '{name}': controller_node's own, meaningless through the C ABI (the host runs the loop: its rate, clock, topics, action and thread)"
            )),
        }
    }
}
