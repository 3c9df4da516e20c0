"""minitorch's tensor-function tests (module 2's test_tensor.py and module 3's
fast-ops / CUDA test_tensor_general.py, forward only) ported to lockstep on
every device: creation from lists, minitorch's one-argument, two-argument and
reduce functions on tensors of its small random shapes and strided layouts,
with broadcasting, views, comparisons and matmul, against float64 NumPy.

Written from scratch after reading minitorch/minitorch@7d35d59
tests/test_tensor.py, tests/test_tensor_general.py and minitorch/testing.py
(MathTest); no code is taken from them. Gradient checks are out of scope
(lockstep has no autograd). Where minitorch and torch differ, these follow
torch: comparisons give bool tensors (minitorch: 1.0 / 0.0), reductions along
a dim drop it (minitorch keeps it with extent 1), creation from Python floats
gives float32 (minitorch: float64)."""

import types

import numpy as np
import pytest

import lockstep


def host(t):
    return t.to("cpu").numpy()


def on(device, array):
    return lockstep.asarray(array, device=device)


def close(result, reference, rtol=1e-5, atol=1e-5):
    """float32 results against a float64 reference, element by element."""
    result = np.asarray(result, dtype=np.float64)
    assert result.shape == np.shape(reference), f"shape {result.shape}, want {np.shape(reference)}"
    assert not np.isnan(result).any() or np.isnan(reference).any(), "an element was never written"
    return np.allclose(result, reference, rtol=rtol, atol=atol)


def random_shape(rng):
    """minitorch's shapes strategy: 1 to 4 dims of extent 1 to 3."""
    return tuple(int(s) for s in rng.integers(1, 4, size=rng.integers(1, 5)))


def laid_out(rng, device, x):
    """``x`` as a tensor whose storage is in a random order of its dims, as minitorch's
    tensor_data strategy lays data out: a permuted view of a contiguous tensor."""
    order = [int(d) for d in rng.permutation(x.ndim)]
    t = on(device, np.ascontiguousarray(x.transpose(order))).permute([int(d) for d in np.argsort(order)])
    assert t.shape == x.shape
    return t


def random_tensors(rng, device, n, shape=None, low=-100.0, high=100.0):
    """minitorch's shaped_tensors: n float32 tensors of one random shape, values in its range.
    Returns the tensors and their values as float32 arrays."""
    shape = random_shape(rng) if shape is None else shape
    arrays = [rng.uniform(low, high, size=shape).astype(np.float32) for _ in range(n)]
    return [laid_out(rng, device, x) for x in arrays], arrays


SHAPES_PER_TEST = 4

# minitorch's MathTest functions, each written once over an ``ops`` namespace
# (lockstep's functions or NumPy's) so the tensor code and its float64 reference are the same expression.
NUMPY = types.SimpleNamespace(
    relu=lambda x: np.maximum(x, 0.0),
    sigmoid=lambda x: 1.0 / (1.0 + np.exp(-x)),
    log=np.log,
    exp=np.exp,
)

ONE_ARG = {
    "neg": lambda a, ops: -a,
    "addConstant": lambda a, ops: 5 + a,
    "square": lambda a, ops: a * a,
    "cube": lambda a, ops: a * a * a,
    "subConstant": lambda a, ops: a - 5,
    "multConstant": lambda a, ops: 5 * a,
    "div": lambda a, ops: a / 5,
    "inv": lambda a, ops: 1.0 / (a + 3.5),
    "sig": lambda a, ops: ops.sigmoid(a),
    "log": lambda a, ops: ops.log(a + 100000),
    "relu": lambda a, ops: ops.relu(a + 5.5),
    "exp": lambda a, ops: ops.exp(a - 200),
    "explog": lambda a, ops: ops.log(a + 100000) + ops.exp(a - 200),
    "complex": lambda a, ops: ops.log(ops.sigmoid(ops.relu(ops.relu(a * 10 + 7) * 6 + 5) * 10)) / 50,
}

TWO_ARG = {
    "add2": lambda a, b: a + b,
    "mul2": lambda a, b: a * b,
    "div2": lambda a, b: a / (b + 5.5),
}

