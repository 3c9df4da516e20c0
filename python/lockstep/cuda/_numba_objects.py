"""numba's own kernel-language objects, as a kernel file that keeps ``import
numba`` (for numba.int32) reaches them: ``numba.cuda.syncthreads()``,
``numba.cuda.threadIdx.x``, ``numba.cuda.shared.array``, ``from numba.cuda
import syncthreads``. Each stands for lockstep.cuda's marker of the same name,
so the translator knows one set of intrinsics (numba's types, numba.int32 and
numba.types.*, are read as dtypes by _types.scalar_named)."""

from __future__ import annotations

import types
from typing import Any

from ._intrinsics import KERNEL_LANGUAGE, Namespace


class NumbaCuda(Namespace):
    """The ``numba.cuda`` module inside a kernel: lockstep.cuda's kernel language."""


_NUMBA_CUDA = NumbaCuda("numba.cuda", KERNEL_LANGUAGE)


def _marker(dotted: str) -> Any:
    """lockstep.cuda's marker for a dotted kernel-language name ("shared.array"), or None."""
    obj: Any = _NUMBA_CUDA
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def numba_name(obj: Any) -> str | None:
    """The kernel-language name of one of numba's CUDA objects (the module
    ``numba.cuda`` is ""), or None for anything else."""
    if isinstance(obj, types.ModuleType):
        return "" if obj.__name__ == "numba.cuda" else None
    kind = type(obj).__module__
    if kind == "numba.core.extending" and isinstance(getattr(obj, "_name", None), str):
        return obj._name  # numba's @intrinsic objects: syncthreads, grid, ...
    python = getattr(obj, "py_func", None)
    if getattr(python, "__module__", None) == "numba.cuda.random":
        return f"random.{python.__name__}"  # numba.cuda.random's device functions (numba's CPU dispatchers)
    if getattr(obj, "__module__", None) in ("numba.cuda.stubs", "numba.cuda.intrinsic_wrapper"):
        return getattr(obj, "__qualname__", None)  # numba's stubs (threadIdx, atomic.add, shared.array) and shfl_sync & co
    return None


def attribute(obj: Any, attr: str) -> Any:
    """``obj.attr`` as a kernel reads it: ``numba.cuda`` is lockstep.cuda's
    kernel language even where the file never imported numba.cuda (``import
    numba`` alone does not)."""
    if isinstance(obj, types.ModuleType) and obj.__name__ == "numba" and attr == "cuda":
        return _NUMBA_CUDA
    return getattr(obj, attr)


def lockstep_equivalent(obj: Any, spelled: str) -> Any:
    """``obj`` itself, or, for one of numba's CUDA objects, lockstep.cuda's
    marker of the same name; one lockstep.cuda lacks is refused with what to use."""
    name = numba_name(obj)
    if name is None:
        return obj
    if name == "":
        return _NUMBA_CUDA
    marker = _marker(name)
    if marker is None:
        raise LookupError(
            f"{spelled} (numba's cuda.{name}) is not supported by lockstep.cuda's kernels; "
            "docs/numba_intrinsics.md lists what is, and docs/numba.md what to write instead"
        )
    return marker
