"""NumPy ufuncs on arrays in kernels, with the output array given, as numba
accepts them (``np.sin(x, out)``, ``np.add(a, b, out=c)``): the calling thread
computes every element of ``out``, NumPy's broadcasting of the inputs, the
call's value is ``out``. Against NumPy on both engines."""

import numpy as np
import pytest

import lockstep
from lockstep import cuda

ENGINES = [pytest.param(True, id="loops"), pytest.param(False, id="fibers")]


@cuda.jit
def rows(x, bias, out_sin, out_sum, out_max, out_angle):
    i = cuda.grid(1)
    if i < x.shape[0]:
        np.sin(x[i], out_sin[i])  # each thread its own row
        np.add(x[i], bias, out=out_sum[i])  # a 1-d bias over the row
        np.maximum(x[i], 0.25, out_max[i])  # a number broadcast
        np.arctan2(x[i], bias, out_angle[i])


@pytest.mark.parametrize("region_loops", ENGINES)
def test_each_thread_maps_its_row(rng, region_loops):
    n, m = int(rng.integers(20, 80)), int(rng.integers(3, 12))
    x, bias = rng.standard_normal((n, m)), rng.standard_normal(m)
    outs = [np.full((n, m), np.nan) for _ in range(4)]
    with lockstep.emulator_options_scope(region_loops=region_loops):
        rows[(n + 31) // 32, 32](x, bias, *outs)
    np.testing.assert_allclose(outs[0], np.sin(x), rtol=1e-15, atol=1e-15)
    np.testing.assert_array_equal(outs[1], x + bias)
    np.testing.assert_array_equal(outs[2], np.maximum(x, 0.25))
    np.testing.assert_allclose(outs[3], np.arctan2(x, bias), rtol=1e-15, atol=1e-15)


@cuda.jit
def whole_arrays(a, column, out_product, out_sqrt, flag):
    if cuda.grid(1) == 0:
        result = np.multiply(a, column, out_product)  # a (k, 1) column broadcast over (k, m)
        result[0, 0] += 1.0  # the call's value is out
        np.sqrt(np.float32(2.0), out_sqrt)  # a number into every element
        flag[0] = out_sqrt.size


@pytest.mark.parametrize("region_loops", ENGINES)
def test_one_thread_maps_whole_arrays_with_broadcasting(rng, region_loops):
    k, m = int(rng.integers(2, 9)), int(rng.integers(2, 9))
    a, column = rng.standard_normal((k, m)).astype(np.float32), rng.standard_normal((k, 1)).astype(np.float32)
    product, roots, flag = np.full((k, m), np.nan, np.float32), np.full(5, np.nan, np.float32), np.zeros(1, np.int64)
    with lockstep.emulator_options_scope(region_loops=region_loops):
        whole_arrays[2, 32](a, column, product, roots, flag)
    want = a * column
    want[0, 0] += 1
    np.testing.assert_array_equal(product, want)
    np.testing.assert_array_equal(roots, np.full(5, np.sqrt(np.float32(2.0))))
    assert flag[0] == 5


def no_output(x, out):
    out[0] = np.sin(x)[0]


def float_into_int(x, out):
    np.sqrt(x, out)


@pytest.mark.parametrize(
    "func,dtype,message", [(no_output, np.float64, r"give the output array too \(np.sin\(x, out\)\)"), (float_into_int, np.int64, "same_kind")]
)
def test_forms_numba_refuses_are_refused_with_the_form_to_use(func, dtype, message):
    with pytest.raises(cuda.TypingError, match=message):
        cuda.jit(func)[1, 1](np.ones(3), np.zeros(3, dtype))


@pytest.mark.gpu
def test_on_a_gpu(rng):
    n, m = int(rng.integers(100, 300)), int(rng.integers(3, 12))
    x, bias = rng.standard_normal((n, m)), rng.standard_normal(m)
    outs = [np.full((n, m), np.nan) for _ in range(4)]
    with lockstep.device("cuda:0"):
        rows[(n + 63) // 64, 64](x, bias, *outs)
    np.testing.assert_allclose(outs[0], np.sin(x), rtol=1e-14, atol=1e-14)
    np.testing.assert_array_equal(outs[1], x + bias)
    np.testing.assert_array_equal(outs[2], np.maximum(x, 0.25))
    np.testing.assert_allclose(outs[3], np.arctan2(x, bias), rtol=1e-14, atol=1e-14)
