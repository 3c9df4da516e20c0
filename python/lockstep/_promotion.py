"""PyTorch's type promotion (``torch.result_type``), for the operators and functions on tensors.

Operands are tensors and Python numbers. Each of three groups, tensors with dimensions, 0-d tensors and numbers
(int -> int64, float -> the default float32, bool -> bool), promotes within itself; a group counts only if its
category (bool < integer < floating) is higher than that of the groups before it: ``int32_tensor + 2.5`` is
float32, ``uint8_tensor + 300`` stays uint8, ``int32_tensor + float64_0d_tensor`` is float64.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._core import Tensor

DTYPES = ("bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64")
DEFAULT_FLOAT = "float32"
ITEMSIZE = {"bool": 1, "uint8": 1, "int32": 4, "int64": 8, "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}
_RANK = {name: i for i, name in enumerate(DTYPES)}


def category(dtype: str) -> int:
    """0 for bool, 1 for integers, 2 for floating point."""
    return 0 if dtype == "bool" else 1 if dtype in ("uint8", "int32", "int64") else 2


def is_floating(dtype: str) -> bool:
    return category(dtype) == 2


def promote_types(a: str, b: str) -> str:
    """``torch.promote_types`` over lockstep's dtypes."""
    if a == b:
        return a
    if category(a) != category(b):
        return a if category(a) > category(b) else b
    if {a, b} == {"float16", "bfloat16"}:
        return "float32"
    return a if _RANK[a] > _RANK[b] else b


def scalar_dtype(x: Any) -> str:
    """The dtype PyTorch gives a Python (or NumPy) number in promotion."""
    if isinstance(x, (bool, np.bool_)):
        return "bool"
    if isinstance(x, (int, np.integer)):
        return "int64"
    if isinstance(x, (float, np.floating)):
        return DEFAULT_FLOAT
    raise TypeError(f"expected a lockstep.Tensor or a Python number, got {type(x).__name__}")


def _combine(higher: str | None, lower: str | None) -> str | None:
    if higher is None:
        return lower
    if lower is None or is_floating(higher):
        return higher
    if higher == "bool" or is_floating(lower):
        return promote_types(higher, lower)
    return higher


def result_type(*operands: Any) -> str:
    """The dtype ``torch.result_type`` gives these tensors and numbers."""
    groups: list[str | None] = [None, None, None]  # tensors with dims, 0-d tensors, numbers
    for x in operands:
        if isinstance(x, (bool, int, float, np.number, np.bool_)):
            dtype, group = scalar_dtype(x), 2
        elif isinstance(x, Tensor) or hasattr(x, "dtype") and hasattr(x, "ndim"):  # also @lockstep.fuse's traced values
            dtype, group = x.dtype, 0 if x.ndim > 0 else 1
        else:
            dtype, group = scalar_dtype(x), 2
        groups[group] = dtype if groups[group] is None else promote_types(groups[group], dtype)
    result = _combine(groups[0], _combine(groups[1], groups[2]))
    assert result is not None, "result_type needs an operand"
    return result


def can_cast(source: str, target: str) -> bool:
    """``torch.can_cast``: no cast to a lower category (float -> int, int -> bool)."""
    return category(source) <= category(target)
