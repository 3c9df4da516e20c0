"""The functions a kernel may call as device functions, as the translator
sees them: @cuda.jit functions (JitFunction, which the dispatcher is),
numba's own dispatchers and plain Python functions. The translator reads them
here, not from the dispatcher, which imports the translator."""

from __future__ import annotations

import inspect
from typing import Any, Callable

from ._types import Type


class JitFunction:
    """A @cuda.jit function: the Python function it translates and the
    argument types it was declared for (None: specialised on each call's)."""

    py_func: Callable[..., Any]
    _declared: list[list[Type]] | None


def python_function(obj: Any) -> Callable[..., Any] | None:
    """The Python function behind a device function: ours, numba's, or a plain function."""
    if isinstance(obj, JitFunction):
        return obj.py_func
    if type(obj).__module__.startswith("numba") and hasattr(obj, "py_func"):
        return obj.py_func
    if inspect.isfunction(obj):
        return obj
    return None
