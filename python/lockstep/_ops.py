"""The library's ops on tensors, with PyTorch's semantics: elementwise (map, zip) with type promotion and
broadcasting, comparisons and logical ops giving bool tensors, where, reductions (int64 sums of integers),
argmax/argmin, all/any, softmax, matmul as ``torch.matmul``, copy and rgb_to_grayscale.

Names shadow Python's builtins (map, zip, sum, max, min, abs, all, any) as torch's and NumPy's do: this
module must not use those builtins itself.
"""

from __future__ import annotations

import builtins
import textwrap
from typing import Any

import numpy as np

from . import _core
from ._core import Tensor
from ._promotion import DEFAULT_FLOAT, can_cast, is_floating, result_type
from ._tensor import asarray

_FLOATING_MAPS = ("exp", "log", "sqrt", "sigmoid", "tanh", "gelu", "gelu_tanh", "reciprocal")

# The functions that are also Tensor methods (x.sum(dim=0) is lockstep.sum(x, dim=0)).
METHODS = (
    "sum mean max min prod argmax argmin all any exp log sqrt relu sigmoid tanh abs neg clamp softmax log_softmax "
    "maximum minimum pow eq ne lt le gt ge logical_and logical_or logical_xor logical_not"
).split()

# Python's binary operators (__add__, __radd__, ...) and the op each runs, for Tensor and @lockstep.fuse's traced values.
OPERATORS = {
    "add": "add",
    "sub": "sub",
    "mul": "mul",
    "truediv": "div",
    "floordiv": "floor_divide",
    "mod": "remainder",
    "pow": "pow",
    "and": "bitwise_and",
    "or": "bitwise_or",
    "xor": "bitwise_xor",
}
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")

# The values @lockstep.fuse traces (set by _fuse): an op given one records itself instead of running.
traced_type: type | None = None


def _traced(*operands: Any) -> bool:
    return traced_type is not None and builtins.any(isinstance(x, traced_type) for x in operands)


def _operand(x: Any) -> Any:
    """A tensor, a Python number, or anything asarray takes (NumPy arrays, lists) as a tensor."""
    if isinstance(x, (Tensor, bool, int, float, np.number, np.bool_)):
        return x
    if _traced(x):  # an op @lockstep.fuse does not trace (matmul, argmax, ...): the function runs eagerly
        raise x.graph.unsupported("an op that is not fused yet")
    return asarray(x)


def _device_of(*operands: Any) -> str:
    for x in operands:
        if isinstance(x, Tensor):
            return x.device
    raise TypeError("expected at least one lockstep.Tensor")


def as_dtype(x: Any, dtype: str, device: str) -> Tensor:
    """Operand ``x`` (tensor or number) as a tensor of ``dtype`` on ``device``: a number becomes a 0-d tensor there."""
    if isinstance(x, Tensor):
        return x if x.dtype == dtype else x.to_dtype(dtype)
    value = np.asarray(x)
    if value.dtype.kind in "iub" and dtype != "bool":
        value = value.astype(np.int64)  # a number outside the dtype wraps, as PyTorch's (NumPy 2 would refuse it)
    if dtype == "bfloat16":  # NumPy has none: through float32
        return asarray(value.astype(np.float32), device=device).to_dtype("bfloat16")
    return asarray(value.astype(dtype), device=device)


def map(op: str, x: Any) -> Tensor:
    """Apply the unary ``op`` elementwise: copy, neg, abs, exp, log, sqrt, relu, sigmoid, tanh, gelu, gelu_tanh,
    square, reciprocal. The floating-point ops give float32 for integer and bool tensors, as PyTorch's."""
    if _traced(x):
        return x.map(op)
    t = _operand(x)
    if not isinstance(t, Tensor):
        raise TypeError(f"{op} needs a tensor, got {type(x).__name__}")
    if op in _FLOATING_MAPS and not is_floating(t.dtype):
        t = t.to_dtype(DEFAULT_FLOAT)
    if op == "neg" and t.dtype == "bool":
        raise TypeError("negation (-) of a bool tensor is not supported; use ~ or lockstep.logical_not")
    return _core.map(op, t)


