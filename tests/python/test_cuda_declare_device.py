"""cuda.declare_device: kernels call CUDA C++ device functions given by
``link=`` sources, numba's ABI (the result through a pointer) and abi="c",
the arguments converted to the declared types as numba converts them.
Against NumPy on both engines."""

import textwrap

import numpy as np
import pytest

import lockstep
from lockstep import cuda

ENGINES = [pytest.param(True, id="loops"), pytest.param(False, id="fibers")]

# numba's documentation example (its ffi/functions.cu), and a C-ABI function beside it.
FUNCTIONS_CU = textwrap.dedent(
    """
    extern "C" __device__ int mul_f32_f32(float* return_value, float x, float y) {
      *return_value = x * y;  // the result in the caller's slot
      return 0;               // no Python exception
    }
    extern "C" __device__ long long clamp_c(long long v, long long high) { return v > high ? high : v; }
    """
)

mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)")
clamp = cuda.declare_device("clamp_c", "int64(int64, int64)", abi="c")


def multiply_vectors(r, x, y):
    i = cuda.grid(1)
    if i < len(r):
        r[i] = mul(x[i], y[i])


def clamped_indices(out, high):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = clamp(i, high)  # i is an int64, high an int32 array element's type below


@pytest.fixture
def functions_cu(tmp_path):
    path = tmp_path / "functions.cu"
    path.write_text(FUNCTIONS_CU)
    return str(path)


@pytest.mark.parametrize("region_loops", ENGINES)
def test_a_numba_abi_function_from_a_linked_source(rng, functions_cu, region_loops):
    kernel = cuda.jit(link=[functions_cu])(multiply_vectors)
    n = int(rng.integers(10, 300))
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    r = np.full(n, np.nan, np.float32)
    with lockstep.emulator_options_scope(region_loops=region_loops):
        kernel[(n + 63) // 64, 64](r, x, y)
    np.testing.assert_array_equal(r, x * y)
    assert 'extern "C" __device__ int mul_f32_f32(float*, float, float);' in kernel.inspect_cuda()


@pytest.mark.parametrize("region_loops", ENGINES)
def test_a_c_abi_function_linked_by_its_declaration(rng, functions_cu, region_loops):
    declared = cuda.declare_device("clamp_c", "int64(int64, int64)", abi="c", link=[functions_cu])
    globals()["clamp"] = declared  # the kernel reads the global, as numba's kernels read theirs
    try:
        kernel = cuda.jit(clamped_indices)
        n, high = int(rng.integers(50, 300)), int(rng.integers(5, 40))
        out = np.full(n, -1, np.int64)
        with lockstep.emulator_options_scope(region_loops=region_loops):
            kernel[(n + 63) // 64, 64](out, np.int32(high))
        np.testing.assert_array_equal(out, np.minimum(np.arange(n), high))
    finally:
        globals()["clamp"] = clamp


def test_misuse_is_refused_in_python_terms(functions_cu, tmp_path):
    with pytest.raises(ValueError, match="CUDA C\\+\\+ source files"):
        cuda.jit(link=[str(tmp_path / "functions.ptx")])(multiply_vectors)
    with pytest.raises(TypeError, match="numbers"):
        cuda.declare_device("f", "float32(float32[:])")
    with pytest.raises(RuntimeError, match="inside a @cuda.jit kernel"):
        mul(1.0, 2.0)

    def wrong_count(r, x, y):
        r[0] = mul(x[0])

    with pytest.raises(cuda.TypingError, match="takes 2 arguments"):
        cuda.jit(link=[functions_cu])(wrong_count)[1, 1](np.zeros(1, np.float32), np.zeros(1, np.float32), np.zeros(1, np.float32))


@pytest.mark.gpu
def test_on_a_gpu_nvrtc_compiles_the_linked_source(rng, functions_cu):
    kernel = cuda.jit(link=[functions_cu])(multiply_vectors)
    n = int(rng.integers(100, 1000))
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    r = np.full(n, np.nan, np.float32)
    with lockstep.device("cuda:0"):
        kernel[(n + 127) // 128, 128](r, x, y)
    np.testing.assert_array_equal(r, x * y)
