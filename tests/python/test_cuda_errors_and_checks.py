"""lockstep.cuda: errors a Python programmer understands (the Python line, what
is allowed instead), faults that do not end the process, check mode on
Python kernels with findings on the Python line, and the generated CUDA C++."""

import inspect

import numpy as np
import pytest

import lockstep
from lockstep import cuda

HERE = __file__


def line_of(func, text):
    lines, first = inspect.getsourcelines(func)
    return first + next(k for k, line in enumerate(lines) if text in line)


def unsupported(x):
    i = cuda.grid(1)
    x[i] = [v for v in range(3)][0]


def type_conflict(x):
    i = cuda.grid(1)
    v = x  # an array here ...
    v = 1.5  # ... a number here
    x[i] = v


def returns_value(x):
    return 1


def unknown_name(x):
    x[0] = not_defined_anywhere  # noqa: F821


TABLE = np.arange(4.0)


def writes_constant(x):
    table = cuda.const.array_like(TABLE)
    table[0] = x[0]


@pytest.mark.parametrize(
    "func,line_text,message",
    [
        (unsupported, "x[i] = [v for", "ListComp"),
        (type_conflict, "v = 1.5", "one type"),
        (returns_value, "return 1", "cannot return a value"),
        (unknown_name, "not_defined_anywhere", "not defined"),
        (writes_constant, "table[0] =", "read-only"),
    ],
)
def test_translation_errors_name_the_python_line(func, line_text, message):
    kernel = cuda.jit(func)
    with pytest.raises(cuda.TypingError, match=message) as caught:
        kernel[1, 1](np.zeros(4))
    assert f'File "{HERE}", line {line_of(func, line_text)}' in str(caught.value)
    assert isinstance(caught.value, lockstep.CompileError)


def test_launch_configuration_errors():
    @cuda.jit
    def nothing(x):
        pass

    with pytest.raises(ValueError, match="kernel\\[blocks, threads\\]"):
        nothing[1](np.zeros(1))
    with pytest.raises(TypeError, match="threads must be"):
        nothing[1, -3](np.zeros(1))
    with pytest.raises(lockstep.LaunchError):
        nothing[1, 2048](np.zeros(1))
    with pytest.raises(TypeError, match="launch the kernel"):
        nothing(np.zeros(1))
    with pytest.raises(lockstep.ArgumentError, match="argument 0"):
        nothing[1, 1]("a string")


@cuda.jit
def out_of_bounds(x, n):
    i = cuda.grid(1)
    x[i + n] = 1.0


def test_a_faulting_kernel_raises_and_the_process_lives():
    x = np.zeros(16)
    with pytest.raises(lockstep.KernelError):
        out_of_bounds[1, 32](x, 1 << 40)
    x2 = np.zeros(4)
    ok = cuda.jit(lambda_free_fill)
    ok[1, 4](x2)
    np.testing.assert_array_equal(x2, 1.0)


def lambda_free_fill(x):
    x[cuda.grid(1)] = 1.0


def missing_barrier(x, out):
    tile = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    tile[t] = x[t]
    # a cuda.syncthreads() belongs here
    out[t] = tile[63 - t]


def test_check_mode_finds_the_missing_syncthreads_on_the_python_line():
    kernel = cuda.jit(missing_barrier)
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, dtype=np.float32)
    with lockstep.check():
        with pytest.raises(lockstep.KernelError, match="race") as caught:
            kernel[1, 64](x, out)
    # (the symbolizer names the file relative to the working directory)
    assert f"test_cuda_errors_and_checks.py:{line_of(missing_barrier, 'out[t] = tile[63 - t]')}" in str(caught.value)


def test_check_mode_finds_out_of_bounds_on_numpy_arguments():
    @cuda.jit
    def one_too_far(x):
        i = cuda.grid(1)
        x[i] = x[i + 1]

    with lockstep.check():
        with pytest.raises(lockstep.KernelError, match="out of bounds|not device memory|outside"):
            one_too_far[1, 8](np.zeros(8))


def test_clean_kernels_have_no_findings_in_check_mode(rng):
    @cuda.jit
    def with_barrier(x, out):
        tile = cuda.shared.array(64, np.float32)
        t = cuda.threadIdx.x
        tile[t] = x[t]
        cuda.syncthreads()
        out[t] = tile[63 - t]

    x = rng.standard_normal(64).astype(np.float32)
    out = np.full(64, np.nan, dtype=np.float32)
    with lockstep.check():
        with_barrier[1, 64](x, out)
    np.testing.assert_array_equal(out, x[::-1])


def total_read_while_adding(x, total, out):
    cuda.atomic.add(total, 0, x[cuda.grid(1)])
    if cuda.threadIdx.x == 0:
        out[cuda.blockIdx.x] = total[0]


def test_check_mode_finds_a_read_racing_atomics_on_numpy_arguments(rng):
    kernel = cuda.jit(total_read_while_adding)
    x = rng.standard_normal(256).astype(np.float32)
    with lockstep.check():
        with pytest.raises(lockstep.KernelError, match="atomically") as caught:
            kernel[4, 64](x, np.zeros(1, np.float32), np.zeros(4, np.float32))
    assert f"test_cuda_errors_and_checks.py:{line_of(total_read_while_adding, 'out[cuda.blockIdx.x] = total[0]')}" in str(caught.value)

    # The same atomics with nothing reading them early, and a float maximum
    # (a CAS loop whose plain first read is a guess), give no finding.
    @cuda.jit
    def total_and_max(x, total, largest):
        i = cuda.grid(1)
        cuda.atomic.add(total, 0, x[i])
        cuda.atomic.max(largest, 0, x[i])

    total, largest = np.zeros(1, np.float32), np.full(1, -np.inf, np.float32)
    with lockstep.check():
        total_and_max[4, 64](x, total, largest)
    np.testing.assert_allclose(total[0], x.astype(np.float64).sum(), rtol=1e-5, atol=1e-4)
    assert largest[0] == x.max()


def test_inspect_cuda_shows_readable_source():
    @cuda.jit
    def axpy(a, x, y):
        i = cuda.grid(1)
        if i < x.size:
            y[i] = a * x[i] + y[i]

    source = axpy.inspect_cuda(np.float32(2), np.zeros(3, np.float32), np.zeros(3, np.float32))
    assert "__global__ void axpy_" in source and "float a" in source and "#line" in source
    assert "if ((i < " in source
    with pytest.raises(ValueError, match="has not been launched"):
        cuda.jit(lambda_free_fill).inspect_cuda()
    assert axpy.inspect_cuda(signature="void(float32, float32[:], float32[:])").count("__global__") == 1


def test_intrinsics_outside_kernels_say_where_they_belong():
    with pytest.raises(RuntimeError, match="only be called inside a @cuda.jit kernel"):
        cuda.syncthreads()
