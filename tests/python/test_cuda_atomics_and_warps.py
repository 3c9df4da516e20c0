"""lockstep.cuda: cuda.atomic.* on every element type numba allows, and the
warp functions (shuffles, votes, ballot, activemask, syncwarp, lane masks),
against NumPy, on the emulator and the GPU."""

import numpy as np
import pytest

import lockstep
from lockstep import cuda


@cuda.jit
def histogram(values, bins):
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.add(bins, values[i] % bins.size, 1)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.uint64, np.float32, np.float64])
def test_atomic_add_histogram(device, rng, dtype):
    values = rng.integers(0, 1000, size=5000)
    bins = np.zeros(17, dtype=dtype)
    with lockstep.device(device):
        histogram[20, 256](values, bins)
    np.testing.assert_array_equal(bins, np.bincount(values % 17, minlength=17).astype(dtype))


@cuda.jit
def every_atomic(x, out, old):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        old[i, 0] = cuda.atomic.add(out, 0, v)
        cuda.atomic.sub(out, 1, v)
        cuda.atomic.max(out, 2, v)
        cuda.atomic.min(out, 3, v)
        cuda.atomic.exch(out, 4, 7)
        cuda.atomic.and_(out, 5, v)
        cuda.atomic.or_(out, 6, v)
        cuda.atomic.xor(out, 7, v)
        cuda.atomic.cas(out, 8, -1, i)  # only the first thread's swap succeeds
        cuda.atomic.add(out, (9,), 1)  # a tuple index


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_every_integer_atomic(device, rng, dtype):
    x = rng.integers(1, 1 << 20, size=700).astype(dtype)
    out = np.array([0, 0, np.iinfo(dtype).min, np.iinfo(dtype).max, 0, -1, 0, 0, -1, 0], dtype=dtype)
    old = np.full((700, 1), -1, dtype=dtype)
    with lockstep.device(device):
        every_atomic[3, 256](x, out, old)
    assert out[0] == x.sum() and out[1] == -x.sum() and out[2] == x.max() and out[3] == x.min() and out[4] == 7
    assert out[5] == np.bitwise_and.reduce(x) and out[6] == np.bitwise_or.reduce(x) and out[7] == np.bitwise_xor.reduce(x)
    assert 0 <= out[8] < 700 and out[9] == 700
    # Each thread saw a distinct running total: the old values are the prefix sums in some order.
    assert len(np.unique(old[:, 0])) == 700 and old.min() == 0


@cuda.jit
def float_max_min(x, out):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.max(out, 0, x[i])
        cuda.atomic.min(out, 1, x[i])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_atomic_max_min(device, rng, dtype):
    x = rng.standard_normal(999).astype(dtype)
    out = np.array([-np.inf, np.inf], dtype=dtype)
    with lockstep.device(device):
        float_max_min[4, 256](x, out)
    assert out[0] == x.max() and out[1] == x.min()


@cuda.jit
def counters(out):
    cuda.atomic.inc(out, 0, np.uint32(9))
    cuda.atomic.dec(out, 1, np.uint32(9))


def test_atomic_inc_dec_wrap_as_cuda(device):
    out = np.array([0, 0], dtype=np.uint32)
    with lockstep.device(device):
        counters[1, 25](out)
    # inc counts 0..9 then wraps to 0: 25 increments from 0 end at 25 % 10; dec from 0 wraps to 9 first.
    assert out[0] == 25 % 10 and out[1] == (0 - 25) % 10


@cuda.jit
def warp_functions(x, out):
    i = cuda.grid(1)
    lane = cuda.laneid
    v = x[i]
    full = 0xFFFFFFFF
    out[i, 0] = cuda.shfl_sync(full, v, 0)
    out[i, 1] = cuda.shfl_up_sync(full, v, 1)
    out[i, 2] = cuda.shfl_down_sync(full, v, 2)
    out[i, 3] = cuda.shfl_xor_sync(full, v, 1)
    out[i, 4] = cuda.all_sync(full, v > 0) != 0
    out[i, 5] = cuda.any_sync(full, v > 90) != 0
    out[i, 6] = cuda.ballot_sync(full, lane % 2 == 0)
    out[i, 7] = cuda.activemask()
    out[i, 8] = cuda.lanemask_lt()
    out[i, 9] = cuda.popc(cuda.ballot_sync(full, v > 50))
    cuda.syncwarp()


