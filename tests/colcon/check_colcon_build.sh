#!/usr/bin/env bash
# Builds the ROS package with colcon, as a ROS user would (the workspace copied to
# <ws>/src/armctl, `colcon build` at <ws>), and checks the installed layout that `ros2 run` and
# `ros2 launch` rely on. colcon, colcon-ros-cargo and cargo-ament-build come from PyPI into a
# venv; no ROS installation is needed (the nodes use no ROS library).
# Usage: tests/colcon/check_colcon_build.sh   (run by .ci/run)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=${ARMCTL_COLCON_VENV:-${CARGO_TARGET_DIR:-$root/target}/tmp/colcon-venv}
ws=$(mktemp -d)
trap 'rm -rf "$ws"' EXIT

if [ ! -x "$venv/bin/colcon" ] || [ ! -x "$venv/bin/cargo-ament-build" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check \
        colcon-core==0.21.3 colcon-ros==0.5.0 colcon-cargo==0.2.0 colcon-ros-cargo==0.2.0 \
        cargo-ament-build==0.1.11 colcon-package-information colcon-package-selection \
        colcon-recursive-crawl colcon-output
fi
export PATH="$venv/bin:$PATH"

# The workspace as git sees it (tracked and new files, no build output).
mkdir -p "$ws/src/armctl"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | xargs -0 -I{} cp --parents {} "$ws/src/armctl/" 2>/dev/null) \
    || (cd "$root" && tar --exclude=./target --exclude=./out -cf - . | tar -xf - -C "$ws/src/armctl")

cd "$ws"
# armctl_controllers (ament_cmake, the ros2_control plugin) needs ROS 2 to build: here it is only
# found, and compile-checked by ros2_control/test_api/check.sh.
packages=$(colcon list --names-only | sort | tr '\n' ' ')
[ "$packages" = "armctl_controllers armctl_ros " ] \
    || { echo "colcon finds '$packages', expected armctl_controllers and armctl_ros" >&2; exit 1; }
# Without debug info the debug build takes a fraction of the disk (the check is about the layout).
CARGO_PROFILE_DEV_DEBUG=0 colcon build --packages-select armctl_ros --event-handlers console_cohesion- summary+ 2>&1 \
    | grep -v "AMENT_PREFIX_PATH is empty" || true
[ -f install/armctl_ros/share/colcon-core/packages/armctl_ros ] || { echo "colcon build failed" >&2; exit 1; }

fail() { echo "installed layout: $1" >&2; exit 1; }
prefix=install/armctl_ros
for exe in controller_node sim_node; do
    [ -x "$prefix/lib/armctl_ros/$exe" ] || fail "lib/armctl_ros/$exe missing"
done
[ -f "$prefix/share/ament_index/resource_index/packages/armctl_ros" ] || fail "ament index marker missing"
[ -f "$prefix/share/armctl_ros/package.xml" ] || fail "share/armctl_ros/package.xml missing"
for f in launch/sim.launch.xml launch/hardware.launch.xml launch/gazebo.launch.xml \
         config/panda_computed_torque.yaml config/panda_ros2_controllers.yaml \
         urdf/panda.urdf urdf/gazebo.urdf.xacro; do
    [ -f "$prefix/share/armctl_ros/$f" ] || fail "share/armctl_ros/$f missing"
done
[ -f install/setup.sh ] || fail "install/setup.sh missing"

# The installed node starts from the installed files.
"$prefix/lib/armctl_ros/controller_node" --print-params --ros-args \
    --params-file "$prefix/share/armctl_ros/config/panda_computed_torque.yaml" \
    -p urdf_path:="$prefix/share/armctl_ros/urdf/panda.urdf" | grep -q "^kp:" \
    || fail "the installed controller_node does not start"
echo "colcon build: armctl_ros installed with controller_node, sim_node, launch/, config/, urdf/ and the ament index marker"
