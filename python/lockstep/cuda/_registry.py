"""The registry of what kernels may call beyond plain Python: numba's CUDA
intrinsics (cuda.syncthreads, cuda.fp16.hadd, cuda.atomic.add, cuda.laneid,
...) and the math and NumPy functions lockstep.cuda translates.

One ``define(...)`` per intrinsic says everything about it: its Python
name(s), how a call is typed (the argument types give the result type, and a
refused call fails there), how a typed call is written in CUDA C++, and its
line in docs/numba_intrinsics.md. The markers users import (_intrinsics.py),
the translator's dispatch (_calls.py) and the doc page (_intrinsics_doc.py)
all read the registry; the modules that declare intrinsics are gathered in
_supported.py.

Typing and emission are two functions: the translator calls ``typing`` with
the call's arguments, then ``emit`` with the type it returned. Forms that read
their arguments as translation-time constants (cuda.grid(2),
cuda.shared.array(shape, dtype)) or stand for another construct (numpy.power
is ``**``) declare ``translate`` instead, their own translator function.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Callable, NoReturn, Union

from ._types import Scalar, Type, float32, float64
from ._values import Value


@dataclass(frozen=True)
class Known:
    """A call's result known while translating (math.isnan of an integer is
    False): a constant, as a Python literal would be, so an ``if`` on it is decided."""

    value: Any


@dataclass
class IntrinsicCall:
    """One call being translated: the intrinsic's name, the call's node, its
    arguments (translated, their types known or, in the first typing rounds, None)
    and the translator (for errors, truth values and the function's context)."""

    name: str
    node: ast.Call
    args: list[Value]
    translator: Any

    def fail(self, message: str) -> NoReturn:
        self.translator.fail(self.node, message)
        raise AssertionError  # fail raises

    def truth(self, k: int) -> str:
        """Argument ``k`` as a C++ bool."""
        return self.translator.truth(self.args[k])


Typing = Callable[[IntrinsicCall], Union[Type, Known, None]]  # None: not known yet (an argument's type is not)
Emission = Callable[[IntrinsicCall, Type], str]
SpecialForm = Callable[[Any, ast.Call], Value]  # (translator, call node) -> the translated call


@dataclass(frozen=True)
class IntrinsicDefinition:
    """One intrinsic (or math function) as the translator and the docs see it."""

    names: tuple[str, ...]  # "syncthreads", "fp16.hadd", "threadIdx.x"; "math.sqrt", "numpy.sqrt"
    doc: str  # what it is, one line of docs/numba_intrinsics.md
    notes: str = ""  # how lockstep's differs or what it becomes, for the docs
    kind: str = "function"  # "function", "value" (cuda.laneid: read, not called) or "special"
    arity: int | None = None  # positional arguments; None: any number, the typing rule checks
    keywords: tuple[str, ...] = ()  # the parameters' names where keywords are accepted (cuda.syncwarp(mask=...))
    numbers: bool = False  # every argument must be a number ("takes numbers, not a ...")
    typing: Typing | None = None
    emit: Emission | None = None
    translate: SpecialForm | None = None  # kind "special": reads and writes the call itself

    @property
    def name(self) -> str:
        return self.names[0]


INTRINSICS: dict[str, IntrinsicDefinition] = {}
"""Every Python name (without ``cuda.``; math and NumPy functions as
``math.sqrt``, ``numpy.sqrt``) -> its definition, in the order declared."""


def define(
    names: str | tuple[str, ...],
    doc: str,
    *,
    typing: Typing | Type | None = None,
    emit: Emission | str | None = None,
    translate: SpecialForm | None = None,
    kind: str | None = None,
    arity: int | None = None,
    keywords: tuple[str, ...] = (),
    numbers: bool = False,
    notes: str = "",
) -> IntrinsicDefinition:
    """Declare an intrinsic. ``typing`` may be a type (the result whatever the
    arguments); ``emit`` may be a string (the C++ expression, for calls of no
    arguments)."""
    names = (names,) if isinstance(names, str) else names
    if translate is not None:
        kind = kind or "special"
    elif typing is None or emit is None:
        raise ValueError(f"{names[0]}: an intrinsic needs a typing rule and an emission, or its own translate function")
    definition = IntrinsicDefinition(
        names=names,
        doc=doc,
        notes=notes,
        kind=kind or "function",
        arity=arity,
        keywords=keywords,
        numbers=numbers,
        typing=typing if typing is None or callable(typing) else _result_always(typing),
        emit=_constant_code(emit) if isinstance(emit, str) else emit,
        translate=translate,
    )
    for name in names:
        if name in INTRINSICS:
            raise ValueError(f"the intrinsic {name} is declared twice")
        INTRINSICS[name] = definition
    return definition


def _result_always(t: Type) -> Typing:
    return lambda call: t


def _constant_code(code: str) -> Emission:
    return lambda call, result: code


def float_type(*args: Value) -> Scalar:
    """The floating type a math function computes in: float32 only when every argument is float32 (or float16)."""
    if all(isinstance(a.type, Scalar) and a.type.name in ("float32", "float16") for a in args):
        return float32
    return float64


def suffixed(function: str, t: Scalar) -> str:
    """The C function of that name for ``t``: ``sqrtf`` for float32, ``sqrt`` for float64."""
    return f"{function}{'f' if t == float32 else ''}"
