//! `sim_node`: see `armctl_nodes::sim_node`. Accepts `--ros-args ...` and `--print-params`
//! (print the parameter declarations as YAML and exit).

use armctl_nodes::nodes::sim_node::SimNode;

fn main() -> std::process::ExitCode {
    armctl_nodes::launch::node_main("sim_node", SimNode::from_start)
}
