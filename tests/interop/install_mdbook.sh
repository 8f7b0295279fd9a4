#!/bin/sh
# Installs (once) mdBook, which builds and tests the book under docs/, from crates.io with
# cargo: a pinned version without its server features (about a minute on two cores). Usage:
# install_mdbook.sh DIR; prints the mdbook program. Its build has a target dir of its own
# (DIR/build), so it never waits for the test run's. Test threads call this at once: a lock
# on DIR.lock lets one install while the others wait.
set -eu
dir="$1"
version=0.5.4
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9
if [ "$("$dir/bin/mdbook" --version 2>/dev/null)" != "mdbook v$version" ]; then
    "${CARGO:-cargo}" install --quiet --locked --force --root "$dir" --target-dir "$dir/build" \
        --no-default-features --features search "mdbook@$version" >&2 || {
        echo "install_mdbook.sh: cargo could not install mdbook $version into $dir (the first run needs access to crates.io): see cargo's message above" >&2
        exit 1
    }
    rm -rf "$dir/build"
fi
echo "$dir/bin/mdbook"
