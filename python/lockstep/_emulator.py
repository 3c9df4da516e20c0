"""Emulator options for a ``with`` block, and check mode."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from . import _core
from ._core import emulator_options, set_emulator_options


@contextlib.contextmanager
def emulator_options_scope(**options: Any) -> Iterator[_core.EmulatorOptions]:
    """Set emulator options (workers, order, seed, stack_kib, checks, timeout,
    region_loops) for the ``with`` block and restore the previous ones after
    it; yields the options in force."""
    previous = emulator_options()
    set_emulator_options(**options)
    try:
        yield emulator_options()
    finally:
        set_emulator_options(**previous)


def check(checks: str = "all") -> contextlib.AbstractContextManager[_core.EmulatorOptions]:
    """Check mode for the ``with`` block: kernels run on the emulator under
    memcheck, racecheck, synccheck and initcheck (or the comma list given) and
    a launch with findings raises KernelError listing each one with its kind,
    kernel, block, thread, address and source line. Compile kernels inside the
    block (``lockstep.compile`` then instruments them); the library's own ops
    use their instrumented build automatically::

        with lockstep.check():
            mod = lockstep.compile(source)
            mod.kernel[grid, block](x, n)
    """
    return emulator_options_scope(checks=checks)
