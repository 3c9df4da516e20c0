#!/usr/bin/env bash
# The GPU test suite, run on a machine with an NVIDIA GPU and the CUDA toolkit
# (the device machine of bench/RESULTS.md): the single-source kernel tests and
# the whole-program tests built by nvcc, real cuBLAS against float64
# references, and the Python tests marked `gpu` (lockstep.cuda, fusion, tensor
# ops on cuda:0) against a package built there. Logs go to LOG_DIR (default
# gpu-logs); a table of results is printed last.
# GTEST_ROOT, when set, is a folder holding GoogleTest's include/ and lib/
# (with lib/cmake_GTest, its CMake package) for machines without libgtest-dev.
# PART=cpp or PART=python runs one half (each fits a 10-minute call).
set -uo pipefail
cd "$(dirname "$0")/.."
logs=${LOG_DIR:-gpu-logs}
mkdir -p "$logs"
# The image's default compiler links libstdc++ statically (cmake/shared_cxx_runtime.cmake refuses it).
export CC=/usr/bin/gcc CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++
if [ -n "${GTEST_ROOT:-}" ]; then
  cp -r "$GTEST_ROOT"/include/* /usr/include/ && cp "$GTEST_ROOT"/lib/*.a /usr/lib/x86_64-linux-gnu/ &&
    mkdir -p /usr/lib/x86_64-linux-gnu/cmake/GTest && cp "$GTEST_ROOT"/lib/cmake_GTest/* /usr/lib/x86_64-linux-gnu/cmake/GTest/
fi
results=()
record() { results+=("| $1 | $2 |"); }

if [ "${PART:-all}" != python ]; then
cmake -S . -B build-gpu -G Ninja -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_CUDA_HOST_COMPILER="$CXX" -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_NVCC=ON -DLOCKSTEP_BUILD_TESTS=ON -DLOCKSTEP_BUILD_BENCH=OFF >"$logs/configure.log" 2>&1 ||
  { tail -30 "$logs/configure.log"; exit 1; }
programs=$(cd build-gpu && ninja -t targets all | grep -o '^gpu_program_[a-z_0-9]*' | sort -u | tr '\n' ' ')
if cmake --build build-gpu -j "$(nproc)" --target gpu_tests cublas_gpu_tests $programs >"$logs/build.log" 2>&1; then
  for t in gpu_tests cublas_gpu_tests; do
    exe=$(find build-gpu -name "$t" -type f -perm -u+x | head -1)
    "$exe" >"$logs/$t.log" 2>&1
    record "$t" "rc=$? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \] [0-9]' "$logs/$t.log" | tr '\n' ' ')"
  done
  for p in $programs; do
    exe=$(find build-gpu -name "$p" -type f -perm -u+x | head -1)
    timeout 120 "$exe" >"$logs/$p.log" 2>&1
    record "$p" "rc=$?"
  done
else
  tail -40 "$logs/build.log"
  record build failed
fi
fi

if [ "${PART:-all}" != cpp ]; then
# The Python package, built here against this machine's Python and nvcc.
if python3 -m pip install -q --no-build-isolation --no-deps --target /tmp/lockstep-site . >"$logs/pip.log" 2>&1; then
  # test_waits_annotations.py imports the libclang wheel's bindings (a test
  # extra the device machine lacks) at collection; it has no GPU test.
  PYTHONPATH=/tmp/lockstep-site python3 -m pytest -q -p no:cacheprovider -m gpu --ignore=tests/python/test_waits_annotations.py tests/python \
    >"$logs/pytest_gpu.log" 2>&1
  record "pytest -m gpu" "rc=$? $(tail -1 "$logs/pytest_gpu.log")"
else
  tail -30 "$logs/pip.log"
  record "pip install" failed
fi
fi
printf '%s\n' "| what | result |" "|---|---|" "${results[@]}"
