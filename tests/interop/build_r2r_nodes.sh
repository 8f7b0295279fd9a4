#!/bin/sh
# Builds controller_node and sim_node on the r2r backend (rcl) against ROS 2 Jazzy from the
# PyPI wheels in the tests' venv, and prints the directory that holds them. Usage:
# build_r2r_nodes.sh VENV TARGET_DIR. What the wheels need beside a sourced ROS 2 (which needs
# none of this): ROS_DISTRO and AMENT_PREFIX_PATH as a setup script would set them; libclang
# from PyPI for r2r's bindgen, with g++'s own headers for the compiler headers (stdbool.h) that
# wheel lacks; and librmw_implementation, which r2r links but the wheels do not ship (their
# librcl links the Fast DDS RMW directly): a link to that RMW stands in for it. Running the
# binaries needs the environment of r2r_nodes() in tests/support (the wheels' libraries and
# libpython, which their librcl links for rclpy). r2r's build script runs against them too.
set -eu
venv=$(cd "$1" && pwd)
target=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ ! -e "$venv/lib/librmw_implementation.so" ]; then
    ln -s librmw_fastrtps_cpp.so "$venv/lib/librmw_implementation.so"
fi
clang_dir=$("$venv/bin/python" -c "import clang, os; print(os.path.join(os.path.dirname(clang.__file__), 'native'))")
compiler_headers=$(g++ -print-file-name=include)
ROS_DISTRO=jazzy AMENT_PREFIX_PATH="$venv" LD_LIBRARY_PATH="$venv/lib" LIBCLANG_PATH="$clang_dir" \
    BINDGEN_EXTRA_CLANG_ARGS="-I$compiler_headers" CARGO_TARGET_DIR="$target" \
    "${CARGO:-cargo}" build --release --quiet --manifest-path "$root/Cargo.toml" \
    -p armctl_ros --no-default-features --features r2r --bins >&2 || {
    echo "build_r2r_nodes.sh: the r2r backend did not build against $venv: see cargo's message above" >&2
    exit 1
}
echo "$target/release"