def zip(op: str, a: Any, b: Any, out_dtype: str | None = None) -> Tensor:
    """Apply the binary ``op`` elementwise with broadcasting, after promoting both operands to their
    ``result_type`` (or ``out_dtype``): add, sub, mul, div (true division), floor_divide, remainder, maximum,
    minimum, pow, bitwise_and/or/xor, and the comparisons eq, ne, lt, le, gt, ge and logical_and/or/xor,
    which give bool tensors. Either operand may be a Python number."""
    if _traced(a, b):
        return traced_type.zip(op, a, b, out_dtype)
    a, b = _operand(a), _operand(b)
    device = _device_of(a, b)
    dtype = out_dtype or result_type(a, b)
    if op == "div" and not is_floating(dtype):
        dtype = DEFAULT_FLOAT  # true division
    if op in ("bitwise_and", "bitwise_or", "bitwise_xor") and is_floating(dtype):
        raise TypeError(f"{op} needs integer or bool tensors, got {dtype}")
    if op == "pow" and not is_floating(dtype) and isinstance(b, (int, np.integer)) and b < 0:
        raise ValueError("integers to negative integer powers are not allowed (as in PyTorch); use a float exponent")
    if op == "sub" and dtype == "bool":
        raise TypeError("subtraction of bool tensors is not supported; use ^ or lockstep.logical_xor")
    return _core.zip(op, as_dtype(a, dtype, device), as_dtype(b, dtype, device))


def zip_(op: str, target: Tensor, other: Any) -> Tensor:
    """``target op= other`` in place (through views): the result, promoted as ``zip`` does, is cast back to
    ``target``'s dtype where PyTorch allows the cast (not float to integer, nor integer to bool)."""
    other = _operand(other)
    dtype = result_type(target, other)
    if op == "div" and not is_floating(dtype):
        dtype = DEFAULT_FLOAT
    if not can_cast(dtype, target.dtype):
        raise TypeError(
            f"the result of {op} is {dtype}, which cannot be written into a {target.dtype} tensor in place; "
            f"use out = t.to('{dtype}') first, or a non-in-place operator"
        )
    shape = np.broadcast_shapes(target.shape, other.shape if isinstance(other, Tensor) else ())
    if shape != tuple(target.shape):
        raise _core.ShapeError(f"{op}: the result's shape {shape} does not match the in-place target's {tuple(target.shape)}")
    if dtype == target.dtype:
        _core.zip_into(op, target, as_dtype(other, dtype, target.device), target)
    else:
        _core.copy_into(target, zip(op, target, other, out_dtype=dtype))
    return target


def where(condition: Any, a: Any, b: Any) -> Tensor:
    """``a`` where ``condition`` (a bool tensor) holds, else ``b``, all broadcast together; ``a`` and ``b``
    promote as in arithmetic (either may be a number)."""
    if _traced(condition, a, b):
        return traced_type.where(condition, a, b)
    condition, a, b = _operand(condition), _operand(a), _operand(b)
    if not isinstance(condition, Tensor) or condition.dtype != "bool":
        raise TypeError("where: the condition must be a bool tensor (a comparison, say)")
    dtype = result_type(a, b)
    return _core.where(condition, as_dtype(a, dtype, condition.device), as_dtype(b, dtype, condition.device))


