//! `sim_node`: see `armctl_ros::sim_node`. Accepts `--ros-args ...` and `--print-params`
//! (print the parameter declarations as YAML and exit).

use armctl_ros::nodes::sim_node::SimNode;

fn main() -> std::process::ExitCode {
    armctl_ros::launch::node_main("sim_node", SimNode::from_start)
}
