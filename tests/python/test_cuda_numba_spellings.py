"""numba CUDA code as students write it: ``return None`` / bare ``return`` in
void device functions (minitorch's broadcast_index), numba's own objects
inside kernels (numba.cuda.syncthreads(), numba.cuda.threadIdx.x,
numba.cuda.shared.array, numba.int32, numba.types.*) in a file that keeps
``import numba``, and device arrays converted by NumPy in one copy. Each
against a NumPy reference on both emulator engines (region loops, fibers)."""

import numba
import numpy as np
import pytest

import lockstep
from lockstep import cuda

pytestmark = pytest.mark.numba

ENGINES = [pytest.param(True, id="loops"), pytest.param(False, id="fibers")]


@cuda.jit(device=True)
def broadcast_index(big_index, big_shape, shape, out_index):
    """minitorch's broadcast_index, as its tensor_data.py ends it: ``return None``."""
    for i, s in enumerate(shape):
        if s > 1:
            out_index[i] = big_index[i + (len(big_shape) - len(shape))]
        else:
            out_index[i] = 0
    return None


@cuda.jit(device=True)
def store_clamped(out, i, value, high):
    """A bare return inside a void device function, before its end."""
    if value > high:
        out[i] = high
        return
    out[i] = value


@cuda.jit
def broadcast_gather(out, a, big_shape, a_shape, big_index, a_index, high):
    i = cuda.grid(1)
    if i >= out.size:
        return None  # a kernel's early return, spelled as numba allows
    big_index[i, 0] = i // big_shape[1]
    big_index[i, 1] = i % big_shape[1]
    broadcast_index(big_index[i], big_shape, a_shape, a_index[i])
    store_clamped(out, i, a[a_index[i, 0], a_index[i, 1]], high)


