"""What the translator passes around: a translated expression (``Value``),
numbers as typed C++ literals, the conversions numba makes on assignment,
C++ names for Python ones, and the error it raises."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._core import CompileError
from ._types import Array, Record, Scalar, Tuple, Type, float32, float64, int64, typeof_number


class TypingError(CompileError):
    """A kernel written in Python that lockstep.cuda cannot translate: the
    message names the Python file, line and what is allowed instead."""


_NOTHING = object()

# C++ words a Python name must not take as it is (it gets a trailing "_").
_RESERVED = set(
    """alignas alignof and and_eq asm auto bitand bitor bool break case catch char char16_t char32_t class compl const constexpr
    const_cast continue decltype default delete do double dynamic_cast else enum explicit export extern false float for friend goto if
    inline int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public register
    reinterpret_cast return short signed sizeof static static_assert static_cast struct switch template this thread_local throw true try
    typedef typeid typename union unsigned using virtual void volatile wchar_t while xor xor_eq dim3 threadIdx blockIdx blockDim gridDim
    warpSize lockstep printf min max abs assert main""".split()
)


@dataclass
class Value:
    """An expression: C++ code with its type, or a Python object known while
    translating (a module, a constant, a dtype, a function)."""

    code: str | None
    type: Type | None
    const: Any = _NOTHING
    items: list[str] | None = None  # a tuple's parts, when each can be read on its own (shapes, cuda.grid)

    @property
    def is_const(self) -> bool:
        return self.const is not _NOTHING


@dataclass(frozen=True)
class ConstArgument:
    """A device function's argument known while translating (a type, a
    function, an intrinsic, a number), bound in the callee as numba binds
    literals: one specialisation per value."""

    key: Any
    value: Any = field(compare=False, hash=False)

    @staticmethod
    def of(value: Any) -> ConstArgument:
        number = isinstance(value, (bool, int, float, np.number, np.bool_))
        return ConstArgument(("number", type(value).__name__, value) if number else ("object", id(value)), value)

    def __str__(self) -> str:
        return f"literal {self.value!r}"


def float_literal(v: float, t: Scalar) -> str:
    if math.isnan(v):
        code = "__longlong_as_double(0x7ff8000000000000LL)"
    elif math.isinf(v):
        code = ("-" if v < 0 else "") + "__longlong_as_double(0x7ff0000000000000LL)"
    else:
        code = repr(float(v))
        if "." not in code and "e" not in code and "inf" not in code:
            code += ".0"
    if t == float32:
        return f"static_cast<float>({code})" if "__" in code else code + "f"
    return code


def literal(v: Any) -> Value:
    """A Python or NumPy number as a typed C++ literal (int -> int64, float -> float64)."""
    t = typeof_number(v)
    if t is None:
        raise TypeError(f"{v!r} is not a number")
    if t.is_bool:
        return Value("true" if v else "false", t)
    if t.is_float:
        code = float_literal(float(v), t if t in (float32, float64) else float64)
        return Value(code if t in (float32, float64) else f"static_cast<{t.cpp}>({code})", t)
    iv = int(v)
    if t == int64:
        return Value(f"{iv}LL" if iv != -(2**63) else "(-9223372036854775807LL - 1)", t)
    if t.name == "uint64":
        return Value(f"{iv}ULL", t)
    return Value(f"static_cast<{t.cpp}>({iv}LL)", t)


def cast(v: Value, to: Type) -> str:
    """``v``'s code converted to ``to`` (as numba converts on assignment)."""
    if v.type == to or v.type is None:
        return v.code or ""
    if isinstance(to, Scalar) and isinstance(v.type, Scalar):
        if to.is_bool:
            return f"({v.code} != 0)"
        if to.name == "float16" or v.type.name == "float16":
            return f"static_cast<{to.cpp}>(static_cast<float>({v.code}))" if v.type.name == "float16" else f"__double2half({v.code})"
        return f"static_cast<{to.cpp}>({v.code})"
    if isinstance(to, Array) and isinstance(v.type, Array) and v.type.contiguous and not to.contiguous:
        return f"({v.code}).strided()"
    if isinstance(to, Tuple) and isinstance(v.type, Tuple) and to.item != v.type.item:
        return f"lockstep::py::convert<{to.item.cpp}>({v.code})"
    return v.code or ""


def unique_name(base: str, taken: set[str]) -> str:
    """``base``, or ``base_2``, ``base_3``... whichever ``taken`` lacks (then taken)."""
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    taken.add(name)
    return name


def record_code(record: Record, codes: list[str]) -> str:
    """A record built from its items' code: record<A, B>{a, {b, {}}}."""
    inner = "{}"
    for code in reversed(codes):
        inner = "{" + code + ", " + inner + "}"
    return record.cpp + inner


def record_item(code: str, k: int) -> str:
    return f"lockstep::py::get<{k}>({code})"


def cpp_identifier(name: str) -> str:
    return name + "_" if name in _RESERVED or name.startswith("lockstep") or "__" in name else name


class NotConstant(Exception):
    """An expression whose value is only known when the kernel runs."""
