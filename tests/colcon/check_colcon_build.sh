#!/usr/bin/env bash
# Builds the ROS package armctl_ros with colcon, as a ROS user would (the workspace copied to
# <ws>/src/armctl, `colcon build` at <ws> with ROS 2 sourced and no flags), and checks that the
# nodes it installs are the rcl ones (linked to the prefix's librcl, naming rcl as their
# middleware) and the installed layout that `ros2 run` and `ros2 launch` rely on. The ROS 2
# prefix is Jazzy, or Kilted with ARMCTL_TEST_ROS_DISTRO=kilted, from the PyPI wheels
# (tests/interop/ros_venv.sh, with what the wheels need beside: tests/interop/ros_wheels_env.sh)
# with the control_msgs test fixture as a second prefix (tests/interop/control_msgs_fixture.sh);
# colcon, colcon-ros-cargo and cargo-ament-build come from PyPI into a venv of their own.
# Usage: [ARMCTL_TEST_ROS_DISTRO=kilted] tests/colcon/check_colcon_build.sh   (run by .ci/run)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=${CARGO_TARGET_DIR:-$root/target}/tmp
venv=${ARMCTL_COLCON_VENV:-$tmp/colcon-venv}
# The workspace's build folder is kept between runs (cargo rebuilds what changed); its sources
# are copied afresh. One per distribution: r2r's bindings are of one prefix.
case "${ARMCTL_TEST_ROS_DISTRO:-jazzy}" in
    jazzy) ws=$tmp/colcon-ws ;;
    *) ws=$tmp/colcon-ws-$ARMCTL_TEST_ROS_DISTRO ;;
esac

if [ ! -x "$venv/bin/colcon" ] || [ ! -x "$venv/bin/cargo-ament-build" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check \
        colcon-core==0.21.3 colcon-ros==0.5.0 colcon-cargo==0.2.0 colcon-ros-cargo==0.2.0 \
        cargo-ament-build==0.1.11 colcon-package-information colcon-package-selection \
        colcon-recursive-crawl colcon-output
fi
ros=$(sh "$root/tests/interop/ros_venv.sh" "$tmp")
# The tests' scratch folder holds ROS packages (this workspace's copy, the venv's share/): a
# colcon build or rosdep run in a workspace holding this clone must not find them.
touch "$tmp/COLCON_IGNORE"

# The workspace as git sees it (tracked and new files, no build output).
rm -rf "$ws/src" "$ws/install" "$ws/log"
mkdir -p "$ws/src/armctl"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | xargs -0 -I{} cp --parents {} "$ws/src/armctl/" 2>/dev/null) \
    || (cd "$root" && tar --exclude=./target --exclude=./out -cf - . | tar -xf - -C "$ws/src/armctl")

cd "$ws"
export PATH="$venv/bin:$PATH"
# "Sourcing ROS 2": the wheels' prefix.
ros_venv=$ros
. "$root/tests/interop/ros_wheels_env.sh"
# armctl_controllers (ament_cmake, the ros2_control plugin) needs rclcpp and ros2_control, which
# the wheels lack: here it is only found, and compile-checked by ros2_control/test_api/check.sh.
packages=$(colcon list --names-only | sort | tr '\n' ' ')
[ "$packages" = "armctl_controllers armctl_ros " ] \
    || { echo "colcon finds '$packages', expected armctl_controllers and armctl_ros" >&2; exit 1; }
# Without debug info the debug build takes a fraction of the disk (the check is about the layout).
CARGO_PROFILE_DEV_DEBUG=0 colcon build --packages-select armctl_ros --event-handlers console_cohesion- summary+ 2>&1
[ -f install/armctl_ros/share/colcon-core/packages/armctl_ros ] || { echo "colcon build failed" >&2; exit 1; }

fail() { echo "installed layout: $1" >&2; exit 1; }
prefix=install/armctl_ros
for exe in controller_node sim_node; do
    [ -x "$prefix/lib/armctl_ros/$exe" ] || fail "lib/armctl_ros/$exe missing"
    ldd "$prefix/lib/armctl_ros/$exe" | grep -q "librcl.so => $ros/lib/librcl.so" \
        || fail "lib/armctl_ros/$exe does not link the ROS prefix's librcl: $(ldd "$prefix/lib/armctl_ros/$exe" | grep rcl)"
done
[ -f "$prefix/share/ament_index/resource_index/packages/armctl_ros" ] || fail "ament index marker missing"
[ -f "$prefix/share/armctl_ros/package.xml" ] || fail "share/armctl_ros/package.xml missing"
for f in launch/sim.launch.xml launch/hardware.launch.xml launch/gazebo.launch.xml \
         config/panda_computed_torque.yaml config/panda_ros2_controllers.yaml \
         urdf/panda.urdf urdf/gazebo.urdf.xacro; do
    [ -f "$prefix/share/armctl_ros/$f" ] || fail "share/armctl_ros/$f missing"
done
[ -f install/setup.sh ] || fail "install/setup.sh missing"

# The installed node starts from the installed files and names rcl as its middleware. The
# wheels' librcl needs Python's C API in the process: python_stub.sh's stand-in.
sh "$root/tests/interop/python_stub.sh" "$ros" "$ws/build"
runtime_path="$ros_fixture/lib:$ros/lib$(printf ':%s' "$ros"/lib/python3*/site-packages/ros_*.libs)"
params=$(LD_LIBRARY_PATH="$runtime_path" LD_PRELOAD="$ws/build/libpython_stub.so" \
    "$prefix/lib/armctl_ros/controller_node" --print-params --ros-args \
    --params-file "$prefix/share/armctl_ros/config/panda_computed_torque.yaml" \
    -p urdf_path:="$prefix/share/armctl_ros/urdf/panda.urdf") \
    || fail "the installed controller_node does not start"
grep -q "^kp:" <<<"$params" || fail "the installed controller_node lists no kp"
grep -q "^# middleware: rcl" <<<"$params" \
    || fail "the installed controller_node does not name rcl as its middleware: $(echo "$params" | head -1)"
# control_msgs is installed (the fixture, a prefix of its own): the action is served.
grep -q "^#   ~/follow_joint_trajectory (control_msgs/FollowJointTrajectory): yes" <<<"$params" \
    || fail "the installed controller_node does not serve the action with control_msgs installed: $(echo "$params" | grep follow_joint)"
echo "colcon build ($ros_distro): armctl_ros installed with controller_node and sim_node on rcl (linked to $ros/lib/librcl.so, serving FollowJointTrajectory), launch/, config/, urdf/ and the ament index marker"
