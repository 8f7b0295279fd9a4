//! `controller_node`: see `armctl_ros::controller_node`. Accepts `--ros-args ...` and
//! `--print-params` (print the parameter declarations as YAML and exit).

use armctl_ros::nodes::controller_node::ControllerNode;

fn main() -> std::process::ExitCode {
    armctl_ros::launch::node_main("controller_node", ControllerNode::from_start)
}
