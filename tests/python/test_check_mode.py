"""Check mode from Python: lockstep.check() instruments kernels compiled in
its scope and the library's ops, and reports findings as KernelError."""

import numpy as np
import pytest

import lockstep

MISSING_BARRIER = r"""
__global__ void shift_left(const float* in, float* out, int n) {
  __shared__ float tile[64];
  tile[threadIdx.x] = in[threadIdx.x];
  out[threadIdx.x] = tile[(threadIdx.x + 1) % 64];  // reads a neighbour's write: no __syncthreads
}
"""

WITH_BARRIER = MISSING_BARRIER.replace("  out[threadIdx.x]", "  __syncthreads();\n  out[threadIdx.x]").replace("shift_left", "shift_left_ok")


def test_check_mode_reports_a_missing_barrier_with_its_line(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCKSTEP_CACHE_DIR", str(tmp_path))
    x = lockstep.asarray(np.random.rand(64).astype(np.float32))
    y = lockstep.empty((64,), "float32")
    with lockstep.check() as options:
        assert options["checks"] == "memcheck,racecheck,synccheck,initcheck"
        mod = lockstep.compile(MISSING_BARRIER, source_name="shift.cu")
        with pytest.raises(lockstep.KernelError) as caught:
            mod.shift_left[1, 64](x, y, 64)
    message = str(caught.value)
    assert "racecheck" in message and "shift_left" in message
    assert "shift.cu:5" in message  # the unsynchronised read
    assert lockstep.emulator_options()["checks"] == "none"  # the scope restored normal mode


def test_check_mode_is_silent_on_correct_kernels_and_library_ops(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCKSTEP_CACHE_DIR", str(tmp_path))
    data = np.random.rand(64).astype(np.float32)
    x = lockstep.asarray(data)
    y = lockstep.empty((64,), "float32")
    a = np.random.rand(20, 30).astype(np.float32)
    b = np.random.rand(30, 10).astype(np.float32)
    with lockstep.check():
        lockstep.compile(WITH_BARRIER).shift_left_ok[1, 64](x, y, 64)
        product = lockstep.matmul(a, b, algo="tiled_static").numpy()
        total = lockstep.sum(lockstep.asarray(a), dim=1).numpy()
    assert np.array_equal(y.numpy(), np.roll(data, -1))
    assert np.abs(product - a.astype(np.float64) @ b).max() < 1e-5
    assert np.abs(total - a.astype(np.float64).sum(axis=1)).max() < 1e-4


def test_unknown_check_name_is_a_value_error():
    with pytest.raises(ValueError, match="memcheck"):
        lockstep.set_emulator_options(checks="speedcheck")


BLOCKS_WRITE = r"""
__global__ void scale_forgot_block(const float* in, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[threadIdx.x] = 2.0f * in[i];  // every block writes the first 64 outputs
}
__global__ void scale_all(const float* in, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = 2.0f * in[i];
}
"""


def test_racecheck_covers_numpy_arrays_passed_to_kernels(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCKSTEP_CACHE_DIR", str(tmp_path))
    data = np.random.rand(256).astype(np.float32)
    out = np.zeros(256, dtype=np.float32)
    with lockstep.check():
        mod = lockstep.compile(BLOCKS_WRITE, source_name="blocks.cu")
        with pytest.raises(lockstep.KernelError) as caught:
            mod.scale_forgot_block[4, 64](data, out)
        mod.scale_all[4, 64](data, out)  # the correct twin: no finding
    message = str(caught.value)
    assert "racecheck write-after-write" in message and "blocks.cu:4" in message, message
    assert "host memory" in message, message
    assert np.array_equal(out, 2.0 * data)
