#!/usr/bin/env bash
# Side-by-side benchmark: armctl, Pinocchio and KDL on the same URDFs and the same random
# states, in one run; prints ns per call and the ratios ours / theirs. Not run by CI.
#
#   bench/run.sh [URDF ROOT TIP]...      default: the reference Panda and UR5, and urdf/panda.urdf
#
# Installs Pinocchio from PyPI (`pin`, with Eigen from `cmeel-eigen`) into a venv under
# target/bench, and KDL from Debian (liborocos-kdl-dev, libkdl-parser-dev) when run as root.
# Both sides are built for the same instruction set: generic x86-64 by default, or
# ARCH=native (or x86-64-v3, say) for -march=$ARCH and target-cpu=$ARCH. Pinocchio is then
# header-only with -march=$ARCH; its URDF parser comes precompiled for generic x86-64 in the
# wheel, and a model it builds crashes code compiled with AVX-512, so the generic build saves
# the model (Model::saveToBinary) and the $ARCH build loads it. KDL's benchmark is always
# built generic, like Debian's library. Each run is pinned to one CPU (BENCH_CPU, default 1)
# when taskset is there. BENCH_WRITE_DOCS=1 also writes the tables into docs/performance.md
# (between its markers), with the date, the CPU and the build.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
work="$top/target/bench"
batches=${BATCHES:-41}
arch=${ARCH:-}
march=${arch:+-march=$arch}
mkdir -p "$work"

if [ ! -x "$work/venv/bin/python" ]; then
  python3 -m venv "$work/venv"
  "$work/venv/bin/pip" install --quiet pin cmeel-eigen
fi
prefix=$("$work/venv/bin/python" -c 'import cmeel, os; print(os.path.join(os.path.dirname(cmeel.__file__), "..", "cmeel.prefix"))' 2>/dev/null || true)
[ -d "$prefix/include/pinocchio" ] || prefix=$(echo "$work"/venv/lib/python3*/site-packages/cmeel.prefix)

