"""The library's ops on tensors: elementwise (map, zip), reductions, matmul, copy and rgb_to_grayscale.

Names shadow Python's builtins (map, zip, sum, max, min, abs) as torch's and NumPy's do: this
module must not use those builtins itself.
"""

from __future__ import annotations

import textwrap
from typing import Any

from . import _core
from ._core import Tensor
from ._tensor import operand


def map(op: str, x: Any) -> Tensor:
    """Apply the unary ``op`` elementwise: copy, neg, abs, exp, log, sqrt, relu, sigmoid, tanh, square, reciprocal."""
    return _core.map(op, operand(x))


def zip(op: str, a: Any, b: Any) -> Tensor:
    """Apply the binary ``op`` with NumPy broadcasting: add, sub, mul, div, maximum, minimum, pow, eq, lt, gt."""
    ta = a if isinstance(a, Tensor) else None
    tb = b if isinstance(b, Tensor) else None
    return _core.zip(op, operand(a, tb), operand(b, ta))


def reduce(op: str, x: Any, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Reduce with sum, max, min, prod or mean along ``dim``, or, with ``dim=None``
    (the default), over every element to a 0-d tensor as ``torch.sum(x)`` does
    (at memory bandwidth; ``keepdim`` then keeps every dimension with extent 1).
    The result has ``x``'s dtype. Sum of no elements is 0, product 1; max, min
    and mean of no elements raise ShapeError."""
    t = operand(x)
    if dim is not None:
        return _core.reduce(op, t, dim, keepdim)
    out = _core.reduce_all(op, t)
    return out.reshape([1] * t.ndim) if keepdim else out


def matmul(a: Any, b: Any, algo: str = "auto") -> Tensor:
    return _core.matmul(operand(a), operand(b), algo)


def _matmul_algos_doc() -> str:
    """matmul's algos, from the kernels' recipe tables (``_core.matmul_algos()``), so a new rung shows up by itself."""
    algos = _core.matmul_algos()

    def names(family: str) -> str:
        return ", ".join(f'"{a["name"]}"' + (f" ({a['arch']} GPUs)" if a["arch"] else "") for a in algos if a["family"] == family)

    references = ", ".join(f'"{a["name"]}" ({" or ".join(a["dtypes"])})' for a in algos if a["family"] == "reference")
    auto = "; ".join(
        f"for {dtype} {' where the device runs it, else '.join(_core.auto_matmul_candidates(dtype))}" for dtype in ("float32", "bfloat16")
    )
    text = (
        f"float32, the lectures' SIMT ladder, simplest to fastest: {names('simt')}. Tensor cores, float32 (through tf32) "
        f"or bfloat16, the output in the inputs' dtype: {names('tensor_core')}; they read B best as ``w.T`` of a (n, k) ``w``, "
        f"the nn.Linear layout, other layouts are copied once. The cuBLAS references (cuda devices only): {references}. "
        f'"auto" (the default, also of ``@``): {auto}.'
    )
    return textwrap.fill(text, 78)


matmul.__doc__ = f"""``a @ b``, batch dimensions broadcast like NumPy's, with the kernel ``algo``.

{_matmul_algos_doc()}"""


def rgb_to_grayscale(image: Any, launch: str = "vectorized") -> Tensor:
    """Channels-first uint8 (3, H, W) -> (H, W), or a batch (B, 3, H, W) -> (B, H, W),
    with the lecture's weights 0.2989/0.5870/0.1140 (float32, truncated).
    ``launch``: "vectorized" (16 pixels per thread, at copy bandwidth), or the
    lecture's "1d" or "2d" (batches: "2d"); all give the same bits."""
    return _core.rgb_to_grayscale(operand(image), launch)


def copy(x: Any) -> Tensor:
    """A new packed copy of ``x`` on its device. A contiguous ``x`` is copied with
    the device's memcpy (cuMemcpyDtoD on a GPU), no kernel: the reference for
    copy bandwidth. A strided one is packed by the copy kernel."""
    return _core.copy(operand(x))


def neg(x: Any) -> Tensor:
    """Elementwise ``-x``."""
    return map("neg", x)


def abs(x: Any) -> Tensor:
    """Elementwise absolute value."""
    return map("abs", x)


def exp(x: Any) -> Tensor:
    """Elementwise e**x (floating-point tensors)."""
    return map("exp", x)


def log(x: Any) -> Tensor:
    """Elementwise natural logarithm (floating-point tensors)."""
    return map("log", x)


def sqrt(x: Any) -> Tensor:
    """Elementwise square root (floating-point tensors)."""
    return map("sqrt", x)


def relu(x: Any) -> Tensor:
    """Elementwise max(x, 0)."""
    return map("relu", x)


def sigmoid(x: Any) -> Tensor:
    """Elementwise 1 / (1 + e**-x) (floating-point tensors)."""
    return map("sigmoid", x)


def tanh(x: Any) -> Tensor:
    """Elementwise hyperbolic tangent (floating-point tensors)."""
    return map("tanh", x)


def add(a: Any, b: Any) -> Tensor:
    """Elementwise ``a + b`` with NumPy broadcasting."""
    return zip("add", a, b)


def sub(a: Any, b: Any) -> Tensor:
    """Elementwise ``a - b`` with NumPy broadcasting."""
    return zip("sub", a, b)


def mul(a: Any, b: Any) -> Tensor:
    """Elementwise ``a * b`` with NumPy broadcasting."""
    return zip("mul", a, b)


def div(a: Any, b: Any) -> Tensor:
    """Elementwise ``a / b`` with NumPy broadcasting (integer tensors divide as C++ does)."""
    return zip("div", a, b)


def maximum(a: Any, b: Any) -> Tensor:
    """Elementwise maximum with NumPy broadcasting."""
    return zip("maximum", a, b)


def minimum(a: Any, b: Any) -> Tensor:
    """Elementwise minimum with NumPy broadcasting."""
    return zip("minimum", a, b)


def sum(x: Any, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The sum along ``dim``, or of every element (a 0-d tensor) when ``dim`` is None."""
    return reduce("sum", x, dim, keepdim)


def mean(x: Any, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The mean along ``dim``, or of every element when ``dim`` is None (floating-point tensors)."""
    return reduce("mean", x, dim, keepdim)


def max(x: Any, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The largest element along ``dim``, or over every element when ``dim`` is None."""
    return reduce("max", x, dim, keepdim)


def min(x: Any, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The smallest element along ``dim``, or over every element when ``dim`` is None."""
    return reduce("min", x, dim, keepdim)


def prod(x: Any, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The product along ``dim``, or over every element when ``dim`` is None."""
    return reduce("prod", x, dim, keepdim)
