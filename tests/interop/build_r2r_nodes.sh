#!/bin/sh
# Builds the ROS package armctl_ros (crates/ros_rcl: controller_node and sim_node on rcl, with
# no feature flags, as colcon builds it) against ROS 2 Jazzy or Kilted from the PyPI wheels in
# VENV (tests/interop/ros_venv.sh) and the control_msgs test fixture, and prints the directory
# that holds the nodes and, on a second line, the fixture's prefix. Usage: build_r2r_nodes.sh
# VENV TARGET_DIR (one TARGET_DIR per distribution: r2r's bindings are of one prefix). What the
# wheels need beside a sourced ROS 2 is in ros_wheels_env.sh (building) and python_stub.sh
# (running); running the binaries needs the environment of r2r_nodes() in tests/support.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
target=$2
ros_venv=$1
. "$root/tests/interop/ros_wheels_env.sh"
# --locked: the package's own Cargo.lock must hold what it builds (tests/rcl_package.rs keeps
# it at the root's versions).
CARGO_TARGET_DIR="$target" "${CARGO:-cargo}" build --release --quiet --locked \
    --manifest-path "$root/crates/ros_rcl/Cargo.toml" --bins >&2 || {
    echo "build_r2r_nodes.sh: armctl_ros (crates/ros_rcl) did not build against $ros_venv: see cargo's message above" >&2
    exit 1
}
bin="$target/release"
sh "$root/tests/interop/python_stub.sh" "$ros_venv" "$bin"
echo "$bin"
echo "$ros_fixture"