if [ ! -f /usr/include/kdl_parser/kdl_parser.hpp ] && [ "$(id -u)" = 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq liborocos-kdl-dev libkdl-parser-dev >/dev/null
fi

# build_pinocchio OUTPUT [FLAGS...]: the Pinocchio benchmark, rebuilt when its source changed.
build_pinocchio() {
  local output=$1
  shift
  if [ ! -x "$output" ] || [ "$here/pinocchio_bench.cpp" -nt "$output" ]; then
    echo "building $(basename "$output") (about 3 minutes)..." >&2
    g++ -O3 -std=c++17 -DNDEBUG -w "$@" \
      -DBOOST_MPL_LIMIT_LIST_SIZE=30 -DBOOST_MPL_LIMIT_VECTOR_SIZE=30 -DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS \
      -DBOOST_FUSION_INVOKE_MAX_ARITY=12 -DPINOCCHIO_WITH_URDFDOM -DPINOCCHIO_URDFDOM_HEADERS_MAJOR_VERSION=3 \
      -DPINOCCHIO_URDFDOM_HEADERS_MINOR_VERSION=0 -DPINOCCHIO_URDFDOM_HEADERS_PATCH_VERSION=0 \
      -I"$prefix/include" -I"$prefix/include/eigen3" "$here/pinocchio_bench.cpp" -o "$output" \
      -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lpinocchio_default -lpinocchio_parsers -lurdfdom_model \
      -lconsole_bridge -lboost_serialization
  fi
}
pin_generic="$work/pinocchio_bench"
build_pinocchio "$pin_generic"
pin_bench=$pin_generic
if [ -n "$arch" ]; then
  pin_bench="$work/pinocchio_bench-$arch"
  build_pinocchio "$pin_bench" "$march" -DBENCH_NO_URDF
fi
pin=()
command -v taskset >/dev/null && pin=(taskset -c "${BENCH_CPU:-1}")
have_kdl=0
if [ -f /usr/include/kdl_parser/kdl_parser.hpp ]; then
  if [ ! -x "$work/kdl_bench" ] || [ "$here/kdl_bench.cpp" -nt "$work/kdl_bench" ]; then
    g++ -O3 -std=c++17 -DNDEBUG -I/usr/include/eigen3 "$here/kdl_bench.cpp" -o "$work/kdl_bench" -lorocos-kdl -lkdl_parser
  fi
  have_kdl=1
fi

echo "building armctl${arch:+ with target-cpu=$arch}..." >&2
(cd "$top" && RUSTFLAGS="${arch:+-C target-cpu=$arch}" CARGO_TARGET_DIR="$work/armctl${arch:+-$arch}" cargo build --quiet --release -p armctl)
armctl="$work/armctl${arch:+-$arch}/release/armctl"

# The best of each algorithm's medians in $2, as aligned text or as a Markdown table ($1).
table() {
  awk -v style="$1" '
    { key = $1 " " $2; if (!(key in best) || $3 < best[key]) best[key] = $3 }
    function row(a, ours, pin, kdl, r1, r2) {
      if (style == "markdown") printf "| %s | %s | %s | %s | %s | %s |\n", a, ours, pin, kdl, r1, r2
      else printf "%-28s %10s %10s %10s %14s %10s\n", a, ours, pin, kdl, r1, r2
    }
    END {
      row("algorithm", "armctl", "pinocchio", "kdl", "armctl/pin", "armctl/kdl")
      if (style == "markdown") print "|---|---:|---:|---:|---:|---:|"
      n = split("rnea mass_matrix coriolis_matrix gravity forward_dynamics forward_kinematics jacobian regressor all_terms rnea_derivatives gravity_derivatives forward_dynamics_derivatives", order, " ")
      for (i = 1; i <= n; i++) {
        a = order[i]; ours = best["armctl " a]; pin = best["pinocchio " a]
        kdl = best["kdl " a]; if (a == "coriolis_matrix" && kdl == "") kdl = best["kdl coriolis_vector"]
        row(a, sprintf("%.1f", ours), (pin == "" ? "-" : sprintf("%.1f", pin)), (kdl == "" ? "-" : sprintf("%.1f", kdl)),
          (pin == "" ? "-" : sprintf("%.2f", ours / pin)), (kdl == "" ? "-" : sprintf("%.2f", ours / kdl)))
      }
    }' "$2"
}
tables="$work/tables.md"
: >"$tables"

if [ $# -eq 0 ]; then
  ref="$top/tests/data/reference"
  set -- "$ref/panda_arm.urdf" panda_link0 panda_link8 "$ref/ur5.urdf" world tool0 "$top/urdf/panda.urdf" world panda_link8
fi
while [ $# -ge 3 ]; do
  urdf=$1 root=$2 tip=$3
  shift 3
  states="$work/states.txt"
  out="$work/results.txt"
  : >"$out"
  # Alternate the runs and keep each one's better median, so a noisy neighbour hurts both alike.
  model=$urdf
  if [ -n "$arch" ]; then
    model="$work/model.bin"
    "$pin_generic" --save "$urdf" "$model"
  fi
  for round in 1 2; do
    "${pin[@]}" "$armctl" bench "$urdf" --tip "$tip" --batches "$batches" --states-out "$states" |
      awk 'NR > 1 { print "armctl", $1, $2 }' >>"$out"
    "${pin[@]}" "$pin_bench" "$model" "$tip" "$states" "$batches" >>"$out" 2>/dev/null
    [ $have_kdl = 1 ] && "${pin[@]}" "$work/kdl_bench" "$urdf" "$root" "$tip" "$states" "$batches" >>"$out"
  done
  title="$(basename "$urdf") ($root -> $tip), ns per call (median of $batches batches, best of 2 rounds), ${arch:-generic x86-64}"
  echo
  echo "$title"
  table text "$out"
  if [ -n "${BENCH_WRITE_DOCS:-}" ]; then
    { echo; echo "**$title**"; echo; table markdown "$out"; } >>"$tables"
  fi
done
echo
echo "kdl coriolis: KDL has no Coriolis matrix; its column is JntToCoriolis (the vector C qd)."

# BENCH_WRITE_DOCS=1: the tables replace the generated part of docs/performance.md, with when,
# where and how they were measured.
if [ -n "${BENCH_WRITE_DOCS:-}" ]; then
  page="$top/docs/performance.md"
  cpu=$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)
  pin_version=$("$work/venv/bin/python" -c 'import importlib.metadata as m; print(m.version("pin"))' 2>/dev/null || echo unknown)
  kdl_version=$(dpkg-query -W -f '${Version}' liborocos-kdl-dev 2>/dev/null || echo unknown)
  {
    echo "<!-- bench/run.sh writes from here (BENCH_WRITE_DOCS=1 bash bench/run.sh): edits up to the closing marker are lost -->"
    echo
    echo "Written by \`bench/run.sh\` on $(date -u +%Y-%m-%d): ${cpu:-an unknown CPU}, $(nproc) cores," \
      "${arch:-generic x86-64} on both sides, each run pinned to CPU ${BENCH_CPU:-1}$([ ${#pin[@]} -eq 0 ] && echo ' (no taskset: not pinned)')," \
      "Pinocchio $pin_version (PyPI \`pin\`), KDL $([ $have_kdl = 1 ] && echo "$kdl_version (Debian)" || echo 'not installed')."
    cat "$tables"
    echo
    echo "KDL has no Coriolis matrix; its column there is JntToCoriolis (the vector C qd)."
    echo
    echo "<!-- bench/run.sh writes to here -->"
  } >"$work/generated.md"
  awk -v generated="$work/generated.md" '
    /^<!-- bench\/run.sh writes from here/ { while ((getline line < generated) > 0) print line; skip = 1; next }
    /^<!-- bench\/run.sh writes to here -->/ { skip = 0; next }
    !skip { print }' "$page" >"$page.new"
  grep -q "bench/run.sh writes to here" "$page.new" || { echo "no generated block in $page" >&2; rm "$page.new"; exit 1; }
  mv "$page.new" "$page"
  echo "wrote the tables into $page" >&2
fi
