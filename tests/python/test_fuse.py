"""@lockstep.fuse: every fused pattern against the same function run eagerly (lockstep's own ops, which the
conformance tests hold to PyTorch), on odd shapes, broadcast and non-contiguous inputs, on each device; the
signature cache, inspect_cuda, and the eager fallback with its note."""

import warnings

import numpy as np
import pytest

import lockstep

# Relative tolerance by result dtype: the fused kernel and the eager ops round differently (one rounding per
# op in both, but reductions accumulate in another order).
TOLERANCE = {"float32": 2e-5, "float64": 1e-12}


def run_both(fn, *args):
    """The fused result and the eager one (the undecorated function on the same tensors)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fused pattern must not fall back
        fused = fn(*args)
    return fused, fn.__wrapped__(*args)


def assert_same(fused, eager, computed_in=None):
    """Results, dtypes and devices equal; floats within the tolerance of the dtype they were computed in (a GPU
    compiler contracts a * b + c into one fused multiply-add, rounding once where the eager ops round twice)."""
    fused, eager = (fused, eager) if isinstance(fused, tuple) else ((fused,), (eager,))
    for f, e in zip(fused, eager):
        assert (f.shape, f.dtype, f.device) == (e.shape, e.dtype, e.device)
        got, want = f.to("cpu").numpy(), e.to("cpu").numpy()
        if f.dtype in TOLERANCE:
            tolerance = TOLERANCE[computed_in or f.dtype]
            np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)
        else:
            np.testing.assert_array_equal(got, want)


def tensor(rng, device, shape, dtype="float32", low=-3, high=3):
    if dtype in ("int32", "int64", "uint8"):
        return lockstep.asarray(rng.integers(low, high, size=shape).astype(dtype), device=device)
    return lockstep.asarray(rng.uniform(low, high, size=shape).astype(dtype), device=device)


@lockstep.fuse
def chain(x):
    return ((x * 2 + 1).relu() - 0.5).sigmoid() * x


@lockstep.fuse
def bias_gelu(x, b):
    y = x + b
    return 0.5 * y * (1 + lockstep.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))


@lockstep.fuse
def mixed(a, i, scale):
    # int32 and float32 promote to float32; a comparison, a where and a cast
    t = a * i + scale
    return lockstep.where(t > 0, t, -t).to("float64"), (i % 3 == 0)


@pytest.mark.parametrize("shape", [(1,), (7,), (1000,), (37, 129), (3, 5, 17)])
def test_elementwise_chains_match_eager(rng, device, shape):
    x = tensor(rng, device, shape)
    assert_same(*run_both(chain, x))
    b = tensor(rng, device, shape[-1:])
    assert_same(*run_both(bias_gelu, x, b))
    i = tensor(rng, device, shape, "int32", -5, 6)
    assert_same(*run_both(mixed, x, i, 0.25), computed_in="float32")


def test_broadcasting_and_non_contiguous_inputs(rng, device):
    base = tensor(rng, device, (40, 64))
    for x, b in [
        (base.T, tensor(rng, device, (40,))),  # transposed, a row broadcast
        (base[::3, 1::2], tensor(rng, device, (14, 1))),  # strided slice, a column broadcast
        (base[::-1], tensor(rng, device, (1, 64))),  # a negative stride
        (tensor(rng, device, (5, 1, 7)), tensor(rng, device, (3, 1))),  # both broadcast: (5, 3, 7)
    ]:
        assert_same(*run_both(bias_gelu, x, b))


@lockstep.fuse
def total(x, w):
    return (x * w + 1).sum()


@lockstep.fuse
def row_max(x, b):
    return (x - b).abs().max(dim=1)


@lockstep.fuse
def column_mean(x):
    return (x * x).mean(dim=0, keepdim=True)


@lockstep.fuse
def count_positive(x):
    return (x > 0).sum(dim=(0, 2))


@lockstep.fuse
def integer_product(a):
    return (a % 4 + 1).prod(dim=-1)


@pytest.mark.parametrize("shape", [(1, 1, 1), (3, 17, 5), (64, 33, 2)])
def test_a_final_reduction_matches_eager(rng, device, shape):
    x = tensor(rng, device, shape)
    assert_same(*run_both(total, x, tensor(rng, device, shape[-1:])))
    assert_same(*run_both(row_max, x, tensor(rng, device, shape[:1] + (1, 1))))
    assert_same(*run_both(column_mean, x))
    assert_same(*run_both(count_positive, x))
    assert_same(*run_both(integer_product, tensor(rng, device, shape, "int64", -9, 9)))


def test_a_sum_of_many_elements(rng, device):
    x = tensor(rng, device, (1 << 20) + 3)
    fused, eager = run_both(total, x, 0.5)
    assert abs(fused.item() - eager.item()) <= 1e-4 * abs(eager.item()) + 1e-2


def test_one_kernel_per_signature(rng, device):
    @lockstep.fuse
    def scaled(x, s):
        return x * s + 1

    first = scaled(tensor(rng, device, (10, 3)), 2.0)
    scaled(tensor(rng, device, (99, 7)), 3.5)  # another shape and number: the same kernel
    assert len(scaled._plans) == 1
    assert np.isnan(first.to("cpu").numpy()).sum() == 0
    scaled(tensor(rng, device, (4,), "float64"), 2.0)  # another dtype: a second kernel
    scaled(tensor(rng, device, (10, 1)), 2.0)  # an extent of 1 (a broadcast pattern): a third
    assert len(scaled._plans) == 3


def test_inspect_cuda_shows_a_readable_kernel(rng):
    source = bias_gelu.inspect_cuda(tensor(rng, "cpu", (4, 8)), tensor(rng, "cpu", (8,)))
    assert "__global__ void fused_bias_gelu(" in source
    assert "// add, " in source and "// tanh, " in source and "test_fuse.py:" in source
    assert source.count("__global__") == 1  # one kernel for the whole expression


@lockstep.fuse
def softmax_rows(x):
    shifted = (x - x.max(dim=-1, keepdim=True)).exp()
    return shifted / shifted.sum(dim=-1, keepdim=True)


@lockstep.fuse
def layernorm(x, w, b, eps):
    mean = x.mean(dim=-1, keepdim=True)
    centered = x - mean
    variance = (centered * centered).mean(dim=-1, keepdim=True)
    return centered / (variance + eps).sqrt() * w + b


@lockstep.fuse
def normalize_planes(x):
    return x / x.abs().sum(dim=(1, 2), keepdim=True)  # two trailing dims


# Rows of each launch shape: a warp per row with 8 rows per block (the last block partly past the end), more
# threads per row, a row of 1024 threads, and a row too long for registers (read once per pass).
@pytest.mark.parametrize("shape", [(1, 1), (5, 9), (70, 33), (33, 300), (2, 3, 257), (3, 5000), (1, 40000)])
def test_reduce_then_map_rows_match_eager(rng, device, shape):
    x = tensor(rng, device, shape)
    assert_same(*run_both(softmax_rows, x))
    np.testing.assert_allclose(softmax_rows(x).to("cpu").numpy(), lockstep.softmax(x, -1).to("cpu").numpy(), rtol=2e-6, atol=1e-7)
    w, b = tensor(rng, device, shape[-1:]), tensor(rng, device, shape[-1:])
    fused, eager = run_both(layernorm, x, w, b, 1e-5)
    assert_same(fused, eager, computed_in="float32")
    assert_same(*run_both(normalize_planes, tensor(rng, device, (3, 4, 5))))
    assert "// the row's max" in softmax_rows.inspect_cuda(x) and softmax_rows.inspect_cuda(x).count("__global__") == 1


def test_rows_of_strided_inputs_and_empty_rows(rng, device):
    x = tensor(rng, device, (300, 6)).transpose(0, 1)  # rows of stride 6
    assert not x.is_contiguous()
    assert_same(*run_both(softmax_rows, x))
    empty = tensor(rng, device, (4, 0))
    out = normalize_planes(tensor(rng, device, (2, 0, 3)))  # sums of no elements are 0: an empty result
    assert tuple(out.shape) == (2, 0, 3)
    with pytest.raises(lockstep.ShapeError, match="max: a reduced dimension is empty"):
        softmax_rows(empty)  # as the eager max


def test_what_is_not_fused_runs_eagerly_with_a_note(rng, device):
    @lockstep.fuse
    def center_columns(x):
        return x - x.mean(dim=0, keepdim=True)  # a reduction over a leading dim, used further

    x = tensor(rng, device, (6, 9))
    with pytest.warns(UserWarning, match=r"center_columns eagerly.*reduction's result.*test_fuse.py:\d+"):
        out = center_columns(x)
    assert_same(out, center_columns.__wrapped__(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        center_columns(x)  # the note comes once per signature

    @lockstep.fuse
    def branches(x):
        return x + 1 if x > 0 else x - 1

    one = tensor(rng, device, (1,))
    with pytest.warns(UserWarning, match="Python branch on a tensor's value"):
        assert_same(branches(one), branches.__wrapped__(one))


def test_a_result_that_ignores_the_widest_argument_keeps_its_own_shape(rng, device):
    @lockstep.fuse
    def first_only(x, y):
        return x * 2

    x, y = tensor(rng, device, (5,)), tensor(rng, device, (3, 5))
    assert_same(first_only(x, y), first_only.__wrapped__(x, y))


def test_errors_are_clear(rng):
    with pytest.raises(TypeError, match="needs at least one tensor"):
        chain(1.0)
    with pytest.raises(TypeError, match="mean needs a floating-point tensor"):
        column_mean(tensor(rng, "cpu", (3, 3), "int32"))
    with pytest.raises(lockstep.ShapeError):
        bias_gelu(tensor(rng, "cpu", (3, 4)), tensor(rng, "cpu", (5,)))


@pytest.mark.gpu
def test_inputs_on_different_devices_are_refused(rng):
    with pytest.raises(ValueError, match="different devices"):
        bias_gelu(tensor(rng, "cpu", (3,)), tensor(rng, "cuda:0", (3,)))
