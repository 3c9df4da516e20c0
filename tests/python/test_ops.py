"""The library's ops (map, zip, reduce, matmul, rgb_to_grayscale), as
functions and as Tensor operators, against float64 NumPy references on fresh
random inputs. New tensors are poisoned (conftest), so an element an op does
not write is NaN (or 0xff..) and fails the comparison."""

import threading

import numpy as np
import pytest

import lockstep

# The float32 SIMT ladder, from the kernels' recipe table: a new rung is tested without an edit here.
ALGOS = [algo["name"] for algo in lockstep._core.matmul_algos() if algo["family"] == "simt"]


def test_the_ladder_holds_the_lectures_kernels_and_the_fast_rungs():
    assert ALGOS[:3] == ["naive", "tiled_static", "tiled_dynamic"]
    assert {"register_2d", "warp_tiled", "double_buffered"} <= set(ALGOS)


def host(t):
    """A tensor's values as a NumPy array."""
    return t.to("cpu").numpy()


def on(device, array):
    return lockstep.asarray(array, device=device)


def close(result, reference, dtype=np.float32):
    """float32 results against a float64 reference: a few ulps, relative to the values' scale."""
    result = np.asarray(result, dtype=np.float64)
    assert result.shape == reference.shape
    assert not np.isnan(result).any() or np.isnan(reference).any(), "an element was never written"
    eps = np.finfo(dtype).eps
    return np.allclose(result, reference, rtol=8 * eps, atol=8 * eps * max(1.0, np.abs(reference).max(initial=0)))


# ---------------------------------------------------------------- map

UNARY = {
    "copy": lambda x: x,
    "neg": np.negative,
    "abs": np.abs,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "relu": lambda x: np.maximum(x, 0),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "tanh": np.tanh,
    "square": np.square,
    "reciprocal": lambda x: 1 / x,
}
POSITIVE_ONLY = {"log", "sqrt", "reciprocal"}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_map_matches_numpy(rng, device, op):
    low = 0.1 if op in POSITIVE_ONLY else -4.0
    x = rng.uniform(low, 4.0, size=(37, 29)).astype(np.float32)
    out = lockstep.map(op, on(device, x))
    assert (out.dtype, out.shape, out.device) == ("float32", x.shape, device)
    assert close(host(out), UNARY[op](x.astype(np.float64)))


@pytest.mark.parametrize("op", ["neg", "abs", "exp", "log", "sqrt", "relu", "sigmoid", "tanh"])
def test_named_unary_functions_and_methods(rng, device, op):
    x = rng.uniform(0.1, 3.0, size=(50,)).astype(np.float32)
    t = on(device, x)
    reference = UNARY[op](x.astype(np.float64))
    assert close(host(getattr(lockstep, op)(t)), reference)
    if hasattr(t, op):
        assert close(host(getattr(t, op)()), reference)


@pytest.mark.parametrize("dtype", ["uint8", "int32", "int64", "float16", "float64"])
def test_map_keeps_other_dtypes(rng, device, dtype):
    x = rng.integers(0, 50, size=(9, 11)).astype(dtype)
    for op, reference in (("copy", x), ("square", x * x), ("relu", x)):
        out = lockstep.map(op, on(device, x))
        assert out.dtype == dtype
        assert np.array_equal(host(out), reference)


def test_floating_maps_of_integers_give_float32(device):
    out = lockstep.exp(on(device, np.arange(4, dtype=np.int32)))  # PyTorch's rule
    assert out.dtype == "float32"
    assert close(host(out), np.exp(np.arange(4.0)))
    with pytest.raises(ValueError, match="unknown unary operation 'cube'.*neg"):
        lockstep.map("cube", on(device, np.zeros(2, np.float32)))