def clamp(x: Any, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002 (torch's names)
    """Each element limited to [min, max] (either may be None), promoted with the bounds as PyTorch does."""
    if min is None and max is None:
        raise ValueError("clamp needs min, max or both")
    out = x if _traced(x) else _operand(x)
    dtype = result_type(*(v for v in (out, min, max) if v is not None))
    if min is not None:
        out = zip("maximum", out, min, out_dtype=dtype)
    if max is not None:
        out = zip("minimum", out, max, out_dtype=dtype)
    return out


def reduce(op: str, x: Any, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Reduce with sum, max, min, prod or mean along ``dim``, or, with ``dim=None``
    (the default), over every element to a 0-d tensor as ``torch.sum(x)`` does
    (at memory bandwidth; ``keepdim`` then keeps every dimension with extent 1).
    The result has ``x``'s dtype, except sums and products of bool and integer
    tensors, which are int64 (as PyTorch's). Sum of no elements is 0, product 1;
    max, min and mean of no elements raise ShapeError."""
    if _traced(x):
        return x.reduce(op, dim, keepdim)
    t = _operand(x)
    if op == "mean" and not is_floating(t.dtype):
        raise TypeError(f"mean needs a floating-point tensor, got {t.dtype} (as PyTorch); convert it with .to('float32')")
    if isinstance(dim, (tuple, list)):  # several dims: one at a time, the last first (equal counts keep means exact)
        dims = sorted({d % t.ndim if t.ndim else d for d in dim}, reverse=True)
        for d in dims:
            t = _core.reduce(op, t, d, True)
        return t if keepdim else t.reshape([e for d, e in enumerate(t.shape) if d not in dims])
    if dim is not None:
        return _core.reduce(op, t, dim, keepdim)
    out = _core.reduce_all(op, t)
    return out.reshape([1] * t.ndim) if keepdim else out


def _arg(x: Any, dim: int | None, keepdim: bool, want_max: bool) -> Tensor:
    t = _operand(x)
    if dim is None:
        flat = _core.arg_reduce(t.contiguous().reshape([-1]) if t.ndim else t, 0, False, want_max)
        return flat.reshape([1] * t.ndim) if keepdim else flat
    return _core.arg_reduce(t, dim, keepdim, want_max)


def argmax(x: Any, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The int64 index of the largest element along ``dim`` (the first one; NaN counts as largest), or of the
    flattened tensor when ``dim`` is None."""
    return _arg(x, dim, keepdim, True)


def argmin(x: Any, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The int64 index of the smallest element along ``dim``, or of the flattened tensor when ``dim`` is None."""
    return _arg(x, dim, keepdim, False)


def all(x: Any, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Whether every element (along ``dim``) is nonzero: a bool tensor (True for no elements)."""
    return eq(reduce("sum", eq(x, 0), dim, keepdim), 0)


def any(x: Any, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Whether any element (along ``dim``) is nonzero: a bool tensor (False for no elements)."""
    return ne(reduce("sum", ne(x, 0), dim, keepdim), 0)


def _floating_only(op: str, x: Any) -> Tensor:
    t = x if _traced(x) else _operand(x)
    if not hasattr(t, "dtype") or not is_floating(t.dtype):
        raise TypeError(f"{op} needs a floating-point tensor (as PyTorch); convert it with .to('float32')")
    return t


def softmax(x: Any, dim: int) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim``, computed from x - max(x) so large inputs do not overflow."""
    t = _floating_only("softmax", x)
    shifted = exp(sub(t, reduce("max", t, dim, keepdim=True)))
    return div(shifted, reduce("sum", shifted, dim, keepdim=True))


def log_softmax(x: Any, dim: int) -> Tensor:
    """log(softmax(x)) along ``dim``, as x - max - log(sum(exp(x - max)))."""
    t = _floating_only("log_softmax", x)
    shifted = sub(t, reduce("max", t, dim, keepdim=True))
    return sub(shifted, log(reduce("sum", exp(shifted), dim, keepdim=True)))


def matmul(a: Any, b: Any, algo: str = "auto") -> Tensor:
    if _traced(a, b):
        return a @ b if isinstance(a, traced_type) else b.__rmatmul__(a)
    a, b = _operand(a), _operand(b)
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError("matmul needs two tensors")
    if a.ndim == 0 or b.ndim == 0:
        raise _core.ShapeError("matmul needs tensors of at least one dimension; use * for scalars")
    if a.dtype != b.dtype:
        raise TypeError(f"matmul: the inputs have different dtypes ({a.dtype} and {b.dtype}); convert one with .to(dtype)")
    # torch.matmul's 1-D rules: a vector on the left is a row, on the right a column, and that extent is dropped.
    left, right = a.unsqueeze(0) if a.ndim == 1 else a, b.unsqueeze(1) if b.ndim == 1 else b
    if a.dtype == "float16":
        # On tensor cores as tf32, which holds every float16 exactly (10 mantissa bits, a wider exponent), with
        # float32 accumulation as PyTorch's; the result rounded to float16.
        tensor_core = _core.auto_matmul_algo("bfloat16", a.device) if algo == "auto" else algo
        out = _core.matmul(left.to_dtype("float32"), right.to_dtype("float32"), tensor_core).to_dtype("float16")
    elif a.dtype in ("float32", "bfloat16"):
        out = _core.matmul(left, right, algo)
    else:
        out = _matmul_by_products(left, right)
    if a.ndim == 1:
        out = out.select(out.ndim - 2, 0)
    if b.ndim == 1:
        out = out.select(out.ndim - 1, 0)
    return out


def _matmul_by_products(a: Tensor, b: Tensor) -> Tensor:
    """float64 and integer matmul (no kernel of their own yet): products broadcast over (..., rows, k, n) and
    summed over k, a block of rows at a time so the products stay under 2^24 elements."""
    if a.shape[-1] != b.shape[-2]:
        raise _core.ShapeError(f"matmul: the inner dimensions differ ({a.shape[-1]} and {b.shape[-2]})")
    batch = np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    out = _core.empty([*batch, m, n], a.dtype, a.device)
    rows = builtins.max(1, 2**24 // builtins.max(1, int(np.prod(batch, dtype=np.int64)) * k * n))
    for first in range(0, m, rows):
        block = a.slice(a.ndim - 2, first, first + rows)
        products = mul(block.unsqueeze(block.ndim), b.unsqueeze(b.ndim - 2))
        _core.copy_into(out.slice(out.ndim - 2, first, first + rows), reduce("sum", products, products.ndim - 2))
    return out


def _matmul_algos_doc() -> str:
    """matmul's algos, from the kernels' recipe tables (``_core.matmul_algos()``), so a new rung shows up by itself."""
    algos = _core.matmul_algos()

    def names(family: str) -> str:
        return ", ".join(f'"{a["name"]}"' + (f" ({a['arch']} GPUs)" if a["arch"] else "") for a in algos if a["family"] == family)

    references = ", ".join(f'"{a["name"]}" ({" or ".join(a["dtypes"])})' for a in algos if a["family"] == "reference")

    def auto_for(dtype: str) -> str:
        candidates, emulator = _core.auto_matmul_candidates(dtype), _core.auto_matmul_algo(dtype, "cpu")
        text = f"for {dtype} {' where the device runs it, else '.join(candidates)}"
        return text if emulator in candidates else f"{text} ({emulator} on the emulator)"

    auto = "; ".join(auto_for(dtype) for dtype in ("float32", "bfloat16"))
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
    return _core.rgb_to_grayscale(_operand(image), launch)


def copy(x: Any) -> Tensor:
    """A new packed copy of ``x`` on its device. A contiguous ``x`` is copied with
    the device's memcpy (cuMemcpyDtoD on a GPU), no kernel: the reference for
    copy bandwidth. A strided one is packed by the copy kernel."""
    return _core.copy(_operand(x))


def neg(x: Any) -> Tensor:
    """Elementwise ``-x``."""
    return map("neg", x)


def abs(x: Any) -> Tensor:
    """Elementwise absolute value."""
    return map("abs", x)


def exp(x: Any) -> Tensor:
    """Elementwise e**x (float32 for integer tensors)."""
    return map("exp", x)


def log(x: Any) -> Tensor:
    """Elementwise natural logarithm (float32 for integer tensors)."""
    return map("log", x)


def sqrt(x: Any) -> Tensor:
    """Elementwise square root (float32 for integer tensors)."""
    return map("sqrt", x)


def relu(x: Any) -> Tensor:
    """Elementwise max(x, 0)."""
    return map("relu", x)


def sigmoid(x: Any) -> Tensor:
    """Elementwise 1 / (1 + e**-x) (float32 for integer tensors)."""
    return map("sigmoid", x)


def tanh(x: Any) -> Tensor:
    """Elementwise hyperbolic tangent (float32 for integer tensors)."""
    return map("tanh", x)


def gelu(x: Any, approximate: str = "none") -> Tensor:
    """Elementwise GELU as ``torch.nn.functional.gelu``: x * Phi(x) through erf, or with ``approximate="tanh"``
    the tanh form (float32 for integer tensors)."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return map("gelu" if approximate == "none" else "gelu_tanh", x)


def add(a: Any, b: Any) -> Tensor:
    """Elementwise ``a + b``, with broadcasting and PyTorch's type promotion."""
    return zip("add", a, b)


def sub(a: Any, b: Any) -> Tensor:
    """Elementwise ``a - b``, with broadcasting and PyTorch's type promotion."""
    return zip("sub", a, b)


def mul(a: Any, b: Any) -> Tensor:
    """Elementwise ``a * b``, with broadcasting and PyTorch's type promotion."""
    return zip("mul", a, b)


def div(a: Any, b: Any) -> Tensor:
    """Elementwise ``a / b``, true division: integer and bool operands give float32, with broadcasting and PyTorch's type promotion."""
    return zip("div", a, b)


def floor_divide(a: Any, b: Any) -> Tensor:
    """Elementwise ``a // b``, rounding toward minus infinity (Python's rule; integer division by zero
    gives 0), with broadcasting and PyTorch's type promotion."""
    return zip("floor_divide", a, b)


def remainder(a: Any, b: Any) -> Tensor:
    """Elementwise ``a % b``, with the divisor's sign (Python's rule), with broadcasting and PyTorch's type promotion."""
    return zip("remainder", a, b)


def pow(a: Any, b: Any) -> Tensor:
    """Elementwise ``a ** b``, with broadcasting and PyTorch's type promotion."""
    return zip("pow", a, b)


def maximum(a: Any, b: Any) -> Tensor:
    """Elementwise maximum (NaN wins), with broadcasting and PyTorch's type promotion."""
    return zip("maximum", a, b)


def minimum(a: Any, b: Any) -> Tensor:
    """Elementwise minimum (NaN wins), with broadcasting and PyTorch's type promotion."""
    return zip("minimum", a, b)


def bitwise_and(a: Any, b: Any) -> Tensor:
    """Elementwise ``a & b`` (integer and bool tensors), with broadcasting and PyTorch's type promotion."""
    return zip("bitwise_and", a, b)


def bitwise_or(a: Any, b: Any) -> Tensor:
    """Elementwise ``a | b`` (integer and bool tensors), with broadcasting and PyTorch's type promotion."""
    return zip("bitwise_or", a, b)


def bitwise_xor(a: Any, b: Any) -> Tensor:
    """Elementwise ``a ^ b`` (integer and bool tensors), with broadcasting and PyTorch's type promotion."""
    return zip("bitwise_xor", a, b)


def eq(a: Any, b: Any) -> Tensor:
    """Elementwise ``a == b`` as a bool tensor, with broadcasting and PyTorch's type promotion."""
    return zip("eq", a, b)


def ne(a: Any, b: Any) -> Tensor:
    """Elementwise ``a != b`` as a bool tensor, with broadcasting and PyTorch's type promotion."""
    return zip("ne", a, b)


def lt(a: Any, b: Any) -> Tensor:
    """Elementwise ``a < b`` as a bool tensor, with broadcasting and PyTorch's type promotion."""
    return zip("lt", a, b)


def le(a: Any, b: Any) -> Tensor:
    """Elementwise ``a <= b`` as a bool tensor, with broadcasting and PyTorch's type promotion."""
    return zip("le", a, b)


def gt(a: Any, b: Any) -> Tensor:
    """Elementwise ``a > b`` as a bool tensor, with broadcasting and PyTorch's type promotion."""
    return zip("gt", a, b)


def ge(a: Any, b: Any) -> Tensor:
    """Elementwise ``a >= b`` as a bool tensor, with broadcasting and PyTorch's type promotion."""
    return zip("ge", a, b)


def logical_and(a: Any, b: Any) -> Tensor:
    """Elementwise ``a and b`` of each pair, as a bool tensor, with broadcasting and PyTorch's type promotion."""
    return zip("logical_and", a, b)


def logical_or(a: Any, b: Any) -> Tensor:
    """Elementwise ``a or b`` of each pair, as a bool tensor, with broadcasting and PyTorch's type promotion."""
    return zip("logical_or", a, b)


def logical_xor(a: Any, b: Any) -> Tensor:
    """Elementwise ``a xor b`` of each pair's truth, as a bool tensor, with broadcasting and PyTorch's type promotion."""
    return zip("logical_xor", a, b)


true_divide = div


def logical_not(x: Any) -> Tensor:
    """Elementwise ``not x`` as a bool tensor."""
    return eq(x, 0)


def bitwise_not(x: Any) -> Tensor:
    """Elementwise ``~x``: logical not for bool tensors, two's-complement not for integers."""
    t = x if _traced(x) else _operand(x)
    if t.dtype == "bool":
        return logical_not(t)
    if is_floating(t.dtype):
        raise TypeError(f"~ needs an integer or bool tensor, got {t.dtype}")
    return zip("bitwise_xor", t, 255 if t.dtype == "uint8" else -1, out_dtype=t.dtype)


def sum(x: Any, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The sum along ``dim``, or of every element (a 0-d tensor) when ``dim`` is None; int64 for integers."""
    return reduce("sum", x, dim, keepdim)


def mean(x: Any, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The mean along ``dim``, or of every element when ``dim`` is None (floating-point tensors)."""
    return reduce("mean", x, dim, keepdim)


def max(x: Any, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The largest element along ``dim``, or over every element when ``dim`` is None (values only)."""
    return reduce("max", x, dim, keepdim)


def min(x: Any, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The smallest element along ``dim``, or over every element when ``dim`` is None (values only)."""
    return reduce("min", x, dim, keepdim)


def prod(x: Any, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The product along ``dim``, or over every element when ``dim`` is None; int64 for integers."""
    return reduce("prod", x, dim, keepdim)
