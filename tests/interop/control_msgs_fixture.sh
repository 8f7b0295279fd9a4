#!/bin/sh
# Builds and installs (once) the test fixture control_msgs (tests/interop/control_msgs: the
# messages and the action the nodes use, written from ROS 2 Jazzy's documented interface) into
# PREFIX, with CMake and the rosidl generators of the ROS 2 Jazzy wheels in VENV
# (tests/interop/setup_venv.sh) and the Python 3.11 headers of the Python the venv was made
# from; prints PREFIX. Usage: control_msgs_fixture.sh VENV PREFIX. Using it: r2r builds against
# AMENT_PREFIX_PATH=PREFIX:VENV (with control_msgs in IDL_PACKAGE_FILTER); rclpy and the nodes
# run with PREFIX/lib in LD_LIBRARY_PATH, rclpy with PREFIX/lib/python3.11/site-packages in
# PYTHONPATH. Rebuilt when a fixture file is newer than the installed package.
set -eu
venv=$(cd "$1" && pwd)
prefix=$2
source_dir=$(cd "$(dirname "$0")/control_msgs" && pwd)
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
exec 8>"$prefix.lock"
flock 8
marker="$prefix/share/ament_index/resource_index/rosidl_interfaces/control_msgs"
if [ -f "$marker" ] && [ -z "$(find "$source_dir" -newer "$marker" -type f)" ]; then
    echo "$prefix"
    exit 0
fi
build="$prefix.build"
rm -rf "$build"
# The wheels' CMake packages find the ROS packages through both variables (ament_cmake through
# CMake's, the typesupports through the ament index).
export AMENT_PREFIX_PATH="$venv" CMAKE_PREFIX_PATH="$venv"
{
    "$venv/bin/cmake" -S "$source_dir" -B "$build" -DCMAKE_INSTALL_PREFIX="$prefix" \
        -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DPython3_EXECUTABLE="$venv/bin/python3" \
        && "$venv/bin/cmake" --build "$build" -j2 \
        && "$venv/bin/cmake" --install "$build"
} > "$build.log" 2>&1 || {
    tail -40 "$build.log" >&2
    echo "control_msgs_fixture.sh: the control_msgs fixture did not build (the log: $build.log)" >&2
    exit 1
}
touch "$marker"
echo "$prefix"
