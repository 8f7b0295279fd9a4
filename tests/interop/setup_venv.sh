#!/bin/sh
# Creates (once) a Python virtual environment with the Cyclone DDS binding for the interop
# test peer. Usage: setup_venv.sh DIR; prints the venv's python.
set -eu
dir="$1"
if [ ! -x "$dir/bin/python" ] || ! "$dir/bin/python" -c "import cyclonedds" 2>/dev/null; then
    python3 -m venv "$dir" >&2
    "$dir/bin/pip" install --quiet --disable-pip-version-check "cyclonedds==11.0.1" >&2
fi
echo "$dir/bin/python"
