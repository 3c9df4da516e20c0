"""A variable read before any assignment to it (``acc += x`` with no ``acc =
0``) is refused when the kernel compiles, in Python's terms (the kernel's
name, the Python file and line, numba's words), as numba refuses it; a
variable assigned on one path only is accepted, as numba accepts it."""

import inspect

import numba
import numpy as np
import pytest

import lockstep
from lockstep import cuda

HERE = __file__


def line_of(func, text):
    lines, first = inspect.getsourcelines(func)
    return first + next(k for k, line in enumerate(lines) if text in line)


def sum_without_a_start(x, out):
    for i in range(x.size):
        acc += x[i]  # noqa: F821  (the bug under test: acc has no value before the loop)
    out[0] = acc


def read_above_its_assignment(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = scale * x[i]  # noqa: F821
    scale = 2.0  # noqa: F841


def grows_in_a_while_loop(x, out):
    while count < x.size:  # noqa: F821
        count = count + 1  # noqa: F821
    out[0] = count


@pytest.mark.parametrize(
    "func,line_text,name",
    [
        (sum_without_a_start, "acc += x[i]", "acc"),
        (read_above_its_assignment, "out[i] = scale", "scale"),
        (grows_in_a_while_loop, "while count", "count"),
    ],
)
def test_a_read_before_any_assignment_is_refused_in_python_terms(func, line_text, name):
    kernel = cuda.jit(func)
    out = np.zeros(4)
    with pytest.raises(cuda.TypingError) as caught:
        kernel[1, 4](np.ones(4), out)
    message = str(caught.value)
    assert f'File "{HERE}", line {line_of(func, line_text)}, in {func.__name__}' in message
    assert f"the variable {name!r} is read here before any assignment" in message
    assert f"Variable '{name}' is not defined" in message  # numba's own words
    assert "error:" not in message and "lockstep::py" not in message and ".cu" not in message  # no host compiler's message
    assert isinstance(caught.value, lockstep.CompileError)


@pytest.mark.parametrize("func", [sum_without_a_start, read_above_its_assignment, grows_in_a_while_loop])
def test_numba_refuses_the_same_functions(func):
    """The rule is numba's: its CPU JIT (the same bytecode analysis as its CUDA JIT) refuses each."""
    with pytest.raises(numba.core.errors.NotDefinedError):
        numba.njit(func)(np.ones(4), np.zeros(4))


@cuda.jit
def assigned_on_one_path(x, out):
    i = cuda.grid(1)
    if i < x.size:
        if x[i] > 0:
            positive = x[i]
        out[i] = positive if x[i] > 0 else -1.0


@pytest.mark.parametrize("region_loops", [True, False], ids=["loops", "fibers"])
def test_a_variable_assigned_on_one_path_is_accepted_as_numba_accepts_it(rng, region_loops):
    x = rng.standard_normal(int(rng.integers(40, 200)))
    out = np.full_like(x, np.nan)
    with lockstep.emulator_options_scope(region_loops=region_loops):
        assigned_on_one_path[(x.size + 63) // 64, 64](x, out)
    np.testing.assert_array_equal(out, np.where(x > 0, x, -1.0))
