# %% [markdown]
# # Kernels in Python, the lecture's way: numba's CUDA dialect on lockstep
#
#     pip install . && python examples/python_kernels.py
#
# The lecture writes its first shared-memory kernels in Python with numba.
# Here the same kernels run with one changed line, `from lockstep import cuda`
# instead of `from numba import cuda`: on lockstep's CPU emulator (no GPU
# needed), under check mode (which finds a missing `cuda.syncthreads()` and
# names the Python line), as the CUDA C++ lockstep wrote for them, and on the
# GPU when there is one. Each step is a cell (`# %%`). Every result is checked
# against NumPy; the script exits non-zero if one is wrong.

# %%
import sys
import time

import numpy as np

import lockstep
from lockstep import cuda  # was: from numba import cuda

rng = np.random.default_rng()
failures = []


def check(what, got, expected, tolerance=1e-4):
    ok = np.allclose(got, expected, rtol=tolerance, atol=tolerance)
    print(f"{what}: {'matches NumPy' if ok else 'WRONG'}")
    if not ok:
        failures.append(what)


# %% [markdown]
# ## A first kernel: one thread per element
#
# `cuda.grid(1)` is the thread's global index; the launch `[blocks, threads]`
# says how many. NumPy arrays are used in place on the emulator (and copied to
# the GPU and back there, as numba does).


# %%
@cuda.jit
def add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


x = np.arange(1000, dtype=np.float32)
add_one[(x.size + 255) // 256, 256](x)
check("add_one", x, np.arange(1000) + 1)

# %% [markdown]
# ## The tiled matmul with shared memory (the lecture's kernel, unchanged)

# %%
TPB = 16


@cuda.jit
def fast_matmul(A, B, C):
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=np.float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=np.float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x
    if x >= C.shape[0] and y >= C.shape[1]:
        return
    tmp = 0.0
    for i in range(bpg):
        sA[tx, ty] = A[x, ty + i * TPB]
        sB[tx, ty] = B[tx + i * TPB, y]
        cuda.syncthreads()
        for j in range(TPB):
            tmp += sA[tx, j] * sB[j, ty]
        cuda.syncthreads()
    C[x, y] = tmp


n = 128
A = rng.standard_normal((n, n), dtype=np.float32)
B = rng.standard_normal((n, n), dtype=np.float32)
C = np.zeros((n, n), dtype=np.float32)
began = time.perf_counter()
fast_matmul[(n // TPB, n // TPB), (TPB, TPB)](A, B, C)
print(f"fast_matmul at {n}^3 on the emulator: {1e3 * (time.perf_counter() - began):.1f} ms (first launch: translation and compile included)")
check("fast_matmul", C, A.astype(np.float64) @ B)

# %% [markdown]
# ## The CUDA C++ lockstep wrote: the lecture's "now write it in CUDA C" step
#
# Each Python statement becomes C++ under a `#line` directive naming the
# Python line; numba's types show in the declarations (`tmp` is a double,
# because `0.0` is a Python float).

# %%
print(fast_matmul.inspect_cuda())

# %% [markdown]
# ## Check mode finds the missing barrier
#
# Without the second `cuda.syncthreads()`, a fast thread overwrites the tile
# while a slow one still reads it. On a GPU this gives wrong answers only
# sometimes; check mode reports it every time, at the Python line.


# %%
@cuda.jit
def racy_matmul(A, B, C):
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=np.float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=np.float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tmp = 0.0
    for i in range(cuda.gridDim.x):
        sA[tx, ty] = A[x, ty + i * TPB]
        sB[tx, ty] = B[tx + i * TPB, y]
        cuda.syncthreads()
        for j in range(TPB):
            tmp += sA[tx, j] * sB[j, ty]
        # the second cuda.syncthreads() is missing here
    C[x, y] = tmp


with lockstep.check():
    try:
        racy_matmul[(2, 2), (TPB, TPB)](A[:32, :32].copy(), B[:32, :32].copy(), np.zeros((32, 32), np.float32))
        failures.append("check mode missed the race")
    except lockstep.KernelError as e:
        print("check mode:", str(e).splitlines()[1].strip())

# %% [markdown]
# ## The same kernel on the GPU
#
# Inside `with lockstep.device("cuda:0")` (or after `cuda.select_device(0)`),
# NumPy arguments are copied to the GPU and back; the kernel is compiled by
# NVRTC from the same CUDA C++.

# %%
if lockstep.cuda_available():
    C_gpu = np.zeros((n, n), dtype=np.float32)
    with lockstep.device("cuda:0"):
        fast_matmul[(n // TPB, n // TPB), (TPB, TPB)](A, B, C_gpu)
    check("fast_matmul on cuda:0", C_gpu, A.astype(np.float64) @ B)
else:
    print(f"(no GPU here: {lockstep.cuda_unavailable_reason()})")

# %%
if failures:
    print("FAILED:", ", ".join(failures))
    sys.exit(1)
print("all results matched")
