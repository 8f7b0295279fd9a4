//! `controller_node`: see `armctl_ros::controller_node`. Accepts `--ros-args ...` and
//! `--print-params` (print the parameter declarations as YAML and exit).

use std::process::ExitCode;

use armctl_ros::controller_node::ControllerNode;
use armctl_ros::dds::DdsTransport;
use armctl_ros::ros_args::parse_ros_args;

fn main() -> ExitCode {
    let result = (|| -> Result<(), armctl_ros::RosError> {
        let args = parse_ros_args(std::env::args().skip(1))?;
        let node = ControllerNode::new(&args)?;
        if args.other.iter().any(|a| a == "--print-params") {
            print!("{}", node.describe_parameters());
            return Ok(());
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| armctl_ros::RosError::Transport {
                reason: e.to_string(),
            })?;
        runtime.block_on(async {
            let mut transport = DdsTransport::start(node.spec())?;
            node.run(&mut transport).await;
            Ok(())
        })
    })();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("controller_node: {e}");
            ExitCode::FAILURE
        }
    }
}
