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