# The comparisons, exact: the reference does the same float32 arithmetic (np.float32 constants) before comparing.
COMPARE = {
    "eq2": lambda a, b, c: a == (b + c(5.5)),
    "gt2": lambda a, b, c: a + c(1.2) > b,
    "lt2": lambda a, b, c: a + c(1.2) < b,
}

REDUCE = {
    "sum_red": (lambda t: t.sum(0), lambda x: x.sum(axis=0)),
    "mean_red": (lambda t: t.mean(0), lambda x: x.mean(axis=0)),
    "mean_full_red": (lambda t: t.mean(), lambda x: x.mean()),
    "sum_full": (lambda t: t.sum(), lambda x: x.sum()),
    "sum_last": (lambda t: lockstep.sum(t, dim=-1), lambda x: x.sum(axis=-1)),
    "sum_keepdim": (lambda t: t.sum(0, keepdim=True), lambda x: x.sum(axis=0, keepdims=True)),
    "prod_red": (lambda t: t.prod(0), lambda x: x.prod(axis=0)),
    "prod_full": (lambda t: lockstep.prod(t), lambda x: x.prod()),
}


# ---------------------------------------------------------------- creation


def test_create(rng, device):
    values = [float(v) for v in rng.uniform(-100, 100, size=rng.integers(1, 20))]
    t = on(device, values)
    assert (t.dtype, t.shape) == ("float32", (len(values),))  # torch's default float dtype
    for i, v in enumerate(values):
        assert t[i].item() == float(np.float32(v))


def test_create_float64_reads_back_exactly(rng, device):
    values = [float(v) for v in rng.uniform(-100, 100, size=rng.integers(1, 20))]
    t = lockstep.asarray(values, device=device, dtype="float64")
    for i, v in enumerate(values):
        assert host(t[i]).item() == v


def test_fromlist(device):
    assert on(device, [[2, 3, 4], [4, 5, 7]]).shape == (2, 3)
    assert on(device, [[[2, 3, 4], [4, 5, 7]]]).shape == (1, 2, 3)


def test_fromnumpy(device):
    t = on(device, [[2, 3, 4], [4, 5, 7]])
    again = on(device, host(t).tolist())
    assert (again.shape, again.dtype) == ((2, 3), t.dtype)
    assert np.array_equal(host(again), host(t))


# ---------------------------------------------------------------- one-, two-argument and reduce functions


@pytest.mark.parametrize("name", sorted(ONE_ARG))
def test_one_args(rng, device, name):
    fn = ONE_ARG[name]
    for _ in range(SHAPES_PER_TEST):
        (t,), (x,) = random_tensors(rng, device, 1)
        out = fn(t, lockstep)
        assert (out.shape, out.dtype, out.device) == (x.shape, "float32", device)
        assert close(host(out), fn(x.astype(np.float64), NUMPY)), name


@pytest.mark.parametrize("name", sorted(TWO_ARG))
def test_two_args(rng, device, name):
    fn = TWO_ARG[name]
    for _ in range(SHAPES_PER_TEST):
        (ta, tb), (a, b) = random_tensors(rng, device, 2)
        assert close(host(fn(ta, tb)), fn(a.astype(np.float64), b.astype(np.float64))), name


@pytest.mark.parametrize("name", sorted(TWO_ARG))
def test_two_args_broadcast(rng, device, name):
    # minitorch's broadcast check: the function of (a summed over dim 0, b) and of (a, b summed over dim 0)
    fn = TWO_ARG[name]
    for _ in range(SHAPES_PER_TEST):
        (ta, tb), (a, b) = random_tensors(rng, device, 2)
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        for left, right, want in [(ta.sum(0), tb, fn(a64.sum(0), b64)), (ta, tb.sum(0), fn(a64, b64.sum(0)))]:
            out = fn(left, right)
            assert out.shape == want.shape
            assert close(host(out), want, rtol=1e-5, atol=1e-4), name


