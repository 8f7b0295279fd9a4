#!/bin/sh
# Creates (once) a Python virtual environment with the independent implementations the
# interop tests check armctl against: Eclipse Cyclone DDS's binding (a DDS peer), the MCAP
# project's writer and reader with ROS 2 support (rosbag2 files), the rosbags package (rosbag2
# SQLite bags), the MuJoCo physics
# engine with NumPy (tests/mujoco/peer.py, the simulator's reference), and the xacro program
# (without ROS), which expands .xacro robot descriptions. Usage: setup_venv.sh
# DIR; prints the venv's python. A venv made before a package was added here is completed.
set -eu
dir="$1"
if [ ! -x "$dir/bin/python" ] || ! "$dir/bin/python" -c "import cyclonedds, mcap_ros2, mujoco, numpy, xacro, rosbags" 2>/dev/null; then
    python3 -m venv "$dir" >&2
    # The venv's own python runs pip: a venv copied from elsewhere keeps a pip script whose
    # first line names the original venv, and would install there.
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check \
        "cyclonedds==11.0.1" "mcap==1.6.0" "mcap-ros2-support==0.6.0" \
        "mujoco==3.3.7" "numpy==2.4.6" "xacro==2.1.1" "rosbags==0.11.9" >&2
fi
echo "$dir/bin/python"
