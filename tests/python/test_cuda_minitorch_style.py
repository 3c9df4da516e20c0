"""minitorch's Module 3 written as its CUDA kernels are written (numba's dialect,
only the import line changed): tensors as (storage, shape, strides) arrays,
the indexing helpers as plain Python functions made device functions, map,
zip and reduce as kernels made by higher-order functions over device
functions, and the shared-memory matmul, checked against NumPy with
broadcasting and odd shapes."""

import numpy as np
import pytest

import lockstep
from lockstep import cuda  # minitorch: from numba import cuda

MAX_DIMS = 32
THREADS_PER_BLOCK = 32
BLOCK_DIM = 32

# ---- tensor_data.py's helpers: plain Python, used on the host and in kernels ----


def index_to_position(index, strides):
    position = 0
    for i in range(len(strides)):
        position += index[i] * strides[i]
    return position


def to_index(ordinal, shape, out_index):
    cur_ord = ordinal + 0
    for i in range(len(shape) - 1, -1, -1):
        sh = shape[i]
        out_index[i] = int(cur_ord % sh)
        cur_ord = cur_ord // sh


def broadcast_index(big_index, big_shape, shape, out_index):
    for i, s in enumerate(shape):
        if s > 1:
            out_index[i] = big_index[i + (len(big_shape) - len(shape))]
        else:
            out_index[i] = 0


to_index = cuda.jit(device=True)(to_index)
index_to_position = cuda.jit(device=True)(index_to_position)
broadcast_index = cuda.jit(device=True)(broadcast_index)


def device_jit(fn, **kwargs):
    return cuda.jit(device=True, **kwargs)(fn)


def jit(fn, **kwargs):
    return cuda.jit(**kwargs)(fn)


# ---- the kernels, built per operator as minitorch builds them ----


def tensor_map(fn):
    def _map(out, out_shape, out_strides, out_size, in_storage, in_shape, in_strides):
        out_index = cuda.local.array(MAX_DIMS, np.int32)
        in_index = cuda.local.array(MAX_DIMS, np.int32)
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        if i < out_size:
            to_index(i, out_shape, out_index)
            broadcast_index(out_index, out_shape, in_shape, in_index)
            o = index_to_position(out_index, out_strides)
            j = index_to_position(in_index, in_strides)
            out[o] = fn(in_storage[j])

    return cuda.jit()(_map)


def tensor_zip(fn):
    def _zip(out, out_shape, out_strides, out_size, a_storage, a_shape, a_strides, b_storage, b_shape, b_strides):
        out_index = cuda.local.array(MAX_DIMS, np.int32)
        a_index = cuda.local.array(MAX_DIMS, np.int32)
        b_index = cuda.local.array(MAX_DIMS, np.int32)
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        if i < out_size:
            to_index(i, out_shape, out_index)
            o = index_to_position(out_index, out_strides)
            broadcast_index(out_index, out_shape, a_shape, a_index)
            j = index_to_position(a_index, a_strides)
            broadcast_index(out_index, out_shape, b_shape, b_index)
            k = index_to_position(b_index, b_strides)
            out[o] = fn(a_storage[j], b_storage[k])

    return cuda.jit()(_zip)


def tensor_reduce(fn):
    def _reduce(out, out_shape, out_strides, out_size, a_storage, a_shape, a_strides, reduce_dim, reduce_value):
        cache = cuda.shared.array(BLOCK_DIM, np.float64)
        out_index = cuda.local.array(MAX_DIMS, np.int32)
        out_pos = cuda.blockIdx.x
        pos = cuda.threadIdx.x
        cache[pos] = reduce_value
        if out_pos < out_size:
            to_index(out_pos, out_shape, out_index)
            o = index_to_position(out_index, out_strides)
            out_index[reduce_dim] = out_index[reduce_dim] * BLOCK_DIM + pos
            if out_index[reduce_dim] < a_shape[reduce_dim]:
                cache[pos] = a_storage[index_to_position(out_index, a_strides)]
            cuda.syncthreads()
            x = 1
            while x < BLOCK_DIM:
                if pos % (2 * x) == 0:
                    cache[pos] = fn(cache[pos], cache[pos + x])
                cuda.syncthreads()
                x *= 2
            if pos == 0:
                out[o] = cache[0]

    return cuda.jit()(_reduce)


def _tensor_matrix_multiply(out, out_shape, out_strides, out_size, a_storage, a_shape, a_strides, b_storage, b_shape, b_strides):
    a_batch_stride = a_strides[0] if a_shape[0] > 1 else 0
    b_batch_stride = b_strides[0] if b_shape[0] > 1 else 0
    a_shared = cuda.shared.array((BLOCK_DIM, BLOCK_DIM), np.float64)
    b_shared = cuda.shared.array((BLOCK_DIM, BLOCK_DIM), np.float64)
    batch = cuda.blockIdx.z
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    pi = cuda.threadIdx.x
    pj = cuda.threadIdx.y
    total = 0.0
    for start in range(0, a_shape[-1], BLOCK_DIM):
        k = start + pj
        if i < a_shape[-2] and k < a_shape[-1]:
            a_shared[pi, pj] = a_storage[batch * a_batch_stride + i * a_strides[-2] + k * a_strides[-1]]
        else:
            a_shared[pi, pj] = 0.0
        k = start + pi
        if j < b_shape[-1] and k < b_shape[-2]:
            b_shared[pi, pj] = b_storage[batch * b_batch_stride + k * b_strides[-2] + j * b_strides[-1]]
        else:
            b_shared[pi, pj] = 0.0
        cuda.syncthreads()
        for kk in range(BLOCK_DIM):
            total += a_shared[pi, kk] * b_shared[kk, pj]
        cuda.syncthreads()
    if i < out_shape[-2] and j < out_shape[-1]:
        out[batch * out_strides[0] + i * out_strides[-2] + j * out_strides[-1]] = total


