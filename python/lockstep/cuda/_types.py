"""numba's types for kernels written in Python: scalars, arrays, homogeneous
tuples, and the rules that give an expression its type (numba's, which are
NumPy's for floats and "at least 64 bits" for integers)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union

import numpy as np

# name -> the C++ type kernels use. One row per scalar numba types in a kernel.
_CPP = {
    "bool": "bool",
    "int8": "signed char",
    "uint8": "unsigned char",
    "int16": "short",
    "uint16": "unsigned short",
    "int32": "int",
    "uint32": "unsigned int",
    "int64": "long long",
    "uint64": "unsigned long long",
    "float16": "__half",
    "float32": "float",
    "float64": "double",
}


@dataclass(frozen=True)
class Scalar:
    name: str

    @property
    def cpp(self) -> str:
        return _CPP[self.name]

    @property
    def is_bool(self) -> bool:
        return self.name == "bool"

    @property
    def is_integer(self) -> bool:
        return self.name.startswith(("int", "uint"))

    @property
    def is_unsigned(self) -> bool:
        return self.name.startswith("uint")

    @property
    def is_float(self) -> bool:
        return self.name.startswith("float")

    @property
    def bits(self) -> int:
        return 8 if self.is_bool else np.dtype(self.name).itemsize * 8

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Array:
    dtype: Scalar | RandomState
    ndim: int
    contiguous: bool  # numba's layout "C"
    readonly: bool = False  # constant arrays

    @property
    def cpp(self) -> str:
        return f"lockstep::py::array<{self.dtype.cpp}, {self.ndim}, {'true' if self.contiguous else 'false'}>"

    def __str__(self) -> str:
        return f"array({self.dtype}, {self.ndim}d, {'C' if self.contiguous else 'A'}{', readonly' if self.readonly else ''})"


@dataclass(frozen=True)
class Tuple:
    item: Scalar
    count: int

    @property
    def cpp(self) -> str:
        return f"lockstep::py::tuple<{self.item.cpp}, {self.count}>"

    def __str__(self) -> str:
        return f"UniTuple({self.item} x {self.count})"


@dataclass(frozen=True)
class Record:
    """A tuple of mixed types (numba's Tuple; a namedtuple keeps its field names)."""

    items: tuple  # of Type
    names: tuple[str, ...] | None = None

    @property
    def cpp(self) -> str:
        return f"lockstep::py::record<{', '.join(t.cpp for t in self.items)}>"

    def __str__(self) -> str:
        return "Tuple(" + ", ".join(str(t) for t in self.items) + ")"


@dataclass(frozen=True)
class NoneType:
    cpp = "void"

    def __str__(self) -> str:
        return "none"


@dataclass(frozen=True)
class RandomState:
    """numba's xoroshiro128p_type: one generator of numba.cuda.random, the element
    of the arrays create_xoroshiro128p_states makes (python_random.h's struct)."""

    cpp = "lockstep::py::xoroshiro128p_state"
    dtype = np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)  # numba's xoroshiro128p_dtype

    def __str__(self) -> str:
        return "Record(s0[type=uint64;offset=0],s1[type=uint64;offset=8];16;True)"


Type = Union[Scalar, Array, Tuple, Record, NoneType, RandomState]

boolean, int32, int64, uint32, uint64, float32, float64 = (Scalar(n) for n in ("bool", "int32", "int64", "uint32", "uint64", "float32", "float64"))
none = NoneType()
xoroshiro128p = RandomState()
SCALAR_NAMES = tuple(_CPP)


class TypeConflict(TypeError):
    """Two types with no common type (an array and a number, say)."""


def scalar_named(dtype: Any) -> Scalar | None:
    """The scalar type a dtype-like object names: numba's types (numba.float32),
    NumPy's (numpy.float32, numpy.dtype("f4")), or a name ("float32"); None for
    anything else."""
    if isinstance(dtype, Scalar):
        return dtype
    if dtype is bool:
        return boolean
    if dtype is int:
        return int64
    if dtype is float:
        return float64
    if type(dtype).__module__.startswith("numba"):  # numba.float32 and friends, without importing numba
        name = "bool" if str(dtype) == "boolean" else str(dtype)
        return Scalar(name) if name in _CPP else None
    if isinstance(dtype, str) and dtype in ("boolean", "bool_"):
        return boolean
    try:
        np_name = np.dtype(dtype).name
    except TypeError:
        return None
    return Scalar(np_name) if np_name in _CPP else None


def element_named(dtype: Any) -> Scalar | RandomState | None:
    """The element type of an array of ``dtype``: a scalar, or numba.cuda.random's generator state."""
    scalar = scalar_named(dtype)
    if scalar is None and isinstance(dtype, np.dtype) and dtype == RandomState.dtype:
        return xoroshiro128p
    return scalar


def typeof_number(value: Any) -> Scalar | None:
    """numba's type of a Python or NumPy number (int -> int64, float -> float64)."""
    if isinstance(value, (bool, np.bool_)):
        return boolean
    if isinstance(value, np.generic):
        return scalar_named(value.dtype)
    if isinstance(value, int):
        return int64 if -(2**63) <= value < 2**63 else uint64 if 0 <= value < 2**64 else None
    if isinstance(value, float):
        return float64
    return None


