"""cuda.atomic: numba's atomic read-modify-writes of one array element, as
python_kernels.h's atomic helpers (CUDA's atomics for every 32- and 64-bit
element type). Each gives the element's old value."""

from __future__ import annotations

from ._registry import IntrinsicCall, define
from ._types import Array, Record, Tuple, Type, int64
from ._values import Value, cast, literal, record_item


def _indices(call: IntrinsicCall) -> list[Value]:
    """The element's indices: one, or a tuple of them (compare_and_swap takes the first element)."""
    array = call.args[0]
    if call.name == "atomic.compare_and_swap":
        return [literal(0)] * (array.type.ndim if isinstance(array.type, Array) else 1)
    index = call.args[1]
    if isinstance(index.type, Record):
        return [Value(record_item(index.code or "", k), t) for k, t in enumerate(index.type.items)]
    if isinstance(index.type, Tuple):
        return [Value(f"{index.code}.item[{k}]", index.type.item) for k in range(index.type.count)]
    return [index]


def _element_type(call: IntrinsicCall) -> Type | None:
    """The array's element type, the result; the array and its indices checked."""
    array, indices, op = call.args[0], _indices(call), call.name.split(".", 1)[1]
    if array.type is None:
        return None
    if not isinstance(array.type, Array) or array.type.readonly:
        call.fail(f"cuda.atomic.{op} works on an array argument, shared or local array")
    if len(indices) != array.type.ndim:
        call.fail(f"cuda.atomic.{op} on a {array.type.ndim}-d array needs {array.type.ndim} indices")
    return array.type.dtype


def _place(call: IntrinsicCall) -> str:
    return f"&{call.args[0].code}({', '.join(cast(i, int64) if i.type else (i.code or '') for i in _indices(call))})"


def _update_type(integers_only: bool):  # type: ignore[no-untyped-def]
    def typing(call: IntrinsicCall) -> Type | None:
        t = _element_type(call)
        if t is None:
            return None
        op = call.name.split(".", 1)[1]
        if integers_only and not t.is_integer:  # type: ignore[union-attr]
            call.fail(f"cuda.atomic.{op} works on integer arrays, not {t}")
        if t.bits < 32 or t.name == "float16":  # type: ignore[union-attr]
            call.fail(f"atomics work on 32- and 64-bit elements, not {t}")
        return t

    return typing


def _update(helper: str):  # type: ignore[no-untyped-def]
    def emit(call: IntrinsicCall, result: Type) -> str:
        if result is None:
            return "atomic(...)"
        return f"lockstep::py::{helper}<{result.cpp}>({_place(call)}, {cast(call.args[-1], result)})"

    return emit


def _atomic(op: str, helper: str, doc: str, integers_only: bool = False, notes: str = "") -> None:
    define(f"atomic.{op}", doc, notes=notes, arity=3, typing=_update_type(integers_only), emit=_update(helper))


_atomic("add", "atomic_add", "ary[idx] += val.")
_atomic("sub", "atomic_sub", "ary[idx] -= val.")
_atomic("max", "atomic_max", "ary[idx] = max(ary[idx], val).", notes="As numba's: a NaN in memory is replaced, a NaN value is ignored.")
_atomic("min", "atomic_min", "ary[idx] = min(ary[idx], val).", notes="As numba's: a NaN in memory is replaced, a NaN value is ignored.")
_atomic("nanmax", "atomic_max", "ary[idx] = max(ary[idx], val), NaN ignored.", notes="The same as atomic.max.")
_atomic("nanmin", "atomic_min", "ary[idx] = min(ary[idx], val), NaN ignored.", notes="The same as atomic.min.")
_atomic("exch", "atomic_exch", "ary[idx] = val.")
_atomic("inc", "atomic_inc", "ary[idx] = 0 if ary[idx] >= val else ary[idx] + 1 (CUDA's wrapping counter).", integers_only=True)
_atomic("dec", "atomic_dec", "ary[idx] = val if ary[idx] == 0 or ary[idx] > val else ary[idx] - 1.", integers_only=True)
_atomic("and_", "atomic_and", "ary[idx] &= val.", integers_only=True)
_atomic("or_", "atomic_or", "ary[idx] |= val.", integers_only=True)
_atomic("xor", "atomic_xor", "ary[idx] ^= val.", integers_only=True)


def _swap_type(call: IntrinsicCall) -> Type | None:
    t = _element_type(call)
    if t is not None and not t.is_integer:  # type: ignore[union-attr]
        call.fail("cuda.atomic.cas works on integer arrays (int32, int64, uint32, uint64)")
    return t


def _swap(call: IntrinsicCall, result: Type) -> str:
    if result is None:
        return "atomic(...)"
    old, value = call.args[-2:]
    return f"lockstep::py::atomic_cas<{result.cpp}>({_place(call)}, {cast(old, result)}, {cast(value, result)})"


define("atomic.cas", "ary[idx] = val if ary[idx] == old; gives the old ary[idx].", arity=4, typing=_swap_type, emit=_swap)
define(
    "atomic.compare_and_swap",
    "ary[0] = val if ary[0] == old (numba's older form of cas, on the first element).",
    arity=3,
    typing=_swap_type,
    emit=_swap,
)
