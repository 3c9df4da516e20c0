"""numba's Dispatcher API on lockstep.cuda kernels: ``overloads`` (one
specialisation per argument types), ``specialize(*args)`` (a kernel for those
types only, translated at once) and ``inspect_types()`` (the source with the
types numba's rules give each variable)."""

import io

import numpy as np
import pytest

import lockstep
from lockstep import cuda


def scaled_sum(x, out, n):
    i = cuda.grid(1)
    total = 0.0
    for k in range(n):
        total += x[k]
    if i < out.size:
        out[i] = x[i] * total


def _reference(x, n):
    return x * x[:n].astype(np.float64).sum()


def test_overloads_hold_one_specialisation_per_argument_types(rng):
    kernel = cuda.jit(scaled_sum)
    assert kernel.overloads == {}
    for dtype in (np.float32, np.float64, np.float32):
        x = rng.standard_normal(40).astype(dtype)
        out = np.full_like(x, np.nan)
        kernel[1, 64](x, out, 5)
        np.testing.assert_allclose(out, _reference(x, 5), rtol=1e-6)
    assert len(kernel.overloads) == 2
    signatures = sorted(spec.signature for spec in kernel.overloads.values())
    assert signatures == [
        "(array(float32, 1d, C), array(float32, 1d, C), int64)",
        "(array(float64, 1d, C), array(float64, 1d, C), int64)",
    ]
    for types, spec in kernel.overloads.items():
        assert "__global__ void scaled_sum" in spec.inspect_cuda() and len(types) == 3
    assert kernel.overloads["void(float64[::1], float64[::1], int64)"].signature == signatures[1]  # numba's signature as a key


@pytest.mark.numba
def test_overloads_are_indexed_by_numba_s_own_types():
    import numba

    signature = (numba.int32[:, ::1], numba.int64)

    @cuda.jit(signature)
    def fill(m, v):
        i, j = cuda.grid(2)
        if i < m.shape[0] and j < m.shape[1]:
            m[i, j] = v

    assert signature in fill.overloads and fill.overloads[signature].signature == "(array(int32, 2d, C), int64)"


def test_specialize_makes_a_kernel_of_those_types_only(rng):
    kernel = cuda.jit(scaled_sum)
    x = rng.standard_normal(33).astype(np.float32)
    special = kernel.specialize(x, np.zeros_like(x), 3)
    assert special.specialized and not kernel.specialized
    assert len(special.overloads) == 1 and kernel.overloads == {}  # translated at once, the original untouched
    out = np.full_like(x, np.nan)
    special[1, 64](x, out, 3)
    np.testing.assert_allclose(out, _reference(x, 3), rtol=1e-6)
    with pytest.raises(lockstep.ArgumentError, match="declared for"):
        special[1, 64](x.astype(np.float64), np.zeros(33), 3)
    with pytest.raises(RuntimeError, match="already specialized"):
        special.specialize(x, out, 3)


def test_inspect_types_shows_each_variable_s_numba_type(rng):
    kernel = cuda.jit(scaled_sum)
    kernel[1, 32](rng.standard_normal(8).astype(np.float32), np.zeros(8, np.float32), 2)
    printed = io.StringIO()
    kernel.inspect_types(file=printed)
    text = printed.getvalue()
    assert text.startswith("scaled_sum (array(float32, 1d, C), array(float32, 1d, C), int64)")
    for line in ("#   x :: array(float32, 1d, C)", "#   n :: int64", "#   i :: int64", "#   total :: float64", "#   k :: int64"):
        assert line in text
    assert "        total += x[k]" in text  # the source, line by line
