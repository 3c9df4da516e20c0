"""minitorch's module 0 (its scalar operators and their properties) ported to
lockstep tensors: lockstep has no scalar library, so each operator is the
tensor op applied elementwise to a vector of random draws from minitorch's
range (-100, 100), checked against Python / NumPy float64 math. The list
helpers of task 0.3 (zipWith, sum, prod, negList) become lockstep ops over
1-D tensors.

Written from scratch after reading minitorch/minitorch@7d35d59 tests/test_operators.py;
no code is taken from it. Derivative helpers (relu_back, log_back, inv_back)
are autodiff and out of scope, except relu_back's forward rule, a mask.

Comparisons follow torch: ``t < u`` and ``t == u`` give bool tensors, where
minitorch's scalar operators give 1.0 / 0.0."""

import math

import numpy as np
import pytest

import lockstep

LOW, HIGH = -100.0, 100.0  # minitorch's small_floats
N = 257  # draws per test: each test checks an operator on this many values at once
EPS32 = float(np.finfo(np.float32).eps)


def host(t):
    """A tensor's values as a NumPy array."""
    return t.to("cpu").numpy()


def on(device, array):
    return lockstep.asarray(array, device=device)


def draws(rng, n=N, low=LOW, high=HIGH):
    """float32 values in [low, high), as minitorch's hypothesis floats."""
    return rng.uniform(low, high, size=n).astype(np.float32)


def close(result, reference, rtol=8 * EPS32):
    """float32 results against a float64 reference, a few ulps relative to the values' scale."""
    result = np.asarray(result, dtype=np.float64)
    assert result.shape == np.shape(reference)
    return np.allclose(result, reference, rtol=rtol, atol=rtol * max(1.0, np.abs(reference).max(initial=0)))


def as_bools(t):
    """A comparison's result: torch gives bool tensors."""
    assert t.dtype == "bool", f"a comparison gives a bool tensor, got {t.dtype}"
    return host(t)


# ---------------------------------------------------------------- task 0.1: the operators themselves


def test_same_as_python(rng, device):
    x, y = draws(rng), draws(rng)
    tx, ty = on(device, x), on(device, y)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    assert close(host(lockstep.mul(tx, ty)), x64 * y64)
    assert close(host(tx * ty), x64 * y64)
    assert close(host(lockstep.add(tx, ty)), x64 + y64)
    assert close(host(tx + ty), x64 + y64)
    assert np.array_equal(host(lockstep.neg(tx)), -x)
    assert np.array_equal(host(-tx), -x)
    assert np.array_equal(host(lockstep.maximum(tx, ty)), np.where(x > y, x, y))
    away = np.abs(x) > 1e-5  # minitorch inverts only these
    assert close(host(1.0 / tx)[away], 1.0 / x64[away])
    assert close(host(lockstep.map("reciprocal", tx))[away], 1.0 / x64[away])


def test_relu(rng, device):
    a = draws(rng)
    out = host(lockstep.relu(on(device, a)))
    assert np.array_equal(out[a > 0], a[a > 0])
    assert (out[a < 0] == 0.0).all()
    assert np.array_equal(host(on(device, a).relu()), out)


def test_relu_back_as_a_mask(rng, device):
    # minitorch's relu_back(a, b): b where a > 0, else 0 -- the mask where(a > 0, b, 0).
    a, b = draws(rng), draws(rng)
    ta, tb = on(device, a), on(device, b)
    out = host(lockstep.where(ta > 0, tb, 0.0))
    assert np.array_equal(out[a > 0], b[a > 0])
    assert (out[a < 0] == 0.0).all()


def test_id(rng, device):
    a = draws(rng)
    t = on(device, a)
    for same in (lockstep.copy(t), lockstep.map("copy", t)):
        assert np.array_equal(host(same), a)
        assert same.data_ptr != t.data_ptr  # a new tensor, the input untouched
    assert np.array_equal(host(t), a)


def test_lt(rng, device):
    a = draws(rng)
    t = on(device, a)
    assert as_bools(t - 1.0 < t).all()
    assert not as_bools(t < t - 1.0).any()
    assert as_bools(lockstep.lt(t - 1.0, t)).all()


def test_max(rng, device):
    a = draws(rng)
    t = on(device, a)
    below, above = t - 1.0, t + 1.0  # float32 arithmetic, as the operator sees it
    assert np.array_equal(host(lockstep.maximum(below, t)), a)
    assert np.array_equal(host(lockstep.maximum(t, below)), a)
    assert np.array_equal(host(lockstep.maximum(above, t)), host(above))
    assert np.array_equal(host(lockstep.maximum(t, above)), host(above))


def test_eq(rng, device):
    a = draws(rng)
    t = on(device, a)
    assert as_bools(t == t).all()
    assert not as_bools(t == t - 1.0).any()
    assert not as_bools(t == t + 1.0).any()
    assert as_bools(lockstep.eq(t, t)).all()


def test_is_close(rng, device):
    # minitorch's is_close(x, y): |x - y| < 1e-2, as a lockstep expression.
    a = draws(rng)
    t = on(device, a)
    near, far = t + 0.004, t + 0.05
    assert as_bools(abs(t - near) < 1e-2).all()
    assert not as_bools(abs(t - far) < 1e-2).any()
    assert bool((abs(t - near) < 1e-2).all())


# ---------------------------------------------------------------- task 0.2: properties


