#!/usr/bin/env bash
# Installs what the tests need on a fresh Debian machine and runs them all:
# the C++ tests through ctest, then the Python package's tests through pytest.
# BUILD_DIR (default build) is where CMake builds the C++ tests.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# System packages, installed only if absent (apt-get update only then too);
# OpenBLAS is the CPU BLAS behind the emulated cuBLAS (src/emulator/libraries/cublas);
# libclang, the region-loop compiler's parser (src/emulator/compile_time/region_loops),
# comes from PyPI's libclang wheel (a dependency of the package, installed below;
# the C++ build finds it through python3): no libclang-dev. libclang1-16 (the
# library alone, no resource headers, which GCC's then stand in for) is a second
# one the compiler's tests run under (LLVM 16 renumbered the cursor kinds);
# PoCL (OpenCL on the CPU) is what emulator_bench and `lockstep bench`
# compare the emulator with.
missing=()
for package in cmake ninja-build g++ libgtest-dev clang-format libopenblas0-pthread libclang1-16 pocl-opencl-icd ocl-icd-opencl-dev; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]}"
  as_root apt-get update
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi

# The Python package and pytest, built in the C++ tests' build folder with
# the tests on: the library the extension links and the one the C++ tests
# run are compiled once, the same objects.
PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check ".[test]" \
  -C build-dir="$BUILD_DIR" -C cmake.define.LOCKSTEP_BUILD_TESTS=ON -C cmake.define.LOCKSTEP_BUILD_BENCH=ON

# The C++ tests (built above). The extension is installed: its target leaves
# the build, which then names nothing of pip's temporary build environment.
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_BUILD_TESTS=ON -DLOCKSTEP_BUILD_BENCH=ON -DLOCKSTEP_BUILD_PYTHON=OFF
cmake --build "$BUILD_DIR"
# With nvcc on the machine (CI's is), the build above also compiled the kernel
# tests, benchmark and example for sm_90 and the library's GPU kernels
# (compile only: they run on a GPU through bench/RESULTS.md's recipe).
if [ -n "${CI:-}" ] && ! grep -q "LOCKSTEP_NVCC:BOOL=ON" "$BUILD_DIR/CMakeCache.txt"; then
  echo "nvcc not found: CI must compile the kernels for the GPU (install the CUDA toolkit)" >&2
  exit 1
fi

# A kernel split into region loops that the host compiler refuses would run
# on fibers as written and pass unseen: in the tests it is an error.
export LOCKSTEP_REGION_LOOPS_STRICT=1
ctest --test-dir "$BUILD_DIR" --output-on-failure -j2
# The same kernels on the fiber engine alone: kernels split into region loops
# (src/emulator/compile_time/region_loops) must give the same results there.
LOCKSTEP_EMU_ENGINE=fibers ctest --test-dir "$BUILD_DIR" --output-on-failure -j2 -L "emulator|runtime|tensor"

python3 -m pytest -q tests/python

# The README's first command in a fresh virtual environment (no libclang-dev
# here: libclang comes from PyPI's wheel): every kernel of examples/lecture.py
# must run as region loops.
BUILD_DIR="$BUILD_DIR" bash scripts/fresh_venv_check.sh
