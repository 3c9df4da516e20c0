"""lockstep.cuda (numba's kernel language): thread indexing, cuda.grid and
gridsize, array indexing (negative indices, views, slices, shape/strides/size/ndim)
and arguments of every kind, against NumPy, on the emulator and the GPU."""

import collections

import numpy as np
import pytest

import lockstep
from lockstep import cuda


@cuda.jit
def write_coordinates(out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i, 0] = cuda.threadIdx.x
        out[i, 1] = cuda.blockIdx.x
        out[i, 2] = cuda.blockDim.x
        out[i, 3] = cuda.gridDim.x
        out[i, 4] = cuda.gridsize(1)
        out[i, 5] = cuda.laneid
        out[i, 6] = cuda.warpsize


def test_thread_coordinates_match_numbas_definitions(device):
    with lockstep.device(device):
        out = np.full((3 * 96 - 5, 7), -1, dtype=np.int32)
        write_coordinates[3, 96](out)
    i = np.arange(out.shape[0])
    expected = np.stack([i % 96, i // 96, np.full_like(i, 96), np.full_like(i, 3), np.full_like(i, 288), i % 96 % 32, np.full_like(i, 32)], axis=1)
    np.testing.assert_array_equal(out, expected)


@cuda.jit
def grid_2d(out):
    x, y = cuda.grid(2)
    w, h = cuda.gridsize(2)
    if x < out.shape[0] and y < out.shape[1]:
        out[x, y] = x * 1000 + y + (w * h) * 0


def test_grid_2d_tuples_unpack(device, rng):
    with lockstep.device(device):
        rows, cols = int(rng.integers(20, 40)), int(rng.integers(20, 40))
        out = np.full((rows, cols), -1, dtype=np.int64)
        grid_2d[(3, 3), (16, 16)](out)
    x, y = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    np.testing.assert_array_equal(out, x * 1000 + y)


@cuda.jit
def grid_3d(out):
    x, y, z = cuda.grid(3)
    if x < out.shape[0] and y < out.shape[1] and z < out.shape[2]:
        out[x, y, z] = cuda.threadIdx.z + cuda.blockIdx.z * cuda.blockDim.z


def test_grid_3d(device):
    with lockstep.device(device):
        out = np.full((5, 6, 7), -1, dtype=np.int32)
        grid_3d[(2, 2, 2), (4, 4, 4)](out)
    np.testing.assert_array_equal(out, np.broadcast_to(np.arange(7), (5, 6, 7)))


@cuda.jit
def negative_and_views(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        row = a[i]  # a 1-d view of a 2-d array
        out[i, 0] = row[-1]  # counted from the end
        out[i, 1] = a[i, -2]
        out[i, 2] = a.size
        out[i, 3] = a.ndim
        out[i, 4] = a.strides[0] // a.strides[1]
        out[i, 5] = len(row)
        tail = row[1:]  # a slice
        out[i, 6] = tail[0] + tail.shape[0]
        backwards = row[::-1]
        out[i, 7] = backwards[0]
        stepped = row[1::2]
        out[i, 8] = stepped[stepped.shape[0] - 1]


def test_negative_indices_views_and_slices(device, rng):
    a = rng.integers(-100, 100, size=(37, 9)).astype(np.float64)
    out = np.full((37, 9), np.nan)
    with lockstep.device(device):
        negative_and_views[2, 32](a, out)
    expected = np.stack(
        [a[:, -1], a[:, -2], np.full(37, a.size), np.full(37, 2), np.full(37, 9), np.full(37, 9), a[:, 1] + 8, a[:, -1], a[:, 1::2][:, -1]],
        axis=1,
    )
    np.testing.assert_array_equal(out, expected)


@cuda.jit
def copy_strided(src, dst):
    i, j = cuda.grid(2)
    if i < dst.shape[0] and j < dst.shape[1]:
        dst[i, j] = src[i, j] * 2


def test_non_contiguous_inputs_use_their_strides(device, rng):
    base = rng.standard_normal((40, 60)).astype(np.float32)
    src = base[::2, ::3].T  # strided and transposed
    dst = np.full(src.shape, np.nan, dtype=np.float32)
    with lockstep.device(device):
        copy_strided[(4, 4), (8, 8)](src, dst)
    np.testing.assert_array_equal(dst, src * 2)
    assert "false>" in copy_strided.inspect_cuda(src, dst)  # the strided layout was used


@cuda.jit
def scale(x, by, n):
    i = cuda.grid(1)
    if i < n:
        x[i] = x[i] * by


def test_arguments_numpy_lockstep_tensor_and_device_arrays(device, rng):
    values = rng.standard_normal(1000).astype(np.float32)
    with lockstep.device(device):
        host = values.copy()
        scale[4, 256](host, 2.0, host.size)  # NumPy: in place, or copied to the GPU and back
        np.testing.assert_allclose(host, values * 2, rtol=1e-6)

        tensor = lockstep.asarray(values.copy(), device=device)
        scale[4, 256](tensor, np.float32(3), tensor.size)
        np.testing.assert_allclose(tensor.to("cpu").numpy(), values * 3, rtol=1e-6)

        d = cuda.to_device(values)
        scale[4, 256](d, 4, 1000)
        assert d.device == device
        np.testing.assert_allclose(d.copy_to_host(), values * 4, rtol=1e-6)
        np.testing.assert_array_equal(values, values.copy())  # to_device copied


def test_device_array_helpers(device):
    with lockstep.device(device):
        d = cuda.device_array((4, 5), dtype=np.int32)
        assert d.shape == (4, 5) and d.dtype == np.int32 and d.strides == (20, 4) and d.size == 20
        like = cuda.device_array_like(np.zeros((3,), dtype=np.float64))
        assert like.shape == (3,) and like.dtype == np.float64
        d.copy_to_device(np.arange(20, dtype=np.int32).reshape(4, 5))
        np.testing.assert_array_equal(d.copy_to_host(), np.arange(20).reshape(4, 5))
        out = np.zeros((4, 5), dtype=np.int32)
        d.copy_to_host(out)
        np.testing.assert_array_equal(out, np.arange(20).reshape(4, 5))
        np.testing.assert_array_equal(d[1].copy_to_host(), np.arange(5, 10))


@cuda.jit
def flags(b, n):
    i = cuda.grid(1)
    if i < n:
        b[i] = i % 3 == 0


def test_bool_and_small_integer_arrays(device):
    with lockstep.device(device):
        b = np.zeros(50, dtype=np.bool_)
        flags[1, 64](b, 50)
    np.testing.assert_array_equal(b, np.arange(50) % 3 == 0)


@pytest.mark.torch
def test_torch_tensors_are_arguments(device, rng):
    import torch

    values = rng.standard_normal(300).astype(np.float32)
    t = torch.from_numpy(values.copy()).to("cuda" if device != "cpu" else "cpu")
    scale[2, 256](t, 2.0, 300)
    np.testing.assert_allclose(t.cpu().numpy(), values * 2, rtol=1e-6)


@cuda.jit
def tuple_argument(out, offsets, scale):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = (offsets[0] + offsets[1] * i) * scale[0]


def test_tuples_of_numbers_are_arguments(device):
    out = np.full(10, np.nan)
    with lockstep.device(device):
        tuple_argument[1, 32](out, (3, 2), (0.5,))
    np.testing.assert_array_equal(out, (3 + 2 * np.arange(10)) * 0.5)


def test_device_array_setitem_transpose_and_flags(device):
    with lockstep.device(device):
        d = cuda.to_device(np.arange(6, dtype=np.float64).reshape(2, 3))
        d[0, 1:] = -1
        np.testing.assert_array_equal(d.copy_to_host(), [[0, -1, -1], [3, 4, 5]])
        assert d.T.shape == (3, 2) and d.flags["C_CONTIGUOUS"] and not d.T.flags["C_CONTIGUOUS"]


Point = collections.namedtuple("Point", "x y")


@cuda.jit
def mixed_tuples(out, nested, point):
    out[0] = nested[0]  # an int
    out[1] = nested[1][1]  # a float inside a tuple inside the tuple
    values = nested[2]  # an array inside the tuple
    out[2] = values[values.size - 1]
    out[3] = point.x * point.y  # a namedtuple's fields
    pair = (cuda.threadIdx.x, 0.5)  # a tuple of mixed types made in the kernel
    i, half = pair
    out[4] = i + half + len(nested)


def test_tuples_of_mixed_types_arrays_and_namedtuples(device):
    out = np.full(5, np.nan)
    values = np.array([1.0, 2.0, 9.0])
    with lockstep.device(device):
        mixed_tuples[1, 1](out, (3, (0.25, 0.75), values), Point(4, 2.5))
    np.testing.assert_array_equal(out, [3, 0.75, 9, 10, 3.5])
