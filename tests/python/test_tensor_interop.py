"""Arrays in and out of lockstep: asarray, from_dlpack, numpy(), __dlpack__,
all without copies; dtypes both ways; strides; lifetimes; .to()."""

import gc
import weakref

import numpy as np
import pytest

import lockstep

NUMPY_DTYPES = ["uint8", "int32", "int64", "float16", "float32", "float64"]

SCALE_SOURCE = r"""
__global__ void scale(float* v, float by, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] *= by;
}
"""


def random_array(rng, shape, dtype):
    if np.dtype(dtype).kind == "f":
        return rng.uniform(-100, 100, size=shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), size=shape, endpoint=True, dtype=dtype)


def address(array):
    return array.__array_interface__["data"][0]


@pytest.fixture(scope="module")
def scale_module():
    return lockstep.compile(SCALE_SOURCE, device="cpu")


# ---------------------------------------------------------------- NumPy -> lockstep


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@pytest.mark.parametrize("make", [lockstep.asarray, lockstep.from_dlpack], ids=["asarray", "from_dlpack"])
def test_numpy_in_is_zero_copy(rng, dtype, make):
    x = random_array(rng, (5, 7), dtype)
    t = make(x)
    assert isinstance(t, lockstep.Tensor)
    assert t.data_ptr == x.ctypes.data == address(x)
    assert (t.dtype, t.shape, t.strides, t.device) == (dtype, (5, 7), (7, 1), "cpu")
    assert (t.ndim, t.size) == (2, 35)
    assert t.is_contiguous()


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_numpy_out_is_zero_copy_and_keeps_the_dtype(rng, dtype):
    x = random_array(rng, (4, 6), dtype)
    t = lockstep.asarray(x)
    for y in (t.numpy(), np.from_dlpack(t), np.asarray(t)):
        assert y.dtype == np.dtype(dtype)
        assert address(y) == x.ctypes.data
        assert y.shape == x.shape and y.strides == x.strides
        assert np.array_equal(y, x)
    assert t.__dlpack_device__() == (1, 0)  # kDLCPU, device 0


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_lockstep_made_tensors_come_out_with_the_numpy_dtype(rng, dtype):
    x = random_array(rng, (3, 4), dtype)
    made = lockstep.asarray(x).clone()  # memory lockstep allocated
    assert made.data_ptr != x.ctypes.data
    out = made.numpy()
    assert out.dtype == np.dtype(dtype) and np.array_equal(out, x)
    assert address(out) == made.data_ptr
    empty = lockstep.empty((2, 3), dtype=dtype)
    assert (empty.dtype, empty.shape, empty.numpy().dtype) == (dtype, (2, 3), np.dtype(dtype))
    assert lockstep.empty([4], dtype=np.dtype(dtype)).dtype == dtype


@pytest.mark.parametrize("dtype", ["int8", "int16", "uint16", "uint32", "uint64", "complex64"])
def test_unsupported_dtypes_say_which_are_supported(dtype):
    with pytest.raises(TypeError, match=r"bool, uint8, int32, int64, float16, bfloat16, float32 or float64.*astype"):
        lockstep.asarray(np.zeros(3, dtype))


def test_not_an_array():
    with pytest.raises(TypeError, match="__dlpack__ or the buffer protocol.*got str"):
        lockstep.from_dlpack("not an array")
    with pytest.raises(ValueError, match="unknown dtype 'float128'.*float32"):
        lockstep.asarray(np.zeros(2, np.float32), dtype="float128")


