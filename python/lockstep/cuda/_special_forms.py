"""The kernel language's forms that read their arguments while translating:
cuda.grid(ndim) and cuda.gridsize(ndim) take a constant rank,
cuda.shared.array and cuda.local.array a constant shape and dtype (they
declare storage at the function's top), cuda.const.array_like a NumPy array
known at compile time. Each is a registry entry with its own translator
function."""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from ._registry import define
from ._types import Array, Tuple, int64, scalar_named
from ._values import NotConstant, Value


def _thread_position(translator: Any, node: ast.Call, name: str) -> Value:
    (n,) = node.args if len(node.args) == 1 and not node.keywords else (None,)
    ndim = translator.const_int(n) if n is not None else None
    if ndim not in (1, 2, 3):
        translator.fail(node, f"cuda.{name}(ndim) takes the constant 1, 2 or 3")
    axes = "xyz"[:ndim]
    parts = [
        f"(static_cast<long long>(threadIdx.{a}) + static_cast<long long>(blockIdx.{a}) * blockDim.{a})"
        if name == "grid"
        else f"(static_cast<long long>(blockDim.{a}) * gridDim.{a})"
        for a in axes
    ]
    if ndim == 1:
        return Value(parts[0], int64)
    return Value(f"{Tuple(int64, ndim).cpp}{{{{{', '.join(parts)}}}}}", Tuple(int64, ndim), items=parts)  # type: ignore[arg-type]


define(
    "grid",
    "The thread's global index: an int64 for ``grid(1)``, a tuple of ``ndim`` for 2 and 3.",
    notes="ndim is a constant 1, 2 or 3.",
    translate=lambda translator, node: _thread_position(translator, node, "grid"),
)
define(
    "gridsize",
    "The threads of the grid along each axis: an int64, or a tuple of ``ndim``.",
    notes="ndim is a constant 1, 2 or 3.",
    translate=lambda translator, node: _thread_position(translator, node, "gridsize"),
)


def _array_shape_and_dtype(translator: Any, space: str, node: ast.Call) -> tuple[tuple[int, ...], Any]:
    names = ("shape", "dtype")
    given: dict[str, ast.expr] = dict(zip(names, node.args))
    for kw in node.keywords:
        if kw.arg not in names:
            translator.fail(node, f"cuda.{space}.array(shape, dtype) has no argument {kw.arg!r}")
        given[kw.arg] = kw.value  # type: ignore[index]
    if set(given) != set(names):
        translator.fail(node, f"cuda.{space}.array takes shape and dtype")
    if isinstance(given["shape"], ast.List):
        translator.fail(node, f"cuda.{space}.array's shape is an int or a tuple of ints, not a list")
    try:
        shape = translator.const_value(given["shape"])
        dtype_obj = translator.const_value(given["dtype"])
    except NotConstant:
        translator.fail(node, f"cuda.{space}.array needs a shape and dtype known when the kernel is compiled (numbers, globals, closure variables)")
    if isinstance(shape, list):
        translator.fail(node, f"cuda.{space}.array's shape is an int or a tuple of ints, not a list")
    shape = tuple(shape) if isinstance(shape, tuple) else (shape,)
    if not shape or not all(isinstance(s, (int, np.integer)) and s >= 0 for s in shape):
        translator.fail(node, f"cuda.{space}.array's shape must be non-negative integers, got {shape}")
    return shape, dtype_obj


def declare_array(translator: Any, space: str, node: ast.Call) -> Value:
    """cuda.shared.array or cuda.local.array: storage declared at the function's top, viewed as an array."""
    shape, dtype_obj = _array_shape_and_dtype(translator, space, node)
    dtype = scalar_named(dtype_obj)
    if dtype is None:
        translator.fail(node, f"cuda.{space}.array's dtype {dtype_obj!r} is not a numeric type (numba.float32, numpy.float32, 'float32', ...)")
    assert dtype is not None
    storage = translator.local_unique(f"{translator.name_hint or space}_storage")
    count = int(np.prod(shape))
    extents = ", ".join(str(int(s)) for s in shape)
    if space == "shared" and shape == (0,):
        # Dynamic shared memory: the launch's shared_bytes; every such array starts at its beginning, as in numba.
        translator.prologue.append(f"  extern __shared__ __align__(16) unsigned char {storage}[];")
        return Value(f"lockstep::py::over<{dtype.cpp}, 1>(reinterpret_cast<{dtype.cpp}*>({storage}), {{1LL << 40}})", Array(dtype, 1, True))
    if count == 0:
        translator.fail(node, f"cuda.{space}.array of no elements; use shape 0 (one dimension) for dynamic shared memory")
    qualifier = "__shared__ " if space == "shared" else ""
    align = "__align__(16) " if space == "shared" else ""
    translator.prologue.append(f"  {qualifier}{align}{dtype.cpp} {storage}[{count}];")
    if space == "shared" and not translator.typing:  # the kernel's static shared memory, for occupancy answers
        translator.program.static_shared_bytes += -(-count * np.dtype(dtype.name).itemsize // 16) * 16
    return Value(f"lockstep::py::over<{dtype.cpp}, {len(shape)}>({storage}, {{{extents}}})", Array(dtype, len(shape), True))


define(
    "shared.array",
    "An array in the block's shared memory: ``shared.array(shape, dtype)``.",
    notes="shape and dtype are constants; shape 0 is the launch's dynamic shared memory (every such array starts at its beginning).",
    translate=lambda translator, node: declare_array(translator, "shared", node),
)
define(
    "local.array",
    "An array of the thread's own: ``local.array(shape, dtype)``.",
    notes="shape and dtype are constants.",
    translate=lambda translator, node: declare_array(translator, "local", node),
)


def _constant_array(translator: Any, node: ast.Call) -> Value:
    if len(node.args) != 1:
        translator.fail(node, "cuda.const.array_like(ary) takes one NumPy array")
    v = translator.expr(node.args[0])
    if not (v.is_const and isinstance(v.const, np.ndarray)):
        translator.fail(node, "cuda.const.array_like takes a NumPy array known when the kernel is compiled (a global or closure variable)")
    return translator.runtime(v, node)


define(
    "const.array_like",
    "A read-only copy of a NumPy array known when the kernel is compiled, in constant memory.",
    notes="Global NumPy arrays a kernel reads are frozen the same way, as numba freezes them.",
    translate=_constant_array,
)
