"""Devices: names, the default device of ``with lockstep.device(...)`` blocks, events and synchronize."""

from __future__ import annotations

import threading
from typing import Union

from . import _core
from ._core import cuda_available
from ._output import kernel_output_to_sys_stdout

DeviceLike = Union[str, "Device", None]

# The devices of the enclosing ``with lockstep.device(...)`` blocks, innermost last, per thread.
_state = threading.local()


class Device:
    """A lockstep device, "cpu" (the emulator) or "cuda:N"; as a context
    manager it is the default device of the ``with`` block on this thread."""

    def __init__(self, name: str):
        self.name = _core.check_device(str(name))

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"lockstep.device({self.name!r})"

    def __eq__(self, other: object) -> bool:
        return str(self) == str(other)

    def __hash__(self) -> int:
        return hash(self.name)

    def __enter__(self) -> Device:
        _state.stack = getattr(_state, "stack", []) + [self.name]
        return self

    def __exit__(self, *exc: object) -> None:
        _state.stack.pop()

    @property
    def name_of_hardware(self) -> str:
        """The GPU's name, or "lockstep emulator"."""
        return _core.device_name(self.name)


def device(name: str) -> Device:
    """The device "cpu" or "cuda:N" (also usable as ``with lockstep.device(...):``)."""
    return Device(name)


def enclosing_device() -> str | None:
    """The device of the innermost ``with lockstep.device(...)`` block on this thread, None outside any."""
    stack = getattr(_state, "stack", [])
    return stack[-1] if stack else None


def default_device() -> str:
    """The device used when a call names none: the innermost ``with
    lockstep.device(...)`` block, else "cpu"."""
    return enclosing_device() or "cpu"


def device_name_or_default(d: DeviceLike) -> str:
    """The canonical name of ``d``, or the default device when ``d`` is None."""
    return default_device() if d is None else _core.check_device(str(d))


def is_available(d: str = "cuda") -> bool:
    """Whether device kind "cuda" (or "cpu", always) can be used here."""
    return True if str(d) == "cpu" else cuda_available()


def Event(d: DeviceLike = None) -> _core.Event:
    """A marker in the device's default stream: ``start.record()``, work,
    ``stop.record()``, ``stop.synchronize()``, then ``start.elapsed_ms(stop)``."""
    return _core.Event(device_name_or_default(d))


def synchronize(d: DeviceLike = None) -> None:
    """Wait for the device's work to finish (kernel printf from a GPU appears here)."""
    with kernel_output_to_sys_stdout():
        _core.synchronize(device_name_or_default(d))