def test_strided_and_transposed_inputs_keep_their_strides(rng):
    base = random_array(rng, (6, 8, 10), "float32")
    views = [base[:, ::2, 1::3], base.transpose(2, 0, 1), base.T, base[::2, 3], base[1:, ::-1], base[..., 4]]
    for x in views:
        t = lockstep.asarray(x)
        assert t.data_ptr == address(x)
        assert t.shape == x.shape
        assert t.strides == tuple(s // x.itemsize for s in x.strides)  # in elements
        assert not t.is_contiguous()
        back = t.numpy()
        assert address(back) == address(x) and back.strides == x.strides
        assert np.array_equal(back, x)
        # a kernel that reads the view element by element (a copy) sees the view's values
        assert np.array_equal(t.contiguous().numpy(), x)


def test_fortran_order_array(rng):
    x = np.asfortranarray(random_array(rng, (5, 3), "float64"))
    t = lockstep.asarray(x)
    assert t.strides == (1, 5) and t.data_ptr == address(x)
    assert np.array_equal(t.contiguous().numpy(), x)


def test_kernel_writes_show_in_the_numpy_array(rng, scale_module):
    x = random_array(rng, (3, 50), "float32")
    expected = x * 3
    t = lockstep.asarray(x)
    scale_module.scale[(t.size + 31) // 32, 32](t, 3.0, t.size)
    assert np.array_equal(x, expected)
    # straight from NumPy, and into a contiguous part of a larger array
    row = x[1]
    scale_module.scale[2, 32](row, 0.5, row.size)
    expected[1] *= 0.5
    assert np.array_equal(x, expected)


def test_numpy_array_copies_and_asarray_does_not(rng):
    x = random_array(rng, (4, 5), "float32")
    t = lockstep.asarray(x)
    copied = np.array(t)
    assert address(copied) != x.ctypes.data and np.array_equal(copied, x)
    assert address(np.asarray(t)) == x.ctypes.data
    assert np.asarray(t, dtype=np.float64).dtype == np.float64


def test_op_results_share_memory_with_their_numpy_view(rng):
    x = random_array(rng, (4, 4), "float32")
    y = lockstep.asarray(x) * 2
    view = y.numpy()
    view[0, 0] = 1234.5
    assert y.numpy()[0, 0] == 1234.5 and np.asarray(y)[0, 0] == 1234.5


def test_read_only_arrays_are_used_in_place(rng, scale_module):
    x = random_array(rng, (8,), "float32")
    x.flags.writeable = False
    t = lockstep.asarray(x)
    assert t.data_ptr == address(x)
    assert np.allclose((t * 2).numpy(), x * 2)
    with pytest.raises(lockstep.ArgumentError, match="read-only"):
        scale_module.scale[1, 8](x, 2.0, 8)  # passed as it is, the kernel may not write through it
    assert np.array_equal(x, t.numpy())


# ---------------------------------------------------------------- lifetimes


def test_tensor_keeps_the_source_alive(rng):
    x = random_array(rng, (1000,), "float64")
    expected = x.copy()
    source = weakref.ref(x)
    t = lockstep.asarray(x)
    del x
    gc.collect()
    assert source() is not None, "the tensor let its source array go"
    _ = [np.full(1000, -1.0) for _ in range(20)]  # reuse freed memory, if any was freed
    assert np.array_equal(t.numpy(), expected)
    view = t[10:20]
    del t
    gc.collect()
    assert source() is not None, "a view let the source array go"
    assert np.array_equal(view.numpy(), expected[10:20])
    del view
    gc.collect()
    assert source() is None, "the source array outlived every tensor over it"


def test_numpy_view_keeps_the_tensor_alive(rng):
    x = random_array(rng, (64,), "int32")
    out = (lockstep.asarray(x) + lockstep.asarray(x)).numpy()  # the tensor itself is a temporary
    gc.collect()
    _ = [lockstep.asarray(np.full(64, 7, np.int32)).clone() for _ in range(10)]
    assert np.array_equal(out, 2 * x)


# ---------------------------------------------------------------- conversions


@pytest.mark.parametrize("source", NUMPY_DTYPES)
@pytest.mark.parametrize("target", NUMPY_DTYPES)
def test_to_dtype_matches_numpy_astype(rng, source, target):
    x = rng.integers(0, 100, size=(3, 5)).astype(source)  # exact in every dtype
    t = lockstep.asarray(x)
    converted = t.to(target)
    assert converted.dtype == target and converted.shape == x.shape
    assert np.array_equal(converted.numpy(), x.astype(target))
    if source == target:
        assert converted.data_ptr == t.data_ptr  # already there: no copy
    else:
        assert converted.data_ptr != t.data_ptr
    assert np.array_equal(t.to(np.dtype(target)).numpy(), x.astype(target))
    assert np.array_equal(lockstep.asarray(x, dtype=getattr(np, target)).numpy(), x.astype(target))


def test_to_dtype_of_a_strided_view(rng):
    x = random_array(rng, (6, 9), "float64")[::2, ::3]
    converted = lockstep.asarray(x).to("float32")
    assert converted.is_contiguous()
    assert np.array_equal(converted.numpy(), x.astype(np.float32))


def test_float16_values_round_trip(rng):
    x = rng.standard_normal(100).astype(np.float16)
    t = lockstep.asarray(x).to("float32").to("float16")
    assert np.array_equal(t.numpy(), x)


def test_to_cpu_is_the_tensor_itself(rng):
    x = random_array(rng, (3, 3), "float32")
    t = lockstep.asarray(x)
    for target in ("cpu", lockstep.device("cpu")):
        same = t.to(target)
        assert same.data_ptr == t.data_ptr and same.device == "cpu"
    assert lockstep.asarray(t) is t
    assert lockstep.asarray(t, device="cpu").data_ptr == t.data_ptr


def test_lists_and_scalars_go_through_numpy():
    ints = lockstep.asarray([[1, 2, 3], [4, 5, 6]])
    assert (ints.dtype, ints.shape) == ("int64", (2, 3))
    assert np.array_equal(ints.numpy(), [[1, 2, 3], [4, 5, 6]])
    reals = lockstep.asarray([0.5, 1.5], dtype="float32")
    assert (reals.dtype, reals.numpy().tolist()) == ("float32", [0.5, 1.5])
    scalar = lockstep.asarray(2.5)  # Python floats make float32 tensors, as in PyTorch; NumPy's float64 stays
    assert (scalar.shape, scalar.ndim, scalar.size, scalar.dtype) == ((), 0, 1, "float32")
    assert scalar.numpy()[()] == 2.5
    assert lockstep.asarray(np.float64(2.5)).dtype == "float64"
    assert lockstep.asarray([True, False]).dtype == "bool"
    assert lockstep.asarray(np.float32(3)).shape == ()


def test_indexing_gives_views(rng):
    x = random_array(rng, (5, 6, 7), "float32")
    t = lockstep.asarray(x)
    for key in [(1,), (slice(1, None), slice(None, None, 2)), (-1, slice(2, 5), 3), (np.int64(2),), (slice(None), 0)]:
        view, expected = t[key], x[key]
        assert view.shape == expected.shape
        assert view.data_ptr == address(expected)
        assert np.array_equal(view.numpy(), expected)
    assert np.array_equal(t.T.numpy(), x.T) and t.T.data_ptr == t.data_ptr
    for key in [(slice(None, None, -1),), (slice(None), slice(-2, 1, -2)), (Ellipsis, slice(None, None, -3))]:
        view, expected = t[key], x[key]  # negative steps are views with negative strides, as NumPy's
        assert view.shape == expected.shape and np.array_equal(view.numpy(), expected)
    with pytest.raises(IndexError, match="too many"):
        t[0, 0, 0, 0]


def test_views_share_memory(rng):
    x = random_array(rng, (4, 6), "float32")
    t = lockstep.asarray(x)
    assert np.array_equal(t.reshape([6, 4]).numpy(), x.reshape(6, 4))
    assert np.array_equal(t.permute([1, 0]).numpy(), x.T)
    assert np.array_equal(t.transpose(0, 1).numpy(), x.T)
    assert np.array_equal(t.unsqueeze(1).numpy(), x[:, None, :])
    assert np.array_equal(t[0:1].expand([3, 6]).numpy(), np.broadcast_to(x[0:1], (3, 6)))
    assert np.array_equal(t.select(1, 2).numpy(), x[:, 2])
    assert np.array_equal(t.slice(1, 1, 6, 2).numpy(), x[:, 1:6:2])
    with pytest.raises(lockstep.ShapeError, match="contiguous"):
        t.T.reshape([24])


def test_repr_names_shape_dtype_and_device():
    text = repr(lockstep.asarray(np.arange(3, dtype=np.int32)))
    assert "shape=(3,)" in text and "dtype=int32" in text and "device=cpu" in text and "[0, 1, 2]" in text


# ---------------------------------------------------------------- PyTorch (CPU)

TORCH_DTYPES = ["uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


@pytest.mark.torch
@pytest.mark.parametrize("dtype", TORCH_DTYPES)
def test_torch_cpu_tensors_both_ways(dtype):
    import torch

    torch_dtype = getattr(torch, dtype)
    source = torch.arange(24, dtype=torch.float64).reshape(4, 6).to(torch_dtype)
    t = lockstep.asarray(source)
    assert t.dtype == dtype and t.shape == (4, 6) and t.device == "cpu"
    assert t.data_ptr == source.data_ptr()
    back = torch.from_dlpack(t)
    assert back.dtype == torch_dtype and back.data_ptr() == source.data_ptr()
    assert torch.equal(back, source)
    made = t.clone()  # lockstep's own memory, out to torch
    out = torch.from_dlpack(made)
    assert out.dtype == torch_dtype and out.data_ptr() == made.data_ptr and torch.equal(out, source)
    assert t.to(torch.float32).dtype == "float32"


@pytest.mark.torch
def test_bfloat16_converts_like_torch():
    import torch

    values = torch.randn(257, dtype=torch.float32) * 100
    as_bf16 = lockstep.asarray(values).to("bfloat16")
    assert as_bf16.dtype == "bfloat16"
    assert torch.equal(torch.from_dlpack(as_bf16), values.to(torch.bfloat16))
    back = lockstep.asarray(values.to(torch.bfloat16)).to("float32")
    assert torch.equal(torch.from_dlpack(back), values.to(torch.bfloat16).to(torch.float32))
    with pytest.raises(TypeError, match="bfloat16"):
        as_bf16.numpy()
    doubled = as_bf16 * 2  # a Python number beside a bfloat16 tensor
    assert torch.equal(torch.from_dlpack(doubled), values.to(torch.bfloat16) * 2)


@pytest.mark.torch
def test_torch_strided_view_and_kernel_write(scale_module):
    import torch

    base = torch.arange(40, dtype=torch.float32).reshape(5, 8)
    view = base[:, 1::2]
    t = lockstep.asarray(view)
    assert t.strides == view.stride() and t.data_ptr == view.data_ptr()
    row = base[2]
    scale_module.scale[1, 8](row, 10.0, 8)
    assert torch.equal(base[2], torch.arange(16, 24, dtype=torch.float32) * 10)
