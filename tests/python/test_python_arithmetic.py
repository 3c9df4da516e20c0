"""Python's //, % and ** on integers (lockstep/python_arithmetic.h) give the same answers on every path: the eager
tensor ops, @lockstep.fuse's kernels and numba-dialect kernels (lockstep.cuda), on both emulator engines and the GPU.
The edges are included: MIN // -1 wraps to MIN and MIN % -1 is 0 (the host's division instruction would trap),
division by zero gives 0, and a negative exponent gives 0 unless the base is 1 or -1. Each path is held to a
reference written here from those rules and Python's own integers, on fresh random operands beside the edges."""

import warnings

import numpy as np
import pytest

import lockstep
from lockstep import cuda

# The emulator's two engines (region loops, or a fiber per thread), and the GPU where there is one.
PATHS = [
    pytest.param("cpu", True, id="cpu-loops"),
    pytest.param("cpu", False, id="cpu-fibers"),
    pytest.param("cuda:0", None, id="cuda", marks=pytest.mark.gpu),
]


def wrapped(value, dtype):
    """A Python integer modulo 2^bits of the dtype, as the dtype holds it."""
    info = np.iinfo(dtype)
    span = int(info.max) - int(info.min) + 1
    return (value - int(info.min)) % span + int(info.min)


def reference_floor_divide(a, b, dtype):
    return [0 if y == 0 else wrapped(x // y, dtype) for x, y in zip(a.tolist(), b.tolist())]


def reference_remainder(a, b):
    return [0 if y == 0 else x % y for x, y in zip(a.tolist(), b.tolist())]


def reference_power(base, exponent, dtype):
    def one(x, e):
        if e >= 0:
            return wrapped(x**e, dtype)
        return 1 if x == 1 else (-1 if e % 2 else 1) if x == -1 else 0

    return [one(x, e) for x, e in zip(base.tolist(), exponent.tolist())]


def operands(rng, dtype, n=700):
    """Dividends and divisors: every pair of the edge values (MIN, -1, 0, 1, MAX and mixed signs), then random
    ones of both signs, some divisors 0 and -1."""
    info = np.iinfo(dtype)
    edges = np.array([info.min, info.min + 1, -7, -1, 0, 1, 7, info.max], dtype=dtype)
    a = np.concatenate([np.repeat(edges, edges.size), rng.integers(info.min, info.max, size=n, endpoint=True, dtype=dtype)])
    b = np.concatenate([np.tile(edges, edges.size), rng.integers(-20, 20, size=n, endpoint=True, dtype=dtype)])
    b[edges.size**2 :: 11] = 0
    b[edges.size**2 + 5 :: 13] = -1
    a[edges.size**2 + 5 :: 26] = info.min
    return a, b


def powers(rng, dtype, n=300):
    """Bases of both signs (1 and -1 often) and exponents, some negative."""
    base = np.concatenate([np.array([1, -1, 1, -1, 0, 2, -2], dtype=dtype), rng.integers(-4, 5, size=n, dtype=dtype)])
    exponent = np.concatenate([np.array([-3, -3, -4, -4, -1, -1, -2], dtype=dtype), rng.integers(-3, 12, size=n, dtype=dtype)])
    return base, exponent


@lockstep.fuse
def fused_python_ops(a, b, base, exponent):
    return a // b, a % b, base**exponent


@cuda.jit
def numba_python_ops(a, b, base, exponent, quotient, remainder, power):
    i = cuda.grid(1)
    if i < a.size:
        quotient[i] = a[i] // b[i]
        remainder[i] = a[i] % b[i]
    if i < base.size:
        power[i] = base[i] ** exponent[i]


def eager_results(device, a, b, base, exponent):
    x, y = lockstep.asarray(a, device=device), lockstep.asarray(b, device=device)
    p, e = lockstep.asarray(base, device=device), lockstep.asarray(exponent, device=device)
    return x // y, x % y, p**e


def fused_results(device, a, b, base, exponent):
    """The fused kernel's results (it must fuse, not fall back to the eager ops); the power as its own launch, the
    base and exponent broadcast against the dividends' shape as the one domain of a fused call."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quotient, remainder, _ = fused_python_ops(*(lockstep.asarray(v, device=device) for v in (a, b, a, b)))
        _, _, power = fused_python_ops(*(lockstep.asarray(v, device=device) for v in (base, exponent, base, exponent)))
    return quotient, remainder, power


def numba_results(device, a, b, base, exponent):
    poison = np.iinfo(a.dtype).max - 3  # a value the launch must overwrite
    quotient, remainder, power = np.full(a.size, poison, a.dtype), np.full(a.size, poison, a.dtype), np.full(base.size, poison, a.dtype)
    with lockstep.device(device):
        numba_python_ops[(a.size + 255) // 256, 256](a, b, base, exponent, quotient, remainder, power)
    return quotient, remainder, power


def as_list(values):
    return (values.to("cpu").numpy() if hasattr(values, "to") else values).tolist()


def in_path(region_loops, compute, *args):
    """compute(*args) on the emulator engine asked for (region loops, or fibers), or as it is on a GPU (None)."""
    if region_loops is None:
        return compute(*args)
    with lockstep.emulator_options_scope(region_loops=region_loops):
        return compute(*args)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("device, region_loops", PATHS)
def test_every_path_gives_the_eager_answer(rng, device, region_loops, dtype):
    a, b = operands(rng, dtype)
    base, exponent = powers(rng, dtype)
    want = (reference_floor_divide(a, b, dtype), reference_remainder(a, b), reference_power(base, exponent, dtype))
    for path in (eager_results, fused_results, numba_results):
        got = in_path(region_loops, path, device, a, b, base, exponent)
        for what, g, w in zip(("//", "%", "**"), got, want):
            assert as_list(g) == w, f"{path.__name__} {dtype} {what}"
        if path is not numba_results:
            assert [t.dtype for t in got] == [dtype] * 3


@pytest.mark.parametrize("device, region_loops", PATHS)
def test_numba_int8_wraps_as_the_rules_say(rng, device, region_loops):
    """numba computes int8 arithmetic in int64 and stores it back: -128 // -1 is 128, which int8 holds as -128."""
    a, b = operands(rng, "int8", n=300)
    base, exponent = powers(rng, "int8")
    got = in_path(region_loops, numba_results, device, a, b, base, exponent)
    assert as_list(got[0]) == reference_floor_divide(a, b, "int8")
    assert as_list(got[1]) == reference_remainder(a, b)
    assert as_list(got[2]) == reference_power(base, exponent, "int8")


def test_the_fused_kernel_calls_the_shared_functions(rng):
    a, b = operands(rng, "int32", n=10)
    source = fused_python_ops.inspect_cuda(*(lockstep.asarray(v) for v in (a, b, a, b)))
    for op in ("floor_divide", "remainder", "pow"):
        assert f"lockstep::kernels::binary_{op}<int>(" in source
