"""@lockstep.fuse: every fused pattern against the same function run eagerly (lockstep's own ops, which the
conformance tests hold to PyTorch), on odd shapes, broadcast and non-contiguous inputs, on each device; the
signature cache, inspect_cuda, and the eager fallback with its note."""

import math
import warnings

import numpy as np
import pytest

import lockstep
from lockstep import _ops
from lockstep._op_codes import BINARY, UNARY

# Relative tolerance by result dtype: the fused kernel and the eager ops round differently (one rounding per
# op in both, but reductions accumulate in another order).
# 16-bit floats: a few units in the last place (2^-10 and 2^-7), as one op's rounding can differ by one unit.
TOLERANCE = {"float16": 4e-3, "bfloat16": 3e-2, "float32": 2e-5, "float64": 1e-12}


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
        got, want = (t.to("cpu").to("float32" if t.dtype in ("float16", "bfloat16") else t.dtype).numpy() for t in (f, e))
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
def centered_times(x, y):
    return (x - x.mean(dim=-1, keepdim=True)) * y  # y: read only after the reduction, a group at a time


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
    assert_same(*run_both(centered_times, x, tensor(rng, device, shape)))
    assert "// the row's max" in softmax_rows.inspect_cuda(x) and softmax_rows.inspect_cuda(x).count("__global__") == 1
    # A GPU compiles a row held in registers (up to 1024 threads x 8) for its length; the emulator keeps one kernel.
    fixed = f"constexpr long long row_length = {shape[-1]};" in softmax_rows.inspect_cuda(x)
    assert fixed == (device != "cpu" and shape[-1] <= 8192)


@lockstep.fuse
def divide_and_bound(a, b):
    return a / b, lockstep.maximum(a, b), lockstep.minimum(a, b)


def test_special_values_divide_and_bound_as_eager(device):
    """Infinities, NaN, zeros of both signs, subnormals and the ends of float's range, every pair (a GPU divides
    within 2 units in the last place and takes max and min in one instruction); a NaN in a row makes its softmax NaN."""
    special = np.array([1.0, -1.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -3e-39, 3e38, -3.4e38, 1e-30, 7.0, 3.0], dtype=np.float32)
    a = lockstep.asarray(np.repeat(special, special.size), device=device)
    b = lockstep.asarray(np.tile(special, special.size), device=device)
    with np.errstate(all="ignore"):
        assert_same(*run_both(divide_and_bound, a, b))
    rows = np.random.default_rng(5).uniform(-1, 1, (3, 40)).astype(np.float32)
    rows[1, 7] = np.nan
    got = softmax_rows(lockstep.asarray(rows, device=device)).to("cpu").numpy()
    assert np.isnan(got[1]).all() and not np.isnan(got[[0, 2]]).any()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_sixteen_bit_floats_compute_in_float_and_round_as_eager(rng, device, dtype):
    x = tensor(rng, device, (37, 130)).to(dtype)
    b = tensor(rng, device, (130,)).to(dtype)
    assert_same(*run_both(chain, x))
    assert_same(*run_both(bias_gelu, x, b))
    assert_same(*run_both(softmax_rows, x))
    assert_same(*run_both(mixed, x, tensor(rng, device, (37, 130), "int32"), 0.25))  # float16 * int32: float16
    u = tensor(rng, device, (130,))
    cast_then_add = lockstep.fuse(lambda t, u: t.to("float32") * 2 + u)
    assert_same(*run_both(cast_then_add, x, u))
    assert cast_then_add(x, u).dtype == "float32"
    assert "#include <cuda_fp16.h>" in chain.inspect_cuda(x)


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


@lockstep.fuse
def linear_relu(x, w, b):
    return (x @ w + b).relu()


@lockstep.fuse
def scaled_linear_gelu_residual(x, w, b, r, scale):
    return lockstep.gelu(x @ w * scale / 2 + b, approximate="tanh") + r


@lockstep.fuse
def scaled_only(x, w):
    return lockstep.sigmoid(lockstep.matmul(x, w) * 0.5)


def matmul_reference(x, w, alpha=1.0, bias=None, activation=None, residual=None):
    """act(alpha * x @ w + bias) + residual in float64 from the tensors' values."""
    value = alpha * np.matmul(x.to("cpu").numpy().astype(np.float64), w.to("cpu").numpy().astype(np.float64))
    if bias is not None:
        value = value + bias.to("cpu").numpy()
    if activation == "relu":
        value = np.maximum(value, 0)
    elif activation == "gelu_tanh":
        value = 0.5 * value * (1 + np.tanh(0.7978845608028654 * (value + 0.044715 * value**3)))
    elif activation == "sigmoid":
        value = 1 / (1 + np.exp(-value))
    if residual is not None:
        value = value + residual.to("cpu").numpy()
    return value