def test_warp_shuffles_votes_and_masks(device, rng):
    x = rng.integers(1, 100, size=64).astype(np.int64)
    out = np.full((64, 10), -1, dtype=np.int64)
    with lockstep.device(device):
        warp_functions[1, 64](x, out)
    w = x.reshape(2, 32)
    lane = np.arange(32)
    np.testing.assert_array_equal(out[:, 0], np.repeat(w[:, 0], 32))
    np.testing.assert_array_equal(out[:, 1], np.concatenate([np.where(lane >= 1, r[np.maximum(lane - 1, 0)], r) for r in w]))
    np.testing.assert_array_equal(out[:, 2], np.concatenate([np.where(lane + 2 < 32, r[np.minimum(lane + 2, 31)], r) for r in w]))
    np.testing.assert_array_equal(out[:, 3], np.concatenate([r[lane ^ 1] for r in w]))
    assert (out[:, 4] == 1).all()
    np.testing.assert_array_equal(out[:, 5], np.repeat((w > 90).any(axis=1), 32))
    assert (out[:, 6] == 0x55555555).all() and (out[:, 7] == 0xFFFFFFFF).all()
    np.testing.assert_array_equal(out[:, 8], np.tile((1 << lane) - 1, 2))
    np.testing.assert_array_equal(out[:, 9], np.repeat((w > 50).sum(axis=1), 32))


@cuda.jit
def warp_sum(x, out):
    i = cuda.grid(1)
    v = x[i]
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    if cuda.laneid == 0:
        out[i // 32] = v


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint64])
def test_shuffle_reduction_keeps_the_value_type(device, rng, dtype):
    x = rng.integers(0, 100, size=128).astype(dtype)
    out = np.zeros(4, dtype=dtype)
    with lockstep.device(device):
        warp_sum[1, 128](x, out)
    np.testing.assert_array_equal(out, x.reshape(4, 32).sum(axis=1).astype(dtype))


@cuda.jit
def matches(x, out):
    i = cuda.grid(1)
    out[i, 0] = cuda.match_any_sync(0xFFFFFFFF, x[i])
    mask, all_same = cuda.match_all_sync(0xFFFFFFFF, x[i])
    out[i, 1] = mask
    out[i, 2] = all_same


def test_match_any_and_all(device):
    x = np.arange(64, dtype=np.int32) % 3
    x[32:] = 7
    out = np.full((64, 3), -1, dtype=np.int64)
    with lockstep.device(device):
        matches[1, 64](x, out)
    lanes = np.arange(32)
    expected_any = [sum(1 << k for k in lanes if x[k] == x[i]) for i in lanes]
    np.testing.assert_array_equal(out[:32, 0], expected_any)
    np.testing.assert_array_equal(out[32:, 0], 0xFFFFFFFF)
    # The first warp holds 0, 1 and 2: no match of all; the second holds only 7s.
    np.testing.assert_array_equal(out[:, 1], [0] * 32 + [0xFFFFFFFF] * 32)
    np.testing.assert_array_equal(out[:, 2], [0] * 32 + [1] * 32)


@cuda.jit
def divergent_activemask(x):
    i = cuda.grid(1)
    if i % 2 == 0:
        x[i] = cuda.activemask()
    else:
        x[i] = cuda.activemask()


def test_activemask_names_the_lanes_at_the_call_site(device):
    out = np.zeros(32, dtype=np.uint32)
    with lockstep.device(device):
        divergent_activemask[1, 32](out)
    # On Volta and later the two branches run apart: each call sees its own half of the warp.
    np.testing.assert_array_equal(out, np.tile([0x55555555, 0xAAAAAAAA], 16))


@cuda.jit
def bit_functions(x32, x64, out):
    i = cuda.grid(1)
    if i < x32.size:
        out[i, 0] = cuda.popc(x32[i])
        out[i, 1] = cuda.popc(x64[i])
        out[i, 2] = cuda.brev(x32[i])
        out[i, 3] = cuda.brev(x64[i])
        out[i, 4] = cuda.clz(x32[i])
        out[i, 5] = cuda.ffs(x64[i])


def test_bit_functions_on_32_and_64_bits(device, rng):
    x32 = rng.integers(1, 2**32, size=40, dtype=np.uint64).astype(np.uint32)
    x64 = rng.integers(1, 2**63, size=40, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    out = np.zeros((40, 6), dtype=np.uint64)
    with lockstep.device(device):
        bit_functions[1, 64](x32, x64, out)

    def reverse(v, bits):
        return int(format(int(v), f"0{bits}b")[::-1], 2)

    for i in range(40):
        a, b = int(x32[i]), int(x64[i])
        expected = [bin(a).count("1"), bin(b).count("1"), reverse(a, 32), reverse(b, 64), 32 - a.bit_length(), (b & -b).bit_length()]
        assert list(out[i]) == expected, i