@pytest.mark.parametrize("name", sorted(COMPARE))
def test_comparisons(rng, device, name):
    fn = COMPARE[name]
    for _ in range(SHAPES_PER_TEST):
        shape = random_shape(rng)
        a, b = (rng.uniform(-100, 100, size=shape).astype(np.float32) for _ in range(2))
        # plant ties: a == b + 5.5 and a + 1.2 == b, in float32, at some elements
        a = np.where(rng.random(shape) < 0.3, b + np.float32(5.5), a)
        b = np.where(rng.random(shape) < 0.3, a + np.float32(1.2), b)
        ta, tb = laid_out(rng, device, a), laid_out(rng, device, b)
        out = fn(ta, tb, float)
        assert (out.dtype, out.shape) == ("bool", a.shape)
        assert np.array_equal(host(out), fn(a, b, np.float32)), name


@pytest.mark.parametrize("name", sorted(REDUCE))
def test_reduce(rng, device, name):
    fn, reference = REDUCE[name]
    for _ in range(SHAPES_PER_TEST):
        low, high = (-2.0, 2.0) if name.startswith("prod") else (-100.0, 100.0)
        (t,), (x,) = random_tensors(rng, device, 1, low=low, high=high)
        want = reference(x.astype(np.float64))
        out = fn(t)
        assert out.shape == np.shape(want), name
        assert close(host(out), want, atol=1e-4), name


def test_reduce_forward_one_dim(device):
    t = on(device, [[2, 3], [4, 6], [5, 7]])
    summed = t.sum(0)
    assert summed.shape == (2,) and host(summed).tolist() == [11, 16]


def test_reduce_forward_one_dim_2(device):
    t = on(device, [[2, 3], [4, 6], [5, 7]])
    summed = t.sum(1)
    assert summed.shape == (3,) and host(summed).tolist() == [5, 10, 12]


def test_reduce_forward_all_dims(device):
    total = on(device, [[2, 3], [4, 6], [5, 7]]).sum()
    assert total.shape == () and host(total).item() == 27


# ---------------------------------------------------------------- views, comparisons, is_close


def test_view(device):
    t = on(device, [[2.0, 3.0, 4.0], [4.0, 5.0, 7.0]])
    assert t.shape == (2, 3)
    t2 = t.reshape([6])
    assert t2.shape == (6,)
    t2 = t2.reshape([1, 6])
    assert t2.shape == (1, 6)
    t2 = t2.reshape([6, 1])
    assert t2.shape == (6, 1)
    t2 = t2.reshape([2, 3])
    assert np.array_equal(host(t2), host(t))


def test_permute_view(device):
    # minitorch refuses to view a permuted tensor as flat; torch's view does too, its reshape
    # copies. Either answer is fine here; wrong values are not.
    t = on(device, [[2.0, 3.0, 4.0], [4.0, 5.0, 7.0]])
    p = t.permute([1, 0])
    try:
        flat = p.reshape([6])
    except lockstep.ShapeError:
        flat = p.contiguous().reshape([6])
    assert host(flat).tolist() == [2.0, 4.0, 3.0, 5.0, 4.0, 7.0]


def test_comparisons_give_bool_tensors(rng, device):
    a = rng.integers(-2, 3, size=(4, 5)).astype(np.float32)
    b = rng.integers(-2, 3, size=(5,)).astype(np.float32)
    ta, tb = on(device, a), on(device, b)
    for got, want in [(ta < tb, a < b), (ta > tb, a > b), (ta == tb, a == b), (ta <= 0, a <= 0), (1 > ta, 1 > a)]:
        assert (got.dtype, got.shape) == ("bool", want.shape)
        assert np.array_equal(host(got), want)
    assert (ta == ta).all().item() is True
    assert bool((ta < ta).any()) is False


def test_is_close(rng, device):
    # minitorch's Tensor.is_close: |a - b| < 1e-2 elementwise, then .all()
    x = rng.uniform(-100, 100, size=(3, 4)).astype(np.float32)
    t = on(device, x)
    assert (abs(t - (t + 0.001)) < 1e-2).all().item()
    assert not (abs(t - (t + 0.1)) < 1e-2).all().item()
    viewed = t.reshape([12]).reshape([3, 4])
    assert (abs(t - viewed) < 1e-2).all().item()