def test_sigmoid(rng, device):
    a = draws(rng)
    t = on(device, a)
    s = host(lockstep.sigmoid(t)).astype(np.float64)
    assert close(s, 1 / (1 + np.exp(-a.astype(np.float64))))
    assert ((s >= 0.0) & (s <= 1.0)).all()
    # 1 - sigmoid(a) is sigmoid(-a): absolute float32 error, as minitorch's is_close
    assert np.allclose(1.0 - s, host(lockstep.sigmoid(-t)), atol=1e-6, rtol=0)
    assert host(lockstep.sigmoid(on(device, np.zeros(3, np.float32)))).tolist() == [0.5, 0.5, 0.5]
    # increasing: never down over the whole range, and strictly where float32 does not saturate
    order = np.argsort(a)
    assert (np.diff(s[order]) >= 0).all()
    middle = draws(rng, low=-5, high=5)
    tm = on(device, middle)
    assert (host(lockstep.sigmoid(tm)) < host(lockstep.sigmoid(tm + 0.5))).all()


def test_transitive(rng, device):
    # a < b and b < c imply a < c; few distinct values, so that ties happen too.
    a, b, c = (rng.integers(-3, 4, size=N).astype(np.float32) for _ in range(3))
    ta, tb, tc = on(device, a), on(device, b), on(device, c)
    ab, bc, ac = as_bools(ta < tb), as_bools(tb < tc), as_bools(ta < tc)
    assert np.array_equal(ab, a < b) and np.array_equal(bc, b < c) and np.array_equal(ac, a < c)
    assert (ab & bc).any(), "the draws never chain; the check below would be empty"
    assert not as_bools((ta < tb) & (tb < tc) & ~(ta < tc)).any()


def test_symmetric(rng, device):
    # mul gives the same bits in either order
    x, y = draws(rng), draws(rng)
    tx, ty = on(device, x), on(device, y)
    assert np.array_equal(host(tx * ty), host(ty * tx))
    assert np.array_equal(host(lockstep.mul(tx, ty)), host(lockstep.mul(ty, tx)))
    assert np.array_equal(host(tx + ty), host(ty + tx))


def test_distribute(rng, device):
    # z * (x + y) == z * x + z * y, up to float32 rounding of the terms
    x, y, z = draws(rng), draws(rng), draws(rng)
    tx, ty, tz = on(device, x), on(device, y), on(device, z)
    left, right = host(tz * (tx + ty)), host(tz * tx + tz * ty)
    scale = np.abs(z.astype(np.float64)) * (np.abs(x) + np.abs(y))
    assert (np.abs(left.astype(np.float64) - right) <= 4 * EPS32 * scale).all()


def test_other(rng, device):
    x = draws(rng)
    t = on(device, x)
    assert np.array_equal(host(lockstep.neg(-t)), x)  # negation is an involution
    assert np.array_equal(host(lockstep.relu(lockstep.relu(t))), host(lockstep.relu(t)))  # relu is idempotent
    assert np.array_equal(host(t - t), np.zeros_like(x))
    positive = on(device, draws(rng, low=0.01, high=HIGH))
    assert close(host(lockstep.exp(lockstep.log(positive))), host(positive), rtol=1e-5)
    assert close(host(1.0 / (1.0 / positive)), host(positive), rtol=1e-6)
    assert np.array_equal(host(lockstep.maximum(t, t)), x)


# ---------------------------------------------------------------- task 0.3: higher-order functions over lists


def test_zip_with(rng, device):
    # addLists([a, b], [c, d]) == [a + c, b + d]
    a, b, c, d = (float(v) for v in draws(rng, 4))
    out = host(on(device, [a, b]) + on(device, [c, d]))
    assert out.shape == (2,)
    assert close(out, np.array([a + c, b + d]))
    assert close(host(lockstep.zip("add", on(device, [a, b]), on(device, [c, d]))), np.array([a + c, b + d]))


def test_sum_distribute(rng, device):
    # sum(ls1) + sum(ls2) == sum of the elementwise sums
    ls1, ls2 = draws(rng, 5), draws(rng, 5)
    t1, t2 = on(device, ls1), on(device, ls2)
    separately = lockstep.sum(t1) + lockstep.sum(t2)
    together = lockstep.sum(t1 + t2)
    assert separately.shape == together.shape == ()
    assert math.isclose(float(host(separately)), float(host(together)), abs_tol=1e-3)
    assert math.isclose(float(host(together)), math.fsum(ls1.astype(np.float64)) + math.fsum(ls2), abs_tol=1e-3)


@pytest.mark.parametrize("n", [0, 1, 5, 33])
def test_sum(rng, device, n):
    values = draws(rng, n)
    total = lockstep.sum(on(device, values))
    assert total.shape == ()
    assert math.isclose(float(host(total)), math.fsum(values.astype(np.float64)), abs_tol=1e-3)


def test_prod(rng, device):
    x, y, z = draws(rng, 3)
    product = lockstep.prod(on(device, np.array([x, y, z])))
    want = float(x) * float(y) * float(z)
    assert product.shape == ()
    assert math.isclose(float(host(product)), want, rel_tol=1e-6, abs_tol=1e-6)


@pytest.mark.parametrize("n", [0, 1, 17])
def test_neg_list(rng, device, n):
    values = draws(rng, n)
    negated = host(lockstep.neg(on(device, values)))
    assert negated.shape == (n,)
    assert np.array_equal(negated, -values)
