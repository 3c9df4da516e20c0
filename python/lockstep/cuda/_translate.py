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
from dataclasses import dataclass
from typing import Any, Callable

from ._cooperative import GRID_SYNC
from ._foreign import linked_source
from ._function import FunctionTranslator, FunctionTypes
from ._program import Program
from ._types import Type
from ._values import TypingError

__all__ = ["KernelSource", "TypingError", "kernel_types", "translate_kernel"]


@dataclass(frozen=True)
class KernelSource:
    """A translated kernel: its CUDA C++, what its launches need to know (a grid barrier: a cooperative
    launch) and its static shared memory (for occupancy answers)."""

    text: str
    cooperative: bool
    static_shared_bytes: int


def translate_kernel(func: Callable[..., Any], arg_types: list[Type], name: str, link: Sequence[str] = ()) -> KernelSource:
    """The CUDA C++ of kernel ``func`` for ``arg_types``, as ``__global__ void name(...)``, and its launch's facts;
    ``link``: CUDA C++ sources (``@cuda.jit(link=...)``) pasted before it, for cuda.declare_device functions."""
    program = Program()
    program.names.add(name)
    kernel = FunctionTranslator(program, func, list(arg_types), kernel=True, cpp_name=name).translate()
    header = "#include <lockstep/python_kernels.h>\n"
    cooperative = GRID_SYNC in kernel or any(GRID_SYNC in d for d in program.definitions)
    if cooperative:
        header += "#include <cooperative_groups.h>\n"
    sources = [linked_source([*link, *program.links])] if link or program.links else []
    declarations = list(program.declarations.values())
    text = header + "".join(sources) + "\n\n".join(declarations + program.definitions + [kernel]) + "\n"
    return KernelSource(text, cooperative, program.static_shared_bytes)


def kernel_types(func: Callable[..., Any], arg_types: list[Type]) -> FunctionTypes:
    """The typing pass's table of kernel ``func`` for ``arg_types`` (every variable's type), for inspect_types."""
    return FunctionTranslator(Program(), func, list(arg_types), kernel=True, cpp_name="kernel").infer_types()
