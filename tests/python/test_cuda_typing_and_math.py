"""lockstep.cuda: numba's scalar typing (int -> int64, float -> float64,
float32 stays float32 unless mixed, casts, unification of a variable's
types), Python's arithmetic (floor division and modulo signs, true division,
powers), math.* and the built-ins, device functions and printing."""

import math

import numpy as np
import pytest

import lockstep
from lockstep import cuda


@cuda.jit
def python_arithmetic(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        out[i, 0] = x // y
        out[i, 1] = x % y
        out[i, 2] = x / y  # true division: float64
        out[i, 3] = -x // 3
        out[i, 4] = x**2
        out[i, 5] = abs(x) + min(x, y) * max(x, y, 0)
        out[i, 6] = (x << 2) | (y & 7)
        out[i, 7] = 1 if x > y else (2 if x == y else 3)
        out[i, 8] = int(x / 3)
        out[i, 9] = round(x / 4)


def test_integer_arithmetic_follows_python(device, rng):
    a = rng.integers(-50, 50, size=500).astype(np.int32)
    b = rng.integers(-9, 9, size=500).astype(np.int32)
    b[b == 0] = 5
    out = np.full((500, 10), np.nan)
    with lockstep.device(device):
        python_arithmetic[2, 256](a, b, out)
    x, y = a.astype(np.int64), b.astype(np.int64)
    expected = np.stack(
        [
            x // y,
            x % y,
            x / y,
            -x // 3,
            x**2,
            np.abs(x) + np.minimum(x, y) * np.maximum(np.maximum(x, y), 0),
            (x << 2) | (y & 7),
            np.where(x > y, 1, np.where(x == y, 2, 3)),
            np.trunc(x / 3),
            np.round(x / 4),  # half to even, as Python's round
        ],
        axis=1,
    )
    np.testing.assert_array_equal(out, expected)


@cuda.jit
def float_modulo(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i, 0] = a[i] % b[i]
        out[i, 1] = a[i] // b[i]


def test_float_floor_division_and_modulo(device, rng):
    a = rng.uniform(-10, 10, size=300)
    b = rng.uniform(0.5, 3, size=300) * rng.choice([-1, 1], size=300)
    out = np.full((300, 2), np.nan)
    with lockstep.device(device):
        float_modulo[2, 256](a, b, out)
    np.testing.assert_allclose(out[:, 0], np.mod(a, b), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(out[:, 1], np.floor_divide(a, b))


@cuda.jit
def precision(x, out32, out64):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]  # float32
        out32[i] = v * np.float32(3.0) + np.float32(1)  # stays float32
        out64[i] = v * 3.0 + 1  # float64 (the literal is float64)


def test_float32_stays_float32_and_literals_are_float64(device, rng):
    x = rng.standard_normal(100).astype(np.float32)
    out32, out64 = np.full(100, np.nan), np.full(100, np.nan)
    with lockstep.device(device):
        precision[1, 128](x, out32, out64)
    # float32 arithmetic (a GPU fuses the multiply-add into one rounding, as numba's kernels do there)
    float32_ulp = np.spacing(np.abs(x * np.float32(3)) + 1).astype(np.float64)
    np.testing.assert_allclose(out32, (x * np.float32(3) + np.float32(1)).astype(np.float64), rtol=0, atol=float32_ulp.max())
    assert np.abs(out32 - (x.astype(np.float64) * 3 + 1)).max() > 0 or x.size == 0  # not float64 arithmetic
    np.testing.assert_array_equal(out64, x.astype(np.float64) * 3.0 + 1)
    source = precision.inspect_cuda(x, out32, out64)
    assert "float v" in source  # v's declaration says what numba would type it


@cuda.jit
def unified(out):
    i = cuda.grid(1)
    acc = 0  # an int here, a float below: numba unifies the variable to float64
    for _ in range(4):
        acc += 0.5
    out[i] = acc


def test_variable_types_unify(device):
    out = np.full(4, np.nan)
    with lockstep.device(device):
        unified[1, 4](out)
    np.testing.assert_array_equal(out, 2.0)
    assert "double acc" in unified.inspect_cuda(out)


@cuda.jit
def assigned_once(a, out):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        for k in range(3):
            out[i, k] = x * k
        for m in range(2):  # noqa: B007 (read after the loop)
            pass
        out[i, 3] = m  # Python keeps a loop variable's last value after the loop
        if x > 0:
            w = x * 2
        out[i, 4] = w if x > 0 else -1.0  # w, assigned in the branch, read after it


def test_variables_assigned_once_are_declared_with_their_values(device, rng):
    a = rng.standard_normal(37)
    out = np.full((37, 5), np.nan)
    with lockstep.device(device):
        assigned_once[1, 64](a, out)
    expected = np.stack([a * 0, a * 1, a * 2, np.ones_like(a), np.where(a > 0, a * 2, -1.0)], axis=1)
    np.testing.assert_array_equal(out, expected)
    source = assigned_once.inspect_cuda(a, out)
    # What each thread's values are made of stays visible to the emulator's
    # loop compiler (an index that moves by one from thread to thread, a loop
    # variable per step); names read where their assignment may not have run
    # are declared first, as before.
    assert "const long long i = " in source and "const double x = " in source and "const long long k = " in source
    assert "long long m{};" in source and "double w{};" in source


@cuda.jit
def math_functions(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i, 0] = math.sqrt(v)
        out[i, 1] = math.exp(-v)
        out[i, 2] = math.log(v) + math.log10(v) + math.log2(v) + math.log1p(v)
        out[i, 3] = math.sin(v) * math.cos(v) + math.tan(v / 4)
        out[i, 4] = math.atan2(v, 2.0) + math.hypot(v, 1.0)
        out[i, 5] = math.floor(v * 3) + math.ceil(v) + math.trunc(-v)
        out[i, 6] = math.pow(v, 1.5) + math.fabs(-v) + math.copysign(v, -1.0)
        out[i, 7] = math.tanh(v) + math.erf(v) + math.erfc(v) + math.lgamma(v) + math.gamma(v)
        out[i, 8] = math.isnan(v) + math.isinf(v) * 2 + math.isfinite(v) * 4
        out[i, 9] = math.pi * math.e
        out[i, 10] = np.sqrt(v) + np.exp(v) + np.float32(v) * 0


def test_math_functions(device, rng):
    x = rng.uniform(0.1, 4, size=200)
    out = np.full((200, 11), np.nan)
    with lockstep.device(device):
        math_functions[1, 256](x, out)
    expected = np.stack(
        [
            np.sqrt(x),
            np.exp(-x),
            np.log(x) + np.log10(x) + np.log2(x) + np.log1p(x),
            np.sin(x) * np.cos(x) + np.tan(x / 4),
            np.arctan2(x, 2.0) + np.hypot(x, 1.0),
            np.floor(x * 3) + np.ceil(x) + np.trunc(-x),
            x**1.5 + x - x,
            np.tanh(x) + np.array([math.erf(v) + math.erfc(v) + math.lgamma(v) + math.gamma(v) for v in x]),
            np.full(200, 4.0),
            np.full(200, math.pi * math.e),
            np.sqrt(x) + np.exp(x),
        ],
        axis=1,
    )
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


@cuda.jit
def math_float32(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = math.exp(x[i]) + math.sqrt(x[i])


def test_math_on_float32_computes_in_float32(device, rng):
    x = rng.uniform(0.1, 4, size=64).astype(np.float32)
    out = np.full(64, np.nan, dtype=np.float32)
    with lockstep.device(device):
        math_float32[1, 64](x, out)
    np.testing.assert_allclose(out, np.exp(x) + np.sqrt(x), rtol=2e-6)
    assert "expf(" in math_float32.inspect_cuda(x, out)


# ---- device functions (minitorch's whole Module 3 is in test_cuda_minitorch_style.py) ----


@cuda.jit(device=True)
def clamp(x, low, high):
    return min(max(x, low), high)


@cuda.jit
def clamp_all(x, low, high):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = clamp(x[i], low, high)


def test_device_function_specialised_per_types(device, rng):
    xi = rng.integers(-100, 100, size=50)
    xf = rng.standard_normal(50)
    with lockstep.device(device):
        a, b = xi.copy(), xf.copy()
        clamp_all[1, 64](a, -10, 10)
        clamp_all[1, 64](b, -0.5, 0.5)
    np.testing.assert_array_equal(a, np.clip(xi, -10, 10))
    np.testing.assert_array_equal(b, np.clip(xf, -0.5, 0.5))
    assert len(clamp_all.signatures) == 2
    assert clamp(5, 0, 3) == 3  # on the host, the Python function


@cuda.jit("void(float32[:], float32)")
def declared(x, by):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += by


def test_explicit_signature_converts_arguments(device):
    x = np.zeros(10, dtype=np.float32)
    with lockstep.device(device):
        declared[1, 16](x, 2)  # the int 2 becomes the float32 parameter
    np.testing.assert_array_equal(x, 2)
    with pytest.raises(lockstep.ArgumentError, match="declared for"):
        declared[1, 16](np.zeros(10), 2.0)  # float64 array


@cuda.jit
def say(x):
    i = cuda.grid(1)
    if i < 2:
        print("thread", i, "value", x[i], "half", x[i] / 2)


def test_print_is_device_printf(capsys):
    say[1, 2](np.array([1.5, 2.5]))
    lines = sorted(capsys.readouterr().out.strip().splitlines())
    assert lines == ["thread 0 value 1.500000 half 0.750000", "thread 1 value 2.500000 half 1.250000"]


@cuda.jit(device=True)
def shared_scratch(out, dtype, n, op):
    scratch = cuda.shared.array(n, dtype)  # a literal and a type passed in: compile-time constants
    scratch[0] = 0
    op(scratch, 0, 5)
    out[0] = scratch[0]


@cuda.jit
def passes_constants(out):
    shared_scratch(out, np.uint32, 32, cuda.atomic.add)


def test_types_functions_and_literals_pass_to_device_functions(device):
    out = np.zeros(1, dtype=np.uint32)
    with lockstep.device(device):
        passes_constants[1, 1](out)
    assert out[0] == 5


@cuda.jit
def local_constant_shape(out):
    n = 8
    tile = cuda.shared.array(n, np.int64)
    tile[cuda.threadIdx.x] = cuda.threadIdx.x * 2
    cuda.syncthreads()
    out[cuda.threadIdx.x] = tile[n - 1 - cuda.threadIdx.x]


def test_a_local_assigned_once_is_a_constant_shape(device):
    out = np.full(8, -1, dtype=np.int64)
    with lockstep.device(device):
        local_constant_shape[1, 8](out)
    np.testing.assert_array_equal(out, (7 - np.arange(8)) * 2)


@cuda.jit
def rounding_and_parts(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = round(x[i], 2)
        out[i, 1] = round(x[i], -1)
        frac, whole = math.modf(x[i])
        out[i, 2] = frac
        out[i, 3] = whole
        out[i, 4] = math.ldexp(x[i], 3)
        out[i, 5] = math.remainder(x[i], 2.0)


def test_round_digits_modf_ldexp_remainder(device, rng):
    x = rng.uniform(-100, 100, size=64)
    out = np.full((64, 6), np.nan)
    with lockstep.device(device):
        rounding_and_parts[1, 64](x, out)
    np.testing.assert_array_equal(out[:, 0], [round(v, 2) for v in x])
    np.testing.assert_array_equal(out[:, 1], [round(v, -1) for v in x])
    np.testing.assert_array_equal(out[:, 2:4], [math.modf(v) for v in x])
    np.testing.assert_array_equal(out[:, 4], x * 8)
    np.testing.assert_array_equal(out[:, 5], [math.remainder(v, 2.0) for v in x])


@cuda.jit
def slice_assignment(a, b):
    a[1:4] = 7
    a[5:] = b[::2]


def test_assignment_to_slices(device):
    a = np.zeros(8)
    with lockstep.device(device):
        slice_assignment[1, 1](a, np.array([1.0, -1, 2, -1, 3, -1]))
    np.testing.assert_array_equal(a, [0, 7, 7, 7, 0, 1, 2, 3])


@cuda.jit
def bits(out, wide, narrow):
    out[0] = wide
    out[1] = narrow


def test_integer_arguments_convert_as_c_does(device):
    out = np.zeros(2, dtype=np.uint64)
    with lockstep.device(device):
        bits[1, 1](out, 0xFFFFFFFFFFFFFFFF, np.int32(-1))  # a uint64 beyond int64, and -1 stored into uint64
    assert out[0] == 0xFFFFFFFFFFFFFFFF and out[1] == 0xFFFFFFFFFFFFFFFF
    declared = cuda.jit("void(int64[:], int32)")(lambda_free_store)
    small = np.zeros(1, dtype=np.int64)
    with lockstep.device(device):
        declared[1, 1](small, 0xFFFFFFFF)  # wraps to the int32 -1, as numba passes it
    assert small[0] == -1


def lambda_free_store(out, v):
    out[0] = v


@cuda.jit
def say_more(flag):
    if cuda.grid(1) == 0:
        print("flag", flag > 0, "pair", (1, 2), "where", cuda.threadIdx)


def test_print_bools_tuples_and_dim3(capsys):
    say_more[1, 1](3)
    assert capsys.readouterr().out.strip() == "flag True pair (1, 2) where (0, 0, 0)"


@cuda.jit
def loops_over_sequences(a, b, rows, out):
    total = 0.0
    for x in a:  # a 1-d array's elements
        total += x
    for i, x in enumerate(a, 1):
        total += i * x
    for x, y in zip(a, b):  # as long as the shorter
        total += x * y
    for v in (1, 2, 3):
        total += v
    for row in rows:  # a 2-d array's rows are views
        row[0] = -1
    out[0] = total


def test_for_over_arrays_tuples_enumerate_and_zip(device, rng):
    a, b = rng.standard_normal(5), rng.standard_normal(3)
    rows = np.zeros((4, 2))
    out = np.full(1, np.nan)
    with lockstep.device(device):
        loops_over_sequences[1, 1](a, b, rows, out)
    expected = a.sum() + (np.arange(1, 6) * a).sum() + (a[:3] * b).sum() + 6
    np.testing.assert_allclose(out[0], expected, rtol=1e-12)
    np.testing.assert_array_equal(rows[:, 0], -1)


@cuda.jit
def half_precision(a, b, out, less):
    i = cuda.grid(1)
    if i < a.size:
        x, y = a[i], b[i]
        out[i, 0] = x + y  # float16 arithmetic stays float16
        out[i, 1] = cuda.fp16.hmul(x, y)
        out[i, 2] = cuda.fp16.hfma(x, y, x)
        out[i, 3] = cuda.fp16.hsqrt(cuda.fp16.habs(x))
        out[i, 4] = cuda.fp16.hmax(x, y)
        out[i, 5] = cuda.fp16.hneg(x)
        less[i] = cuda.fp16.hlt(x, y)


def test_float16_arrays_arithmetic_and_fp16_intrinsics(device, rng):
    a, b = rng.standard_normal(40).astype(np.float16), rng.standard_normal(40).astype(np.float16)
    out = np.full((40, 6), np.nan, dtype=np.float16)
    less = np.zeros(40, dtype=np.bool_)
    with lockstep.device(device):
        half_precision[1, 64](a, b, out, less)
    # Each is one correctly rounded half operation (fma rounds once).
    wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
    expected = [wide_a + wide_b, wide_a * wide_b, wide_a * wide_b + wide_a, np.sqrt(np.abs(wide_a)), np.maximum(wide_a, wide_b), -wide_a]
    np.testing.assert_array_equal(out, np.stack(expected, axis=1).astype(np.float16))
    np.testing.assert_array_equal(less, a < b)
