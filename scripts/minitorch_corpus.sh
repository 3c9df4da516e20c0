#!/usr/bin/env bash
# Runs a completed minitorch solution's own CUDA tests (pytest -m task3_3, -m task3_4 of
# tests/test_tensor_general.py) on lockstep, in one of two modes, on one engine.
#
#   scripts/minitorch_corpus.sh MODE ENGINE CHECKOUT [pytest args...]
#     MODE    noedit: the checkout unchanged, run under LOCKSTEP_NUMBA_CUDA=1 (numba.cuda is lockstep.cuda)
#             import: a copy of the checkout with its numba.cuda import lines pointed at lockstep.cuda
#                     (the edits below, nothing else), run without the no-edit mode
#     ENGINE  loops | fibers | check (check mode: LOCKSTEP_CHECK=1 on the default engine)
#     CHECKOUT  a git checkout of the solution (this script fetches nothing)
#
# Prints one line: MODE ENGINE CHECKOUT COMMIT task3_3 PASSED/TOTAL task3_4 PASSED/TOTAL; the pytest
# output of each run is kept in $LOG_DIR (default /tmp/minitorch_corpus) for the failures' reasons.
# PYTHON (default: python3) is the interpreter with lockstep, numba, hypothesis and pytest installed.
set -euo pipefail

mode=$1 engine=$2 checkout=$(cd "$3" && pwd)
shift 3
python=${PYTHON:-python3}
log_dir=${LOG_DIR:-/tmp/minitorch_corpus}
mkdir -p "$log_dir"
commit=$(git -C "$checkout" rev-parse HEAD)
name=$(basename "$checkout")

env_args=(LOCKSTEP_EMU_ENGINE=loops)
case $engine in
  loops) ;;
  fibers) env_args=(LOCKSTEP_EMU_ENGINE=fibers) ;;
  check) env_args+=(LOCKSTEP_CHECK=1) ;;
  *) echo "engine: loops, fibers or check, not $engine" >&2; exit 2 ;;
esac

case $mode in
  noedit)
    workdir=$checkout
    env_args+=(LOCKSTEP_NUMBA_CUDA=1)
    ;;
  import)
    # The import-line route: a copy, in which the lines that import numba.cuda import lockstep.cuda.
    # A file with `import numba.cuda` (host code: tensor_data.py, the tests) keeps it, gains
    # `import lockstep.cuda`, and its qualified calls `numba.cuda.X` become `lockstep.cuda.X`; kernels'
    # `numba.cuda.syncthreads()` in a file with only `import numba` stay (numba's own objects in kernels).
    workdir=$(mktemp -d "/tmp/minitorch_corpus_${name}_XXXX")
    trap 'rm -rf "$workdir"' EXIT
    git -C "$checkout" archive HEAD | tar -x -C "$workdir"
    find "$workdir/minitorch" "$workdir/tests" -name '*.py' -print0 | xargs -0 sed -i -E \
      -e 's/^(\s*)from numba import cuda\b/\1from lockstep import cuda/' \
      -e 's/^(\s*)from numba\.cuda import /\1from lockstep.cuda import /'
    grep -lE '^\s*import numba\.cuda$' -r "$workdir/minitorch" "$workdir/tests" --include='*.py' | xargs -r sed -i -E \
      -e 's/^(\s*)import numba\.cuda$/\1import numba.cuda\n\1import lockstep.cuda/' \
      -e '/^\s*#/!s/\bnumba\.cuda\.([A-Za-z_])/lockstep.cuda.\1/g'
    env_args+=(LOCKSTEP_NUMBA_CUDA=0)
    ;;
  *) echo "mode: noedit or import, not $mode" >&2; exit 2 ;;
esac

result="$mode $engine $name $commit"
for marker in task3_3 task3_4; do
  log="$log_dir/${name}_${mode}_${engine}_${marker}.log"
  (cd "$workdir" && env "${env_args[@]}" "$python" -m pytest -p no:cacheprovider -q -m "$marker" \
     tests/test_tensor_general.py "$@" >"$log" 2>&1) || true
  passed=$( (grep -oE '[0-9]+ passed' "$log" || true) | tail -1 | cut -d' ' -f1)
  failed=$( (grep -oE '[0-9]+ (failed|error|errors)' "$log" || true) | awk '{s+=$1} END {print s+0}')
  passed=${passed:-0}
  result+=" $marker $passed/$((passed + failed))"
done
echo "$result"
