#!/bin/sh
# The ROS 2 prefix of the real-ROS tests (the r2r build, the rclpy peers, the colcon check):
# the PyPI wheels of the distribution ARMCTL_TEST_ROS_DISTRO names, `jazzy` (the default: the
# tests' venv of setup_venv.sh, TMP/cyclonedds-venv) or `kilted` (setup_venv_kilted.sh,
# TMP/ros-venv-kilted). Creates it once and prints its folder. Usage: ros_venv.sh TMP
set -eu
here=$(cd "$(dirname "$0")" && pwd)
case "${ARMCTL_TEST_ROS_DISTRO:-jazzy}" in
    jazzy) python=$(sh "$here/setup_venv.sh" "$1/cyclonedds-venv") ;;
    kilted) python=$(sh "$here/setup_venv_kilted.sh" "$1/ros-venv-kilted") ;;
    *)
        echo "ros_venv.sh: ARMCTL_TEST_ROS_DISTRO is '$ARMCTL_TEST_ROS_DISTRO': the tests know jazzy and kilted" >&2
        exit 1
        ;;
esac
dirname "$(dirname "$python")"
