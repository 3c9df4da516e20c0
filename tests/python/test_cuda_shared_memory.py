"""lockstep.cuda: shared arrays (static shapes from constants and globals,
dynamic with shape 0 and the launch's shared bytes), local and constant
arrays, the barriers and their count/and/or forms, a device function with
barriers that returns a value; the lecture's tiled
matmul, with only its import line changed."""

import math

import numpy as np
import pytest

import lockstep
from lockstep import _bench_kernels as lecture
from lockstep import cuda

# The lecture's numba kernel, as written there (numba's documentation example), lives once in
# lockstep/_bench_kernels.py with `cuda` left free; here it is bound to lockstep.cuda.
TPB = lecture.TPB
fast_matmul = lecture.bound(lecture.tiled_matmul, cuda)


@pytest.mark.parametrize("n", [16, 64])
def test_lecture_tiled_matmul(device, rng, n):
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    c = np.full((n, n), np.nan, dtype=np.float32)
    with lockstep.device(device):
        fast_matmul[(n // TPB, n // TPB), (TPB, TPB)](a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=1e-4)


@cuda.jit
def block_sum(x, out):
    cache = cuda.shared.array(256, dtype=np.float64)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    cache[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if t < stride:
            cache[t] += cache[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = cache[0]


def test_shared_reduction_with_while_loop(device, rng):
    x = rng.standard_normal(1000)
    out = np.full(4, np.nan)
    with lockstep.device(device):
        block_sum[4, 256](x, out)
    np.testing.assert_allclose(out, [x[k * 256 : (k + 1) * 256].sum() for k in range(4)], rtol=1e-12)


@cuda.jit
def dynamic_reverse(x):
    buffer = cuda.shared.array(0, dtype=np.int32)
    t = cuda.threadIdx.x
    n = cuda.blockDim.x
    buffer[t] = x[t]
    cuda.syncthreads()
    x[t] = buffer[n - 1 - t]


def test_dynamic_shared_memory_from_the_launch(device):
    x = np.arange(100, dtype=np.int32)
    with lockstep.device(device):
        dynamic_reverse[1, 100, 0, 100 * 4](x)
    np.testing.assert_array_equal(x, np.arange(100)[::-1])


@cuda.jit
def barrier_votes(x, out):
    t = cuda.threadIdx.x
    out[cuda.blockIdx.x, 0] = cuda.syncthreads_count(x[cuda.grid(1)] > 0)
    out[cuda.blockIdx.x, 1] = cuda.syncthreads_and(x[cuda.grid(1)] > -1000)
    out[cuda.blockIdx.x, 2] = cuda.syncthreads_or(x[cuda.grid(1)] > 1000 + t)


def test_syncthreads_count_and_or(device, rng):
    x = rng.integers(-50, 50, size=3 * 128).astype(np.int32)
    out = np.full((3, 3), -1, dtype=np.int32)
    with lockstep.device(device):
        barrier_votes[3, 128](x, out)
    blocks = x.reshape(3, 128)
    np.testing.assert_array_equal(out[:, 0], (blocks > 0).sum(axis=1))
    assert (out[:, 1] != 0).all() and (out[:, 2] == 0).all()


@cuda.jit(device=True)
def block_total(value, cache):
    t = cuda.threadIdx.x
    cache[t] = value
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if t < stride:
            cache[t] += cache[t + stride]
        cuda.syncthreads()
        stride //= 2
    total = cache[0]
    cuda.syncthreads()
    return total


@cuda.jit
def centered(x, out):
    cache = cuda.shared.array(256, dtype=np.float64)
    i = cuda.grid(1)
    v = x[i] if i < x.size else 0.0
    mean = block_total(v, cache) / cuda.blockDim.x
    spread = block_total((v - mean) ** 2, cache)
    if i < x.size:
        out[i] = (v - mean) / math.sqrt(spread)


def test_a_device_function_with_barriers_returns_each_threads_value(device, rng):
    # Called twice by every thread of the block; on cpu, the kernel runs as region loops.
    x = rng.standard_normal(1000)
    out = np.full(1000, np.nan)
    with lockstep.device(device):
        centered[4, 256](x, out)
    padded = np.concatenate([x, np.zeros(24)]).reshape(4, 256)
    deviation = padded - padded.mean(axis=1, keepdims=True)
    expected = (deviation / np.sqrt((deviation**2).sum(axis=1, keepdims=True))).reshape(-1)[:1000]
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-14)


COEFFICIENTS = np.array([0.5, -1.0, 2.0, 0.25])


@cuda.jit
def polynomial(x, out):
    table = cuda.const.array_like(COEFFICIENTS)
    powers = cuda.local.array(4, dtype=np.float64)
    i = cuda.grid(1)
    if i < x.size:
        p = 1.0
        for k in range(4):
            powers[k] = p
            p *= x[i]
        total = 0.0
        for k in range(4):
            total += table[k] * powers[k]
        out[i] = total + COEFFICIENTS[0] * 0  # a global array is a constant too


def test_local_and_constant_arrays(device, rng):
    x = rng.standard_normal(300)
    out = np.full(300, np.nan)
    with lockstep.device(device):
        polynomial[2, 256](x, out)
    np.testing.assert_allclose(out, np.polyval(COEFFICIENTS[::-1], x), rtol=1e-12)


@cuda.jit
def local_matrix(out):
    m = cuda.local.array((3, 3), np.int64)
    for r in range(3):
        for c in range(3):
            m[r, c] = r * 3 + c
    i = cuda.grid(1)
    if i < out.size:
        out[i] = m[i // 3, i % 3]


def test_two_dimensional_local_array(device):
    out = np.full(9, -1, dtype=np.int64)
    with lockstep.device(device):
        local_matrix[1, 32](out)
    np.testing.assert_array_equal(out, np.arange(9))


@cuda.jit
def dynamic_tiles_matmul(m, n, out, tw):
    # Written the way the CUDA MODE lecture writes it: local names for cuda's
    # index objects, two tiles cut from one dynamic shared array, bounds in the ifs.
    cbi, cbd, tid = cuda.blockIdx, cuda.blockDim, cuda.threadIdx
    tc, tr = tid.x, tid.y
    r, c = cbi.y * cbd.y + tr, cbi.x * cbd.x + tc
    h, k = m.shape
    k2, w = n.shape
    shar = cuda.shared.array(0, dtype=np.float32)
    ms, ns = shar[: tw * tw], shar[tw * tw : 2 * tw * tw]
    p = np.float32(0.0)
    for ph in range(math.ceil(k / tw)):
        idx = ph * tw
        ms[tr * tw + tc] = m[r, tc + idx] if r < h and idx + tc < k else 0.0
        ns[tr * tw + tc] = n[tr + idx, c] if c < w and idx + tr < k else 0.0
        cuda.syncthreads()
        for i in range(tw):
            p += ms[tr * tw + i] * ns[i * tw + tc]
        cuda.syncthreads()
    if r < h and c < w:
        out[r, c] = p


def test_lecture_dynamic_shared_matmul_with_index_aliases(device, rng):
    h, k, w, tw = 37, 50, 29, 16
    m, n = rng.standard_normal((h, k), dtype=np.float32), rng.standard_normal((k, w), dtype=np.float32)
    out = np.full((h, w), np.nan, dtype=np.float32)
    with lockstep.device(device):
        blocks = (math.ceil(w / tw), math.ceil(h / tw))
        dynamic_tiles_matmul[blocks, (tw, tw), 0, tw * tw * 2 * 4](cuda.as_cuda_array(lockstep.asarray(m)) if device == "cpu" else m, n, out, tw)
    np.testing.assert_allclose(out, m.astype(np.float64) @ n, rtol=1e-4, atol=1e-4)