# A tile's edges everywhere (odd sizes), whole tiles, and a batch broadcast over w.
@pytest.mark.parametrize("m, k, n, batch", [(67, 45, 33, ()), (128, 64, 256, ()), (20, 16, 24, (3,))])
def test_matmul_epilogues_match_eager_and_float64(rng, device, m, k, n, batch):
    x, w = tensor(rng, device, (*batch, m, k), low=-1, high=1), tensor(rng, device, (k, n), low=-1, high=1)
    b, r = tensor(rng, device, (n,)), tensor(rng, device, (*batch, m, n))
    tolerance = dict(rtol=1e-4, atol=1e-4 * k)  # float32 products; the eager ops round between ops
    fused, eager = run_both(linear_relu, x, w, b)
    assert (fused.shape, fused.dtype) == (eager.shape, eager.dtype)
    np.testing.assert_allclose(fused.to("cpu").numpy(), eager.to("cpu").numpy(), **tolerance)
    np.testing.assert_allclose(fused.to("cpu").numpy(), matmul_reference(x, w, bias=b, activation="relu"), **tolerance)
    fused = run_both(scaled_linear_gelu_residual, x, w, b, r, 3.0)[0]
    want = matmul_reference(x, w, alpha=1.5, bias=b, activation="gelu_tanh", residual=r)
    np.testing.assert_allclose(fused.to("cpu").numpy(), want, **tolerance)
    np.testing.assert_allclose(run_both(scaled_only, x, w)[0].to("cpu").numpy(), matmul_reference(x, w, 0.5, activation="sigmoid"), **tolerance)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_matmul_epilogue_with_weights_in_the_linear_layout(rng, device, dtype):
    x, w, b = tensor(rng, device, (2, 33, 40), low=-1, high=1), tensor(rng, device, (24, 40), low=-1, high=1), tensor(rng, device, (24,))
    x, w, b = (t.to(dtype) for t in (x, w, b))
    linear = lockstep.fuse(lambda x, w, b: lockstep.relu(x @ w.mT + b))
    fused, eager = run_both(linear, x, w, b)
    assert (fused.shape, fused.dtype) == (eager.shape, eager.dtype) == ((2, 33, 24), dtype)
    want = matmul_reference(x.to("float32"), w.to("float32").transpose(0, 1), bias=b.to("float32"), activation="relu")
    tolerance = {"float32": 1e-4, "bfloat16": 3e-2}[dtype]
    np.testing.assert_allclose(fused.to("float32").to("cpu").numpy(), want, rtol=tolerance, atol=tolerance * 8)
    assert "argument 1.T" in linear.inspect_cuda(x, w, b)
    with pytest.warns(UserWarning, match="transpose that is not a matmul's operand"):
        lockstep.fuse(lambda x: x.mT * 2)(x.to("float32"))


def test_matmul_epilogue_shows_its_steps_and_what_does_not_fit_runs_eagerly(rng, device):
    x, w, b = tensor(rng, device, (9, 7)), tensor(rng, device, (7, 5)), tensor(rng, device, (5,))
    text = linear_relu.inspect_cuda(x, w, b)
    assert "no kernel is generated" in text and "bias" in text and "relu: activation" in text and "test_fuse.py:" in text

    @lockstep.fuse
    def residual_before_activation(x, w, r):
        return (x @ w + r).relu()  # the kernels add the residual after the activation

    r = tensor(rng, device, (9, 5))
    with pytest.warns(UserWarning, match=r"relu after the matmul \(.*test_fuse.py:\d+\)"):
        out = residual_before_activation(x, w, r)
    np.testing.assert_allclose(out.to("cpu").numpy(), np.maximum(matmul_reference(x, w) + r.to("cpu").numpy(), 0), rtol=1e-5, atol=1e-5)

    @lockstep.fuse
    def reused(x, w):
        y = x @ w
        return y * y

    with pytest.warns(UserWarning, match="used twice"):
        reused(x, w)


def test_gelu_matches_its_definitions(rng, device):
    x = tensor(rng, device, (1000,), low=-6, high=6)
    values = x.to("cpu").numpy().astype(np.float64)
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(lockstep.gelu(x).to("cpu").numpy(), 0.5 * values * (1 + erf(values / math.sqrt(2))), rtol=1e-6, atol=1e-6)
    tanh_form = 0.5 * values * (1 + np.tanh(math.sqrt(2 / math.pi) * (values + 0.044715 * values**3)))
    np.testing.assert_allclose(lockstep.gelu(x, approximate="tanh").to("cpu").numpy(), tanh_form, rtol=1e-6, atol=1e-6)
    fused = lockstep.fuse(lambda t: lockstep.gelu(t) + lockstep.gelu(t, approximate="tanh"))
    assert_same(fused(x), lockstep.gelu(x) + lockstep.gelu(x, approximate="tanh"))
    with pytest.raises(ValueError, match="approximate must be"):
        lockstep.gelu(x, approximate="fast")


# Every unary and binary op of lockstep/kernels/op_codes.h's rows (as fusion reads them), by name: a row added
# there is fused with no edit to the tracer. (Two kernels: a kernel takes at most 32 parameters.)
def every_unary_op(x):
    return tuple(_ops.map(op, x) for op in UNARY)


def every_binary_op(x, y):
    floating = x.dtype.startswith("float")
    return tuple(_ops.zip(op, x, y) for op, flags in BINARY.items() if not (flags.integers_only and floating))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_every_op_of_the_op_table_fuses_as_eager(rng, device, dtype):
    x, y = tensor(rng, device, (300,), dtype, -20, 20), tensor(rng, device, (300,), dtype, -5, 5)
    assert len(UNARY) >= 13 and len(BINARY) >= 21  # the rows were read
    unary, binary = lockstep.fuse(every_unary_op), lockstep.fuse(every_binary_op)
    with np.errstate(all="ignore"):
        assert_same(*run_both(unary, x))
        assert_same(*run_both(binary, x, y))
    assert all(f"lockstep::kernels::unary_{op}<" in unary.inspect_cuda(x) for op in UNARY)


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
