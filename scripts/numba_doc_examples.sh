#!/usr/bin/env bash
# Runs numba's CUDA documentation examples (the doc_examples shipped in numba's test suite) on lockstep,
# with the import lines changed: `from numba import cuda` -> `from lockstep import cuda` and
# `from numba.cuda import X` -> `from lockstep.cuda import X`, except numba.cuda.testing (the test harness).
#
#   scripts/numba_doc_examples.sh DOC_EXAMPLES_DIR [ENGINE] [pytest args...]
#     DOC_EXAMPLES_DIR  e.g. $(python -c 'import numba, os; print(os.path.dirname(numba.__file__))')/cuda/tests/doc_examples
#     ENGINE            loops (default) | fibers
# PYTHON (default: python3) is the interpreter with lockstep, numba and pytest installed. Fetches nothing.
set -euo pipefail

source_dir=$(cd "$1" && pwd)
engine=${2:-loops}
shift $(( $# >= 2 ? 2 : 1 ))
python=${PYTHON:-python3}

workdir=$(mktemp -d /tmp/numba_doc_examples_XXXX)
trap 'rm -rf "$workdir"' EXIT
mkdir "$workdir/doc_examples"
cp -r "$source_dir"/. "$workdir/doc_examples/"
rm -rf "$workdir/doc_examples/__pycache__"
find "$workdir/doc_examples" -name '*.py' -print0 | xargs -0 sed -i -E \
  -e 's/^(\s*)from numba import cuda, (.*)$/\1from lockstep import cuda\n\1from numba import \2/' \
  -e 's/^(\s*)from numba import cuda$/\1from lockstep import cuda/' \
  -e '/numba\.cuda\.testing/!s/^(\s*)from numba\.cuda(\.[a-z_]+)? import /\1from lockstep.cuda\2 import /'
# numba's test harness (numba.cuda.testing) asks the CUDA driver at import time whether to skip a test
# (compute capability, cudadevrt); the driver is absent here. The emulated device has an H100's limits,
# cc 9.0 (src/emulator/cuda_api/runtime_device.cpp; lockstep.cuda's Device does not report it), and
# lockstep links no cudadevrt, so those tests run.
cat >"$workdir/conftest.py" <<'PY'
import numba.cuda.testing as harness

harness.skip_unless_cc_60 = harness.skip_unless_cc_75 = lambda fn: fn
harness.skip_if_cudadevrt_missing = lambda fn: fn
PY

cd "$workdir"
LOCKSTEP_NUMBA_CUDA=0 LOCKSTEP_EMU_ENGINE=$engine "$python" -m pytest -p no:cacheprovider -q -rA doc_examples "$@"
