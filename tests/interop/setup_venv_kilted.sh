#!/bin/sh
# Creates (once) the venv of ROS 2 Kilted's PyPI wheels for the real-ROS tests run with
# ARMCTL_TEST_ROS_DISTRO=kilted (tests/interop/ros_venv.sh): the Kilted equivalents of the ROS 2
# wheels setup_venv.sh installs for Jazzy (rcl, rclpy on Fast DDS, the message and service
# packages the nodes use, the rosidl generators and ament_cmake pieces the control_msgs fixture
# is built with), libclang for r2r's bindgen and CMake; none of setup_venv.sh's other peers,
# which no real-ROS test uses. A venv of its own, not setup_venv.sh's: the Jazzy venv, and so
# the Jazzy fixture's hash and the Jazzy r2r build, stay as they are. Kilted has no
# python_cmake_module wheel (its rosidl_generator_py finds Python itself). About 25 s and
# 430 MB. Usage: setup_venv_kilted.sh DIR; prints the venv's python.
set -eu
dir="$1"
mkdir -p "$(dirname "$dir")"
touch "$(dirname "$dir")/COLCON_IGNORE"
exec 9>"$dir.lock"
flock 9
if [ ! -x "$dir/bin/python" ] || [ ! -x "$dir/bin/cmake" ] \
    || [ ! -d "$dir/share/rosidl_default_generators" ] || [ ! -d "$dir/share/ament_cmake_ros_core" ] \
    || ! "$dir/bin/python" -c "import cmake, clang, rclpy, sensor_msgs.msg, trajectory_msgs.msg, diagnostic_msgs.msg, std_srvs.srv, ament_package, catkin_pkg" 2>/dev/null; then
    python3 -m venv "$dir" >&2 || {
        echo "setup_venv_kilted.sh: 'python3 -m venv $dir' failed: the tests need Python 3 with venv (Debian: apt-get install python3-venv)" >&2
        exit 1
    }
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check \
        "cmake==4.4.5" "libclang==18.1.1" "catkin-pkg==1.1.1" \
        "ros-kilted-rclpy[fastrtps]==9.1.2" "ros-kilted-sensor-msgs==5.5.1" \
        "ros-kilted-trajectory-msgs==5.5.1" "ros-kilted-diagnostic-msgs==5.5.1" \
        "ros-kilted-std-srvs==5.5.1" "ros-kilted-geometry-msgs==5.5.1" "ros-kilted-std-msgs==5.5.1" \
        "ros-kilted-action-msgs==2.3.0" "ros-kilted-ament-cmake==2.7.3" \
        "ros-kilted-rosidl-default-generators==1.7.1" "ros-kilted-rosidl-default-runtime==1.7.1" \
        "ros-kilted-ament-package==0.17.2" "ros-kilted-ament-cmake-include-directories==2.7.3" \
        "ros-kilted-rosidl-core-generators==0.3.1" "ros-kilted-ament-cmake-ros==0.14.5" \
        "ros-kilted-ament-cmake-ros-core==0.14.5" \
        "ros-kilted-ament-cmake-gmock==2.7.3" "ros-kilted-ament-cmake-gtest==2.7.3" \
        "ros-kilted-ament-cmake-pytest==2.7.3" >&2 || {
        echo "setup_venv_kilted.sh: pip could not install ROS 2 Kilted's wheels into $dir (the first run needs access to PyPI): see pip's message above" >&2
        exit 1
    }
fi
echo "$dir/bin/python"
