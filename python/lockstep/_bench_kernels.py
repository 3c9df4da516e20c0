"""The lecture's numba tiled matmul, written once and bound to a ``cuda``
module (lockstep.cuda, numba's simulator, numba-cuda) for ``lockstep bench``,
with its CUDA C++ twin for lockstep.compile. Run as a script with
NUMBA_ENABLE_CUDASIM=1, it times numba's simulator (which must be chosen
before numba is imported, hence a process of its own)."""

from __future__ import annotations

import sys
import time
import types
from typing import Any

import numpy as np

TPB = 16


def tiled_matmul(A, B, C):  # noqa: N803 (the lecture's names)
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)  # noqa: F821, N806 (cuda and float32 are bound per backend)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)  # noqa: F821, N806
    x, y = cuda.grid(2)  # noqa: F821
    tx = cuda.threadIdx.x  # noqa: F821
    ty = cuda.threadIdx.y  # noqa: F821
    bpg = cuda.gridDim.x  # noqa: F821
    if x >= C.shape[0] and y >= C.shape[1]:
        return
    tmp = 0.0
    for i in range(bpg):
        sA[tx, ty] = A[x, ty + i * TPB]
        sB[tx, ty] = B[tx + i * TPB, y]
        cuda.syncthreads()  # noqa: F821
        for j in range(TPB):
            tmp += sA[tx, j] * sB[j, ty]
        cuda.syncthreads()  # noqa: F821
    C[x, y] = tmp


def empty_kernel(x):
    pass


# The same kernel in CUDA C++ (float32 arrays, a float64 accumulator, as numba types the Python one).
TILED_MATMUL_CPP = r"""
#define TPB 16
__global__ void tiled_matmul(const float* A, const float* B, float* C, int n) {
  __shared__ float sA[TPB][TPB];
  __shared__ float sB[TPB][TPB];
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  int tx = threadIdx.x, ty = threadIdx.y;
  if (x >= n && y >= n) return;
  double tmp = 0.;
  for (int i = 0; i < gridDim.x; ++i) {
    sA[tx][ty] = A[x * n + ty + i * TPB];
    sB[tx][ty] = B[(tx + i * TPB) * n + y];
    __syncthreads();
    for (int j = 0; j < TPB; ++j) tmp += sA[tx][j] * sB[j][ty];
    __syncthreads();
  }
  C[x * n + y] = tmp;
}
"""


def bound(func: Any, cuda: Any) -> Any:
    """``func`` with ``cuda`` (and numba's float32 name) bound to one backend, decorated by its jit."""
    scope = {**func.__globals__, "cuda": cuda, "float32": np.float32}
    return cuda.jit(types.FunctionType(func.__code__, scope, func.__name__))


def simulator_seconds(n: int) -> float:
    """One tiled matmul at n^3 on numba's simulator (NUMBA_ENABLE_CUDASIM=1 set by the caller)."""
    from numba import cuda

    kernel = bound(tiled_matmul, cuda)
    rng = np.random.default_rng()
    a, b = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32)
    c = np.zeros((n, n), dtype=np.float32)
    began = time.perf_counter()
    kernel[(n // TPB, n // TPB), (TPB, TPB)](a, b, c)
    seconds = time.perf_counter() - began
    if not np.allclose(c, a.astype(np.float64) @ b, rtol=1e-3, atol=1e-3):
        raise AssertionError("numba's simulator computed a wrong product")
    return seconds


if __name__ == "__main__":
    print(simulator_seconds(int(sys.argv[1])))
