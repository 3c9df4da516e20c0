#!/usr/bin/env bash
# Writes the region-loop split of every kernel, benchmark and test source in
# the tree to OUT_DIR (one .cpp per source, its path with / as __), with the
# debug log of what was split beside each: a refactoring of the region-loop
# compiler must leave two snapshots byte-identical (`diff -r BEFORE AFTER`).
# usage: scripts/split_snapshot.sh HOSTIFY OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
hostify=$(realpath "$1")
out=$2
mkdir -p "$out"
flags=(-std=c++20 -Iinclude -Ikernels -Iinclude/lockstep/cuda_include -Itests/cpp -Itests/cpp/check)
git ls-files 'kernels/*.cu' 'bench/*.cu' 'tests/cpp/*.cu' 'tests/cpp/**/*.cu' | sort -u | while read -r source; do
  name=${source//\//__}
  LOCKSTEP_REGION_LOOPS_LOG=1 "$hostify" --split-barriers "${flags[@]}" -- "$source" "$out/$name.cpp" 2>"$out/$name.log" || echo "exit $?" >>"$out/$name.log"
done
echo "$(ls "$out"/*.cpp | wc -l) sources split into $out"
