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
from ._arrays import (
    DeviceNDArray,
    as_cuda_array,
    current_device,
    device_array,
    device_array_like,
    is_cuda_array,
    select_device,
    to_device,
)
from ._dispatcher import Dispatcher, jit
from ._intrinsics import atomic, blockDim, blockIdx, const, fp16, functions, gridDim, laneid, local, shared, threadIdx, warpsize
from ._translate import TypingError

grid = functions["grid"]
gridsize = functions["gridsize"]
syncthreads = functions["syncthreads"]
syncthreads_count = functions["syncthreads_count"]
syncthreads_and = functions["syncthreads_and"]
syncthreads_or = functions["syncthreads_or"]
syncwarp = functions["syncwarp"]
threadfence = functions["threadfence"]
threadfence_block = functions["threadfence_block"]
threadfence_system = functions["threadfence_system"]
shfl_sync = functions["shfl_sync"]
shfl_up_sync = functions["shfl_up_sync"]
shfl_down_sync = functions["shfl_down_sync"]
shfl_xor_sync = functions["shfl_xor_sync"]
all_sync = functions["all_sync"]
any_sync = functions["any_sync"]
eq_sync = functions["eq_sync"]
ballot_sync = functions["ballot_sync"]
match_any_sync = functions["match_any_sync"]
match_all_sync = functions["match_all_sync"]
activemask = functions["activemask"]
lanemask_lt = functions["lanemask_lt"]
popc = functions["popc"]
brev = functions["brev"]
clz = functions["clz"]
ffs = functions["ffs"]
fma = functions["fma"]
cbrt = functions["cbrt"]
selp = functions["selp"]


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
    "Stream",
    "TypingError",
    "activemask",
    "all_sync",
    "as_cuda_array",
    "any_sync",
    "atomic",
    "ballot_sync",
    "blockDim",
    "blockIdx",
    "brev",
    "cbrt",
    "clz",
    "const",
    "default_stream",
    "device_array",
    "device_array_like",
    "eq_sync",
    "external_stream",
    "ffs",
    "fma",
    "fp16",
    "get_current_device",
    "grid",
    "gridDim",
    "is_cuda_array",
    "gridsize",
    "is_available",
    "jit",
    "laneid",
    "lanemask_lt",
    "local",
    "match_all_sync",
    "match_any_sync",
    "pinned_array",
    "popc",
    "select_device",
    "selp",
    "shared",
    "shfl_down_sync",
    "shfl_sync",
    "shfl_up_sync",
    "shfl_xor_sync",
    "stream",
    "synchronize",
    "syncthreads",
    "syncthreads_and",
    "syncthreads_count",
    "syncthreads_or",
    "syncwarp",
    "threadIdx",
    "threadfence",
    "threadfence_block",
    "threadfence_system",
    "to_device",
    "warpsize",
]
