"""numba's CUDA kernel language on lockstep: change ``from numba import cuda``
to ``from lockstep import cuda`` and the kernels run on lockstep's emulator
(any CPU, with check mode) or a GPU.

    from lockstep import cuda

    @cuda.jit
    def add_one(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] += 1

    add_one[4, 256](numpy_array)        # on "cpu": in place; on a GPU: copied there and back
    print(add_one.inspect_cuda())       # the CUDA C++ lockstep wrote

A kernel is translated into CUDA C++ for the types of its arguments at first
launch (numba's typing: Python ints are int64, floats float64), then compiled
by lockstep's JIT for the device it runs on: the device of its GPU array
arguments, else ``select_device(...)``'s, else lockstep's default device
("cpu" unless inside ``with lockstep.device("cuda:0")``).
"""

from __future__ import annotations

from typing import Any

from .. import _core
from .._devices import Device
from ._arrays import DeviceNDArray, as_cuda_array, current_device, device_array, device_array_like, is_cuda_array, select_device, to_device
from ._dispatcher import Dispatcher, jit
from ._foreign import declare_device
from ._intrinsics import KERNEL_LANGUAGE
from ._reduce import Reduce, reduce
from ._translate import TypingError

# cuda.syncthreads, cuda.threadIdx, cuda.shared, cuda.atomic, cuda.fp16, ...: the registry's markers.
globals().update(KERNEL_LANGUAGE)
# cuda.random is a module (numba.cuda.random's names), holding the registry's random markers.
from . import random  # noqa: E402, F401


def is_available() -> bool:
    """True: lockstep.cuda kernels always have a device (the emulator, or a GPU).
    ``lockstep.cuda_available()`` says whether a GPU is there."""
    return True


def synchronize() -> None:
    """Wait for the current device's work (kernels on "cpu" finish before their launch returns)."""
    _core.synchronize(current_device())


def get_current_device() -> Device:
    """The device launches with only host arrays run on."""
    return Device(current_device())


class Stream:
    """A stream handle for launches (``kernel[grid, block, stream]``). Streams
    made here are the device's default stream: work on them runs in launch
    order; ``external_stream`` wraps another library's stream."""

    def __init__(self, handle: int = 0):
        self.handle = handle

    def synchronize(self) -> None:
        synchronize()

    def __int__(self) -> int:
        return self.handle

    def __repr__(self) -> str:
        return f"<lockstep.cuda stream {self.handle:#x}>"


def stream() -> Stream:
    return Stream()


def default_stream() -> Stream:
    return Stream()


def external_stream(handle: int) -> Stream:
    return Stream(int(handle))


def pinned_array(shape: Any, dtype: Any = float, strides: Any = None, order: str = "C") -> Any:
    """A host array (lockstep needs no pinned memory to copy)."""
    import numpy as np

    return np.empty(shape, dtype=dtype, order=order)  # type: ignore[call-overload]


__all__ = [
    "Dispatcher",
    "DeviceNDArray",
    "Reduce",
    "Stream",
    "TypingError",
    "as_cuda_array",
    "declare_device",
    "default_stream",
    "device_array",
    "device_array_like",
    "external_stream",
    "get_current_device",
    "is_cuda_array",
    "is_available",
    "jit",
    "pinned_array",
    "reduce",
    "select_device",
    "stream",
    "synchronize",
    "to_device",
    *KERNEL_LANGUAGE,
]
