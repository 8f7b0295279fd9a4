#!/bin/sh
# Lints the ROS package armctl_ros on rcl as the tests build it (r2r bound to ROS 2 Jazzy's
# wheels with std_srvs and the control_msgs fixture), so that the code r2r's doc-only check
# leaves out (the Trigger services, the action, ~/controller_state) is linted too. Run by
# .ci/run after the tests, which made the venv, the fixture and the r2r build.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=${CARGO_TARGET_DIR:-$root/target}/tmp
ros_venv=$tmp/cyclonedds-venv
. "$root/tests/interop/ros_wheels_env.sh"
CARGO_TARGET_DIR="$tmp/r2r-target" cargo clippy --release --locked --quiet \
    --manifest-path "$root/crates/ros_rcl/Cargo.toml" -- -D warnings