@pytest.mark.parametrize("region_loops", ENGINES)
def test_void_device_functions_end_with_return_none_or_bare_return(rng, region_loops):
    rows, cols = int(rng.integers(3, 9)), int(rng.integers(3, 40))
    a = rng.standard_normal((1, cols))
    high = float(rng.uniform(-0.5, 0.5))
    n = rows * cols
    out = np.full(n, np.nan)
    big_index = np.full((n, 2), -1, np.int32)
    a_index = np.full((n, 2), -1, np.int32)
    with lockstep.emulator_options_scope(region_loops=region_loops):
        broadcast_gather[(n + 31) // 32, 32](out, a, np.array([rows, cols], np.int32), np.array(a.shape, np.int32), big_index, a_index, high)
    np.testing.assert_array_equal(out, np.minimum(np.broadcast_to(a, (rows, cols)), high).ravel())
    np.testing.assert_array_equal(a_index[:, 0], 0)
    np.testing.assert_array_equal(a_index[:, 1], np.arange(n) % cols)
    source = broadcast_gather.inspect_cuda()
    assert "__device__ void broadcast_index" in source and "__device__ void store_clamped" in source


BLOCK = 64


@cuda.jit
def block_sums_numba_spelled(x, out, counts):
    """Every kernel-language name through ``numba.``, as a file that keeps ``import numba`` writes them."""
    tile = numba.cuda.shared.array(BLOCK, numba.float64)
    seen = numba.cuda.local.array(1, numba.types.int32)
    t = numba.cuda.threadIdx.x
    i = numba.cuda.blockIdx.x * numba.cuda.blockDim.x + t
    seen[0] = numba.int32(1) if i < x.size else numba.int32(0)
    numba.cuda.atomic.add(counts, 0, seen[0])
    tile[t] = x[i] if i < x.size else numba.float64(0)
    numba.cuda.syncthreads()
    if t == 0:
        total = numba.float64(0)
        for k in range(BLOCK):
            total += tile[k]
        out[numba.cuda.blockIdx.x] = total


@pytest.mark.parametrize("region_loops", ENGINES)
def test_numba_qualified_intrinsics_and_types_are_lockstep_cuda_s(rng, region_loops):
    n = int(rng.integers(3 * BLOCK, 6 * BLOCK))
    blocks = (n + BLOCK - 1) // BLOCK
    x = rng.standard_normal(n)
    out = np.full(blocks, np.nan)
    counts = np.zeros(1, np.int32)
    with lockstep.emulator_options_scope(region_loops=region_loops):
        block_sums_numba_spelled[blocks, BLOCK](x, out, counts)
    padded = np.concatenate([x, np.zeros(blocks * BLOCK - n)]).reshape(blocks, BLOCK)
    want = np.array([sum(row.tolist()) for row in padded])  # in order, as thread 0 adds
    np.testing.assert_array_equal(out, want)
    assert counts[0] == n
    source = block_sums_numba_spelled.inspect_cuda()
    assert "__syncthreads()" in source and "__shared__" in source


@cuda.jit
def count_after_a_barrier(n, counts):
    seen = cuda.local.array(1, numba.int32)
    i = cuda.grid(1)
    seen[0] = 1 if i < n else 0
    cuda.syncthreads()
    cuda.atomic.add(counts, 0, seen[0])  # the thread's local array, read after the barrier


# Every cuda.local.array is reached through a pointer (a view): the region
# loops keep such an array per thread across the barrier (aliasing.cpp), and
# both engines must count every thread.
LOCAL_ARRAY_ENGINES = [pytest.param(True, id="loops"), pytest.param(False, id="fibers")]


@pytest.mark.parametrize("region_loops", LOCAL_ARRAY_ENGINES)
def test_a_local_array_keeps_its_value_across_a_barrier(rng, region_loops):
    n = int(rng.integers(2 * BLOCK, 4 * BLOCK))
    counts = np.zeros(1, np.int32)
    with lockstep.emulator_options_scope(region_loops=region_loops):
        count_after_a_barrier[4, BLOCK](n, counts)
    assert counts[0] == n


@cuda.jit
def uses_a_numba_name_lockstep_lacks(x):
    v = numba.cuda.float32x4(x[0], x[0], x[0], x[0])  # numba's vector types: not lockstep's
    x[0] = v.x


def test_a_numba_name_lockstep_lacks_is_refused_by_its_numba_spelling():
    with pytest.raises(cuda.TypingError) as e:
        uses_a_numba_name_lockstep_lacks[1, 1](np.zeros(1))
    message = str(e.value)
    assert "numba.cuda.float32x4" in message and "not supported in lockstep.cuda's kernels" in message
    assert "test_cuda_numba_spellings.py" in message and "in uses_a_numba_name_lockstep_lacks" in message


def test_numpy_converts_a_device_array_in_one_copy_not_element_by_element(rng, monkeypatch):
    host = rng.standard_normal((97, 33)).astype(np.float32)
    d = cuda.to_device(host)

    def no_element_reads(self, key):
        raise AssertionError("NumPy read the device array element by element")

    monkeypatch.setattr(cuda.DeviceNDArray, "__getitem__", no_element_reads)
    copied = np.array(d)
    assert copied.dtype == np.float32 and copied.shape == host.shape
    np.testing.assert_array_equal(copied, host)
    copied[0, 0] = 1e9  # np.array copies: the device array keeps its value
    assert np.asarray(d)[0, 0] == host[0, 0]
    np.testing.assert_array_equal(np.asarray(d, dtype=np.float64), host.astype(np.float64))
    view = d.T
    np.testing.assert_array_equal(np.array(view), host.T)  # strided views convert as they are


def racy_reverse(x, out):
    tile = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    tile[t] = x[t]
    out[t] = tile[63 - t]  # no cuda.syncthreads() before: a race check mode reports


def test_reports_name_the_kernel_and_its_types_as_python_wrote_them(rng):
    kernel = cuda.jit(racy_reverse)
    x = rng.standard_normal(64).astype(np.float32)
    with lockstep.check():
        with pytest.raises(lockstep.KernelError, match="race") as caught:
            kernel[1, 64](x, np.zeros(64, np.float32))
    message = str(caught.value)
    assert "racy_reverse(array(float32, 1d, C), array(float32, 1d, C))" in message
    assert "lockstep::py" not in message and "racy_reverse_" not in message
    assert "test_cuda_numba_spellings.py:" in message
