"""``@cuda.reduce``: a binary function made a reduction of a whole 1-d array,
as numba's (``sum_reduce(arr, size=None, res=None, init=0)``). The kernel is
lockstep.cuda's own, written in the kernel language: each block folds a
strided share of the array into shared memory and halves it to one value;
a second launch of one block folds the blocks' values, then ``init`` (numba
folds ``init`` in too, even the default 0)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ._dispatcher import Dispatcher, jit
from ._intrinsics import KERNEL_LANGUAGE

_THREADS = 128  # a block: a power of two, so the halving below needs no odd cases
_BLOCKS = 64  # at most, so one block folds their results


def _reduction_kernel(op: Dispatcher, dtype: np.dtype) -> Dispatcher:
    cuda = KERNEL_LANGUAGE  # the markers, read from this closure by the translator
    threadIdx, blockIdx, gridDim, shared, syncthreads = (cuda[n] for n in ("threadIdx", "blockIdx", "gridDim", "shared", "syncthreads"))
    threads = _THREADS

    def reduce_blocks(arr, n, out, init, use_init):
        tid = threadIdx.x
        tile = shared.array(threads, dtype)
        first = blockIdx.x * threads + tid
        step = gridDim.x * threads
        if first < n:
            value = arr[first]
            j = first + step
            while j < n:
                value = op(value, arr[j])
                j += step
            tile[tid] = value
        syncthreads()
        valid = min(max(n - blockIdx.x * threads, 0), threads)  # the tile's values: the first `valid`
        width = threads // 2
        while width > 0:
            if tid < width and tid + width < valid:
                tile[tid] = op(tile[tid], tile[tid + width])
            syncthreads()
            valid = min(valid, width)
            width //= 2
        if tid == 0:
            out[blockIdx.x] = op(tile[0], init) if use_init else tile[0]

    return jit(reduce_blocks)


class Reduce:
    """numba.cuda.Reduce: ``Reduce(f)(arr)`` folds ``arr`` with the binary device function ``f``."""

    def __init__(self, functor: Callable[[Any, Any], Any]):
        self._functor = functor
        self._op = functor if isinstance(functor, Dispatcher) else jit(device=True)(functor)
        self._kernels: dict[np.dtype, Dispatcher] = {}
        self.__name__ = getattr(functor, "__name__", "reduce")
        self.__doc__ = getattr(functor, "__doc__", None)

    def _kernel(self, dtype: np.dtype) -> Dispatcher:
        if dtype not in self._kernels:
            self._kernels[dtype] = _reduction_kernel(self._op, dtype)
        return self._kernels[dtype]

    def __call__(self, arr: Any, size: int | None = None, res: Any = None, init: Any = 0, stream: Any = 0) -> Any:
        """The reduction of ``arr`` (a host or device array; its first ``size``
        elements) folded with ``init`` last; written into ``res[0]`` when given
        (then None is returned), else returned as a NumPy scalar. An empty array gives ``init``."""
        from ._arrays import device_array

        if arr.ndim != 1:
            raise TypeError("only support 1D array")
        if size is not None:
            arr = arr[:size]
        dtype = np.dtype(arr.dtype)
        init = dtype.type(init)
        n = arr.shape[0]
        if n < 1:
            return init
        kernel = self._kernel(dtype)
        blocks = min(-(-n // _THREADS), _BLOCKS)
        out = res if res is not None and blocks == 1 else device_array(1, dtype)
        if blocks == 1:
            kernel[1, _THREADS, stream](arr, n, out, init, True)
        else:
            partials = device_array(blocks, dtype)
            kernel[blocks, _THREADS, stream](arr, n, partials, init, False)
            kernel[1, _THREADS, stream](partials, blocks, out, init, True)
        if res is None:
            return out.copy_to_host()[0]
        if out is not res:
            res[:1].copy_to_device(out)
        return None


def reduce(function: Callable[[Any, Any], Any]) -> Reduce:
    """``@cuda.reduce``: numba's decorator making a binary function a Reduce."""
    return Reduce(function)
