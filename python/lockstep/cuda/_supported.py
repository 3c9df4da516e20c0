"""Every intrinsic lockstep.cuda translates: the modules that declare them,
loaded in one place, so that whoever reads the registry (the markers, the
translator, the doc page) sees all of it."""

from __future__ import annotations

from . import _atomics, _cooperative, _fp16, _kernel_functions, _math_functions, _random_functions, _special_forms
from ._registry import INTRINSICS, IntrinsicDefinition

DECLARING_MODULES = (_kernel_functions, _special_forms, _fp16, _atomics, _cooperative, _random_functions, _math_functions)


def definition_of(name: str) -> IntrinsicDefinition | None:
    """The definition of ``name`` ("syncthreads", "fp16.hadd", "math.sqrt"), or None."""
    return INTRINSICS.get(name)


def is_library_function(name: str) -> bool:
    """Whether ``name`` is a math or NumPy function (the others are numba's ``cuda.`` names)."""
    return name.startswith(("math.", "numpy."))


def shown_name(name: str) -> str:
    """The name as a kernel spells it: ``cuda.syncthreads``, ``math.sqrt``."""
    return name if is_library_function(name) else f"cuda.{name}"