# ---------------------------------------------------------------- sums on a device (minitorch's sum_practice)


@pytest.mark.parametrize("n", [16, 32, 48, 64, 500])
def test_sum_practice(rng, device, n):
    x = rng.random(n).astype(np.float32)
    total = lockstep.sum(on(device, x))
    assert close(host(total), x.astype(np.float64).sum())
    assert close(host(on(device, x).sum(0)), x.astype(np.float64).sum())


def test_sum_practice_other_dims(rng, device):
    x = rng.random((16, 32)).astype(np.float32)
    assert close(host(on(device, x).sum(1)), x.astype(np.float64).sum(axis=1))


# ---------------------------------------------------------------- matmul (minitorch's mm_practice, mm2, bmm)


def relative_error(result, reference):
    return np.linalg.norm(np.asarray(result, np.float64) - reference) / max(np.linalg.norm(reference), 1e-300)


@pytest.mark.parametrize(
    "a_shape,b_shape",
    [((2, 2), (2, 2)), ((32, 32), (32, 32)), ((33, 33), (33, 33)), ((2, 33, 33), (2, 33, 33)), ((2, 45, 33), (2, 33, 40))],
    ids=str,
)
def test_mul_practice(rng, device, a_shape, b_shape):
    a, b = rng.random(a_shape).astype(np.float32), rng.random(b_shape).astype(np.float32)
    c = on(device, a) @ on(device, b)
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert c.shape == want.shape
    assert relative_error(host(c), want) < 1e-5


def test_mm2(rng, device):
    # minitorch draws these with its rand; lockstep's, seeded from the test's rng
    generator = lockstep.Generator(int(rng.integers(2**62)))
    ta, tb = lockstep.rand(2, 3, device=device, generator=generator), lockstep.rand((3, 4), device=device, generator=generator)
    assert (ta.shape, tb.shape, ta.dtype) == ((2, 3), (3, 4), "float32")
    a, b = host(ta).astype(np.float64), host(tb).astype(np.float64)
    assert ((a >= 0) & (a < 1)).all() and ((b >= 0) & (b < 1)).all()
    by_matmul = ta @ tb
    by_broadcast = (ta.reshape([2, 3, 1]) * tb.reshape([1, 3, 4])).sum(1).reshape([2, 4])
    assert close(host(by_matmul), host(by_broadcast).astype(np.float64))
    assert relative_error(host(by_matmul), a @ b) < 1e-5


def test_bmm(rng, device):
    for _ in range(SHAPES_PER_TEST):
        d, m, k, n = (int(v) for v in rng.integers(2, 5, size=4))
        (ta,), (a,) = random_tensors(rng, device, 1, shape=(d, m, k))
        (tb,), (b,) = random_tensors(rng, device, 1, shape=(1, k, n))
        c = ta @ tb
        by_broadcast = (ta.contiguous().reshape([d, m, k, 1]) * tb.contiguous().reshape([1, 1, k, n])).sum(2).reshape([d, m, n])
        want = a.astype(np.float64) @ b.astype(np.float64)
        assert c.shape == (d, m, n)
        assert relative_error(host(c), want) < 1e-5
        assert relative_error(host(by_broadcast), want) < 1e-5


def test_matmul_forms(rng, device):
    # torch.matmul's 1-D forms and float64, beyond minitorch's 2-D and 3-D ones
    v, w = rng.uniform(-1, 1, size=7), rng.uniform(-1, 1, size=5)
    m = rng.uniform(-1, 1, size=(7, 5))
    batch = rng.uniform(-1, 1, size=(3, 5, 7))
    for left, right in [(v, v), (v, m), (m, w), (batch, v), (w, batch)]:
        for dtype in ("float32", "float64"):
            got = lockstep.asarray(left, device=device, dtype=dtype) @ lockstep.asarray(right, device=device, dtype=dtype)
            want = left @ right
            assert (got.shape, got.dtype) == (want.shape, dtype)
            assert relative_error(host(got), want) < (1e-5 if dtype == "float32" else 1e-12)
