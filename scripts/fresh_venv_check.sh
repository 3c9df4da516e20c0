#!/usr/bin/env bash
# The README's first command on a machine without libclang-dev: `pip install .`
# into a fresh virtual environment (libclang comes from PyPI's wheel, a
# dependency), then examples/lecture.py with lockstep.FibersWarning as an
# error: every kernel of the lecture, its tiled matmuls included, must run as
# region loops after a plain install. BUILD_DIR (default build) is reused, so
# only the Python extension is built again.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
venv=$(mktemp -d)/venv
trap 'rm -rf "$(dirname "$venv")"' EXIT
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check . -C build-dir="$BUILD_DIR"
cd "$(dirname "$venv")"  # not the source tree, whose python/ folder is not the installed package
"$venv/bin/python" -c "import lockstep._core as c, os, sys; r = c.region_loops_unavailable_reason(); print('libclang:', os.environ.get('LOCKSTEP_LIBCLANG'), r); sys.exit(1 if r or '$venv' not in os.environ.get('LOCKSTEP_LIBCLANG', '') else 0)"
"$venv/bin/python" -c "import runpy, sys, warnings, lockstep
warnings.simplefilter('error', lockstep.FibersWarning)
runpy.run_path(sys.argv[1], run_name='__main__')" "$OLDPWD/examples/lecture.py"
