# %% [markdown]
# # The lecture's kernels from Python: grayscale, then matmul
#
#     pip install . && python examples/lecture.py
#
# Runs on lockstep's CPU emulator ("cpu"), and on the GPU ("cuda:0") when
# there is one. Each step is a cell (`# %%`), so the file also opens as a
# notebook (VS Code, Jupyter with jupytext). Every result is checked against
# NumPy; the script ends with a table of times and exits non-zero if any
# result is wrong.

# %%
import sys
import time

import numpy as np

import lockstep

devices = ["cpu"] + (["cuda:0"] if lockstep.cuda_available() else [])
print(f"lockstep {lockstep.__version__}; devices: {', '.join(f'{d} ({lockstep.device(d).name_of_hardware})' for d in devices)}")
if len(devices) == 1:
    print(f"(no GPU: {lockstep.cuda_unavailable_reason()})")
print(f"emulator options: {lockstep.emulator_options()}")

rng = np.random.default_rng()
rows = []  # (device, step, lockstep ms, NumPy ms, check, ok)


def median_ms(fn, device, repeats=5):
    """Median wall time of fn() in milliseconds, after one warm-up run, waiting for the device each time."""
    fn()
    lockstep.synchronize(device)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        lockstep.synchronize(device)
        times.append(time.perf_counter() - start)
    return 1e3 * sorted(times)[len(times) // 2]


def numpy_ms(fn, repeats=5):
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * sorted(times)[len(times) // 2]


# %% [markdown]
# ## 1. RGB to grayscale
#
# The lecture's kernel: one thread per pixel on a 2-D grid of 16x16 blocks,
# reading a channels-first image (3, H, W). Written here as CUDA C++ source,
# compiled at run time (the host compiler and the emulator on "cpu", NVRTC
# on a GPU), and launched with numba's spelling `kernel[grid, block](args)`.

# %%
GRAYSCALE_SOURCE = r"""
__global__ void rgb_to_grayscale(unsigned char* out, const unsigned char* in, int width, int height) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (col < width && row < height) {
    const int i = row * width + col, n = width * height;
    out[i] = 0.2989f * in[i] + 0.5870f * in[i + n] + 0.1140f * in[i + 2 * n];
  }
}
"""

height, width = 1066, 1600
image = rng.integers(0, 256, size=(3, height, width), dtype=np.uint8)
weights = np.array([0.2989, 0.5870, 0.1140])
gray_reference = np.floor(np.einsum("c,chw->hw", weights, image.astype(np.float64))).astype(np.uint8)
gray_numpy_ms = numpy_ms(lambda: np.einsum("c,chw->hw", weights.astype(np.float32), image.astype(np.float32)).astype(np.uint8))


def check_gray(gray):
    """At most one grey level off (float32 sums against a float64 reference), on at most 0.1% of the pixels."""
    diff = np.abs(gray.astype(np.int16) - gray_reference.astype(np.int16))
    ok = gray.shape == gray_reference.shape and diff.max() <= 1 and np.count_nonzero(diff) <= diff.size // 1000
    return f"max diff {diff.max()}", bool(ok)


for device in devices:
    img = lockstep.asarray(image, device=device)  # zero-copy on "cpu", one copy to a GPU
    mod = lockstep.compile(GRAYSCALE_SOURCE, device=device)
    out = lockstep.empty((height, width), "uint8", device=device)
    grid, block = ((width + 15) // 16, (height + 15) // 16), (16, 16)

    def from_source():
        mod.rgb_to_grayscale[grid, block](out, img, width, height)

    ms = median_ms(from_source, device)
    rows.append((device, f"grayscale from source {height}x{width}", ms, gray_numpy_ms, *check_gray(out.to("cpu").numpy())))
    for launch in ("1d", "2d"):  # the library's versions of the same kernel
        ms = median_ms(lambda: lockstep.rgb_to_grayscale(img, launch=launch), device)
        gray = lockstep.rgb_to_grayscale(img, launch=launch).to("cpu").numpy()
        rows.append((device, f"grayscale {launch} {height}x{width}", ms, gray_numpy_ms, *check_gray(gray)))

# %% [markdown]
# ## 2. Matrix multiplication, up the ladder
#
# First the naive kernel (one thread per output element, reading A and B from
# global memory), then the tiled one: each 16x16 block stages tiles of A and B
# in `extern __shared__` memory whose size is given at launch,
# `kernel[grid, block, shared_bytes]`. Then the library's versions (its ladder ends
# at double_buffered, see `lockstep bench`), `lockstep.matmul(a, b, algo=...)`, and on a
# GPU cuBLAS as the reference.

# %%
MATMUL_SOURCE = r"""
__global__ void matmul_naive(const float* a, const float* b, float* c, int m, int n, int k) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < m && col < n) {
    float sum = 0;
    for (int i = 0; i < k; ++i) sum += a[row * k + i] * b[i * n + col];
    c[row * n + col] = sum;
  }
}

__global__ void matmul_tiled(const float* a, const float* b, float* c, int m, int n, int k) {
  extern __shared__ float tiles[];  // a tile of A, then a tile of B; tile = blockDim.x = blockDim.y
  const int tile = blockDim.x, tr = threadIdx.y, tc = threadIdx.x;
  float* ta = tiles;
  float* tb = tiles + tile * tile;
  const int row = blockIdx.y * tile + tr, col = blockIdx.x * tile + tc;
  float sum = 0;
  for (int p = 0; p < k; p += tile) {
    ta[tr * tile + tc] = (row < m && p + tc < k) ? a[row * k + p + tc] : 0.0f;
    tb[tr * tile + tc] = (p + tr < k && col < n) ? b[(p + tr) * n + col] : 0.0f;
    __syncthreads();
    for (int i = 0; i < tile; ++i) sum += ta[tr * tile + i] * tb[i * tile + tc];
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = sum;
}
"""

m, k, n = 256, 320, 192
a = rng.standard_normal((m, k), dtype=np.float32)
b = rng.standard_normal((k, n), dtype=np.float32)
product_reference = a.astype(np.float64) @ b.astype(np.float64)
matmul_numpy_ms = numpy_ms(lambda: a @ b)


def check_product(c):
    error = np.linalg.norm(c.astype(np.float64) - product_reference) / np.linalg.norm(product_reference)
    return f"rel. error {error:.1e}", bool(c.shape == product_reference.shape and error < 1e-5)


for device in devices:
    da, db = lockstep.asarray(a, device=device), lockstep.asarray(b, device=device)
    mod = lockstep.compile(MATMUL_SOURCE, device=device)
    c = lockstep.empty((m, n), "float32", device=device)
    tile = 16
    grid, block = ((n + tile - 1) // tile, (m + tile - 1) // tile), (tile, tile)
    ms = median_ms(lambda: mod.matmul_naive[grid, block](da, db, c, m, n, k), device)
    rows.append((device, f"matmul naive from source {m}x{k}x{n}", ms, matmul_numpy_ms, *check_product(c.to("cpu").numpy())))
    c = lockstep.empty((m, n), "float32", device=device)
    shared_bytes = 2 * tile * tile * 4
    ms = median_ms(lambda: mod.matmul_tiled[grid, block, shared_bytes](da, db, c, m, n, k), device)
    rows.append((device, f"matmul tiled from source {m}x{k}x{n}", ms, matmul_numpy_ms, *check_product(c.to("cpu").numpy())))
    algos = ["naive", "tiled_static", "tiled_dynamic", "double_buffered"] + (["cublas"] if device.startswith("cuda") else [])  # cublas: the reference
    for algo in algos:  # (da @ db is the "double_buffered" one)
        ms = median_ms(lambda: lockstep.matmul(da, db, algo=algo), device)
        check = check_product(lockstep.matmul(da, db, algo=algo).to("cpu").numpy())
        rows.append((device, f"matmul {algo} {m}x{k}x{n}", ms, matmul_numpy_ms, *check))

# %% [markdown]
# ## Results
#
# Times are medians of five runs. On "cpu" every GPU thread is emulated, so
# the point there is correctness, not speed; on a GPU the kernels race NumPy
# on the CPU.

# %%
print()
print("| device | computation | lockstep (ms) | NumPy (ms) | check |")
print("|---|---|---:|---:|---|")
for device, step, ms, reference_ms, check, ok in rows:
    print(f"| {device} | {step} | {ms:.2f} | {reference_ms:.2f} | {check}{'' if ok else '  WRONG'} |")
wrong = [f"{device}: {step}" for device, step, _, _, _, ok in rows if not ok]
if wrong:
    print("\nwrong results: " + "; ".join(wrong), file=sys.stderr)
    sys.exit(1)
print("\nall results match NumPy")
