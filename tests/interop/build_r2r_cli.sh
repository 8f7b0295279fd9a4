#!/bin/sh
# Builds the armctl command with its `rcl` feature (`armctl commission --ros` as a node of the
# ROS 2 installation, through r2r) against ROS 2 Jazzy or Kilted from the PyPI wheels in VENV
# (tests/interop/ros_venv.sh), as a user in a ROS 2 workspace builds it
# (`cargo install --path crates/cli --features rcl`), and prints the binary's path. Usage:
# build_r2r_cli.sh VENV TARGET_DIR (the TARGET_DIR of build_r2r_nodes.sh: r2r's bindings are
# of one prefix). Running it needs the environment of r2r_nodes() in tests/support.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
target=$2
ros_venv=$1
. "$root/tests/interop/ros_wheels_env.sh"
CARGO_TARGET_DIR="$target" "${CARGO:-cargo}" build --release --quiet --locked \
    --manifest-path "$root/Cargo.toml" -p armctl --features rcl >&2 || {
    echo "build_r2r_cli.sh: armctl --features rcl did not build against $ros_venv: see cargo's message above" >&2
    exit 1
}
echo "$target/release/armctl"
