"""Where the region-loop compiler takes libclang from: the PyPI ``libclang``
wheel, a dependency of this package, unless LOCKSTEP_LIBCLANG names another.

The C++ loader (src/emulator/compile_time/region_loops/libclang.cpp) reads
LOCKSTEP_LIBCLANG first; setting it here at import, before liblockstep loads,
makes the wheel's library the one used by this process and by its children
(``lockstep nvcc``, the JIT's compile children). CMake runs this file as a
script to find the wheel at build time (cmake/find_libclang.cmake), so it
imports nothing of lockstep."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import warnings

LIBRARY_NAMES = ("libclang.so", "libclang.dylib", "libclang.dll")


def wheel_library() -> str | None:
    """The libclang wheel's shared library (``clang/native/libclang.so``), or
    None. Found without importing ``clang``; a ``clang`` package without the
    native library (Debian's python3-clang) does not count."""
    spec = importlib.util.find_spec("clang")
    for location in (spec.submodule_search_locations or []) if spec else []:
        for name in LIBRARY_NAMES:
            path = pathlib.Path(location, "native", name)
            if path.is_file():
                return str(path)
    return None


def use_wheel_unless_chosen() -> None:
    """Sets LOCKSTEP_LIBCLANG to the wheel's library where it is unset."""
    if not os.environ.get("LOCKSTEP_LIBCLANG"):
        path = wheel_library()
        if path:
            os.environ["LOCKSTEP_LIBCLANG"] = path


_warned = False


def warn_once_if_unavailable() -> None:
    """The first compile for "cpu" in a process where no libclang loads
    warns, with the reason and the fix (liblockstep says it on stderr too)."""
    global _warned
    if _warned:
        return
    _warned = True
    from . import _core  # here, not at the top: CMake runs this file as a script

    reason = _core.region_loops_unavailable_reason()
    if reason:
        warnings.warn(
            f"lockstep: region loops are unavailable, kernels with barriers run on fibers (many times slower): {reason}", RuntimeWarning, stacklevel=3
        )


if __name__ == "__main__":
    print(wheel_library() or "")
