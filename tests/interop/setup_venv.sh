#!/bin/sh
# Creates (once) a Python virtual environment with the independent implementations the
# interop tests check armctl against: Eclipse Cyclone DDS's binding (a DDS peer) and the MCAP
# project's writer and reader with ROS 2 support (rosbag2 files). Usage: setup_venv.sh DIR;
# prints the venv's python.
set -eu
dir="$1"
if [ ! -x "$dir/bin/python" ] || ! "$dir/bin/python" -c "import cyclonedds, mcap_ros2" 2>/dev/null; then
    python3 -m venv "$dir" >&2
    "$dir/bin/pip" install --quiet --disable-pip-version-check \
        "cyclonedds==11.0.1" "mcap==1.6.0" "mcap-ros2-support==0.6.0" >&2
fi
echo "$dir/bin/python"
