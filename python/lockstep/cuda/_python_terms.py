"""Reports about a Python kernel in Python's terms: the emulator and the GPU
name a kernel by its C++ signature (``_mm_3de5e8eb(lockstep::py::array<double,
1, true>, long long)``); a Python user wrote ``_mm`` and passed a float64
array and an int. File and line are already the Python's (#line directives)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ._types import Type


def python_signature(python_name: str, types: Sequence[Type]) -> str:
    """``name(array(float64, 2d, C), int64)``: the kernel as numba would show it."""
    return f"{python_name}({', '.join(str(t) for t in types)})"


def in_python_terms(message: str, cpp_name: str, python_name: str, types: Sequence[Type]) -> str:
    """``message`` with the kernel's C++ signature, and its bare C++ name, in Python's terms."""
    message = re.sub(re.escape(cpp_name) + r"\([^()]*\)", lambda m: python_signature(python_name, types), message)
    return re.sub(r"\b" + re.escape(cpp_name) + r"\b", python_name, message)
