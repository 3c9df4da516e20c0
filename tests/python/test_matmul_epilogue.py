"""matmul's fused epilogue, act(alpha * (a @ b) + bias) + residual, through ``_core.matmul``'s keywords on every
algo the device runs (inside the kernels of the algos whose matmul_algos() row says fused_epilogue, as separate
ops after the others), against a float64 reference of the same (rounded) inputs. Outputs are poisoned
(conftest), so an unwritten element fails."""

import math

import numpy as np
import pytest

import lockstep
from lockstep import _core
from test_matmul_tensor_core import TOLERANCE, operand, relative_error, values

ACTIVATIONS = {
    None: lambda v: v,
    "relu": lambda v: np.maximum(v, 0),
    "gelu": lambda v: 0.5 * v * (1 + np.vectorize(math.erf)(v / math.sqrt(2))),
    "gelu_tanh": lambda v: 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3))),
    "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
    "tanh": np.tanh,
}


def runnable_algos(device, dtype):
    """The kernel algos that take dtype on this device (the references too, on a GPU)."""
    names = []
    for algo in _core.matmul_algos():
        if dtype not in algo["dtypes"] or (algo["gpu_only"] and device == "cpu"):
            continue
        if algo["arch"] and device != "cpu" and _core.device_arch(device) != algo["arch"]:
            continue
        names.append(algo["name"])
    return names


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("alpha", [0.5, 1.0])  # with alpha 1, wgmma starts its accumulators at the bias
@pytest.mark.parametrize("with_residual", [True, False])
def test_every_algo_applies_the_epilogue(rng, device, dtype, activation, alpha, with_residual):
    m, k, n = 70, 40, 130  # edges in every tile
    a, a64 = operand(rng, device, dtype, m, k)
    b, b64 = operand(rng, device, dtype, k, n)
    bias, bias64 = operand(rng, device, dtype, n)
    residual, residual64 = operand(rng, device, dtype, m, n) if with_residual else (None, 0.0)
    want = ACTIVATIONS[activation](alpha * (a64 @ b64) + bias64) + residual64
    for algo in runnable_algos(device, dtype):
        out = _core.matmul(a, b, algo, alpha=alpha, bias=bias, residual=residual, activation=activation)
        assert (out.dtype, tuple(out.shape)) == (dtype, (m, n)), algo
        assert relative_error(values(out), want) < TOLERANCE[dtype], algo


def test_the_epilogue_refuses_what_it_cannot_apply(rng):
    a, _ = operand(rng, "cpu", "float32", 4, 3)
    b, _ = operand(rng, "cpu", "float32", 3, 5)
    with pytest.raises(lockstep.ShapeError, match="bias"):
        _core.matmul(a, b, bias=operand(rng, "cpu", "float32", 4)[0])
    with pytest.raises(lockstep.ShapeError, match="residual"):
        _core.matmul(a, b, residual=operand(rng, "cpu", "float32", 5)[0])
    with pytest.raises(ValueError, match="activation"):
        _core.matmul(a, b, activation="softplus")
