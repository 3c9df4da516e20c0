"""A Python kernel, typed as numba types it, translated into CUDA C++ over
lockstep/python_kernels.h.

Each function is read from its source (``inspect``), typed by a pass of its
own until every variable's type is stable (a variable takes the one type of
all its assignments, as numba unifies), and written by an emission pass that
reads the typing pass's table (_function.py). Every statement carries a ``#line`` directive, so compiler
messages, kernel faults and check-mode findings name the Python file and line.

translate_kernel is the entry point; _program.py holds one generated source,
_function.py one function's translator (its statements, expressions,
subscripts and calls in a file each), _registry.py the intrinsics it knows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Callable

from ._foreign import linked_source
from ._function import FunctionTranslator, FunctionTypes
from ._program import Program
from ._types import Type
from ._values import TypingError

__all__ = ["TypingError", "kernel_types", "translate_kernel"]


def translate_kernel(func: Callable[..., Any], arg_types: list[Type], name: str, link: Sequence[str] = ()) -> str:
    """The CUDA C++ of kernel ``func`` for ``arg_types``, as ``__global__ void name(...)``;
    ``link``: CUDA C++ sources (``@cuda.jit(link=...)``) pasted before it, for cuda.declare_device functions."""
    program = Program()
    program.names.add(name)
    kernel = FunctionTranslator(program, func, list(arg_types), kernel=True, cpp_name=name).translate()
    header = "#include <lockstep/python_kernels.h>\n"
    sources = [linked_source([*link, *program.links])] if link or program.links else []
    declarations = list(program.declarations.values())
    return header + "".join(sources) + "\n\n".join(declarations + program.definitions + [kernel]) + "\n"


def kernel_types(func: Callable[..., Any], arg_types: list[Type]) -> FunctionTypes:
    """The typing pass's table of kernel ``func`` for ``arg_types`` (every variable's type), for inspect_types."""
    return FunctionTranslator(Program(), func, list(arg_types), kernel=True, cpp_name="kernel").infer_types()
