"""numba.cuda.random on lockstep: xoroshiro128+ generators, numba's bit for bit.

    from lockstep.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

    states = create_xoroshiro128p_states(threads, seed=1)   # one generator per thread, on the current device

    @cuda.jit
    def fill(states, out):
        i = cuda.grid(1)
        out[i] = xoroshiro128p_uniform_float32(states, i)

The device functions are the registry's (_random_functions.py, written by
python_random.h); the generators are seeded on the device they live on by the
same header's init_xoroshiro128p_states, so a seed gives numba's streams."""

from __future__ import annotations

import functools
from typing import Any

from .. import _core
from ._arrays import DeviceNDArray, device_array
from ._intrinsics import KERNEL_LANGUAGE
from ._types import RandomState, xoroshiro128p

xoroshiro128p_dtype = RandomState.dtype
"""numba's dtype of one generator: ``{s0, s1}``, two uint64."""
xoroshiro128p_type = xoroshiro128p
"""The element type kernels see (numba's ``from_dtype(xoroshiro128p_dtype)``)."""

_DEVICE_FUNCTIONS = KERNEL_LANGUAGE["random"]
xoroshiro128p_uniform_float32 = _DEVICE_FUNCTIONS.xoroshiro128p_uniform_float32
xoroshiro128p_uniform_float64 = _DEVICE_FUNCTIONS.xoroshiro128p_uniform_float64
xoroshiro128p_normal_float32 = _DEVICE_FUNCTIONS.xoroshiro128p_normal_float32
xoroshiro128p_normal_float64 = _DEVICE_FUNCTIONS.xoroshiro128p_normal_float64
xoroshiro128p_next = _DEVICE_FUNCTIONS.xoroshiro128p_next
xoroshiro128p_jump = _DEVICE_FUNCTIONS.xoroshiro128p_jump

_INIT_SOURCE = r"""
#include <lockstep/python_kernels.h>
// One thread: generator i is a jump past generator i - 1, a chain (numba seeds on the CPU, in the same order).
__global__ void init_xoroshiro128p_states(unsigned long long states, long long n, long long seed, long long subsequence_start) {
  if (blockIdx.x == 0 && threadIdx.x == 0)
    lockstep::py::init_xoroshiro128p_states(reinterpret_cast<lockstep::py::xoroshiro128p_state*>(states), n,
                                            static_cast<unsigned long long>(seed), static_cast<unsigned long long>(subsequence_start));
}
"""


@functools.cache
def _init_kernel(device: str) -> Any:
    from .._kernels import compile

    return compile(_INIT_SOURCE, device=device, names=["init_xoroshiro128p_states"]).init_xoroshiro128p_states


def _bits(value: int) -> int:
    """``value`` as numba's uint64(value) keeps it, in a signed 64-bit launch argument."""
    wrapped = int(value) & ((1 << 64) - 1)
    return wrapped - (1 << 64) if wrapped >= 1 << 63 else wrapped


def init_xoroshiro128p_states(states: DeviceNDArray, seed: int, subsequence_start: int = 0, stream: Any = 0) -> None:
    """Seed every generator of ``states``: generator 0 from ``seed`` (splitmix64),
    ``subsequence_start`` jumps of 2**64 steps on; each next generator 2**64 steps past the one before."""
    if not isinstance(states, DeviceNDArray) or states.dtype != xoroshiro128p_dtype or states.ndim != 1:
        raise TypeError("init_xoroshiro128p_states takes a 1-d device array of xoroshiro128p_dtype (create_xoroshiro128p_states makes one)")
    _init_kernel(states.device)[1, 1](states.tensor.data_ptr, states.size, _bits(seed), _bits(subsequence_start))
    _core.synchronize(states.device)


def create_xoroshiro128p_states(n: int, seed: int, subsequence_start: int = 0, stream: Any = 0) -> DeviceNDArray:
    """``n`` generators on the current device, seeded as init_xoroshiro128p_states seeds them (numba's streams for ``seed``)."""
    states = device_array(int(n), dtype=xoroshiro128p_dtype)
    init_xoroshiro128p_states(states, seed, subsequence_start, stream)
    return states


__all__ = [
    "create_xoroshiro128p_states",
    "init_xoroshiro128p_states",
    "xoroshiro128p_dtype",
    "xoroshiro128p_jump",
    "xoroshiro128p_next",
    "xoroshiro128p_normal_float32",
    "xoroshiro128p_normal_float64",
    "xoroshiro128p_type",
    "xoroshiro128p_uniform_float32",
    "xoroshiro128p_uniform_float64",
]
