#!/bin/sh
# Lints the nodes' library on rcl as the ROS package builds it (r2r bound to ROS 2 Jazzy's
# wheels with std_srvs and the control_msgs fixture), so that the code r2r's doc-only check
# leaves out (the Trigger services, the action, ~/controller_state) is linted too. From the root
# workspace: clippy lints its members only, and the ROS package's workspace has just the two
# mains. Run by .ci/run after the tests (which made the venv, the fixture and the r2r build).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=${CARGO_TARGET_DIR:-$root/target}/tmp
ros_python=$(sh "$root/tests/interop/setup_venv.sh" "$tmp/cyclonedds-venv")
ros_venv=$(dirname "$(dirname "$ros_python")")
. "$root/tests/interop/ros_wheels_env.sh"
CARGO_TARGET_DIR="$tmp/r2r-target" cargo clippy --release --locked --quiet \
    --manifest-path "$root/Cargo.toml" -p armctl_nodes --no-default-features --features r2r \
    --lib --bins -- -D warnings
