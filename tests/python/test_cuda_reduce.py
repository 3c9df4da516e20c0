"""@cuda.reduce, as numba's: a binary function folds a whole 1-d array (host
or device; its first ``size`` elements), ``init`` folded in too (numba's
default 0 as well), the result returned as a NumPy scalar or written into
``res[0]``; an empty array gives ``init``. Against NumPy on both engines."""

import numpy as np
import pytest

import lockstep
from lockstep import cuda

ENGINES = [pytest.param(True, id="loops"), pytest.param(False, id="fibers")]


@cuda.reduce
def sum_reduce(a, b):
    return a + b


@cuda.jit(device=True)
def larger(a, b):
    return a if a > b else b


max_reduce = cuda.reduce(larger)  # a device function made a reduction, as numba allows


@pytest.mark.parametrize("region_loops", ENGINES)
def test_sums_and_maxima_of_every_size_class(rng, region_loops):
    # one element, part of a block, whole blocks, more blocks than one launch's grid
    sizes = [1, int(rng.integers(2, 128)), 128 * int(rng.integers(1, 4)), int(rng.integers(128 * 64 + 1, 128 * 90))]
    with lockstep.emulator_options_scope(region_loops=region_loops):
        for n in sizes:
            x = rng.integers(-1000, 1000, n).astype(np.int64)
            total = sum_reduce(x)
            assert total == x.sum() and type(total) is np.int64
            assert max_reduce(x, init=-(10**9)) == x.max()
            floats = rng.standard_normal(n).astype(np.float32)
            np.testing.assert_allclose(sum_reduce(floats), floats.astype(np.float64).sum(), rtol=1e-4, atol=1e-3)
            assert type(sum_reduce(floats)) is np.float32


def test_init_is_folded_in_even_the_default_zero_as_numba_does(rng):
    negatives = -rng.uniform(1, 2, int(rng.integers(10, 500)))
    assert max_reduce(negatives) == 0.0  # numba's default init=0 takes part
    assert max_reduce(negatives, init=-np.inf) == negatives.max()
    assert sum_reduce(negatives, init=10.5) == pytest.approx(negatives.sum() + 10.5)


def test_size_res_device_arrays_and_an_empty_array(rng):
    x = rng.integers(0, 100, int(rng.integers(300, 3000))).astype(np.int32)
    d = cuda.to_device(x)
    res = cuda.device_array(3, np.int32)
    res.copy_to_device(np.full(3, -7, np.int32))
    k = int(rng.integers(1, x.size))
    assert sum_reduce(d, size=k, res=res) is None
    np.testing.assert_array_equal(res.copy_to_host(), [x[:k].sum(), -7, -7])  # only res[0] is written
    assert sum_reduce(d) == x.sum()
    assert sum_reduce(np.zeros(0, np.float32), init=4) == np.float32(4)
    with pytest.raises(TypeError, match="1D"):
        sum_reduce(np.zeros((2, 2)))


@pytest.mark.gpu
def test_on_a_gpu(rng):
    x = rng.integers(-1000, 1000, int(rng.integers(128 * 70, 128 * 100))).astype(np.int64)
    with lockstep.device("cuda:0"):
        d = cuda.to_device(x)
        assert d.device == "cuda:0"
        assert sum_reduce(d) == x.sum() and max_reduce(x, init=-(10**9)) == x.max()
