#!/bin/sh
# Builds and installs (once) the test fixture control_msgs (tests/interop/control_msgs: the
# messages and the action the nodes use, written from ROS 2 Jazzy's documented interface) with
# CMake and the rosidl generators of the ROS 2 wheels in VENV (DISTRO: jazzy, the default, from
# tests/interop/setup_venv.sh; kilted from setup_venv_kilted.sh) and the headers of the Python
# the venv was made from; prints its prefix, DIR/control_msgs_fixture-<hash of the fixture's
# files and the script that pins the venv's wheels>, so that a changed fixture or wheel set is
# a new prefix (and r2r, which regenerates its bindings when AMENT_PREFIX_PATH changes, binds it
# anew). Usage: control_msgs_fixture.sh VENV DIR [DISTRO]. Using it: r2r builds against
# AMENT_PREFIX_PATH=PREFIX:VENV (with control_msgs in IDL_PACKAGE_FILTER); rclpy and the nodes
# run with PREFIX/lib in LD_LIBRARY_PATH, rclpy with PREFIX/lib/python3.*/site-packages in
# PYTHONPATH.
set -eu
venv=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
source_dir="$here/control_msgs"
case "${3:-jazzy}" in
    jazzy) pins=setup_venv.sh ;;
    kilted) pins=setup_venv_kilted.sh ;;
    *) echo "control_msgs_fixture.sh: no wheel set for the distribution '$3'" >&2; exit 1 ;;
esac
hash=$(cd "$here" && find control_msgs "$pins" -type f | sort | xargs cat | sha256sum | cut -c1-12)
mkdir -p "$2"
prefix="$(cd "$2" && pwd)/control_msgs_fixture-$hash"
exec 8>"$prefix.lock"
flock 8
marker="$prefix/share/ament_index/resource_index/rosidl_interfaces/control_msgs"
if [ -f "$marker" ]; then
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
[ -f "$marker" ] || { echo "control_msgs_fixture.sh: installed, but $marker is missing" >&2; exit 1; }
echo "$prefix"
