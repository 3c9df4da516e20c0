"""Making tensors: from arrays (DLPack, the buffer protocol, lists and scalars), empty ones, and dtype names."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _core
from ._core import Tensor
from ._devices import DeviceLike, device_name_or_default, enclosing_device

DTypeLike = Any  # "float32", numpy.float32, numpy.dtype("float32"), torch.float32


def from_dlpack(array: Any) -> Tensor:
    """A tensor over ``array``'s memory (NumPy, PyTorch, CuPy; CPU or CUDA), no copy."""
    return _core.from_dlpack(array)


def asarray(obj: Any, device: DeviceLike = None, dtype: DTypeLike = None) -> Tensor:
    """``obj`` as a lockstep tensor on ``device``: the given one, else the
    device of an enclosing ``with lockstep.device(...)`` block, else the
    array's own. Arrays with DLPack or the buffer protocol (NumPy, PyTorch,
    CuPy) are used in place when already there, copied otherwise; lists and
    scalars go through NumPy, except that Python floats give float32 (PyTorch's
    default) where NumPy would say float64. ``dtype`` converts (a copy) when it differs."""
    if isinstance(obj, Tensor):
        t = obj
    elif hasattr(obj, "__dlpack__"):
        t = _core.from_dlpack(obj)
    else:
        array = np.asarray(obj, order="C")  # (np.ascontiguousarray would make scalars 1-D)
        if array.dtype == np.float64 and dtype is None and not isinstance(obj, (np.ndarray, np.generic)):
            array = array.astype(np.float32)  # Python floats make float32 tensors, as in PyTorch
        t = _core.from_dlpack(array)
    target = device if device is not None else enclosing_device()
    if target is not None and t.device != _core.check_device(str(target)):
        t = t.to_device(_core.check_device(str(target)))
    if dtype is not None and t.dtype != dtype_name(dtype):
        t = t.to_dtype(dtype_name(dtype))
    return t


def empty(*size: Any, dtype: DTypeLike = "float32", device: DeviceLike = None) -> Tensor:
    """A new uninitialised contiguous tensor: ``empty(2, 3)`` or ``empty((2, 3))`` (then dtype and device
    may follow positionally, ``empty((2, 3), "int32")``)."""
    shape = size
    if size and isinstance(size[0], (Sequence, np.ndarray)):
        shape, rest = size[0], size[1:]
        dtype, device = [*rest, *[dtype, device][len(rest) :]][:2]
    return _core.empty([int(d) for d in shape], dtype_name(dtype), device_name_or_default(device))


def dtype_name(dtype: Any) -> str:
    """ "float32" for "float32", numpy.float32, numpy.dtype("float32") or torch.float32."""
    if isinstance(dtype, str):
        return dtype
    text = str(dtype)
    if text.startswith("torch."):
        return text[len("torch.") :]
    try:
        return str(np.dtype(dtype).name)
    except TypeError:
        return text
