"""The fast path after a plain install: the package takes libclang from PyPI's
``libclang`` wheel (a dependency), and a tiled shared-memory kernel compiled
through lockstep.compile runs as region loops with it; where no libclang
loads, the package and liblockstep say so once, with the fix, and the kernel
still gives the right answer on fibers.

Each case runs in a child process: which libclang a process uses is decided
once, at its first split, and LOCKSTEP_LIBCLANG is set at import."""

import importlib.util
import os
import pathlib
import subprocess
import sys

import lockstep

TILE = 8
# The tile loop's bound written out, (k + T - 1) / T: a bound through a call
# (cdiv) is the uniformity analysis' to see through, not this test's.
TILED = f"""
#define T {TILE}
__global__ void tiled(const float* a, const float* b, float* c, int n, int k, int m) {{
  __shared__ float as[T][T];
  __shared__ float bs[T][T];
  int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
  float sum = 0;
  for (int ph = 0; ph < (k + T - 1) / T; ++ph) {{
    as[threadIdx.y][threadIdx.x] = row < n && ph * T + threadIdx.x < k ? a[row * k + ph * T + threadIdx.x] : 0;
    bs[threadIdx.y][threadIdx.x] = col < m && ph * T + threadIdx.y < k ? b[(ph * T + threadIdx.y) * m + col] : 0;
    __syncthreads();
    for (int i = 0; i < T; ++i) sum += as[threadIdx.y][i] * bs[i][threadIdx.x];
    __syncthreads();
  }}
  if (row < n && col < m) c[row * m + col] = sum;
}}
"""

# Small integers: every order of the sums gives the same floats, so the
# result is compared exactly.
CHILD = f"""
import os, sys, warnings
import numpy as np
import lockstep
print("LOCKSTEP_LIBCLANG=" + os.environ.get("LOCKSTEP_LIBCLANG", ""))
rng = np.random.default_rng(int(sys.argv[1]))
n, k, m = 19, 29, 13
a = rng.integers(-8, 8, (n, k)).astype(np.float32)
b = rng.integers(-8, 8, (k, m)).astype(np.float32)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    module = lockstep.compile(sys.stdin.read(), device="cpu", source_name="tiled.cu")
    lockstep.compile("__global__ void other(int* p) {{ __syncthreads(); }}", device="cpu", source_name="other.cu")
for w in caught:
    print("WARNING: " + str(w.message))
c = lockstep.asarray(np.full((n, m), np.nan, np.float32), device="cpu")
grid = ((m + {TILE} - 1) // {TILE}, (n + {TILE} - 1) // {TILE})
module.tiled[grid, ({TILE}, {TILE})](lockstep.asarray(a), lockstep.asarray(b), c, n, k, m)
got = c.numpy()
assert np.array_equal(got, a @ b), "wrong product"
print("RIGHT")
"""


def run_child(tmp_path, seed, **env_changes):
    env = {key: value for key, value in os.environ.items() if key != "LOCKSTEP_LIBCLANG"}
    env.update(LOCKSTEP_REGION_LOOPS_LOG="1", LOCKSTEP_CACHE_DIR=str(tmp_path / "cache"), LOCKSTEP_EMU_ENGINE="loops", **env_changes)
    package_parent = os.path.dirname(os.path.dirname(lockstep.__file__))
    env["PYTHONPATH"] = os.pathsep.join([package_parent, os.environ.get("PYTHONPATH", "")])
    child = subprocess.run([sys.executable, "-c", CHILD, str(seed)], input=TILED, capture_output=True, text=True, timeout=300, env=env)
    assert child.returncode == 0, child.stdout + child.stderr
    assert "RIGHT" in child.stdout
    return child


def wheel_library():
    spec = importlib.util.find_spec("clang")
    assert spec is not None, "the libclang wheel, a dependency of lockstep, is not installed"
    path = pathlib.Path(spec.submodule_search_locations[0], "native", "libclang.so")
    assert path.is_file(), f"the libclang wheel has no {path}"
    return str(path)


def test_the_package_takes_libclang_from_the_wheel_and_tiled_kernels_run_as_loops(tmp_path):
    seed = int.from_bytes(os.urandom(4), "little")
    child = run_child(tmp_path, seed)
    assert f"LOCKSTEP_LIBCLANG={wheel_library()}" in child.stdout.splitlines()
    assert f"libclang {wheel_library()} (" in child.stderr, child.stderr
    assert "kernel tiled runs as loops over threads" in child.stderr, child.stderr
    assert "WARNING" not in child.stdout
    assert "region loops are unavailable" not in child.stderr


def test_without_libclang_the_first_build_says_so_once_with_the_fix(tmp_path):
    seed = int.from_bytes(os.urandom(4), "little")
    missing = str(tmp_path / "no-such-libclang.so")
    child = run_child(tmp_path, seed, LOCKSTEP_LIBCLANG=missing)
    warnings_seen = [line for line in child.stdout.splitlines() if line.startswith("WARNING")]
    assert len(warnings_seen) == 1, child.stdout
    for said in (warnings_seen[0], child.stderr):
        assert "region loops are unavailable" in said and missing in said
    assert child.stderr.count("lockstep: region loops are unavailable") == 1, child.stderr
    assert "pip install libclang" in warnings_seen[0]
    assert "runs as loops over threads" not in child.stderr
