#!/usr/bin/env bash
# Compile check of the ros2_control plugin without ROS: its C++ against the stand-in
# declarations beside this script (include/) and armctl's C header, once as Humble and once as
# Jazzy (ARMCTL_ROS_DISTRO_JAZZY). Syntax and types only: nothing is linked or run, and no cargo
# is needed. Exits non-zero on the first failure.
# Usage: ros2_control/test_api/check.sh   (CXX overrides the compiler, default g++)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cxx=${CXX:-g++}
plugin=$root/ros2_control/armctl_controllers

for distro in humble jazzy; do
    defines=()
    [ "$distro" = jazzy ] && defines=(-DARMCTL_ROS_DISTRO_JAZZY)
    for source in "$plugin"/src/*.cpp; do
        "$cxx" -std=c++17 -Wall -Wextra -Werror -fsyntax-only "${defines[@]}" \
            -I "$plugin/include" -I "$here/include" -I "$root/include" "$source"
        echo "ok: $(basename "$source") as $distro"
    done
done