def _integer_result(a: Scalar, b: Scalar) -> Scalar:
    # numba: integer arithmetic is done in at least 64 bits; signed wins.
    return uint64 if a.is_unsigned and b.is_unsigned else int64


def numeric_result(a: Scalar, b: Scalar) -> Scalar:
    """The type of ``a + b`` (and -, *, //, %, **, the bitwise ops) in numba."""
    if (a.is_integer or a.is_bool) and (b.is_integer or b.is_bool):
        return _integer_result(a, b)
    return Scalar(np.promote_types(np.dtype(a.name if not a.is_bool else "bool"), np.dtype(b.name if not b.is_bool else "bool")).name)


def true_division_result(a: Scalar, b: Scalar) -> Scalar:
    """``a / b``: float64 for integers, the promoted float type otherwise."""
    result = numeric_result(a, b)
    return result if result.is_float else float64


def comparison_operand(a: Scalar, b: Scalar) -> Scalar:
    """The type both sides of a comparison are converted to."""
    if a == b:
        return a
    return numeric_result(a, b)


def unify(a: Type | None, b: Type | None) -> Type | None:
    """The one type a variable assigned both ``a`` and ``b`` takes (None: not yet known)."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    if isinstance(a, Scalar) and isinstance(b, Scalar):
        if a.is_bool:
            return b if not b.is_bool else a
        if b.is_bool:
            return a
        return numeric_result(a, b)
    if isinstance(a, Array) and isinstance(b, Array) and a.dtype == b.dtype and a.ndim == b.ndim:
        return Array(a.dtype, a.ndim, a.contiguous and b.contiguous, a.readonly or b.readonly)
    if isinstance(a, Tuple) and isinstance(b, Tuple) and a.count == b.count:
        item = unify(a.item, b.item)
        assert isinstance(item, Scalar)
        return Tuple(item, a.count)
    if isinstance(a, Record) and isinstance(b, Record) and len(a.items) == len(b.items):
        return Record(tuple(unify(x, y) for x, y in zip(a.items, b.items)), a.names if a.names == b.names else None)
    raise TypeConflict(f"{a} and {b} have no common type")


def size_and_alignment(t: Type) -> tuple[int, int]:
    """sizeof and alignof of the C++ type kernels hold ``t`` in (python_kernels.h's structs)."""
    if isinstance(t, Scalar):
        n = 1 if t.is_bool else np.dtype(t.name).itemsize
        return n, n
    if isinstance(t, Array):
        return 8 + 16 * t.ndim, 8
    if isinstance(t, RandomState):
        return 16, 8
    if isinstance(t, Tuple):
        n, a = size_and_alignment(t.item)
        return n * t.count, a
    if isinstance(t, Record):
        if not t.items:
            return 1, 1  # an empty struct
        first_size, first_align = size_and_alignment(t.items[0])
        rest_size, rest_align = size_and_alignment(Record(t.items[1:]))
        align = max(first_align, rest_align)
        rest_offset = -(-first_size // rest_align) * rest_align
        return -(-(rest_offset + rest_size) // align) * align, align
    raise TypeError(f"{t} has no C++ layout")


def record_offsets(t: Record) -> list[int]:
    """Where each item of a record starts (first, then the rest's first, ...)."""
    offsets, base, items = [], 0, t.items
    while items:
        offsets.append(base)
        first_size, _ = size_and_alignment(items[0])
        _, rest_align = size_and_alignment(Record(items[1:]))
        base += -(-first_size // rest_align) * rest_align
        items = items[1:]
    return offsets


def parse_signature(text: str) -> tuple[Type | None, list[Type]]:
    """A numba signature string, ``"void(float32[:, ::1], int32)"``: the return
    type (None for void) and the parameter types. ``[:]`` is any layout,
    ``[::1]`` in the last place C-contiguous."""
    text = text.strip()
    if "(" not in text or not text.endswith(")"):
        raise ValueError(f"signature {text!r}: write it as numba does, e.g. 'void(float32[:], int64)'")
    head, _, rest = text.partition("(")
    params = []
    depth, current = 0, ""
    for ch in rest[:-1]:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            params.append(current)
            current = ""
        else:
            current += ch
    if current.strip():
        params.append(current)
    head = head.strip()
    return (None if head in ("", "void", "none") else _parse_type(head)), [_parse_type(p) for p in params]


def _parse_type(text: str) -> Type:
    text = text.strip().replace(" ", "")
    if "[" in text:
        name, _, dims = text.partition("[")
        dims = dims.rstrip("]").split(",")
        scalar = scalar_named(name)
        if scalar is None:
            raise ValueError(f"unknown element type {name!r} in signature")
        return Array(scalar, len(dims), dims[-1] == "::1")
    scalar = scalar_named(text)
    if scalar is None:
        raise ValueError(f"unknown type {text!r} in signature; use numba's names (int32, float64, float32[:], ...)")
    return scalar
