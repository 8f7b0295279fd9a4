# Sourced (`. ros_wheels_env.sh`, with `root` the repository and `ros_venv` the venv: sh's `.`
# passes no arguments): the environment in which r2r builds against ROS 2 Jazzy or Kilted from
# the PyPI wheels in the venv (tests/interop/ros_venv.sh), as a sourced ROS 2 would give it,
# with what the wheels need beside: ROS_DISTRO and AMENT_PREFIX_PATH as a setup script would
# set them; libclang from PyPI for r2r's bindgen, with g++'s own headers for the compiler
# headers (stdbool.h) that wheel lacks; and librmw_implementation, which r2r links but the
# wheels do not ship (their librcl links the Fast DDS RMW directly): a link to that RMW stands
# in for it. The control_msgs test fixture (control_msgs_fixture.sh, beside the venv) is a
# second prefix, as an installed control_msgs would be: `ros_fixture`. Sets `ros_distro` to the
# distribution whose wheels the venv holds.
ros_venv=$(cd "$ros_venv" && pwd)
ros_distro=jazzy
for info in "$ros_venv"/lib/python3*/site-packages/ros_kilted_rclpy-*.dist-info; do
    if [ -e "$info" ]; then ros_distro=kilted; fi
done
ros_fixture=$(sh "$root/tests/interop/control_msgs_fixture.sh" "$ros_venv" "$(dirname "$ros_venv")" "$ros_distro") \
    || { echo "ros_wheels_env.sh: no control_msgs fixture: see above" >&2; exit 1; }
ln -sf librmw_fastrtps_cpp.so "$ros_venv/lib/librmw_implementation.so"
# The interface packages r2r generates bindings for: those the nodes use and what they depend
# on (the same packages in Jazzy and Kilted). Named, because r2r regenerates its bindings only
# when an environment variable it watches changes, not when a package is added to the prefix.
IDL_PACKAGE_FILTER="action_msgs;builtin_interfaces;diagnostic_msgs;geometry_msgs;rcl_interfaces"
IDL_PACKAGE_FILTER="$IDL_PACKAGE_FILTER;rosgraph_msgs;sensor_msgs;service_msgs;std_msgs;std_srvs"
IDL_PACKAGE_FILTER="$IDL_PACKAGE_FILTER;trajectory_msgs;type_description_interfaces;unique_identifier_msgs"
IDL_PACKAGE_FILTER="$IDL_PACKAGE_FILTER;control_msgs"
# Kilted too: r2r 0.9.7's build script knows no "kilted" (it panics "ROS_DISTRO not supported:
# kilted"), and what it switches by distribution (QoS and timer calls) is Jazzy's in Kilted.
ROS_DISTRO=jazzy
AMENT_PREFIX_PATH="$ros_fixture:$ros_venv"
LD_LIBRARY_PATH="$ros_fixture/lib:$ros_venv/lib"
LIBCLANG_PATH=$("$ros_venv/bin/python" -c "import clang, os; print(os.path.join(os.path.dirname(clang.__file__), 'native'))")
BINDGEN_EXTRA_CLANG_ARGS="-I$(g++ -print-file-name=include)"
export IDL_PACKAGE_FILTER ROS_DISTRO AMENT_PREFIX_PATH LD_LIBRARY_PATH LIBCLANG_PATH BINDGEN_EXTRA_CLANG_ARGS
