"""matmul on the tensor cores: algo "wmma" (float32 through tf32, or
bfloat16; on the emulator and on GPUs), "wgmma" (bfloat16, Hopper only) and
the cuBLAS references "cublas" (bfloat16) and "cublas_tf32", against float64
NumPy products of the same (rounded) inputs. Outputs are poisoned (conftest),
so an unwritten element is NaN and fails."""

import numpy as np
import pytest

import lockstep


def bf16_round(x):
    """float32 values rounded to the nearest bfloat16 (ties to even), as float32."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return rounded.view(np.float32).reshape(np.shape(x))


def operand(rng, device, dtype, *shape):
    """A fresh random tensor and its exact values in float64."""
    x = rng.uniform(-1, 1, size=shape).astype(np.float32)
    t = lockstep.asarray(x, device=device)
    if dtype == "bfloat16":
        return t.to("bfloat16"), bf16_round(x).astype(np.float64)
    return t, x.astype(np.float64)


def values(t):
    return (t.to("float32") if t.dtype == "bfloat16" else t).to("cpu").numpy().astype(np.float64)


def relative_error(out, reference):
    assert not np.isnan(out).any(), "an output element was never written"
    return np.linalg.norm(out - reference) / max(np.linalg.norm(reference), 1e-300)


# bf16 outputs are rounded to 8 bits of mantissa (2^-9 relative); tf32 inputs
# to 11 bits against the unrounded float64 reference.
TOLERANCE = {"bfloat16": 6e-3, "float32": 2e-3}
SMALL_SHAPES = [(1, 1, 1), (17, 33, 5), (64, 64, 64), (100, 37, 129), (70, 40, 130)]  # (m, k, n)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("m,k,n", SMALL_SHAPES)
def test_wmma_matches_float64(rng, device, dtype, m, k, n):
    a, a64 = operand(rng, device, dtype, m, k)
    b, b64 = operand(rng, device, dtype, k, n)
    c = lockstep.matmul(a, b, algo="wmma")
    assert (c.dtype, c.shape, c.device) == (dtype, (m, n), device)
    assert relative_error(values(c), a64 @ b64) < TOLERANCE[dtype]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_wmma_with_weights_in_linear_layout_and_batches(rng, device, dtype):
    # x @ w.T with w of shape (n, k), the nn.Linear layout the kernels read in
    # place, with a broadcast batch dimension.
    x, x64 = operand(rng, device, dtype, 3, 1, 20, 48)
    w, w64 = operand(rng, device, dtype, 2, 33, 48)
    c = lockstep.matmul(x, w.transpose(-1, -2) if hasattr(w, "transpose") else w.T, algo="wmma")
    reference = x64 @ np.swapaxes(w64, -1, -2)
    assert c.shape == reference.shape == (3, 2, 20, 33)
    assert relative_error(values(c), reference) < TOLERANCE[dtype]


def test_auto_picks_the_tensor_core_kernel_for_bfloat16(rng, device):
    a, a64 = operand(rng, device, "bfloat16", 40, 24)
    w, w64 = operand(rng, device, "bfloat16", 36, 24)
    expected = "wgmma" if device != "cpu" and lockstep._core.device_arch(device) == "sm_90" else "wmma"
    by_default = values(a @ w.T)
    assert np.array_equal(by_default, values(lockstep.matmul(a, w.T, algo=expected)))
    assert relative_error(by_default, a64 @ w64.T) < TOLERANCE["bfloat16"]
    with pytest.raises(ValueError, match="'double_buffered' is a float32 kernel; bfloat16 tensors run with algo wmma"):
        lockstep.matmul(a, w.T, algo="double_buffered")


def test_empty_inner_dimension_gives_zeros(device):
    a = lockstep.asarray(np.zeros((3, 0), np.float32), device=device).to("bfloat16")
    b = lockstep.asarray(np.zeros((0, 5), np.float32), device=device).to("bfloat16")
    assert np.array_equal(values(lockstep.matmul(a, b, algo="wmma")), np.zeros((3, 5)))


def test_tensor_core_errors(rng):
    f32, _ = operand(rng, "cpu", "float32", 4, 4)
    bf16, _ = operand(rng, "cpu", "bfloat16", 4, 4)
    with pytest.raises(ValueError, match="'cublas_tf32' takes float32 tensors, got bfloat16"):
        lockstep.matmul(bf16, bf16, algo="cublas_tf32")
    with pytest.raises(ValueError, match="'wgmma' runs on cuda devices only.*use algo 'wmma'"):
        lockstep.matmul(bf16, bf16, algo="wgmma")
    with pytest.raises(ValueError, match="'cublas_tf32' runs on cuda devices only"):
        lockstep.matmul(f32, f32, algo="cublas_tf32")
    with pytest.raises(TypeError, match="different dtypes \\(float32 and bfloat16\\)"):
        lockstep.matmul(f32, bf16, algo="wmma")


# ---------------------------------------------------------------- on a GPU

GPU_ALGOS = [
    ("wmma", "float32"),
    ("wmma", "bfloat16"),
    ("wgmma", "float32"),
    ("wgmma", "bfloat16"),
    ("cublas", "bfloat16"),
    ("cublas_tf32", "float32"),
]


def sampled_error(rng, c, a64, b64, rows=64):
    """The relative error on a random sample of rows (the float64 product of
    the whole matrix would take minutes), after checking every element was written."""
    out = values(c)
    assert np.isfinite(out).all(), "an output element was never written"
    picked = rng.choice(a64.shape[0], size=min(rows, a64.shape[0]), replace=False)
    return relative_error(out[picked], a64[picked] @ b64)


@pytest.mark.gpu
@pytest.mark.parametrize("algo,dtype", GPU_ALGOS)
@pytest.mark.parametrize("m,k,n", [(4096, 4096, 4096), (4095, 1023, 4097), (129, 8, 257), (300, 70, 513), (1, 1, 1)])
def test_tensor_core_algos_on_gpu(rng, algo, dtype, m, k, n):
    a, a64 = operand(rng, "cuda:0", dtype, m, k)
    w, w64 = operand(rng, "cuda:0", dtype, n, k)  # weights (n, k): b = w.T is read in place
    c = lockstep.matmul(a, w.T, algo=algo)
    assert (c.dtype, c.shape) == (dtype, (m, n))
    assert sampled_error(rng, c, a64, w64.T) < TOLERANCE[dtype]


@pytest.mark.gpu
@pytest.mark.parametrize("algo,dtype", [("wgmma", "bfloat16"), ("wgmma", "float32"), ("cublas", "bfloat16"), ("cublas_tf32", "float32")])
def test_row_major_b_and_unaligned_rows_on_gpu(rng, algo, dtype):
    # B in plain row-major (k, n) layout, and A with rows of 1001 elements (not
    # 16-byte multiples): both take the copying path.
    a, a64 = operand(rng, "cuda:0", dtype, 300, 1001)
    b, b64 = operand(rng, "cuda:0", dtype, 1001, 260)
    assert relative_error(values(lockstep.matmul(a, b, algo=algo)), a64 @ b64) < TOLERANCE[dtype]
    sliced = a[:, 1:]  # starts one element into the buffer
    assert relative_error(values(lockstep.matmul(sliced, b[1:], algo=algo)), a64[:, 1:] @ b64[1:]) < TOLERANCE[dtype]