@pytest.mark.parametrize("dtype", ["uint8", "int64", "float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("n", [1, 15, 16, 17, 1001])
def test_contiguous_paths_at_every_length_and_alignment(rng, device, dtype, n):
    # Packed operands take the 16-byte-vector kernels: lengths around a vector
    # (16 bytes = 1 to 16 elements) leave tails, and a view that starts one
    # element in is contiguous but off the 16-byte boundary.
    numpy_dtype = np.float32 if dtype == "bfloat16" else dtype
    # Integers below 16: squares and sums stay exact in every dtype (bfloat16 has 8 significant bits).
    x = rng.integers(0, 16, size=n + 1).astype(numpy_dtype)
    y = rng.integers(0, 16, size=n + 1).astype(numpy_dtype)
    tx, ty = on(device, x), on(device, y)
    if dtype == "bfloat16":
        tx, ty = tx.to("bfloat16"), ty.to("bfloat16")

    def values(t):
        return host(t.to("float32") if dtype == "bfloat16" else t)

    for start in (0, 1):
        a, b = tx[start : start + n], ty[start : start + n]
        assert a.is_contiguous()
        assert np.array_equal(values(lockstep.map("square", a)), (x[start : start + n] * x[start : start + n]).astype(numpy_dtype))
        assert np.array_equal(values(a + b), (x[start : start + n] + y[start : start + n]).astype(numpy_dtype))
        assert np.array_equal(values(lockstep.maximum(a, b)), np.maximum(x[start : start + n], y[start : start + n]))


def test_map_on_non_contiguous_views(rng, device):
    base = rng.uniform(-2, 2, size=(12, 10, 8)).astype(np.float32)
    t = on(device, base)
    for view, expected in [
        (t.T, base.T),
        (t[1::3, :, ::2], base[1::3, :, ::2]),
        (t.permute([1, 2, 0]), base.transpose(1, 2, 0)),
        (t[4], base[4]),
        (t[:, 3:4].expand([12, 6, 8]), np.broadcast_to(base[:, 3:4], (12, 6, 8))),
    ]:
        out = lockstep.tanh(view)
        assert out.is_contiguous() and out.shape == expected.shape
        assert close(host(out), np.tanh(expected.astype(np.float64)))


def test_abs_and_neg_operators(rng, device):
    x = rng.uniform(-5, 5, size=(8, 3)).astype(np.float32)
    t = on(device, x)
    assert np.array_equal(host(-t), -x)
    assert np.array_equal(host(abs(t)), np.abs(x))


# ---------------------------------------------------------------- zip

BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "pow": np.power,
    "eq": lambda a, b: (a == b).astype(np.float64),
    "lt": lambda a, b: (a < b).astype(np.float64),
    "gt": lambda a, b: (a > b).astype(np.float64),
}

BROADCASTS = [((6, 7), (6, 7)), ((5, 1, 7), (4, 1)), ((3,), (2, 3)), ((1,), (4, 5)), ((), (3, 2)), ((2, 1, 3, 1), (1, 4, 1, 5))]


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("shapes", BROADCASTS, ids=str)
def test_zip_broadcasts_like_numpy(rng, device, op, shapes):
    if op in ("eq", "lt", "gt"):  # few distinct values, so that ties happen
        a = rng.integers(1, 4, size=shapes[0]).astype(np.float32)
        b = rng.integers(1, 4, size=shapes[1]).astype(np.float32)
    else:
        a = rng.uniform(0.5, 2.0, size=shapes[0]).astype(np.float32)
        b = rng.uniform(0.5, 2.0, size=shapes[1]).astype(np.float32)
    out = lockstep.zip(op, on(device, a), on(device, b))
    assert out.shape == np.broadcast_shapes(shapes[0], shapes[1]) and out.device == device
    assert close(host(out), BINARY[op](a.astype(np.float64), b.astype(np.float64)))


@pytest.mark.parametrize(
    "name,op", [("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide), ("maximum", np.maximum), ("minimum", np.minimum)]
)
def test_named_binary_functions(rng, device, name, op):
    a = rng.uniform(-3, 3, size=(4, 1, 6)).astype(np.float32)
    b = rng.uniform(0.5, 3, size=(5, 6)).astype(np.float32)
    assert close(host(getattr(lockstep, name)(on(device, a), on(device, b))), op(a.astype(np.float64), b.astype(np.float64)))


def test_operators_with_tensors_arrays_and_numbers(rng, device):
    x = rng.uniform(1, 2, size=(3, 4)).astype(np.float32)
    y = rng.uniform(1, 2, size=(4,)).astype(np.float32)
    tx, ty = on(device, x), on(device, y)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    cases = [
        (tx + ty, x64 + y64),
        (tx - ty, x64 - y64),
        (tx * ty, x64 * y64),
        (tx / ty, x64 / y64),
        (tx + 2, x64 + 2),
        (2 + tx, 2 + x64),
        (tx - 0.5, x64 - 0.5),
        (1 - tx, 1 - x64),
        (tx * 3, x64 * 3),
        (3 * tx, 3 * x64),
        (tx / 4, x64 / 4),
        (1 / tx, 1 / x64),
        ((tx * 2 + 1).sum(dim=1), (x64 * 2 + 1).sum(axis=1)),
    ]
    if device == "cpu":  # NumPy arrays beside a CPU tensor
        cases += [(tx + y, x64 + y64), (y * tx, y64 * x64)]
    for result, reference in cases:
        assert result.device == device and result.dtype == "float32"
        assert close(host(result), reference)


def test_integer_operators(rng, device):
    a = rng.integers(-50, 50, size=(5, 5)).astype(np.int32)
    b = rng.integers(1, 9, size=(5,)).astype(np.int32)
    ta, tb = on(device, a), on(device, b)
    assert np.array_equal(host(ta + tb), a + b)
    assert np.array_equal(host(ta * 3), a * 3)
    assert np.array_equal(host(ta - 7), a - 7)
    assert host(ta + tb).dtype == np.int32
    assert (ta * 0.5).dtype == "float32" and close(host(ta * 0.5), a * 0.5)  # PyTorch's promotion
    wrapped = on(device, np.zeros(2, np.uint8)) + 300  # PyTorch's rule: the tensor's dtype, the number wraps
    assert wrapped.dtype == "uint8" and host(wrapped).tolist() == [44, 44]


def test_zip_errors_are_clear(device):
    f32 = on(device, np.zeros((2, 3), np.float32))
    assert (f32 + on(device, np.zeros((2, 3), np.float64))).dtype == "float64"  # promoted, as PyTorch does
    with pytest.raises(lockstep.ShapeError, match="\\(2, 3\\) and \\(4,\\) do not broadcast"):
        f32 * on(device, np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="unknown binary operation 'xor'"):
        lockstep.zip("xor", f32, f32)


def test_zip_on_non_contiguous_views(rng, device):
    base = rng.uniform(-1, 1, size=(16, 12)).astype(np.float32)
    t = on(device, base)
    out = t[::2, 1::3] * t.T[1::3, ::2].T
    assert close(host(out), base[::2, 1::3].astype(np.float64) * base.T[1::3, ::2].T)


# ---------------------------------------------------------------- reduce

REDUCE = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod}


@pytest.mark.parametrize("op", sorted(REDUCE))
@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reduce_matches_numpy(rng, device, op, dim, keepdim):
    x = rng.uniform(0.5, 1.5, size=(7, 13, 5)).astype(np.float32)
    out = lockstep.reduce(op, on(device, x), dim=dim, keepdim=keepdim)
    reference = REDUCE[op](x.astype(np.float64), axis=dim, keepdims=keepdim)
    assert out.shape == reference.shape
    assert np.allclose(host(out), reference, rtol=1e-5)


@pytest.mark.parametrize("op", sorted(REDUCE))
def test_reduce_functions_methods_and_views(rng, device, op):
    base = rng.uniform(0.5, 1.5, size=(9, 20)).astype(np.float32)
    t = on(device, base)
    view, expected = t.T[::3], base.T[::3].astype(np.float64)
    reference = REDUCE[op](expected, axis=0)
    assert np.allclose(host(getattr(lockstep, op)(view, dim=0)), reference, rtol=1e-5)
    assert np.allclose(host(getattr(view, op)(0)), reference, rtol=1e-5)
    assert np.allclose(host(getattr(view, op)(-1)), REDUCE[op](expected, axis=-1), rtol=1e-5)
    whole = getattr(view, op)()  # no dim: every element, to a 0-d tensor
    assert whole.shape == () and np.allclose(host(whole), REDUCE[op](expected), rtol=1e-5)


def test_integer_reductions_are_exact(rng, device):
    x = rng.integers(-1000, 1000, size=(6, 300)).astype(np.int64)
    t = on(device, x)
    assert np.array_equal(host(t.sum(dim=1)), x.sum(axis=1))
    assert np.array_equal(host(t.max(dim=0)), x.max(axis=0))
    assert np.array_equal(host(t.min(dim=-1, keepdim=True)), x.min(axis=-1, keepdims=True))


def test_reduce_errors(device):
    x = on(device, np.zeros((2, 3), np.float32))
    with pytest.raises(lockstep.ShapeError, match="dim 2 is out of range"):
        x.sum(dim=2)
    with pytest.raises(lockstep.ShapeError, match="empty"):
        lockstep.max(on(device, np.zeros((2, 0), np.float32)), dim=1)
    with pytest.raises(TypeError, match="mean needs a floating-point tensor"):
        lockstep.mean(on(device, np.zeros(3, np.int32)))
    with pytest.raises(ValueError, match="unknown reduce operation 'median'"):
        lockstep.reduce("median", x)


def test_reductions_over_empty_dims_as_pytorch(device):
    empty = on(device, np.zeros((3, 0), np.float32))
    assert host(lockstep.sum(empty, dim=1)).tolist() == [0.0, 0.0, 0.0]
    assert host(lockstep.prod(empty, dim=1)).tolist() == [1.0, 1.0, 1.0]
    assert host(lockstep.all(empty, dim=1)).tolist() == [True, True, True]
    assert host(lockstep.any(empty, dim=1)).tolist() == [False, False, False]
    mixed = on(device, np.array([[1, 0, 2], [3, 4, 5]], np.int32))
    assert host(mixed.all(dim=1)).tolist() == [False, True] and host(mixed.any(dim=0)).tolist() == [True, True, True]


# ---------------------------------------------------------------- reduce over every element

ALL_DTYPES = ["uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
ACCUMULATE_EPS = {"float16": 2.0**-24, "bfloat16": 2.0**-24, "float32": 2.0**-53, "float64": 2.0**-53}
RESULT_EPS = {"float16": 2.0**-11, "bfloat16": 2.0**-8, "float32": 2.0**-24, "float64": 2.0**-53}


def reduce_all_input(rng, op, dtype, n):
    """Values exact in every dtype (at most 7 significant bits) whose reduction
    stays finite and, for integers, exact (products: mostly ones, a few
    factors of 2 and -1)."""
    if op == "prod":
        x = np.ones(n)
        few = rng.choice(n, size=min(n, 12), replace=False) if n else np.zeros(0, int)
        x[few] = rng.choice([2.0, -1.0, 0.5] if dtype.startswith("float") or dtype == "bfloat16" else [2.0, -1.0], size=few.size)
        if dtype == "uint8":
            x = np.abs(x)
    elif dtype == "uint8":
        x = rng.integers(0, 256, size=n).astype(np.float64)
    elif dtype in ("int32", "int64"):
        x = rng.integers(-1000, 1000, size=n).astype(np.float64)
    else:
        x = rng.integers(-64, 65, size=n) / 8.0
    return x


def as_lockstep(device, x, dtype):
    if dtype == "bfloat16":  # NumPy has none: made from float32 values it holds exactly
        return on(device, x.astype(np.float32)).to("bfloat16")
    return on(device, x.astype(dtype))


def result_dtype(op, dtype):
    return "int64" if op in ("sum", "prod") and dtype in ("bool", "uint8", "int32", "int64") else dtype


def reduce_all_reference(op, x, dtype):
    """The reduction of float64 (or exact int64) values, wrapped to the dtype
    for integer maxima and minima (sums and products of integers are int64,
    as PyTorch's), and the error the result may have."""
    if dtype in ("uint8", "int32", "int64"):
        ints = x.astype(np.int64)
        exact = {"sum": ints.sum, "prod": ints.prod, "max": ints.max, "min": ints.min}[op]()
        return np.array(exact).astype(result_dtype(op, dtype)).astype(np.float64), 0.0
    want = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max, "min": np.min}[op](x) if x.size or op in ("sum", "prod") else np.nan
    if op in ("max", "min"):
        return want, 0.0
    magnitude = np.abs(x).sum() / (x.size if op == "mean" else 1)
    if op == "prod":
        magnitude = abs(want)
    return want, RESULT_EPS[dtype] * abs(want) + 64 * ACCUMULATE_EPS[dtype] * magnitude


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", sorted(REDUCE))
@pytest.mark.parametrize("n", [1, 5, 1000003])
def test_reduce_all_matches_numpy(rng, device, op, dtype, n):
    if op == "mean" and dtype in ("uint8", "int32", "int64"):
        return  # test_reduce_errors: mean needs floating point
    x = reduce_all_input(rng, op, dtype, n)
    out = lockstep.reduce(op, as_lockstep(device, x, dtype))
    assert (out.shape, out.dtype, out.device) == ((), result_dtype(op, dtype), device)
    got = float(host(out.to("float32") if dtype == "bfloat16" else out))
    want, allowed = reduce_all_reference(op, x, dtype)
    assert abs(got - want) <= allowed, f"{op} of {n} {dtype}: got {got}, want {want} (allowed error {allowed})"


@pytest.mark.parametrize("dtype", ["uint8", "float16", "float32", "float64", "int64"])
def test_reduce_all_of_views_and_misaligned_starts(rng, device, dtype):
    # Strided views are packed first; a contiguous view starting 1..15 bytes
    # past a 16-byte boundary takes the scalar path for its head.
    x = reduce_all_input(rng, "sum", dtype, 37 * 29)
    base = as_lockstep(device, x, dtype)
    grid = base.reshape([37, 29])
    values = x.reshape(37, 29)
    for view, expected in (
        (grid.T, values.T),
        (grid[1::2, ::3], values[1::2, ::3]),
        (base[1:], x[1:]),
        (base[3:-5], x[3:-5]),
        (grid[:, 5], values[:, 5]),
    ):
        for op in ("sum", "max", "min"):
            got = float(host(lockstep.reduce(op, view)))
            want, allowed = reduce_all_reference(op, np.ascontiguousarray(expected).ravel(), dtype)
            assert abs(got - want) <= allowed, f"{op} of a view {view.shape}: got {got}, want {want}"


def test_reduce_all_functions_methods_and_keepdim(rng, device):
    x = rng.uniform(0.5, 1.5, size=(7, 13, 5)).astype(np.float32)
    t = on(device, x)
    for op, reference in REDUCE.items():
        want = reference(x.astype(np.float64))
        for result in (getattr(lockstep, op)(t), getattr(t, op)(), lockstep.reduce(op, t, dim=None)):
            assert result.shape == ()
            assert np.allclose(host(result), want, rtol=1e-5)
        kept = lockstep.reduce(op, t, keepdim=True)
        assert kept.shape == (1, 1, 1) and np.allclose(host(kept), want, rtol=1e-5)
    assert float(host(lockstep.sum(on(device, np.array(2.5, np.float32))))) == 2.5  # a 0-d input


def test_reduce_all_of_nothing(device):
    empty = on(device, np.zeros((4, 0), np.float32))
    assert float(host(lockstep.sum(empty))) == 0.0
    assert float(host(lockstep.prod(empty))) == 1.0
    assert int(host(lockstep.sum(on(device, np.zeros(0, np.int64))))) == 0
    for op in ("max", "min", "mean"):
        with pytest.raises(lockstep.ShapeError, match=f"{op}: float32 tensor \\(4, 0\\) on {device} has no elements"):
            lockstep.reduce(op, empty)
    with pytest.raises(TypeError, match="mean needs a floating-point tensor"):
        lockstep.mean(on(device, np.zeros(5, np.int32)))


@pytest.mark.gpu
def test_sum_of_2_to_the_28_floats_on_the_gpu(rng):
    x = rng.random(2**28, dtype=np.float32)
    got = float(host(lockstep.sum(on("cuda:0", x))))
    want = np.sum(x, dtype=np.float64)
    assert abs(got - want) / want < 1e-6
    assert float(host(lockstep.max(on("cuda:0", x)))) == float(x.max())


# ---------------------------------------------------------------- copy


@pytest.mark.parametrize("dtype", ["uint8", "float32", "float64"])
def test_copy_is_a_new_packed_tensor(rng, device, dtype):
    x = rng.integers(0, 100, size=(33, 17)).astype(dtype)
    t = on(device, x)
    for view, expected in ((t, x), (t[3:], x[3:]), (t.T, x.T), (t[::2, 1::3], x[::2, 1::3])):
        c = lockstep.copy(view)
        assert (c.shape, c.dtype, c.device) == (expected.shape, dtype, device) and c.is_contiguous()
        assert np.array_equal(host(c), expected)
    c = lockstep.copy(t)
    assert c.data_ptr != t.data_ptr
    assert lockstep.copy(on(device, np.zeros((0, 3), dtype))).shape == (0, 3)


# ---------------------------------------------------------------- matmul

# (m, k, n): odd sizes, sizes beyond one 128x128 tile with k not a multiple
# of 4 or 8, and (131, 36, 260) where the 16-byte loads are legal but blocks
# and the last k-tile are partial.
SHAPES = [(1, 1, 1), (17, 33, 5), (64, 64, 64), (100, 37, 129), (130, 257, 67), (131, 36, 260)]


def relative_error(out, reference):
    return np.linalg.norm(out.astype(np.float64) - reference) / max(np.linalg.norm(reference), 1e-300)


def random_matrix(rng, *shape):
    return rng.uniform(-1, 1, size=shape).astype(np.float32)


@pytest.mark.parametrize("algo", ALGOS)
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_matmul_matches_numpy(rng, device, algo, m, k, n):
    a, b = random_matrix(rng, m, k), random_matrix(rng, k, n)
    c = lockstep.matmul(on(device, a), on(device, b), algo=algo)
    assert (c.dtype, c.shape, c.device) == ("float32", (m, n), device)
    result = host(c)
    assert not np.isnan(result).any(), "an output element was never written"
    assert relative_error(result, a.astype(np.float64) @ b.astype(np.float64)) < 1e-5


@pytest.mark.parametrize("algo", ALGOS)
def test_matmul_operator_and_non_contiguous_inputs(rng, device, algo):
    a, b = random_matrix(rng, 30, 21), random_matrix(rng, 40, 30)
    ta, tb = on(device, a), on(device, b)
    reference = a.T.astype(np.float64) @ b.T.astype(np.float64)  # (21, 40)
    assert relative_error(host(lockstep.matmul(ta.T, tb.T, algo=algo)), reference) < 1e-5
    assert relative_error(host(ta.T @ tb.T), reference) < 1e-5
    assert relative_error(host(ta[::2, 1:] @ tb[:20:2].T[:20]), a[::2, 1:].astype(np.float64) @ b[:20:2].T[:20]) < 1e-5


@pytest.mark.parametrize("algo", ALGOS)
def test_batched_matmul_broadcasts(rng, device, algo):
    a, b = random_matrix(rng, 2, 1, 9, 14), random_matrix(rng, 3, 14, 11)
    c = lockstep.matmul(on(device, a), on(device, b), algo=algo)
    reference = a.astype(np.float64) @ b.astype(np.float64)
    assert c.shape == reference.shape == (2, 3, 9, 11)
    assert relative_error(host(c), reference) < 1e-5


@pytest.mark.parametrize("algo", ALGOS)
def test_empty_inner_dimension_gives_zeros(device, algo):
    c = lockstep.matmul(on(device, np.zeros((3, 0), np.float32)), on(device, np.zeros((0, 5), np.float32)), algo=algo)
    assert np.array_equal(host(c), np.zeros((3, 5), np.float32))


def test_concurrent_matmuls_from_threads(rng):
    # The GIL is released while a kernel runs; launches from several Python
    # threads must each get their own correct result.
    pairs = [(random_matrix(rng, 40, 24), random_matrix(rng, 24, 33)) for _ in range(4)]
    results = [None] * len(pairs)

    def work(i):
        results[i] = lockstep.matmul(*pairs[i], algo=ALGOS[i % len(ALGOS)]).numpy()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(pairs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (a, b), c in zip(pairs, results):
        assert relative_error(c, a.astype(np.float64) @ b.astype(np.float64)) < 1e-5


def test_matmul_launch_error_keeps_the_message(device):
    # 65537 block rows exceed the grid's y limit of 65535.
    a, b = on(device, np.zeros((16 * 65537, 0), np.float32)), on(device, np.zeros((0, 1), np.float32))
    with pytest.raises(lockstep.LaunchError, match="grid dimension y is 65537") as caught:
        lockstep.matmul(a, b, algo="tiled_static")
    assert isinstance(caught.value, lockstep.CudaError)
    assert str(caught.value).startswith("cudaErrorInvalidValue")


def test_matmul_errors(rng, device):
    f32 = on(device, random_matrix(rng, 2, 2))
    with pytest.raises(TypeError, match="different dtypes \\(float64 and float32\\).*\\.to\\(dtype\\)"):
        lockstep.matmul(on(device, np.zeros((2, 2))), f32)
    with pytest.raises(TypeError, match="different dtypes"):
        f32 @ on(device, np.zeros((2, 2), np.int32))
    with pytest.raises(lockstep.ShapeError, match="at least one dimension"):
        lockstep.matmul(on(device, np.zeros((), np.float32)), f32)
    with pytest.raises(lockstep.ShapeError, match="inner dimensions differ"):
        lockstep.matmul(on(device, random_matrix(rng, 3, 4)), on(device, random_matrix(rng, 5, 3)))
    with pytest.raises(ValueError, match="unknown matmul algo 'strassen'.*tiled_static"):
        lockstep.matmul(f32, f32, algo="strassen")
    if device == "cpu":
        with pytest.raises(ValueError, match="'cublas' \\(the reference\\) runs on cuda devices"):
            lockstep.matmul(f32, f32, algo="cublas")


@pytest.mark.parametrize("algo", ALGOS)
def test_matmul_at_misaligned_addresses(rng, device, algo):
    # k and n are multiples of 4, but A, B and C start 4 bytes past a 16-byte
    # boundary (views of flat buffers from element 1): the kernels must take
    # their scalar loads and stores.
    m, k, n = 37, 20, 132
    a, b = random_matrix(rng, m * k + 1), random_matrix(rng, k * n + 1)
    ta, tb = on(device, a)[1:].reshape((m, k)), on(device, b)[1:].reshape((k, n))
    c = lockstep.matmul(ta, tb, algo=algo)
    assert relative_error(host(c), a[1:].reshape(m, k).astype(np.float64) @ b[1:].reshape(k, n)) < 1e-5
    # A batch whose products start at offsets of 37 * 20 + 1 elements.
    batch = random_matrix(rng, 3, m * k + 1)
    tbatch = on(device, batch)[:, 1:].reshape((3, m, k))
    reference = batch[:, 1:].reshape(3, m, k).astype(np.float64) @ b[1:].reshape(k, n)
    assert relative_error(host(lockstep.matmul(tbatch, tb, algo=algo)), reference) < 1e-5


@pytest.mark.parametrize("algo", ALGOS[3:])
def test_matmul_ladder_is_silent_in_check_mode(rng, algo):
    # memcheck, racecheck (the double-buffered stages), synccheck and initcheck
    # on edge blocks, a partial last k-tile and both load paths.
    for m, k, n in [(130, 21, 67), (20, 36, 132)]:
        a, b = random_matrix(rng, m, k), random_matrix(rng, k, n)
        with lockstep.check():
            c = lockstep.matmul(a, b, algo=algo).numpy()
        assert relative_error(c, a.astype(np.float64) @ b.astype(np.float64)) < 1e-5


def test_default_matmul_is_the_fastest_on_the_device(rng, device):
    # double_buffered on a GPU; on the emulator vectorized, whose register tile runs as region loops.
    a, b = on(device, random_matrix(rng, 9, 8)), on(device, random_matrix(rng, 8, 7))
    by_default = host(lockstep.matmul(a, b))
    fastest = "double_buffered" if device.startswith("cuda") else "vectorized"
    assert lockstep._core.auto_matmul_algo("float32", device) == fastest
    assert np.array_equal(by_default, host(lockstep.matmul(a, b, algo=fastest)))
    assert np.array_equal(host(a @ b), by_default)


@pytest.mark.gpu
@pytest.mark.parametrize("algo", ALGOS)
@pytest.mark.parametrize("m,k,n", [(4096, 4096, 4096), (4095, 1023, 4097)])
def test_matmul_large_on_gpu(rng, algo, m, k, n):
    # Every algo at full size on the GPU (C is poisoned with NaN): all of C
    # finite, and 64 random rows against float64.
    a, b = random_matrix(rng, m, k), random_matrix(rng, k, n)
    c = host(lockstep.matmul(on("cuda:0", a), on("cuda:0", b), algo=algo))
    assert c.shape == (m, n)
    assert np.isfinite(c).all(), "an output element was never written (or is not finite)"
    rows = rng.choice(m, size=64, replace=False)
    reference = a[rows].astype(np.float64) @ b.astype(np.float64)
    assert relative_error(c[rows], reference) < 1e-5


@pytest.mark.gpu
def test_cublas_reference_agrees(rng):
    a, b = random_matrix(rng, 2, 70, 45), random_matrix(rng, 45, 33)
    reference = a.astype(np.float64) @ b.astype(np.float64)
    ga, gb = on("cuda:0", a), on("cuda:0", b)
    by_cublas = host(lockstep.matmul(ga, gb, algo="cublas"))
    assert relative_error(by_cublas, reference) < 1e-5
    assert relative_error(host(lockstep.matmul(ga.T.contiguous().T, gb, algo="cublas")), reference) < 1e-5
    for algo in ALGOS:
        assert relative_error(host(lockstep.matmul(ga, gb, algo=algo)), by_cublas.astype(np.float64)) < 1e-5


# ---------------------------------------------------------------- rgb_to_grayscale

IMAGE_SIZES = [(1, 1), (17, 255), (33, 1), (1, 300), (64, 64), (129, 77)]  # (height, width)


def grayscale_reference(image):
    """The lecture's formula in float64, truncated to uint8; works on (3, H, W) and (B, 3, H, W)."""
    r, g, b = np.moveaxis(image.astype(np.float64), -3, 0)
    return np.floor(0.2989 * r + 0.5870 * g + 0.1140 * b).astype(np.uint8)


def assert_grayscale(gray, image):
    reference = grayscale_reference(image)
    assert gray.dtype == np.uint8 and gray.shape == reference.shape
    # The kernel sums in float32, the reference in float64: a sum just below an
    # integer can truncate one lower, on a tiny fraction of pixels.
    diff = np.abs(gray.astype(np.int16) - reference.astype(np.int16))
    assert diff.max(initial=0) <= 1
    assert np.count_nonzero(diff) <= max(1, diff.size // 1000)


@pytest.mark.parametrize("launch", ["vectorized", "1d", "2d"])
@pytest.mark.parametrize("height,width", IMAGE_SIZES)
def test_grayscale_matches_numpy(rng, device, launch, height, width):
    image = rng.integers(0, 256, size=(3, height, width), dtype=np.uint8)
    original = image.copy()
    gray = lockstep.rgb_to_grayscale(on(device, image), launch=launch)
    assert gray.device == device
    assert_grayscale(host(gray), image)
    assert np.array_equal(image, original), "the input was modified"


def grayscale_float32(image):
    """The kernels' arithmetic in NumPy float32, (0.2989 r + 0.5870 g) + 0.1140 b,
    truncated: the kernels give these bits exactly, on the GPU too (no FMA)."""
    r, g, b = np.moveaxis(image.astype(np.float32), -3, 0)
    return ((np.float32(0.2989) * r + np.float32(0.5870) * g) + np.float32(0.1140) * b).astype(np.uint8)


# Plane sizes that take the kernel's 16-byte (64x64, 4x32), 4-byte (33x1000,
# 2x6) and 1-byte (1x1, 7x13, 17x255) paths.
EXACT_SIZES = [(1, 1), (7, 13), (17, 255), (2, 6), (4, 32), (64, 64), (33, 1000)]


@pytest.mark.parametrize("height,width", EXACT_SIZES)
def test_grayscale_vectorized_is_bit_exact(rng, device, height, width):
    image = rng.integers(0, 256, size=(3, height, width), dtype=np.uint8)
    t = on(device, image)
    gray = host(lockstep.rgb_to_grayscale(t, launch="vectorized"))
    assert gray.dtype == np.uint8 and np.array_equal(gray, grayscale_float32(image))
    for launch in ("1d", "2d"):
        assert np.array_equal(host(lockstep.rgb_to_grayscale(t, launch=launch)), gray)
    assert np.array_equal(host(lockstep.rgb_to_grayscale(t)), gray)  # the default


@pytest.mark.parametrize("shape", [(3, 3, 7, 13), (2, 3, 4, 8), (5, 3, 2, 6), (1, 3, 1, 1)])
def test_grayscale_vectorized_batches_are_bit_exact(rng, device, shape):
    images = rng.integers(0, 256, size=shape, dtype=np.uint8)
    t = on(device, images)
    gray = host(lockstep.rgb_to_grayscale(t, launch="vectorized"))
    assert gray.shape == shape[:1] + shape[2:] and np.array_equal(gray, grayscale_float32(images))
    assert np.array_equal(host(lockstep.rgb_to_grayscale(t, launch="2d")), gray)


@pytest.mark.parametrize("start", [1, 4, 8])
def test_grayscale_vectorized_of_a_misaligned_image(rng, device, start):
    # A contiguous image starting `start` bytes into its memory: planes of 16n
    # pixels, but not on a 16-byte boundary.
    h, w = 8, 16
    flat = rng.integers(0, 256, size=start + 3 * h * w, dtype=np.uint8)
    view = on(device, flat)[start:].reshape([3, h, w])
    assert view.is_contiguous()
    gray = host(lockstep.rgb_to_grayscale(view, launch="vectorized"))
    assert np.array_equal(gray, grayscale_float32(flat[start:].reshape(3, h, w)))


@pytest.mark.gpu
def test_grayscale_vectorized_8192_squared_on_the_gpu(rng):
    image = rng.integers(0, 256, size=(3, 8192, 8192), dtype=np.uint8)
    t = on("cuda:0", image)
    gray = host(lockstep.rgb_to_grayscale(t, launch="vectorized"))
    assert np.array_equal(gray, grayscale_float32(image))
    assert np.array_equal(host(lockstep.rgb_to_grayscale(t, launch="2d")), gray)


def test_grayscale_of_a_batch(rng, device):
    images = rng.integers(0, 256, size=(4, 3, 21, 34), dtype=np.uint8)
    gray = lockstep.rgb_to_grayscale(on(device, images))
    assert gray.shape == (4, 21, 34)
    assert_grayscale(host(gray), images)


def test_grayscale_of_channels_last_and_strided_views(rng, device):
    hwc = rng.integers(0, 256, size=(30, 40, 3), dtype=np.uint8)  # how images are usually stored
    chw = on(device, hwc).permute([2, 0, 1])
    assert not chw.is_contiguous()
    assert_grayscale(host(lockstep.rgb_to_grayscale(chw)), hwc.transpose(2, 0, 1))
    big = rng.integers(0, 256, size=(3, 20, 30), dtype=np.uint8)
    assert_grayscale(host(lockstep.rgb_to_grayscale(on(device, big)[:, 1::2, ::3], launch="1d")), big[:, 1::2, ::3])


def test_grayscale_of_numpy_input_directly(rng):
    image = rng.integers(0, 256, size=(3, 8, 9), dtype=np.uint8)
    image.flags.writeable = False
    assert_grayscale(lockstep.rgb_to_grayscale(image).numpy(), image)
    assert_grayscale(np.asarray(lockstep.rgb_to_grayscale(image, launch="1d")), image)


def test_grayscale_of_an_empty_image(device):
    assert lockstep.rgb_to_grayscale(on(device, np.zeros((3, 0, 4), np.uint8))).shape == (0, 4)


def test_grayscale_errors(device):
    with pytest.raises(ValueError, match="uint8 image, got float32"):
        lockstep.rgb_to_grayscale(on(device, np.zeros((3, 4, 4), np.float32)))
    for shape in [(4, 4), (4, 4, 3), (1, 4, 4, 4), (2, 2, 3, 4, 4)]:
        with pytest.raises(lockstep.ShapeError, match=r"channels-first image \(3, H, W\)"):
            lockstep.rgb_to_grayscale(on(device, np.zeros(shape, np.uint8)))
    image = on(device, np.zeros((3, 2, 2), np.uint8))
    with pytest.raises(ValueError, match='"1d" or "2d"'):
        lockstep.rgb_to_grayscale(image, launch="3d")
    with pytest.raises(ValueError, match="batches use the 2-D launch"):
        lockstep.rgb_to_grayscale(on(device, np.zeros((2, 3, 2, 2), np.uint8)), launch="1d")


# ---------------------------------------------------------------- devices meet


@pytest.mark.gpu
def test_inputs_on_different_devices_are_refused(rng):
    cpu = lockstep.asarray(random_matrix(rng, 4, 4))
    gpu = cpu.to("cuda:0")
    with pytest.raises(ValueError, match="different devices \\(cpu and cuda:0\\)"):
        cpu + gpu
    with pytest.raises(ValueError, match="different devices"):
        lockstep.matmul(gpu, cpu)


def test_new_tensors_are_poisoned_in_these_tests():
    # What makes "every element written" checks above meaningful (conftest turns it on).
    assert np.isnan(lockstep.empty((5,), "float32").numpy()).all()
    assert (lockstep.empty((5,), "int32").numpy() == -1).all()
