//! `controller_node`: see `armctl_nodes::controller_node`. Accepts `--ros-args ...` and
//! `--print-params` (print the parameter declarations as YAML and exit).

use armctl_nodes::nodes::controller_node::ControllerNode;

fn main() -> std::process::ExitCode {
    armctl_nodes::launch::node_main("controller_node", ControllerNode::from_start)
}
