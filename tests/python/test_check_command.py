"""``lockstep check FILE.cu``: a kernel file's own test harness run in check mode."""

import os
import subprocess
import sys
import textwrap

HARNESS = textwrap.dedent(
    r"""
    #include <cstdio>
    #include "lockstep/cuda.h"

    __global__ void add_one(const float* in, float* out, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i GUARD n) out[i] = in[i] + 1.0f;
    }

    int main() {
      const int n = 100;
      float *in, *out;
      cudaMalloc(&in, n * sizeof(float));
      cudaMalloc(&out, (n + 1) * sizeof(float));
      cudaMemset(in, 0, n * sizeof(float));
      lockstep::launch(add_one, 1, 128)(in, out, n);
      std::printf("done\n");
      return 0;
    }
    """
)


def run_check(tmp_path, guard):
    source = tmp_path / "harness.cu"
    source.write_text(HARNESS.replace("GUARD", guard))
    return subprocess.run(
        [sys.executable, "-m", "lockstep", "check", str(source)],
        capture_output=True,
        text=True,
        env=dict(os.environ, LOCKSTEP_CACHE_DIR=str(tmp_path)),
    )


def test_check_command_finds_an_off_by_one_guard(tmp_path):
    result = run_check(tmp_path, "<=")  # reads in[100], past the 100-element allocation
    assert result.returncode != 0
    report = result.stdout + result.stderr
    guard_line = HARNESS.splitlines().index("  if (i GUARD n) out[i] = in[i] + 1.0f;") + 1
    assert "memcheck" in report and f"harness.cu:{guard_line}" in report, report


def test_check_command_passes_the_correct_twin(tmp_path):
    result = run_check(tmp_path, "<")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "done" in result.stdout


def test_command_without_subcommand_prints_usage():
    result = subprocess.run([sys.executable, "-m", "lockstep"], capture_output=True, text=True)
    assert result.returncode == 2 and "lockstep check" in result.stderr


SHARED_ATOMICS = textwrap.dedent(
    r"""
    #include <cstdio>

    __global__ void counts(unsigned* out) {
      __shared__ unsigned s[4];
      if (threadIdx.x < 4) s[threadIdx.x] = 0;
      __syncthreads();
      atomicMax(&s[3], threadIdx.x * 7u);
      atomicAdd(&s[2], 1u);
      __syncthreads();
      if (threadIdx.x == 0) { out[0] = s[3]; out[1] = s[2]; }
    }

    int main() {
      unsigned* out;
      cudaMallocManaged(&out, 2 * sizeof(unsigned));
      counts<<<2, 64>>>(out);
      cudaDeviceSynchronize();
      std::printf("%u %u\n", out[0], out[1]);
      return 0;
    }
    """
)


def test_atomics_on_shared_memory_are_no_race(tmp_path):
    """A program's own __shared__ arrays (thread-locals of the executable) take plain updates outside
    check mode; a check build must keep them atomics, or each is reported as a race with the others."""
    source = tmp_path / "atomics.cu"
    source.write_text(SHARED_ATOMICS)
    result = subprocess.run(
        [sys.executable, "-m", "lockstep", "check", str(source)],
        capture_output=True,
        text=True,
        env=dict(os.environ, LOCKSTEP_CACHE_DIR=str(tmp_path)),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "racecheck" not in result.stdout + result.stderr
    assert result.stdout.split() == [str(63 * 7), "64"]