tensor_matrix_multiply = jit(_tensor_matrix_multiply)

# ---- operators.py ----


def mul(x, y):
    return x * y


def add(x, y):
    return x + y


def neg(x):
    return -1.0 * x


def relu(x):
    return x if x > 0 else 0.0


def lt(x, y):
    return 1.0 if x < y else 0.0


def maximum(x, y):
    return x if x > y else y


# ---- a minimal tensor: storage plus (int32) shape and strides, as minitorch's tuple() gives ----


def tensor_parts(array):
    array = np.ascontiguousarray(array, dtype=np.float64)
    strides = np.array([s // 8 for s in array.strides], dtype=np.int32)
    return array.reshape(-1), np.array(array.shape, dtype=np.int32), strides


def empty_like_shape(shape):
    out = np.full(int(np.prod(shape)), np.nan)
    strides = np.array([int(np.prod(shape[k + 1 :])) for k in range(len(shape))], dtype=np.int32)
    return out, np.array(shape, dtype=np.int32), strides


@pytest.mark.parametrize("fn,reference", [(neg, np.negative), (relu, lambda v: np.maximum(v, 0))])
def test_map_broadcasts(device, rng, fn, reference):
    a = rng.standard_normal((1, 5, 3))
    out, out_shape, out_strides = empty_like_shape((4, 5, 3))
    with lockstep.device(device):
        tensor_map(fn)[(out.size + 31) // 32, THREADS_PER_BLOCK](out, out_shape, out_strides, out.size, *tensor_parts(a))
    np.testing.assert_array_equal(out.reshape(4, 5, 3), np.broadcast_to(reference(a), (4, 5, 3)))


@pytest.mark.parametrize("fn,reference", [(mul, np.multiply), (add, np.add), (lt, lambda x, y: (x < y).astype(float))])
def test_zip_broadcasts(device, rng, fn, reference):
    a, b = rng.standard_normal((3, 1, 7)), rng.standard_normal((4, 1))
    shape = np.broadcast_shapes(a.shape, b.shape)
    out, out_shape, out_strides = empty_like_shape(shape)
    with lockstep.device(device):
        tensor_zip(fn)[(out.size + 31) // 32, THREADS_PER_BLOCK](out, out_shape, out_strides, out.size, *tensor_parts(a), *tensor_parts(b))
    np.testing.assert_array_equal(out.reshape(shape), reference(a, b))


@pytest.mark.parametrize("fn,start,reference", [(add, 0.0, np.sum), (maximum, -np.inf, np.max)])
@pytest.mark.parametrize("dim", [0, 1])
def test_reduce_along_a_dimension(device, rng, fn, start, reference, dim):
    a = rng.standard_normal((37, 23))
    shape = list(a.shape)
    shape[dim] = (shape[dim] + BLOCK_DIM - 1) // BLOCK_DIM  # minitorch's reduce makes one block per output, of BLOCK_DIM inputs
    out, out_shape, out_strides = empty_like_shape(tuple(shape))
    with lockstep.device(device):
        tensor_reduce(fn)[out.size, BLOCK_DIM](out, out_shape, out_strides, out.size, *tensor_parts(a), dim, start)
    chunks = [reference(np.take(a, range(c * BLOCK_DIM, min((c + 1) * BLOCK_DIM, a.shape[dim])), axis=dim), axis=dim) for c in range(shape[dim])]
    np.testing.assert_allclose(out.reshape(shape), np.stack(chunks, axis=dim), rtol=1e-12)


@pytest.mark.parametrize("batch_a,batch_b,m,k,n", [(2, 2, 33, 20, 45), (1, 3, 8, 40, 8), (2, 1, 31, 31, 31)])
def test_shared_memory_matmul_with_batches(device, rng, batch_a, batch_b, m, k, n):
    a, b = rng.standard_normal((batch_a, m, k)), rng.standard_normal((batch_b, k, n))
    batches = max(batch_a, batch_b)
    out, out_shape, out_strides = empty_like_shape((batches, m, n))
    blocks = ((m + BLOCK_DIM - 1) // BLOCK_DIM, (n + BLOCK_DIM - 1) // BLOCK_DIM, batches)
    with lockstep.device(device):
        tensor_matrix_multiply[blocks, (BLOCK_DIM, BLOCK_DIM)](out, out_shape, out_strides, out.size, *tensor_parts(a), *tensor_parts(b))
    np.testing.assert_allclose(out.reshape(batches, m, n), a @ b, rtol=1e-10, atol=1e-10)
